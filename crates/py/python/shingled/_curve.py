"""Curves over cache and PB sizes from sampled mini-simulations (``shingled curve``)."""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, List, Mapping, Optional, Sequence, Union

from . import _core

#: Every metric of a curve point (the Rust ``PointMetrics`` fields).
METRICS = (
    "hit_ratio",
    "read_hit_ratio",
    "write_hit_ratio",
    "write_amplification",
    "device_write_amplification",
    "rmws",
    "pb_writes",
    "band_bytes_written",
    "dirty_evictions",
    "clean_evictions",
    "drive_blocks_written",
    "total_time_s",
    "drive_write_time_s",
    "requests",
)


def _list(name: str, v: Union[str, Sequence[str], None]) -> List[str]:
    if v is None:
        return []
    if isinstance(v, str):
        v = [v]
    if isinstance(v, (bytes, Mapping)) or not isinstance(v, Iterable) or not all(isinstance(x, str) for x in v):
        raise TypeError(f"curve {name}: a str or a list of str, not {type(v).__name__} {v!r:.80}")
    out = [str(x).strip() for x in v if str(x).strip()]
    if not out:
        raise _core.ConfigError(f"curve {name}: the list names nothing")
    return out


def _rate(rate: Union[str, float]) -> Any:
    if rate == "auto":
        return "auto"
    if isinstance(rate, str):
        try:
            rate = float(rate[:-1]) / 100 if rate.endswith("%") else float(rate)
        except ValueError:
            raise _core.ConfigError(f"curve rate {rate!r}: use 'auto', a fraction in (0, 1] or a percentage") from None
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not (0 < rate <= 1):
        raise _core.ConfigError(f"curve rate {rate!r}: must be in (0, 1] or 'auto'")
    return {"fixed": float(rate)}


def _unit(unit: str) -> Any:
    if unit == "band":
        return "band"
    if isinstance(unit, str) and unit.startswith("zone:"):
        return {"zone": unit[len("zone:"):]}
    raise _core.ConfigError(f"curve unit {unit!r}: use 'band' or 'zone:SIZE' (zone:20MiB)")


def frame(report: dict):
    """The DataFrame of a ``CurveReport``: one row per policy × size with every metric, the
    full run's as ``full_<metric>`` where validated, ``exact_hit_ratio`` for LRU, ``method``,
    ``validated`` and ``rate``. The report (rate, unit, errors, costs) is in ``df.attrs``."""
    import pandas as pd

    rows = []
    for p in report["points"]:
        row = {
            "policy": p["policy"],
            "trace": report["trace"],
            "mode": report["mode"],
            "cache_size": p["cache_size"],
            "cache_blocks": p["cache_blocks"],
            "cache_gib": p["cache_blocks"] * 4096 / 2**30,
            "pb_size": p["pb_size"],
            "pb_blocks": p["pb_blocks"],
            "method": p["method"],
            "rate": report["rate"],
            "validated": p["full"] is not None,
            "exact_hit_ratio": p["exact_hit_ratio"],
            "wall_s": p["wall_s"],
        }
        for m in METRICS:
            row[m] = p["metrics"].get(m)
        for m in METRICS:
            row[f"full_{m}"] = (p["full"] or {}).get(m)
        rows.append(row)
    df = pd.DataFrame(rows)
    df.attrs.update({k: v for k, v in report.items() if k not in ("points", "base")})
    return df


def _curve_ray(cfg_json: str, opts: dict, jobs: Optional[int], cb: Any = None) -> str:
    """The grid split by policy into Ray tasks (each reads the same seeded samples, so every
    point is what the local backend computes), the validated points chosen over the whole grid,
    and the parts merged."""
    from . import _need

    ray = _need("ray", "ray")
    if not ray.is_initialized():
        ray.init(num_cpus=jobs or os.cpu_count(), include_dashboard=False, log_to_driver=False)
    per = max(1, len(opts["cache_sizes"] or [None])) * max(1, len(opts["pb_sizes"] or [None]))
    policies = opts["policies"]
    chosen = _core.curve_spread(per * len(policies), opts["validate"])
    remote = ray.remote(num_cpus=1)(_core_curve)
    refs = []
    for i, p in enumerate(policies):
        part = dict(opts, policies=[p], validate=0, jobs=1,
                    validate_points=[c - i * per for c in chosen if i * per <= c < (i + 1) * per])
        refs.append(remote.remote(cfg_json, json.dumps(part)))
    # Progress by finished tasks (one per policy): `(phase, done, tasks, done, tasks)`.
    pending, done = list(refs), 0
    while pending:
        if cb is not None:
            cb("simulating", done, len(refs), done, len(refs))
        ready, pending = ray.wait(pending, num_returns=1)
        done += len(ready)
    if cb is not None:
        cb("simulating", done, len(refs), done, len(refs))
    return _core.curve_merge(ray.get(refs))


def _core_curve(cfg_json: str, opts_json: str) -> str:
    """Ray task body: one part of a curve."""
    return _core.curve(cfg_json, opts_json)


