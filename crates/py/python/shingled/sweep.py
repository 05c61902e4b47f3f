"""Parameter sweeps: every point of a grid × traces, in parallel locally or on Ray, streaming
rows into a DataFrame and (optionally) a Parquet/CSV file that an interrupted sweep resumes."""

from __future__ import annotations

import itertools
import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from . import _core

#: Grid keys with a meaning of their own; any other key is a configuration field
#: (``"drive.pb_size"`` or ``"drive__pb_size"``).
SPECIAL_KEYS = ("policy", "drive", "cache", "mode", "scheme")


def _points(grid: Mapping[str, Sequence[Any]]) -> List[Dict[str, Any]]:
    keys = list(grid)
    for k in keys:
        if isinstance(grid[k], (str, bytes)) or not isinstance(grid[k], Iterable):
            raise _core.ConfigError(f"sweep grid key {k!r}: expected a list of values, got {grid[k]!r}")
    return [dict(zip(keys, vals)) for vals in itertools.product(*(list(grid[k]) for k in keys))]


def point_id(trace: str, params: Mapping[str, Any], config=None) -> str:
    """The key identifying a point in an output file (what ``resume`` skips): the trace, the
    grid values and a digest of the point's whole resolved configuration, so that a resumed
    sweep never returns a row computed under another base configuration."""
    import hashlib

    key = {"trace": trace, **params}
    if config is not None:
        key["config"] = hashlib.sha256(config.to_json().encode()).hexdigest()[:16]
    return json.dumps(key, sort_keys=True, default=str)


def point_config(base, trace: str, params: Mapping[str, Any]):
    """The `Config` of one point."""
    from . import make_config

    special = {k: v for k, v in params.items() if k in SPECIAL_KEYS and k != "scheme"}
    fields = {k: v for k, v in params.items() if k not in SPECIAL_KEYS}
    cfg = make_config(trace=trace, config=base, **special, **fields)
    if "scheme" in params:
        cfg = cfg.scheme(params["scheme"])
    return cfg


def _cell(v: Any) -> Any:
    return v if isinstance(v, (int, float, str, bool)) or v is None else json.dumps(v, sort_keys=True)


class _Sink:
    """Rows so far, saved atomically to ``out`` at most every ``every`` seconds and at the end.

    ``out`` is locked while the sweep runs (a second sweep into it is refused instead of both
    writing and the last one winning); only ``.parquet`` and ``.csv`` are written; an existing
    file that is not a sweep's output is refused rather than merged."""

    def __init__(self, out: Optional[Union[str, os.PathLike]], resume: bool, every: float = 2.0):
        import pandas as pd

        self.out = Path(out) if out is not None else None
        self.every = every
        self.last = 0.0
        self.rows: List[dict] = []
        self.done: set = set()
        self.lock = None
        if self.out is not None:
            if self.out.suffix not in (".parquet", ".csv"):
                raise _core.ConfigError(
                    f"sweep out={str(self.out)!r}: write a .parquet or a .csv file ({self.out.suffix or 'no suffix'} is not supported)"
                )
            if self.out.suffix == ".parquet":
                # Checked before any point runs: a missing engine found at the first save would
                # cost the points run so far and name no extra.
                from . import _need

                _need("pyarrow", "parquet")
            self._lock()
        if self.out is not None and resume and self.out.exists():
            old = self._read(self.out)
            if "point_id" not in old:
                self.close()
                raise _core.ConfigError(
                    f"sweep out={str(self.out)!r} exists and is not a sweep's output (no point_id column); "
                    "choose another path, or pass resume=False to replace it"
                )
            self.rows = old.to_dict("records")
            self.done = set(old["point_id"])
        self.dirty = False
        self.pd = pd

    def _lock(self) -> None:
        import fcntl

        path = self.out.with_name(self.out.name + ".lock")
        f = open(path, "a+")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            raise _core.ConfigError(
                f"sweep out={str(self.out)!r} is being written by another sweep (lock {path} is held)"
            ) from None
        self.lock = f

    def close(self) -> None:
        if self.lock is not None:
            self.lock.close()
            self.lock = None

    @staticmethod
    def _read(p: Path):
        import pandas as pd

        if p.suffix == ".parquet":
            return pd.read_parquet(p)
        return pd.read_csv(p)

    def add(self, row: dict) -> None:
        self.rows.append(row)
        self.done.add(row["point_id"])
        self.dirty = True
        if time.monotonic() - self.last >= self.every:
            self.save()

    def frame(self):
        return self.pd.DataFrame(self.rows)

    def save(self) -> None:
        if self.out is None or not self.dirty:
            return
        df = self.frame()
        tmp = self.out.with_name(self.out.name + ".tmp")
        if self.out.suffix == ".parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False)
        os.replace(tmp, self.out)
        self.last = time.monotonic()
        self.dirty = False


