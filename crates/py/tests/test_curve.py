import os

import pandas as pd
import pytest

import shingled

TRACE = "synth:wdev,scale=0.02"
# 1 MiB bands: a small trace touches a few hundred, enough to sample.
SMALL_BANDS = {"drive__bands": {"kind": "uniform-random", "min": "512KiB", "max": "1536KiB", "seed": 1}}


def test_curve_frame_has_every_point_metric_and_method():
    df = shingled.curve(TRACE, policies=["lru", "most"], cache_sizes=["1%", "4%"], rate=0.5, validate=2, jobs=2,
                        **SMALL_BANDS)
    assert isinstance(df, pd.DataFrame) and len(df) == 4
    assert list(df["policy"]) == ["lru", "lru", "most", "most"]
    assert set(df["method"]) == {"sampled"} and (df["rate"] == 0.5).all()
    for col in ("hit_ratio", "write_amplification", "rmws", "total_time_s", "exact_hit_ratio", "full_rmws"):
        assert col in df, col
    assert df["validated"].sum() == 2
    # LRU has its exact hit ratio; a validated LRU point's full run agrees with it exactly.
    lru = df[df["policy"] == "lru"]
    assert lru["exact_hit_ratio"].notna().all() and df[df["policy"] == "most"]["exact_hit_ratio"].isna().all()
    v = lru[lru["validated"]]
    assert (v["exact_hit_ratio"] == v["full_hit_ratio"]).all()
    errors = {e["metric"]: e for e in df.attrs["errors"]}
    assert errors["hit_ratio"]["points"] == 2 and errors["hit_ratio"]["unit"] == "pp"


def test_rate_one_equals_simulate():
    df = shingled.curve(TRACE, policies="sac", cache_sizes="2%", rate=1, mode="write-only")
    one = shingled.simulate(TRACE, policy="sac", cache="2%", mode="write-only")
    row = df.iloc[0]
    assert row["method"] == "full"
    assert row["rmws"] == one.rmws and row["total_time_s"] == one.total_time_s


def test_plot_curve(tmp_path):
    df = shingled.curve(TRACE, policies=["lru"], cache_sizes=["1%", "2%", "4%"], rate=0.5, validate=1,
                        plot=str(tmp_path / "c.png"), **SMALL_BANDS)
    assert (tmp_path / "c.png").stat().st_size > 0
    fig = shingled.plot.curve(df, metric="rmws", out=tmp_path / "r.png")
    assert fig is not None and (tmp_path / "r.png").exists()
    with pytest.raises(KeyError):
        shingled.plot.curve(df, metric="nope")


@pytest.mark.parametrize(
    "kwargs, exc, says",
    [
        ({"rate": 0}, shingled.ConfigError, "(0, 1]"),
        ({"rate": 1.5}, shingled.ConfigError, "(0, 1]"),
        ({"rate": "fast"}, shingled.ConfigError, "auto"),
        ({"cache_sizes": []}, shingled.ConfigError, "names nothing"),
        ({"policies": ["nope"]}, shingled.PolicyError, "unknown policy"),
        ({"unit": "stripe"}, shingled.ConfigError, "zone:SIZE"),
        ({"samples": 0}, shingled.ConfigError, "at least 1"),
        ({"backend": "cloud"}, shingled.ConfigError, "'local' or 'ray'"),
        ({"replay": "open"}, shingled.ConfigError, "closed-loop"),
    ],
)
def test_bad_input_raises_typed_errors(kwargs, exc, says):
    with pytest.raises(exc, match=None) as e:
        shingled.curve(TRACE, **kwargs)
    assert says in str(e.value)


