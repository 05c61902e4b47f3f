"""Python API of ``shingled``: SSD caches above SMR drives, simulated by the Rust core.

>>> import shingled
>>> r = shingled.simulate("synth:wdev,scale=0.01", policy="pore-bl", cache="2%", mode="write-only")
>>> r.total_time_s, r.write_hit_ratio, r.rmws                          # doctest: +SKIP
>>> df = shingled.compare("synth:wdev,scale=0.01", schemes=["smr-only", "lru", "sac"])

Results are built from the same JSON the CLI prints (``--output json``), so every metric the
CLI reports is there. Long runs release the GIL; Ctrl-C stops them and raises
``KeyboardInterrupt``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Iterable, Iterator, List, Mapping, Optional, Sequence, Union

from . import _core
from ._config import Config, Section
from ._core import (
    BlockCacheError,
    Cancelled,
    ConfigError,
    CorruptionError,
    DeviceError,
    NoSuchChunk,
    PolicyError,
    ProbeError,
    ReadOnlyError,
    ReplayTargetError,
    ShingledError,
    StoreError,
    TraceError,
    TranslationLayerError,
    ZonedError,
)
from ._probe import probe
from ._result import Result, flatten_metrics, series_frame
from ._store_bench import StoreBenchResult, store_bench, store_benches
from .blockcache import BlockCache, cache_inspect, cache_lost_blocks, cache_replay
from .replay import replay, replay_frame
from .stl import TranslationLayer
from .store import ChunkStore, StoreFront
from .sweep import sweep
from ._curve import curve

__all__ = [
    "Config",
    "Result",
    "CompareResult",
    "series_frame",
    "simulate",
    "compare",
    "experiment",
    "experiments",
    "setups",
    "sweep",
    "curve",
    "open_trace",
    "trace_stats",
    "generate",
    "convert",
    "mix",
    "policies",
    "drives",
    "ShingledError",
    "TraceError",
    "ConfigError",
    "DeviceError",
    "PolicyError",
    "Cancelled",
    "ChunkStore",
    "StoreFront",
    "store_bench",
    "store_benches",
    "StoreBenchResult",
    "StoreError",
    "NoSuchChunk",
    "CorruptionError",
    "ReadOnlyError",
    "ZonedError",
    "TranslationLayer",
    "TranslationLayerError",
    "BlockCache",
    "BlockCacheError",
    "cache_inspect",
    "cache_lost_blocks",
    "cache_replay",
    "replay",
    "replay_frame",
    "ReplayTargetError",
    "probe",
    "ProbeError",
    "PROGRESS_EVERY",
]

PROGRESS_EVERY: int = _core.PROGRESS_EVERY
PathLike = Union[str, "os.PathLike[str]"]


def policies() -> List[str]:
    """Policy names (``shingled policies``)."""
    return list(_core.policies())


def drives() -> List[str]:
    """Drive profile names (``shingled drives``)."""
    return list(_core.drive_profiles())


def experiments() -> dict:
    """The papers' experiments: name -> title (``shingled experiment list``)."""
    return dict(_core.experiments_list())


def setups() -> dict:
    """The named set-ups (``--setup``): name -> what it models. ``pore`` is the default."""
    return dict(_core.setups_list())


class _TqdmProgress:
    """A tqdm bar fed by the core: request counts, and the total once the traces are measured."""

    def __init__(self, desc: str):
        from tqdm.auto import tqdm

        self.desc = desc
        self.bar = tqdm(desc=desc, unit=" req", unit_scale=True)

    def set_total(self, total: int) -> None:
        self.bar.total = total
        self.bar.refresh()

    def __call__(self, n, *curve) -> None:
        # A curve's progress: (phase, requests, requests_total, runs_done, runs), each phase a
        # pass of its own length.
        if curve:
            phase, requests, total, done, runs = (n, *curve)
            desc = f"{self.desc}: {phase}" + (f" ({done}/{runs} simulations)" if runs else "")
            if self.bar.desc != desc:
                self.bar.set_description_str(desc, refresh=False)
            if self.bar.total != (total or None):
                self.bar.reset(total=total or None)
            n = requests
        self.bar.update(n - self.bar.n)

    def close(self) -> None:
        self.bar.close()