def _row(report_json: str, trace: str, params: Mapping[str, Any], pid: str) -> dict:
    from ._result import Result

    row = Result(json.loads(report_json)).row()
    row["trace"] = trace
    for k, v in params.items():
        row[k] = _cell(v)
    row["point_id"] = pid
    return row


def _run_point(config) -> str:
    """Ray task body: one simulation of a (pickled) `Config`, returning the report JSON."""
    return _core.simulate(config.to_json(), None)


def sweep(
    grid: Mapping[str, Sequence[Any]],
    traces: Union[str, Sequence[str]],
    backend: str = "local",
    jobs: Optional[int] = None,
    out: Optional[Union[str, os.PathLike]] = None,
    resume: bool = True,
    config=None,
    progress: Any = None,
    on_row: Optional[Callable[[dict], None]] = None,
):
    """Runs every point of ``grid`` (dict of lists over ``policy``, ``cache``, ``mode``,
    ``drive``, ``scheme`` or any configuration field such as ``"drive.pb_size"``) on every trace.

    ``backend="local"`` runs ``jobs`` simulations at a time on threads of the Rust core (the GIL
    is released); ``backend="ray"`` submits one Ray task per point (``ray.init`` first to use a
    cluster; a local one is started otherwise). Rows stream into ``out`` (``.parquet`` or
    ``.csv``); with ``resume`` points already there are skipped. Returns a DataFrame with one
    row per point: the grid values, ``trace``, ``point_id`` and every metric of
    `Result.row`. ``progress``: ``callback(requests_done)``, or ``"tqdm"`` for a bar with the
    total and an ETA (local backend; with Ray, a bar of points done).
    """
    from . import _progress
    from ._config import Config

    if not isinstance(grid, Mapping):
        raise TypeError(f"sweep grid: a dict of lists ({{'policy': ['lru', 'pore']}}), not {type(grid).__name__} {grid!r:.80}")
    if isinstance(traces, (str, os.PathLike)):
        traces = [traces]
    if isinstance(traces, (bytes, Mapping)) or not isinstance(traces, Iterable) or not all(
            isinstance(t, (str, os.PathLike)) for t in traces):
        raise TypeError(f"sweep traces: a path or a list of paths (or synth: specs), not {traces!r:.80}")
    base = config if config is not None else Config.default()
    sink = _Sink(out, resume)
    todo = []
    try:
        for t in traces:
            t = os.fspath(t)
            for params in _points(grid):
                cfg = point_config(base, t, params)
                pid = point_id(t, params, cfg)
                if pid not in sink.done:
                    todo.append((t, params, pid, cfg))
        cb, close = _progress(progress, "sweep")
    except BaseException:
        sink.close()
        raise
    try:
        if not todo:
            pass
        elif backend == "local":
            def got(i: int, rep: str) -> None:
                t, params, pid, _ = todo[i]
                row = _row(rep, t, params, pid)
                sink.add(row)
                if on_row:
                    on_row(row)

            _core.run_configs([c.to_json() for *_, c in todo], jobs, cb, got)
        elif backend == "ray":
            _sweep_ray(todo, jobs, sink, on_row)
        else:
            raise _core.ConfigError(f"sweep backend {backend!r}: use 'local' or 'ray'")
    finally:
        close()
        sink.save()
        sink.close()
    return sink.frame()


def _sweep_ray(todo, jobs, sink: _Sink, on_row) -> None:
    from . import _need

    ray = _need("ray", "ray")

    if not ray.is_initialized():
        ray.init(num_cpus=jobs or os.cpu_count(), include_dashboard=False, log_to_driver=False)
    remote = ray.remote(num_cpus=1)(_run_point)
    pending = {remote.remote(cfg): (t, params, pid) for t, params, pid, cfg in todo}
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                t, params, pid = pending.pop(ref)
                row = _row(ray.get(ref), t, params, pid)
                sink.add(row)
                if on_row:
                    on_row(row)
    finally:
        for ref in pending:
            ray.cancel(ref)
