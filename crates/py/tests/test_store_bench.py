"""`shingled.store_bench`: every store bench at a tiny scale, checked for self-consistency
(rows against tables and plot series, bytes against ops); no timing assertions."""

import math
import pickle

import pytest

import shingled
from shingled import ConfigError, ShingledError, StoreBenchResult

TINY = dict(scale=0.001, seed=7, streams=3)
IO_SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20]


@pytest.fixture(scope="module")
def macro() -> StoreBenchResult:
    # The slowest bench (~10 s in a debug build at this scale): run once for all macro tests.
    return shingled.store_bench("macro", **TINY)


def test_store_benches_lists_every_bench():
    b = shingled.store_benches()
    assert list(b) == ["write", "read", "macro", "recovery", "memory", "cpu"]
    assert all(isinstance(v, str) and v for v in b.values())


def _common(r: StoreBenchResult, name: str, kind: str) -> None:
    assert r.name == name and r.kind == kind
    assert r.title and r.notes
    df = r.frame
    assert len(df) == len(r.rows) > 0
    # The printed table has one line per typed row.
    assert len(r.table) == len(df)
    assert list(r.table.columns) == r.report["table"]["columns"]
    assert "main" in r.tables
    assert list(r.series) == r.plot_keys
    assert pickle.loads(pickle.dumps(r)) == r
    assert name in repr(r)


def _io_checks(r: StoreBenchResult, what: str) -> None:
    df = r.frame
    assert (df["bytes"] == df["ops"] * df["io_size"]).all()
    assert set(df["io_size"]) <= set(IO_SIZES)
    assert set(df["clock"]) == {"wall", "modelled"}
    assert ((df["mb_s"] > 0) & df["mb_s"].map(math.isfinite)).all()
    assert (df["vs_raw"] > 0).all()
    # MB/s and ops/s describe the same seconds.
    assert ((df["ops_s"] * df["io_size"] / 1e6 - df["mb_s"]).abs() <= 1e-6 * df["mb_s"]).all()
    assert r.plot_keys == [f"{what}-wall", f"{what}-modelled"]
    for clock in ("wall", "modelled"):
        s = r.series[f"{what}-{clock}"]
        assert list(s.columns) == ["curve", "x", "y", "category"]
        assert s.attrs["y_label"] == "MB/s"
        # Every plotted bar is a row of the frame at that clock and I/O size, and vice versa.
        rows = df[df["clock"] == clock]
        assert len(s) == len(rows)
        assert sorted(s["y"]) == sorted(rows["mb_s"])
        sizes = {"4KiB": 4 << 10, "16KiB": 16 << 10, "64KiB": 64 << 10, "256KiB": 256 << 10, "1MiB": 1 << 20}
        assert sorted(s["category"].map(sizes)) == sorted(rows["io_size"])


def test_write_bench(tmp_path):
    r = shingled.store_bench("write", dir=tmp_path, **TINY)
    _common(r, "write", "io")
    _io_checks(r, "write")
    df = r.frame
    # 5 systems x 2 durabilities x 5 sizes; headers, footers and padding cost the engine bytes.
    assert len(df) == 50
    eng = df[df["system"] == "engine"]
    assert (eng["device_bytes"] > eng["bytes"]).all()
    other = df[df["system"] != "engine"]
    assert (other["device_bytes"] == other["bytes"]).all()
    assert (df.loc[df["system"] == "raw-zoned", "vs_raw"] == 1.0).all()
    # The bench's device and baseline files live in a temporary directory under `dir`, removed
    # at the end.
    assert list(tmp_path.iterdir()) == []


def test_modelled_write_results_repeat_for_a_seed():
    cols = ["system", "device", "durability", "io_size", "device_bytes", "seconds"]
    m = lambda r: r.frame.query("clock == 'modelled'")[cols].reset_index(drop=True)
    a, b = shingled.store_bench("write", **TINY), shingled.store_bench("write", **TINY)
    assert m(a).equals(m(b))


