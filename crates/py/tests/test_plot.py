import pytest
import shingled
import shingled.plot as splot
from conftest import SYNTH


def test_plots_written(tmp_path):
    df = shingled.compare(SYNTH, schemes=["smr-only", "lru", "sac"], mode="write-only")
    splot.overview(df, out=tmp_path / "overview.png")
    splot.total_time(df, out=tmp_path / "time.svg")
    sw = shingled.sweep({"policy": ["lru", "sac"], "cache": ["1%", "2%", "4%"]}, SYNTH,
                        config=shingled.Config.default().with_mode("write-only"))
    sw["cache_pct"] = sw["cache"].str.rstrip("%").astype(float)
    splot.sweep_lines(sw, "cache_pct", "total_time_s", hue="policy", out=tmp_path / "sweep.png")
    for f in ("overview.png", "time.svg", "sweep.png"):
        assert (tmp_path / f).stat().st_size > 5000, f
    assert (tmp_path / "overview.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_time_breakdown_plot(tmp_path):
    import shingled.plot

    df = shingled.compare(SYNTH, schemes=["smr-only", "cmr-only", "lru"], mode="write-only")
    assert {"time_pb_write_s", "time_clean_band_read_s", "time_seek_s"} <= set(df.columns)
    assert df.loc["smr-only", "time_clean_band_read_s"] > 0
    out = tmp_path / "t.png"
    shingled.plot.time_breakdown(df, out=out)
    assert out.stat().st_size > 1000


def test_plots_survive_missing_values_and_name_their_context(tmp_path):
    """Baselines without cleaning have no WA (None): the WA panel says so instead of crashing;
    titles name the trace and the set-up."""
    df = shingled.compare(SYNTH, schemes=["cmr-only"], mode="write-only")
    assert df["write_amplification"].isna().all()
    fig = splot.overview(df, out=tmp_path / "o.png")
    titles = [a.get_title() for a in fig.axes]
    assert any("no run has a value" in t.get_text() for a in fig.axes for t in a.texts)
    assert all("set-up pore" in t for t in titles), titles
    sw = shingled.sweep({"cache": ["1%", "2%"]}, SYNTH, config=shingled.Config.default().with_mode("write-only"),
                        progress="tqdm")
    f = splot.sweep_lines(sw, "cache_blocks", "total_time_s")
    assert f.axes[0].get_xlabel() == "SSD cache (4 KiB blocks)" and f.axes[0].get_ylabel() == "total I/O time (s)"


def test_missing_optional_dependency_names_the_extra(monkeypatch):
    import sys

    df = shingled.compare(SYNTH, schemes=["smr-only"], mode="write-only")
    for m in ("matplotlib", "matplotlib.pyplot", "tqdm", "tqdm.auto"):
        monkeypatch.setitem(sys.modules, m, None)  # `import m` now raises ImportError
    with pytest.raises(ImportError, match=r"shingled\[plot\]"):
        splot.total_time(df)
    with pytest.raises(ImportError, match=r"shingled\[progress\]"):
        shingled.simulate(SYNTH, mode="write-only", progress="tqdm")


def test_sweep_lines_draws_one_line_per_combination_of_the_other_varied_columns(tmp_path):
    """A policy x cache sweep drawn against the cache size without ``hue`` gives one line per
    policy (not one line zig-zagging between them); rows a known parameter cannot tell apart
    are refused."""
    import pandas as pd

    sw = shingled.sweep({"policy": ["lru", "sac"], "cache": ["1%", "2%", "4%"]}, SYNTH,
                        config=shingled.Config.default().with_mode("write-only"))
    sw["cache_pct"] = sw["cache"].str.rstrip("%").astype(float)
    f = splot.sweep_lines(sw, "cache_pct", "total_time_s", out=tmp_path / "s.png")
    lines = f.axes[0].get_lines()
    assert sorted(l.get_label() for l in lines) == ["lru", "sac"]
    for l in lines:
        assert list(l.get_xdata()) == [1.0, 2.0, 4.0]
    twice = pd.concat([sw.assign(run="a"), sw.assign(run="b")])
    with pytest.raises(ValueError, match="rows share cache_pct=.*hue="):
        splot.sweep_lines(twice, "cache_pct", "total_time_s")
    f = splot.sweep_lines(twice, "cache_pct", "total_time_s", hue="run")
    assert len(f.axes[0].get_lines()) == 4


def test_cdf_title_names_the_trace_set_up_and_replay():
    r = shingled.simulate(SYNTH, cache=False, replay="open")
    title = splot.cdf([r]).axes[0].get_title()
    assert SYNTH in title and "open loop" in title, title
