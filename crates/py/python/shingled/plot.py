"""Figures from result DataFrames (`compare`, `experiment`, `sweep`), with matplotlib.

Each function takes a DataFrame, draws on ``ax`` (a new figure when absent), saves to ``out``
(PNG or SVG by extension) when given, and returns the figure.
"""

from __future__ import annotations

from typing import Optional, Sequence


def _plt():
    """matplotlib.pyplot, or ImportError naming the ``plot`` extra."""
    from . import _need

    _need("matplotlib", "plot")
    import matplotlib.pyplot as plt

    return plt


def _fig(ax):
    if ax is None:
        plt = _plt()

        fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
        return fig, ax
    return ax.figure, ax


def _done(fig, out):
    if out is not None:
        fig.savefig(out, dpi=120)
    return fig


def _labels(df):
    return list(df["label"]) if "label" in df else [str(i) for i in df.index]


#: Readable axis names for the columns people plot.
NAMES = {
    "total_time_s": "total I/O time (s)",
    "ssd_read_time_s": "SSD read time (s)",
    "ssd_write_time_s": "SSD write time (s)",
    "drive_read_time_s": "drive read time (s)",
    "drive_write_time_s": "drive write time (s)",
    "hit_ratio": "hit ratio",
    "read_hit_ratio": "read hit ratio",
    "write_hit_ratio": "write hit ratio",
    "write_amplification": "write amplification",
    "rmws": "band RMWs",
    "cache_blocks": "SSD cache (4 KiB blocks)",
    "pb_blocks": "persistent buffer (4 KiB blocks)",
    "cache": "SSD cache size",
    "policy": "policy",
    "latency_p99_ms": "p99 latency (ms)",
    "latency_mean_ms": "mean latency (ms)",
}


def _name(col: str) -> str:
    return NAMES.get(col, col.replace("_", " "))


def _context(df) -> str:
    """What the figure shows: its trace (when there is one) and the set-up of the runs."""
    parts = []
    if "trace" in df and df["trace"].nunique() == 1:
        parts.append(str(df["trace"].iloc[0]))
    report = getattr(df, "attrs", {}).get("report") or {}
    setup = report.get("setup") or (report.get("experiment") or {}).get("setup") or ""
    if setup.startswith("set-up "):
        parts.append(setup.split(":")[0])
    if "mode" in df and df["mode"].nunique() == 1:
        parts.append(f"mode {df['mode'].iloc[0]}")
    return " | ".join(parts)


def _title(ax, title: str, df) -> None:
    ctx = _context(df)
    ax.set_title(f"{title}\n{ctx}" if ctx else title, fontsize="medium")


def bars(df, metric: str, title: Optional[str] = None, ylabel: Optional[str] = None, ax=None, out=None,
         by: Optional[str] = "trace"):
    """Bars of ``metric`` per scheme (label), grouped by ``by`` when the frame has several."""
    import numpy as np

    fig, ax = _fig(ax)
    groups = list(dict.fromkeys(df[by])) if by and by in df and df[by].nunique() > 1 else [None]
    labels = list(dict.fromkeys(_labels(df)))
    width = 0.8 / len(groups)
    x = np.arange(len(labels))
    import pandas as pd

    drawn = 0
    for gi, g in enumerate(groups):
        sub = df if g is None else df[df[by] == g]
        # None (a metric a run does not have, e.g. WA without cleaning) becomes NaN: no bar.
        vals = dict(zip(_labels(sub), pd.to_numeric(sub[metric], errors="coerce")))
        heights = [vals.get(l, np.nan) for l in labels]
        drawn += sum(1 for h in heights if not np.isnan(h))
        ax.bar(x + gi * width - 0.4 + width / 2, heights, width, label=None if g is None else str(g))
    ax.set_xticks(x, labels, rotation=30, ha="right")
    ax.set_ylabel(ylabel or _name(metric))
    _title(ax, title or _name(metric), df)
    if drawn == 0:
        ax.text(0.5, 0.5, f"no run has a value of {_name(metric)}", transform=ax.transAxes, ha="center",
                va="center", color="gray")
    if groups != [None]:
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.margins(y=0.1)
    ax.grid(axis="y", alpha=0.3)
    return _done(fig, out)