def test_read_bench():
    r = shingled.store_bench("read", **TINY)
    _common(r, "read", "io")
    _io_checks(r, "read")
    df = r.frame
    assert len(df) == 25
    eng = df[df["system"] == "engine"]
    # Whole slices with footers, aligned to 4 KiB.
    assert (eng["device_bytes"] >= eng["bytes"]).all()


def test_macro_rows(macro):
    _common(macro, "macro", "macro")
    df = macro.frame
    assert "windows" not in df and "zone_utilisation" not in df
    assert len(df) == len(macro.table) == 5
    assert "streams" in macro.tables and len(macro.tables["streams"]) == 4
    assert not df["out_of_space"].any()
    assert (df["device_bytes"] > df["user_bytes"]).all()
    assert (df["gc_bytes"] < df["device_bytes"]).all()
    wa = df["device_bytes"] / df["user_bytes"]
    assert ((wa - df["write_amplification"]).abs() < 1e-9).all()
    assert (df["gc_write_amplification"] >= 1.0).all()
    assert (df["deletions"] > 0).all()


def test_macro_windows(macro):
    w = macro.windows
    assert set(w["name"]) == set(macro.frame["name"])
    assert ((w["mb_s"] > 0) & w["mb_s"].map(math.isfinite)).all()
    for name, g in w.groupby("name"):
        assert g["t"].is_monotonic_increasing and g["t"].is_unique, name
        assert g["written"].is_monotonic_increasing, name
        # Fill first, then deletions keep utilisation level.
        assert g["deleting"].any() and not g["deleting"].iloc[0], name
        row = macro.frame.set_index("name").loc[name]
        assert row["mb_s_fill"] == pytest.approx(g.loc[~g["deleting"], "mb_s"].mean())
        assert row["mb_s_steady"] == pytest.approx(g.loc[g["deleting"], "mb_s"].mean())
    # The throughput plots draw these windows.
    for key in ("macro-throughput", "macro-ablation"):
        s = macro.series[key]
        assert s.attrs["x_label"] == "modelled time (s)"
        for curve, g in s.groupby("curve"):
            ww = w[w["name"] == curve]
            assert list(g["x"]) == list(ww["t"]) and list(g["y"]) == list(ww["mb_s"])


def test_macro_zone_utilisation_cdf(macro):
    z = macro.zone_utilisation
    assert len(z) > 0
    assert z["utilisation"].between(0.0, 1.0).all()
    for name, g in z.groupby("name"):
        assert g["utilisation"].is_monotonic_increasing
        assert g["fraction"].is_monotonic_increasing and g["fraction"].iloc[-1] == 1.0
    # The CDF plots hold the same points, utilisation in percent.
    for key in ("macro-zone-cdf", "macro-ablation-cdf"):
        s = macro.series[key]
        for curve, g in s.groupby("curve"):
            zz = z[z["name"] == curve]
            assert list(g["x"]) == pytest.approx(list(zz["utilisation"] * 100))
            assert list(g["y"]) == pytest.approx(list(zz["fraction"]))


def test_macro_plots(macro, tmp_path):
    fig = macro.plot()
    assert len([a for a in fig.axes if a.get_visible()]) == len(macro.plot_keys) == 4
    out = tmp_path / "cdf.png"
    fig = macro.plot("macro-zone-cdf", out=out)
    assert out.stat().st_size > 0
    assert len(fig.axes[0].get_lines()) == macro.series["macro-zone-cdf"]["curve"].nunique()
    with pytest.raises(ValueError, match="no plot 'nope'; plots: macro-throughput"):
        macro.plot("nope")


def test_io_plot_draws_bars():
    r = shingled.store_bench("read", **TINY)
    fig = r.plot("read-modelled")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4KiB", "16KiB", "64KiB", "256KiB", "1MiB"]
    assert len(ax.patches) == len(r.series["read-modelled"])