def curve(
    trace=None,
    policies: Union[str, Sequence[str]] = "lru",
    cache_sizes: Union[str, Sequence[str], None] = None,
    pb_sizes: Union[str, Sequence[str], None] = None,
    rate: Union[str, float] = "auto",
    unit: str = "band",
    sampling: str = "stratified",
    samples: int = 1,
    seed: int = 0,
    validate: int = 0,
    jobs: Optional[int] = None,
    backend: str = "local",
    config=None,
    plot: Optional[str] = None,
    warmup: Union[str, int, None] = None,
    progress: Any = None,
    **fields: Any,
):
    """Curves over cache sizes (and PB sizes) for each policy on one trace (``shingled curve``).

    Every point comes from sampled mini-simulations: whole bands (or ``unit="zone:20MiB"``
    zones) kept at ``rate`` (a fraction, or ``"auto"``), sizes scaled down and counts scaled
    back; ``rate=1`` runs every point in full. ``sampling``: ``"stratified"`` (every
    ``1/rate``-th band in order of traffic) or ``"hash"`` (SHARDS' hash of the band). LRU's hit ratio is also given exactly
    (``exact_hit_ratio``, one pass of stack distances). ``validate=N`` runs the full simulation
    at N points spread over the grid: their figures are the ``full_*`` columns and the
    per-metric errors are in ``df.attrs["errors"]``. ``cache_sizes``/``pb_sizes``: lists of
    sizes (``"2%"``, ``"1GiB"``, ``"1/256"``); with neither, 0.25% to 10%. ``backend``:
    ``"local"`` (threads of the Rust core, ``jobs`` at a time) or ``"ray"`` (one task per
    policy). ``config`` and ``fields`` make the base configuration as in `simulate`
    (``drive=``, ``mode=``, ``setup=``, ``drive__bands=…``). ``plot``: a file name to also draw
    the hit-ratio curve there (`shingled.plot.curve`). ``warmup`` (as in `simulate`: a request
    count, ``"10%"``, ``"cache-full"``, ``"none"``): every point, the validated full runs and
    LRU's exact curve cover the window after it (`simulate`'s ``after_warmup``); without it,
    the whole replay (``df.attrs["window"]`` says which). ``progress``: ``"tqdm"`` or True (a
    bar per phase: measuring, counting, sampling, simulating) or a callable getting ``(phase,
    requests, requests_total, runs_done, runs)``; with ``backend="ray"`` it counts finished
    tasks (one per policy) in the ``simulating`` phase.

    Returns a DataFrame (see `frame`)."""
    from . import make_config

    policies = _list("policies", policies)
    cache_sizes = _list("cache_sizes", cache_sizes)
    pb_sizes = _list("pb_sizes", pb_sizes)
    if not cache_sizes and len(pb_sizes) <= 1:
        cache_sizes = ["0.25%", "0.5%", "1%", "1.5%", "2%", "3%", "4%", "6%", "8%", "10%"]
    if len(pb_sizes) == 1:
        fields["drive__pb_size"] = pb_sizes[0]
        pb_sizes = []
    if sampling not in ("stratified", "hash"):
        raise _core.ConfigError(f"curve sampling {sampling!r}: use 'stratified' or 'hash'")
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise _core.ConfigError(f"curve samples {samples!r}: at least 1")
    if isinstance(validate, bool) or not isinstance(validate, int) or validate < 0:
        raise _core.ConfigError(f"curve validate {validate!r}: a count of points, 0 or more")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise _core.ConfigError(f"curve seed {seed!r}: an integer from 0 to 2**64 - 1")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise _core.ConfigError(f"curve jobs {jobs!r}: an integer, at least 1 (or None: one per core)")
    for name, values in (("policies", policies), ("cache_sizes", cache_sizes), ("pb_sizes", pb_sizes)):
        for i, v in enumerate(values):
            if v in values[:i]:
                raise _core.ConfigError(f"curve {name}: {v!r} is given twice; give each once")
    for p in policies:
        _core.parse_policy(p)
    if warmup is not None:
        fields["warmup"] = warmup
    cfg = make_config(trace, config=config, **fields)
    opts = {
        "policies": policies,
        "cache_sizes": cache_sizes,
        "pb_sizes": pb_sizes,
        "rate": _rate(rate),
        "samples": samples,
        "seed": seed,
        "unit": _unit(unit),
        "sampling": sampling,
        "validate": validate,
        "validate_points": [],
        "jobs": jobs or os.cpu_count() or 1,
        "after_warmup": warmup is not None,
    }
    if backend not in ("local", "ray"):
        raise _core.ConfigError(f"curve backend {backend!r}: use 'local' or 'ray'")
    from . import _progress

    cb, close = _progress(progress, f"curve on {json.loads(cfg.to_json())['trace']['path']}")
    try:
        if backend == "local":
            report = _core.curve(cfg.to_json(), json.dumps(opts), cb)
        else:
            report = _curve_ray(cfg.to_json(), opts, jobs, cb)
    finally:
        close()
    df = frame(json.loads(report))
    if plot is not None:
        from . import plot as _plot

        _plot.curve(df, out=plot)
    return df