def test_curve_ray_matches_local():
    try:
        import ray
    except ImportError as e:
        if os.environ.get("SHINGLED_EXPECT_RAY") == "1":
            raise AssertionError(f"Ray installed (SHINGLED_EXPECT_RAY=1) but import ray failed: {e}")
        pytest.skip(f"import ray failed: {e}")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        kw = dict(policies=["lru", "most"], cache_sizes=["1%", "3%"], rate=0.5, validate=3, **SMALL_BANDS)
        local = shingled.curve(TRACE, **kw)
        seen = []
        remote = shingled.curve(TRACE, backend="ray", progress=lambda *p: seen.append(p), **kw)
        cols = ["policy", "cache_size", "hit_ratio", "rmws", "exact_hit_ratio", "validated", "full_rmws"]
        pd.testing.assert_frame_equal(local[cols], remote[cols])
        # Progress by finished tasks, one per policy, ending at all of them.
        assert seen[0] == ("simulating", 0, 2, 0, 2) and seen[-1] == ("simulating", 2, 2, 2, 2), seen
    finally:
        ray.shutdown()


def test_curve_after_warmup_equals_simulates_after_warmup_window():
    df = shingled.curve(TRACE, policies=["lru"], cache_sizes="2%", rate=1, warmup=3000)
    one = shingled.simulate(TRACE, policy="lru", cache="2%", warmup=3000)
    row = df.iloc[0]
    assert df.attrs["window"] == "after-warmup (3000)"
    assert one.after_warmup["hit_ratio"] != one.report["total"]["hit_ratio"]
    assert row["hit_ratio"] == one.after_warmup["hit_ratio"]
    assert row["exact_hit_ratio"] == one.after_warmup["hit_ratio"]
    whole = shingled.curve(TRACE, policies=["lru"], cache_sizes="2%", rate=1)
    assert whole.attrs["window"] == "total" and whole.iloc[0]["hit_ratio"] == one.hit_ratio


def test_curve_experiments_are_listed_and_run_at_rate_one_as_their_full_forms():
    names = shingled.experiments()
    assert "pore-ssd-size-curve" in names and "sac-write-only-curve" in names
    curve = shingled.experiment("sac-write-only-curve", traces=[TRACE], rate=1, validate=1)
    full = shingled.experiment("sac-write-only", traces=[TRACE])
    assert len(curve) == 30 and len(full) == 15
    both = full.merge(curve, on=["trace", "label"], suffixes=("_full", "_curve"))
    assert len(both) == 15
    for m in ("hit_ratio", "rmws", "total_time_s"):
        assert (both[f"{m}_full"] == both[f"{m}_curve"]).all(), m
    assert set(curve["method"]) == {"full"} and curve["validated"].sum() == 1
    lru = curve[curve["label"].str.startswith("lru ")]
    assert (lru["exact_hit_ratio"] == lru["hit_ratio"]).all()
    (c,) = curve.attrs["curves"]
    assert set(c["policy"]) == {"lru", "most", "sac"} and len(c) == 30


def test_sampling_options_are_refused_by_full_run_experiments():
    with pytest.raises(shingled.ConfigError, match="curve forms"):
        shingled.experiment("sac-write-only", traces=[TRACE], rate=0.5)
    with pytest.raises(shingled.ConfigError, match=r"\(0, 1\]"):
        shingled.experiment("sac-write-only-curve", traces=[TRACE], rate=2)
    with pytest.raises(shingled.ConfigError, match="samples"):
        shingled.experiment("sac-write-only-curve", traces=[TRACE], samples=0)


def test_curve_progress_reports_every_phase():
    seen = []
    shingled.curve(TRACE, policies=["lru"], cache_sizes=["1%", "2%"], rate=0.5, validate=1,
                   progress=lambda *p: seen.append(p), **SMALL_BANDS)
    phases = [p[0] for p in seen]
    assert phases[-1] == "simulating", seen
    last = seen[-1]
    # The last report: every simulation finished (2 points, 1 full run, the exact LRU pass).
    assert last[3] == last[4] == 4 and last[1] == last[2] > 0, last
    exp = []
    shingled.experiment("sac-write-only-curve", traces=[TRACE], rate=1, progress=lambda *p: exp.append(p))
    assert exp and exp[-1][0] == "simulating" and exp[-1][3] == exp[-1][4], exp[-1]