def _need(module: str, extra: str):
    """Imports an optional dependency, or raises ImportError naming the extra that installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"{module} is not installed; install it with: pip install 'shingled[{extra}]' "
            f"(or pip install {module})"
        ) from e


def _progress(progress: Any, desc: str):
    """(callback, close) for a progress argument: None, a callable, ``"tqdm"`` or True (a tqdm
    bar with the total and an ETA; needs the ``progress`` extra)."""
    if progress is None or progress is False:
        return None, lambda: None
    if progress == "tqdm" or progress is True:
        _need("tqdm", "progress")
        bar = _TqdmProgress(desc)
        return bar, bar.close
    if callable(progress):
        return progress, lambda: None
    raise TypeError(f"progress must be a callable, 'tqdm' or None, not {progress!r}")


def make_config(
    trace: Optional[PathLike] = None,
    policy: Union[str, Mapping[str, Any], None] = None,
    drive: Union[str, Mapping[str, Any], None] = None,
    cache: Union[str, bool, None] = None,
    mode: Optional[str] = None,
    config: Optional[Config] = None,
    setup: Optional[str] = None,
    **fields: Any,
) -> Config:
    """A `Config` from a base (default: the CLI's) and the same overrides the CLI flags give.

    ``setup`` (``pore``, ``sac``, ``generic``; see `setups`) replaces the drive, the CMR-only
    drive and the I/O unit first, as ``--setup`` does."""
    cfg = config if config is not None else Config.default()
    if isinstance(cfg, (str, bytes, os.PathLike)):
        cfg = Config.from_toml(cfg)
    if not isinstance(cfg, Config):
        raise TypeError(f"config must be a shingled.Config or a path to a TOML file, not {type(cfg).__name__} {cfg!r}")
    if isinstance(trace, bytes):
        trace = os.fsdecode(trace)
    for name, v in (("policy", policy), ("drive", drive)):
        if v is not None and not isinstance(v, (str, Mapping)):
            raise TypeError(
                f"{name} must be a name (str) or a table (dict), not {type(v).__name__} {v!r}"
                + ("; to run several, use shingled.sweep({'policy': [...]}, trace)" if name == "policy" else "")
            )
    for name, v in (("mode", mode), ("setup", setup)):
        if v is not None and not isinstance(v, str):
            raise TypeError(f"{name} must be a name (str), not {type(v).__name__} {v!r:.80}")
    if setup is not None:
        cfg = cfg.with_setup(setup)
    if trace is not None:
        cfg = cfg.with_trace(trace)
    if mode is not None:
        cfg = cfg.with_mode(mode)
    if drive is not None:
        cfg = cfg.with_drive(drive)
    if cache is not None:
        cfg = cfg.with_cache(cache)
    if policy is not None:
        cfg = cfg.with_policy(policy)
    if fields:
        cfg = cfg.replace(**fields)
    return cfg


def simulate(
    trace: Optional[PathLike] = None,
    policy: Union[str, Mapping[str, Any], None] = None,
    drive: Union[str, Mapping[str, Any], None] = None,
    cache: Union[str, bool, None] = None,
    mode: Optional[str] = None,
    config: Optional[Config] = None,
    progress: Any = None,
    setup: Optional[str] = None,
    **fields: Any,
) -> Result:
    """Runs one simulation (``shingled sim``).

    ``trace``: a trace file or ``synth:<profile>[,scale=…]``; ``policy``: a name or
    ``name:field=value`` string; ``drive``: a profile name or a drive table; ``cache``: a size
    (``"2%"``) or ``False`` for no cache; ``mode``: ``read-write``, ``write-only``…; ``config``:
    the base `Config`; ``fields``: any other field, nested as ``drive__pb_size="1/128"``.
    ``progress``: ``callback(requests_done)`` or ``"tqdm"``; ``setup``: a named set-up
    (`setups`), applied before ``drive``. ``interval=10000`` (requests) or ``interval="60s"``
    (trace time), a field like any other, adds metrics over time: `Result.series`.
    """
    cfg = make_config(trace, policy, drive, cache, mode, config, setup, **fields)
    cb, close = _progress(progress, f"sim {cfg.label}")
    try:
        return Result(json.loads(_core.simulate(cfg.to_json(), cb)))
    finally:
        close()


class CompareResult:
    """A comparison: ``.frame`` (one row per scheme), ``.results`` and the raw ``.report``."""

    def __init__(self, report: dict):
        self.report = report
        self.results = [Result(r) for r in report["runs"]]

    @property
    def trace(self) -> dict:
        return self.report["trace"]

    @property
    def frame(self):
        return _frame(self.results, self.report["runs"])

    def series(self):
        """Metrics over time of every scheme (a comparison with ``interval=``): one row per
        scheme and window, ``label`` naming the scheme (`series_frame`)."""
        import pandas as pd

        return pd.concat([r.series() for r in self.results], ignore_index=True)


def _frame(results: Sequence[Result], runs=None):
    import pandas as pd

    df = pd.DataFrame([r.row() for r in results])
    if len(df):
        df.index = pd.Index(df["label"], name="scheme")
        if "smr-only" in set(df["label"]):
            base = df.loc[df["label"] == "smr-only", "total_time_s"].iloc[0]
            df["vs_smr_only"] = base / df["total_time_s"].where(df["total_time_s"] > 0)
        # The distance to the offline bounds (docs/bounds.md), when an offline scheme ran: hits
        # below Belady's MIN, RMWs over the offline RMW bound.
        hits = df["read_hits"] + df["write_hits"]
        if "belady" in set(df["policy"].dropna()):
            df["hits_below_min"] = hits[df["policy"] == "belady"].iloc[0] - hits
        bound = next((r["offline_bound"] for r in (runs or []) if r.get("offline_bound")), None)
        if bound is not None:
            lb = bound["rmw_lower_bound"]
            df["rmw_lower_bound"] = lb
            df["rmws_over_bound"] = df["rmws"] / lb if lb > 0 else float("nan")
    return df


def compare(
    trace: Optional[PathLike] = None,
    schemes: Optional[Sequence[str]] = None,
    policy: Union[str, Mapping[str, Any], None] = None,
    drive: Union[str, Mapping[str, Any], None] = None,
    cache: Union[str, bool, None] = None,
    mode: Optional[str] = None,
    config: Optional[Config] = None,
    jobs: Optional[int] = None,
    progress: Any = None,
    raw: bool = False,
    setup: Optional[str] = None,
    **fields: Any,
):
    """Compares schemes on one trace (``shingled compare``): a DataFrame indexed by scheme, with
    the raw `CompareResult` in ``df.attrs["report"]`` (or returned with ``raw=True``). The
    report names its set-up (``report["setup"]``) and, in PORE's set-up, lists PORE's headline
    figures beside ours (``report["paper"]``). With ``interval=`` (as in `simulate`), every
    scheme's metrics over time are in ``CompareResult.series()`` (``raw=True``) or
    ``shingled.series_frame`` of each of ``df.attrs["report"]["runs"]``."""
    cfg = make_config(trace, policy, drive, cache, mode, config, setup, **fields)
    if schemes is not None:
        if isinstance(schemes, str):
            schemes = [s.strip() for s in schemes.split(",") if s.strip()]
        if isinstance(schemes, (bytes, Mapping)) or not isinstance(schemes, Iterable) or not all(
                isinstance(s, str) for s in schemes):
            raise TypeError(f"compare schemes: a str or a list of str, not {type(schemes).__name__} {schemes!r:.80}")
        cfg = cfg.replace(**{"compare.schemes": list(schemes)})
    cb, close = _progress(progress, "compare")
    try:
        res = CompareResult(json.loads(_core.compare(cfg.to_json(), jobs, cb)))
    finally:
        close()
    if raw:
        return res
    df = res.frame
    df.attrs["report"] = res.report
    return df


def experiment(
    name: str,
    traces: Union[PathLike, Sequence[PathLike], None] = None,
    mode: Optional[str] = None,
    config: Optional[Config] = None,
    jobs: Optional[int] = None,
    progress: Any = None,
    setup: Optional[str] = None,
    rate: Union[str, float, None] = None,
    samples: Optional[int] = None,
    seed: Optional[int] = None,
    unit: Optional[str] = None,
    sampling: Optional[str] = None,
    validate: Optional[int] = None,
    offline: bool = False,
    **fields: Any,
):
    """Runs one of the papers' experiments (``shingled experiment NAME``); a DataFrame with a
    ``trace`` and a ``label`` column per cell, the report in ``df.attrs["report"]`` (with the
    paper's figures beside ours in ``report["paper"]``).

    ``offline=True`` adds Belady's MIN and band-min for each set-up of the runs (``shingled
    experiment NAME --offline``): rows labelled ``belady …`` and ``band-min …``, the offline
    RMW bound in their runs' ``offline_bound`` (docs/bounds.md); they take no part in the
    paper's claims.

    The runs use the paper's set-up (``pore`` or ``sac``) unless ``setup``, ``config`` or a
    drive field says otherwise, as on the command line.

    The curve forms (``pore-ssd-size-curve``, ``sac-write-only-curve``) compute their cells by
    sampled mini-simulations as `curve` does: ``rate``, ``samples``, ``seed``, ``unit``,
    ``sampling`` and ``validate`` mean what they mean there (the other experiments refuse them
    with a `ConfigError`; a ``progress`` callable then gets ``(phase, requests,
    requests_total, runs_done, runs)``, as in `curve`). Their rows also hold ``method``, ``exact_hit_ratio`` (LRU) and
    ``validated``; ``df.attrs["curves"]`` holds one `curve` DataFrame per trace (for
    `shingled.plot.curve`)."""
    import pandas as pd

    from ._curve import _rate, _unit, frame

    curve = {}
    if rate is not None:
        curve["rate"] = _rate(rate)
    if unit is not None:
        curve["unit"] = _unit(unit)
    if sampling is not None:
        if sampling not in ("stratified", "hash"):
            raise ConfigError(f"experiment sampling {sampling!r}: use 'stratified' or 'hash'")
        curve["sampling"] = sampling
    for k, v, least in (("samples", samples, 1), ("seed", seed, 0), ("validate", validate, 0)):
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, int) or v < least:
                raise ConfigError(f"experiment {k} {v!r}: an integer, at least {least}")
            curve[k] = v
    ignored = _ignored_experiment_fields(name, mode, setup, fields)
    if ignored:
        raise ConfigError(
            f"experiment {name} sets {', '.join(ignored)} itself; drop "
            + ("it (it would be ignored)" if len(ignored) == 1 else "them (they would be ignored)")
        )
    paper_setup = setup is None and config is None and not any(k.startswith("drive") or k == "io_unit" for k in fields)
    cfg = make_config(config=config, setup=setup, **fields)
    # One trace given as a str or path is one trace (not its characters).
    if isinstance(traces, (str, bytes, os.PathLike)):
        traces = [traces]
    traces = [os.fsdecode(t) if isinstance(t, bytes) else os.fspath(t) if isinstance(t, os.PathLike) else t
              for t in (traces or [])]
    bad = [t for t in traces if not isinstance(t, str)]
    if bad:
        raise TypeError(f"experiment traces: a path or a list of paths (or synth: specs), not {bad[0]!r}")
    cb, close = _progress(progress, name)
    try:
        rep = json.loads(
            _core.experiment(name, cfg.to_json(), traces, mode, jobs, cb, paper_setup,
                             json.dumps(curve) if curve else None, bool(offline))
        )
    finally:
        close()
    curves = rep.get("curves") or []
    rows = []
    for i, (cell, run) in enumerate(zip(rep["experiment"]["cells"], rep["runs"])):
        row = Result(run).row()
        row["trace"] = cell["trace"]
        row["label"] = cell["label"]
        rows.append(row)
    # A curve per trace, its points in the order of that trace's cells.
    for c in curves:
        mine = [row for row in rows if row["trace"] == c["trace"]]
        for row, p in zip(mine, c["points"]):
            row["method"] = p["method"]
            row["exact_hit_ratio"] = p["exact_hit_ratio"]
            row["validated"] = p["full"] is not None
    df = pd.DataFrame(rows)
    df.attrs["report"] = rep
    if curves:
        df.attrs["curves"] = [frame(c) for c in curves]
    return df


def _ignored_experiment_fields(name: str, mode: Optional[str], setup: Optional[str], fields: Mapping[str, Any]) -> List[str]:
    """The arguments `experiment` would silently drop, as ``shingled experiment`` refuses its
    flags: the trace and the policy always, and the parts the experiment sets itself
    (`_core.experiment_fixed`)."""
    fixed = set(_core.experiment_fixed(name))
    keys = [k.replace("__", ".") for k in fields]
    out: List[str] = []

    def given(part: Optional[str], pred: Any) -> None:
        if part is None or part in fixed:
            out.extend(k for k in keys if pred(k) and k not in out)

    given(None, lambda k: k in ("trace", "trace.path"))
    given(None, lambda k: k == "cache.policy" or k.startswith("cache.policy."))
    given("cache-size", lambda k: k in ("cache", "cache.size"))
    if mode is not None and "mode" in fixed:
        out.append("mode")
    given("replay", lambda k: k == "replay")
    given("io-unit", lambda k: k == "io_unit")
    if "drive" in fixed and setup is not None:
        out.append("setup")
    given("drive", lambda k: k == "drive" or k.startswith("drive."))
    given("trace-scaling", lambda k: k in ("trace.lba_scale", "trace.fold"))
    given("no-cache", lambda k: k in ("warmup", "ssd") or k.startswith("ssd."))
    return out


# Traces -------------------------------------------------------------------------------------

REQUEST_DTYPE = None


def _dtype():
    import numpy as np

    return np.dtype(
        [("time_ns", "<u8"), ("offset", "<u8"), ("len", "<u4"), ("volume", "<u4"), ("is_write", "u1")]
    )


def _spec(path: PathLike, format: Optional[str], volume: Optional[int], skip_bad_lines: bool) -> str:
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"trace path: a str or path (or a synth: spec), not {type(path).__name__} {path!r:.80}")
    if format is not None and not isinstance(format, str):
        raise TypeError(f"trace format: a format name (shingled trace formats), not {type(format).__name__} {format!r:.80}")
    if volume is not None and (isinstance(volume, bool) or not isinstance(volume, int)):
        raise TypeError(f"trace volume: an integer, not {type(volume).__name__} {volume!r:.80}")
    d: dict = {"path": os.fspath(path), "skip_bad_lines": skip_bad_lines}
    if format is not None:
        d["format"] = format
    if volume is not None:
        d["volume"] = volume
    return json.dumps(d)


class TraceFile:
    """A streaming trace: iterate for request tuples ``(time_ns, volume, op, offset, len)``, or
    ``chunks(n)`` for NumPy structured arrays (fields time_ns, offset, len, volume, is_write)."""

    def __init__(self, path: PathLike, format: Optional[str] = None, volume: Optional[int] = None,
                 skip_bad_lines: bool = False):
        self._args = (path, format, volume, skip_bad_lines)

    def chunks(self, size: int = 1 << 16) -> Iterator["Any"]:
        import numpy as np

        reader = _core.Reader(_spec(*self._args))
        dt = _dtype()
        while True:
            buf = reader.read(size)
            if not buf:
                return
            yield np.frombuffer(buf, dtype=dt)

    def to_numpy(self):
        import numpy as np

        parts = list(self.chunks())
        return np.concatenate(parts) if parts else np.empty(0, dtype=_dtype())

    def __iter__(self):
        for chunk in self.chunks():
            for t, off, ln, vol, w in chunk.tolist():
                yield (t, vol, "Write" if w else "Read", off, ln)


def open_trace(path: PathLike, format: Optional[str] = None, volume: Optional[int] = None,
               skip_bad_lines: bool = False) -> TraceFile:
    """Opens a trace (any supported format, ``.gz``, or ``synth:…``) for streaming."""
    return TraceFile(path, format, volume, skip_bad_lines)


def trace_stats(path: PathLike, format: Optional[str] = None, volume: Optional[int] = None,
                skip_bad_lines: bool = False, bands: Optional[Mapping[str, Any]] = None) -> dict:
    """The trace's footprint (``shingled trace stats --json``)."""
    return json.loads(
        _core.trace_stats(_spec(path, format, volume, skip_bad_lines), json.dumps(bands) if bands else None)
    )


def generate(profile: str, out_path: PathLike, scale: float = 1.0, seed: int = 0) -> int:
    """Writes a synthetic MSR-like trace (``shingled trace profiles``) in the binary format;
    returns the number of requests."""
    if not isinstance(profile, str):
        raise TypeError(f"generate profile: a profile name (shingled trace profiles), not {type(profile).__name__} {profile!r:.80}")
    spec = profile if profile.startswith("synth:") else f"synth:{profile}"
    return _core.convert(f"{spec},scale={scale},seed={seed}", os.fspath(out_path))


def convert(input: PathLike, out_path: PathLike) -> int:
    """Converts a trace to the binary format (``shingled trace convert``)."""
    return _core.convert(os.fspath(input), os.fspath(out_path))


def mix(inputs: Iterable[PathLike], out: PathLike, copies: int = 1, seed: int = 0) -> dict:
    """Builds a mixed trace (``shingled trace mix``); returns its summary."""
    # one input given as a str or path is one input (not its characters)
    if isinstance(inputs, (str, bytes, os.PathLike)):
        inputs = [inputs]
    if isinstance(inputs, Mapping) or not isinstance(inputs, Iterable):
        raise TypeError(f"mix inputs: a path or a list of paths (or synth: specs), not {type(inputs).__name__} {inputs!r:.80}")
    paths = []
    for i in inputs:
        if isinstance(i, bytes):
            i = os.fsdecode(i)
        if not isinstance(i, (str, os.PathLike)):
            raise TypeError(f"mix inputs: a path or a list of paths (or synth: specs), not {type(i).__name__} {i!r:.80}")
        paths.append(os.fspath(i))
    return json.loads(_core.mix(paths, os.fspath(out), copies, seed))