def total_time(df, ax=None, out=None):
    """Total modelled I/O time per scheme (PORE Fig. 11, SAC Table 5)."""
    return bars(df, "total_time_s", "Total I/O time", "seconds", ax=ax, out=out)


def hit_ratios(df, ax=None, out=None):
    """Read and write hit ratios per scheme."""
    import numpy as np

    fig, ax = _fig(ax)
    labels = _labels(df)
    x = np.arange(len(labels))
    import pandas as pd

    ax.bar(x - 0.2, pd.to_numeric(df["read_hit_ratio"], errors="coerce"), 0.4, label="read")
    ax.bar(x + 0.2, pd.to_numeric(df["write_hit_ratio"], errors="coerce"), 0.4, label="write")
    ax.set_xticks(x, labels, rotation=30, ha="right")
    ax.set_ylim(0, 1.15)
    ax.set_ylabel("hit ratio")
    _title(ax, "Hit ratios", df)
    ax.legend(ncols=2, loc="upper right")
    return _done(fig, out)


def write_amplification(df, ax=None, out=None):
    """Write amplification per scheme."""
    return bars(df, "write_amplification", "Write amplification", "WA", ax=ax, out=out)


def rmws(df, ax=None, out=None):
    """Read-modify-write counts per scheme."""
    return bars(df, "rmws", "Band RMWs", "RMWs", ax=ax, out=out)


#: The drive's time causes drawn by `time_breakdown`, with their legend names.
TIME_CAUSES = (
    ("time_host_read_s", "media reads"),
    ("time_pb_read_s", "PB reads"),
    ("time_host_write_s", "media writes"),
    ("time_pb_write_s", "PB writes"),
    ("time_cache_s", "write cache"),
    ("time_destage_s", "destage"),
    ("time_clean_band_read_s", "RMW band read"),
    ("time_clean_merge_s", "RMW merge"),
    ("time_clean_band_write_s", "RMW band write"),
)


def time_breakdown(df, ax=None, out=None, title: Optional[str] = None):
    """Stacked bars of where each scheme's time went: SSD, then the drive's causes
    (docs/drive-models.md, "Where the time goes"). Background work (destages between requests,
    idle cleaning) is included, so a bar can exceed the scheme's total time; waits for it are
    not drawn again (they are in ``time_host_wait_s``)."""
    import numpy as np

    fig, ax = _fig(ax)
    labels = _labels(df)
    x = np.arange(len(labels))
    bottom = np.zeros(len(labels))
    parts = [("ssd", "SSD", df["ssd_read_time_s"].astype(float) + df["ssd_write_time_s"].astype(float))]
    parts += [(c, name, df[c].astype(float)) for c, name in TIME_CAUSES if c in df and df[c].astype(float).sum() > 0]
    for _, name, vals in parts:
        v = vals.fillna(0).to_numpy()
        ax.bar(x, v, 0.7, bottom=bottom, label=name)
        bottom += v
    ax.set_xticks(x, labels, rotation=30, ha="right")
    ax.set_ylabel("seconds")
    _title(ax, title or "Where the time goes", df)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="y", alpha=0.3)
    return _done(fig, out)


def overview(df, out=None):
    """Time, hit ratios, WA and RMWs in one 2x2 figure."""
    plt = _plt()

    fig, axes = plt.subplots(2, 2, figsize=(11, 7), layout="constrained")
    total_time(df, ax=axes[0][0])
    hit_ratios(df, ax=axes[0][1])
    write_amplification(df, ax=axes[1][0])
    rmws(df, ax=axes[1][1])
    ctx = _context(df)
    if ctx:
        fig.suptitle(ctx)
    return _done(fig, out)


#: Columns of a sweep's frame that name a point rather than measure it: a line is drawn per
#: combination of those that vary besides ``x``.
_PARAMS = ("policy", "scheme", "cache", "mode", "drive", "replay", "time_scale", "io_unit", "trace")


def _varied(df, x: str, keys: Sequence[str]) -> list:
    """The columns that vary among rows sharing ``x`` and ``keys``: the known parameter columns
    and any configuration field (``"drive.pb_size"``), in that order."""
    cands = [c for c in _PARAMS if c in df] + [c for c in df.columns if "." in str(c)]
    cands = [c for c in dict.fromkeys(cands) if c != x and c not in keys]
    out = []
    for c in cands:
        col = df[c].astype(str)
        if col.groupby([df[k].astype(str) for k in (*keys, x)]).nunique().max() > 1:
            out.append(c)
    return out


