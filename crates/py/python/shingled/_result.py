"""`Result`: one simulation's report as plain Python objects."""

from __future__ import annotations

import copy
from typing import Any, Dict, Optional

_TOP = ("label", "mode", "policy", "drive")


def flatten_metrics(m: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
    """One flat dict of a `Metrics` table: counters, ratios, times, ``latency_*`` and the
    drive's own counters (``rmws``, ``pb_writes``…; ``drive_<name>`` where a name repeats) and
    its time by cause and mechanical component (``time_pb_write_s``, ``time_seek_s``…) with the
    background part of each cause (``time_background_destage_s``…); ``write_amplification`` (WA:
    band bytes written / PB bytes cleaned) and ``device_write_amplification`` (media bytes written /
    bytes the application wrote, with ``media_bytes_written``), docs/metrics.md."""
    out: Dict[str, Any] = {}
    for k, v in m.items():
        if not isinstance(v, dict):
            out[prefix + k] = v
    for k, v in m.get("latency", {}).items():
        out[f"{prefix}latency_{k}"] = v
    for k, v in m.get("drive", {}).items():
        if isinstance(v, dict):
            continue
        for name in (k, "drive_" + k):
            if prefix + name not in out:
                out[prefix + name] = v
                break
    # The drive's time by cause and component (ns in the report), as ``time_<part>_s`` seconds.
    for k, v in m.get("drive", {}).get("time", {}).items():
        out[f"{prefix}time_{k}_s"] = v / 1e9
    # Its background part: work between requests, in no request's time (``time_background_<cause>_s``).
    for k, v in m.get("drive", {}).get("background", {}).items():
        if k not in ("overhead", "seek", "rotation", "transfer"):
            out[f"{prefix}time_background_{k}_s"] = v / 1e9
    # A translation layer's counters (SMaRT, and Skylight's cleanings in SMaRT's terms), with
    # SMaRT §5.5's figures: GC per 1 M drive writes (Table 2), amplified writes (Fig. 10),
    # fragmented reads (Fig. 6). Histograms stay in the report (``report["total"]["drive"]["stl"]``).
    drive = m.get("drive", {})
    stl = drive.get("stl")
    if stl:
        for k, v in stl.items():
            if not isinstance(v, list):
                out[f"{prefix}stl_{k}"] = v
        w, r = drive.get("write_ops", 0), drive.get("read_ops", 0)
        per = lambda a, b, x: a * x / b if b else None
        out[f"{prefix}gc_f_per_m"] = per(stl.get("gc_ondemand", 0), w, 1e6)
        out[f"{prefix}gc_b_per_m"] = per(stl.get("gc_background", 0), w, 1e6)
        out[f"{prefix}amplified_write_pct"] = per(stl.get("writes_triggering_gc", 0), w, 100.0)
        out[f"{prefix}fragmented_read_pct"] = per(stl.get("fragmented_reads", 0), r, 100.0)
    return out


def series_frame(report: Dict[str, Any], group: Optional[str] = None):
    """A run report's metrics over time (``report["series"]``, present when the run had an
    ``interval``) as a DataFrame: one row per window, ``label`` first (and ``group`` when given),
    then the window's columns (``index``, ``first_request``, ``last_request``, ``requests``,
    ``hit_ratio``, ``cumulative_hit_ratio``, ``write_amplification``, ``rmws``, ``pb_fill``,
    ``time_s``…; docs/metrics.md, "Metrics over time"). ValueError when the run has none."""
    import pandas as pd

    windows = report.get("series")
    if windows is None:
        raise ValueError(
            f"run {report.get('label')!r} has no metrics over time: run it with an interval "
            "(interval=10000 requests, or interval=\"60s\" of trace time)"
        )
    df = pd.DataFrame(windows, columns=list(windows[0]) if windows else None)
    df.insert(0, "label", report.get("label"))
    if group is not None:
        df.insert(0, "group", group)
    return df


class Result:
    """The report of one simulation (``shingled sim --output json``), with the main metrics as
    attributes: ``r.total_time_s``, ``r.read_hit_ratio``, ``r.write_amplification``, ``r.rmws``…
    (over the whole run; ``r.after_warmup`` holds the window after warm-up)."""

    __slots__ = ("report",)

    def __init__(self, report: Dict[str, Any]):
        self.report = report

    def to_dict(self) -> Dict[str, Any]:
        """The full report (the CLI's JSON)."""
        return copy.deepcopy(self.report)

    @property
    def config(self):
        from ._config import Config

        return Config(self.report["config"])

    @property
    def after_warmup(self) -> Optional[Dict[str, Any]]:
        w = self.report.get("after_warmup")
        return flatten_metrics(w) if w else None

    def row(self) -> Dict[str, Any]:
        """One flat row: identity, sizing, whole-run metrics and ``warm_*`` after warm-up."""
        r = self.report
        row: Dict[str, Any] = {k: r.get(k) for k in _TOP}
        row["trace"] = r["config"]["trace"]["path"]
        row["replay"] = r["config"].get("replay", "closed")
        row["time_scale"] = r["config"].get("time_scale", 1.0)
        row["cache_blocks"] = r["sizing"]["cache_blocks"]
        row["pb_blocks"] = r["sizing"].get("pb_blocks")
        row.update(flatten_metrics(r["total"]))
        if r.get("after_warmup"):
            row.update(flatten_metrics(r["after_warmup"], "warm_"))
        row["warmup_requests"] = r.get("warmup_requests")
        row["dirty_left"] = r.get("dirty_left")
        row["wall_time_s"] = r.get("wall_time_s")
        return row

    def cdf(self):
        """The request latency distribution of the whole run (open loop: response time,
        queueing included) as a DataFrame: ``label``, ``latency_ms`` (upper edge of a histogram
        bucket 1/16 of its magnitude wide), ``fraction`` (of requests at or below it)."""
        import pandas as pd

        pts = self.report.get("latency_cdf", [])
        return pd.DataFrame(
            {
                "label": [self.report["label"]] * len(pts),
                "latency_ms": [p[0] for p in pts],
                "fraction": [p[1] for p in pts],
            }
        )

    def series(self):
        """Metrics over time (a run with ``interval=``): one row per window (`series_frame`)."""
        return series_frame(self.report)

    def to_series(self):
        import pandas as pd

        return pd.Series(self.row(), name=self.report["label"])

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        r = object.__getattribute__(self, "report")
        if name in r and not isinstance(r[name], dict):
            return r[name]
        flat = flatten_metrics(r["total"])
        if name in flat:
            return flat[name]
        if name in r.get("sizing", {}):
            return r["sizing"][name]
        raise AttributeError(f"Result has no metric {name!r}")

    def __dir__(self):
        return list(type(self).__dict__) + list(self.row())

    def __eq__(self, other: object) -> bool:
        strip = lambda d: {k: v for k, v in d.items() if k not in ("wall_time_s", "block_requests_per_s")}
        return isinstance(other, Result) and strip(self.report) == strip(other.report)

    def __reduce__(self):
        return (Result, (self.report,))

    def __repr__(self) -> str:
        t = self.report["total"]
        return (
            f"Result({self.report['label']!r}: total_time_s={t['total_time_s']:.6g}, "
            f"hit_ratio={t.get('hit_ratio')}, wa={t.get('write_amplification')}, rmws={t['drive']['rmws']})"
        )