def test_recovery_bench():
    r = shingled.store_bench("recovery", **TINY)
    _common(r, "recovery", "recovery")
    df = r.frame
    assert len(df) == 10
    assert ((df["chunks"] > 0) & (df["records"] > 0) & (df["bytes_read"] > 0)).all()
    assert (df["modelled_seconds"] > 0).all()
    steps = df[["superzone_seconds", "checkpoint_load_seconds", "journal_replay_seconds",
                "datazone_scan_seconds", "index_build_seconds"]].sum(axis=1)
    assert (steps <= df["wall_seconds"] * 1.0001 + 1e-6).all()
    ck = df["mode"] == "checkpointed"
    assert ck.any() and (~ck).any()
    assert (df.loc[ck, "zones_scanned"] == 0).all()
    assert (df.loc[~ck, "zones_scanned"] > 0).all()
    assert (df.loc[~ck, "bytes_scanned"] >= df.loc[~ck, "data_bytes"]).all()


def test_memory_bench():
    r = shingled.store_bench("memory", **TINY)
    _common(r, "memory", "memory")
    df = r.frame
    assert (df["per_record"] == 8).all()
    assert (df["total"] == df["chunks"] * df["per_chunk"] + df["chunks"] * df["records_per_chunk"] * 8).all()
    assert (df["total_per_chunk"] == df["total"] / df["chunks"]).all()
    assert r.plot_keys == [] and r.series == {}
    with pytest.raises(ValueError, match="has no plots"):
        r.plot()
    with pytest.raises(AttributeError, match="only macro"):
        r.windows


def test_cpu_bench():
    r = shingled.store_bench("cpu", **TINY)
    _common(r, "cpu", "cpu")
    df = r.frame
    assert len(df) == 8
    assert ((df["bytes"] > 0) & (df["wall_seconds"] > 0) & (df["cpu_seconds"] >= 0)).all()
    assert df["cpu_s_per_gb"].map(math.isfinite).all()
    assert set(df["system"]) >= {"engine"}


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(name="nope"), 'unknown store bench "nope"'),
        (dict(name="write", scale=0), "scale 0 must be a positive number"),
        (dict(name="write", scale=-1), "scale -1 must be a positive number"),
        (dict(name="write", scale=float("nan")), "scale NaN must be a positive number"),
        (dict(name="write", scale=float("inf")), "scale inf must be a positive number"),
        (dict(name="write", scale="1"), "scale '1': expected a number"),
        (dict(name="write", streams=0), r"streams 0: must be in \[1, "),
        (dict(name="write", streams=2.5), "streams 2.5: expected an integer"),
        (dict(name="write", seed=-1), r"seed -1: must be in \[0, 18446744073709551616\)"),
        (dict(name="write", rounds=0), r"rounds 0: must be in \[1, 1001\)"),
        (dict(name="write", rounds=1.5), "rounds 1.5: expected an integer"),
        (dict(name=3), "store bench name 3: expected a str"),
    ],
)
def test_bad_names_and_values_raise_config_errors(kwargs, match):
    with pytest.raises(ConfigError, match=match) as e:
        shingled.store_bench(**kwargs)
    assert isinstance(e.value, ShingledError)


def test_core_checks_values_too():
    # The extension validates on its own (callers of `_core` skip the Python checks).
    with pytest.raises(ConfigError, match="streams 0 must be at least 1"):
        shingled._core.store_bench("write", 0.001, 1, 0, None)
    with pytest.raises(ConfigError, match="scale 0 must be a positive number"):
        shingled._core.store_bench("write", 0.0, 1, 1, None)
    with pytest.raises(ConfigError, match="rounds 0 must be at least 1"):
        shingled._core.store_bench("write", 0.001, 1, 1, None, 0)


def test_write_bench_rounds_report_medians():
    r = shingled.store_bench("write", rounds=3, **TINY)
    assert len(r.frame) == 50
    assert any("median time of 3 rounds" in n for n in r.notes)
    one = shingled.store_bench("write", **TINY)
    assert any("one run each" in n for n in one.notes)