def sweep_lines(df, x: str, y: str = "total_time_s", hue: Optional[str] = None, ax=None, out=None,
                logx: bool = False):
    """``y`` against the swept parameter ``x``: one line per combination of the other columns
    the sweep varied (``hue``, then policy, cache, mode, drive, trace or any configuration field
    that differs between rows of one ``x`` value), so no line joins points of different
    configurations. Raises ``ValueError`` when rows still share an ``x`` value within one line
    (they differ only in a column it cannot tell is a parameter: name it as ``hue``)."""
    if x not in df or y not in df:
        missing = [c for c in (x, y) if c not in df]
        raise KeyError(f"sweep_lines: no column {', '.join(map(repr, missing))}; columns: {', '.join(map(str, df.columns))}")
    if hue is not None and hue not in df:
        raise KeyError(f"sweep_lines: hue={hue!r} is not a column; columns: {', '.join(map(str, df.columns))}")
    keys = [hue] if hue else []
    keys += _varied(df, x, keys)
    dup = df.groupby([df[k].astype(str) for k in (*keys, x)]).size() if len(df) else None
    if dup is not None and dup.max() > 1:
        where = dup[dup > 1].index[0]
        raise ValueError(
            f"sweep_lines: {dup.max()} rows share {x}={where[-1] if isinstance(where, tuple) else where!r}"
            + (f" within the line {', '.join(map(str, where[:-1]))}" if keys else "")
            + "; they differ in a column that is not a known parameter: pass it as hue=, or filter the frame"
        )
    fig, ax = _fig(ax)
    groups = df.groupby(keys, sort=False) if keys else [((), df)]
    for key, sub in groups:
        sub = sub.sort_values(x)
        key = key if isinstance(key, tuple) else (key,)
        name = ", ".join(f"{k}={v}" if len(keys) > 1 else str(v) for k, v in zip(keys, key))
        ax.plot(sub[x], sub[y], marker="o", label=name or None)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(_name(x))
    ax.set_ylabel(_name(y))
    _title(ax, f"{_name(y)} vs {_name(x)}", df)
    if keys:
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(alpha=0.3)
    return _done(fig, out)


def curve(df, metric: str = "hit_ratio", ax=None, out=None, title: Optional[str] = None):
    """A curve from `shingled.curve`'s DataFrame: ``metric`` against the cache size (GiB), or
    against the PB size when only it varies; one line per policy (and PB size when both vary),
    validated points' full-simulation figures as crosses and LRU's exact hit ratio dashed."""
    if metric not in df:
        raise KeyError(f"no metric {metric!r} in the curve; columns: {', '.join(df.columns)}")
    fig, ax = _fig(ax)
    by_pb = df["cache_blocks"].nunique() == 1 and df["pb_blocks"].notna().any() and df["pb_blocks"].nunique() > 1
    x = "pb_gib" if by_pb else "cache_gib"
    df = df.assign(pb_gib=df["pb_blocks"].astype(float) * 4096 / 2**30)
    keys = ["policy"] + (["pb_size"] if not by_pb and df["pb_size"].nunique() > 1 else [])
    scale = 100.0 if metric.endswith("hit_ratio") else 1.0
    for key, sub in df.groupby(keys, sort=False):
        sub = sub.sort_values(x)
        name = ", ".join(str(k) for k in (key if isinstance(key, tuple) else (key,)))
        line = ax.plot(sub[x], sub[metric] * scale, marker="o", label=name)[0]
        full = f"full_{metric}"
        if full in sub and sub[full].notna().any():
            v = sub[sub[full].notna()]
            ax.plot(v[x], v[full] * scale, "x", color=line.get_color(), markersize=9,
                    label=f"{name} (full simulation)")
        if metric == "hit_ratio" and sub["exact_hit_ratio"].notna().any():
            # Black, thin and dashed on top: visible where it coincides with the sampled line.
            ax.plot(sub[x], sub["exact_hit_ratio"] * scale, "--", color="black", linewidth=1, zorder=3,
                    label=f"{name} (exact)")
    ax.set_xlabel("PB size (GiB)" if by_pb else "cache size (GiB)")
    ax.set_ylabel(_name(metric) + (" (%)" if scale == 100.0 else ""))
    rate = df.attrs.get("rate")
    _title(ax, title or f"{_name(metric)} curve" + (f" (rate {rate:.3g})" if rate is not None else ""), df)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.margins(x=0.04)
    ax.grid(alpha=0.3)
    return _done(fig, out)


