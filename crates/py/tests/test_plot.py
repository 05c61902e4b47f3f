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
