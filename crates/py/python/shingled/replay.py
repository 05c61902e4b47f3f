"""Real I/O (``shingled replay``): a trace's requests issued against a file, a block device, a
``shingled`` block cache or a translation layer (in process), timed by the wall clock, beside a
drive model's time for the same requests.

>>> r = shingled.replay("synth:wdev", "/dev/sdX", limit=10_000, write_only=True,
...                     model_drive="st5000as0011", force=True)          # doctest: +SKIP
>>> shingled.replay_frame(r)                                              # doctest: +SKIP
"""
import json
import os
from typing import Any, Dict, Optional, Union

from . import _core

PathLike = Union[str, "os.PathLike[str]"]


def replay(trace: PathLike, target: PathLike, *, limit: Optional[int] = None, write_only: bool = False,
           open_loop: bool = False, time_scale: float = 1.0, queue_depth: int = 1, warmup: int = 0,
           direct: bool = True, fold: bool = False, force: bool = False, verify: bool = False,
           model_drive: Optional[str] = None, cdf: bool = False) -> Dict[str, Any]:
    """Issues ``trace``'s requests (a trace file or ``synth:…``) against ``target`` and returns
    the report (the JSON ``shingled replay --output json`` prints) as a dict.

    ``target``: a file or block device (O_DIRECT unless ``direct=False``), a cache device made by
    `BlockCache.create` / ``shingled cache create`` (run in process over its backing device), or
    a translation layer's file. Closed loop by default; ``open_loop`` issues at the trace's
    timestamps × ``time_scale``. ``queue_depth``: requests in flight (files and devices).
    ``warmup``: requests issued first and not measured. ``fold``: fold requests past the
    target's end into it instead of refusing. ``force``: write over data the replay did not
    write (destroyed). ``verify``: check every read of a block this replay wrote.
    ``model_drive``: also time the requests on this drive profile's model. ``cdf``: keep the
    latency CDFs. Raises `ReplayTargetError` for a bad target or option (nothing is written),
    `TraceError` / `ConfigError` for the trace, `Cancelled` on Ctrl-C."""
    return json.loads(_core.replay(str(os.fspath(trace)), os.fspath(target), limit, write_only, open_loop, time_scale, queue_depth,
                                   warmup, direct, fold, force, verify, model_drive, cdf))


def replay_frame(report: Dict[str, Any]):
    """The latencies of a `replay` report as a DataFrame, one row per (``source``, ``ops``):
    ``measured`` and, with a model, ``model <profile>``; ``all``, ``reads`` and ``writes``."""
    import pandas as pd

    rows = []
    sources = [("measured", report)]
    if report.get("model"):
        sources.append((f"model {report['model']['drive']}", report["model"]))
    for name, src in sources:
        for ops in ("all", "reads", "writes"):
            s = src[ops]
            rows.append(dict(source=name, ops=ops, requests=s["requests"], bytes=s["bytes"],
                             total_latency_s=s["total_latency_s"], **s["latency"]))
    return pd.DataFrame(rows).set_index(["source", "ops"])


__all__ = ["replay", "replay_frame"]