def cdf(results, ax=None, out=None, title: Optional[str] = None, log_x: bool = True):
    """CDF of request latency per run (open loop: response time with queueing, as SMaRT's
    Figs. 3–5 plot it), one line each. ``results``: `Result`s, a `CompareResult`, or a DataFrame
    from `Result.cdf` (several concatenated)."""
    frames = []
    if hasattr(results, "results"):
        results = results.results
    ctx = ""
    if hasattr(results, "groupby"):
        frames = [g for _, g in results.groupby("label", sort=False)]
    else:
        results = list(results)
        frames = [r.cdf() for r in results]
        ctx = _runs_context([getattr(r, "report", {}) for r in results])
    fig, ax = _fig(ax)
    for g in frames:
        if len(g):
            ax.step(g["latency_ms"], g["fraction"], where="post", label=str(g["label"].iloc[0]))
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel("response time (ms)")
    ax.set_ylabel("fraction of requests")
    ax.set_ylim(0, 1.0)
    ax.grid(True, alpha=0.3)
    ax.legend()
    head = title or "response time CDF"
    ax.set_title(f"{head}\n{ctx}" if ctx else head, fontsize="medium")
    return _done(fig, out)


def series(results, out=None, title: Optional[str] = None):
    """Metrics over time (runs with ``interval=``): hit ratio, RMWs, PB fill and modelled time
    per window in four panels, one line per run, each window at its end (its last request, or
    its end in trace time). ``results``: `Result`s, a `CompareResult`, or a DataFrame from
    `Result.series` / `CompareResult.series` (several concatenated)."""
    if hasattr(results, "results"):
        results = results.results
    ctx, seconds = "", None
    if hasattr(results, "groupby"):
        df = results
    else:
        import pandas as pd

        results = list(results)
        df = pd.concat([r.series() for r in results], ignore_index=True)
        reports = [getattr(r, "report", {}) for r in results]
        ctx = _runs_context(reports)
        every = {str((r.get("config") or {}).get("interval", "")) for r in reports}
        if len(every) == 1:
            (every,) = every
            if every.endswith("s"):
                seconds = float(every[:-1])
    plt = _plt()
    fig, axes = plt.subplots(2, 2, figsize=(11, 7), layout="constrained")
    panels = [
        ("hit_ratio", "hit ratio per window"),
        ("rmws", "RMWs per window"),
        ("pb_fill", "PB fill at the window's end"),
        ("time_s", "modelled time per window (s)"),
    ]
    for ax, (col, name) in zip(axes.flat, panels):
        for label, g in df.groupby("label", sort=False):
            x = (g["index"] + 1) * seconds if seconds else g["last_request"]
            ax.plot(x, g[col], marker=".", label=str(label))
        ax.set_title(name, fontsize="medium")
        ax.set_xlabel("trace time (s)" if seconds else "trace requests")
        ax.grid(True, alpha=0.3)
    axes.flat[0].legend()
    head = title or "metrics over time"
    fig.suptitle(f"{head}\n{ctx}" if ctx else head, fontsize="medium")
    return _done(fig, out)


def _runs_context(reports) -> str:
    """Trace, set-up, mode and replay of run reports (each part once when the runs share it)."""
    def one(values):
        values = list(dict.fromkeys(v for v in values if v))
        return values[0] if len(values) == 1 else ""

    cfgs = [r.get("config") or {} for r in reports if isinstance(r, dict)]
    parts = [
        one((c.get("trace") or {}).get("path") for c in cfgs),
        one((r.get("setup") or "").split(":")[0] for r in reports if isinstance(r, dict)),
        one(f"mode {c['mode']}" for c in cfgs if c.get("mode")),
        one(f"{c.get('replay', 'closed')} loop" for c in cfgs),
    ]
    return " | ".join(p for p in parts if p)
