"""`store_bench`: the chunk store benchmarks (``shingled store bench``) as DataFrames.

>>> r = shingled.store_bench("macro", scale=0.001)                      # doctest: +SKIP
>>> r.frame[["name", "write_amplification", "gc_bytes"]]               # one row per placement
>>> r.windows            # throughput over modelled time, one row per (placement, window)
>>> r.zone_utilisation   # valid-data fraction of each full zone with its CDF
>>> r.plot("macro-zone-cdf", out="cdf.png")

The report is the CLI's JSON (``--output json``), so every row and note the CLI prints is here.
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any, Dict, List, Optional

from . import _core
from ._core import ConfigError

# Row fields that hold series rather than scalars (macro): kept out of `frame`, each has its own
# DataFrame.
_SERIES_FIELDS = ("windows", "zone_utilisation")
_U64 = 1 << 64


def store_benches() -> Dict[str, str]:
    """The store benches: name -> what it measures (``shingled store bench list``)."""
    return dict(_core.store_benches())


class StoreBenchResult:
    """One store bench's report: ``.frame`` (the typed rows), ``.table`` / ``.tables`` (the
    printed tables), ``.series`` (each plot's curves, long format), ``.notes`` (device, sizes,
    clock of the numbers), for ``macro`` also ``.windows`` and ``.zone_utilisation``, and
    ``.plot()``. ``.report`` is the raw JSON report."""

    __slots__ = ("report",)

    def __init__(self, report: Dict[str, Any]):
        self.report = report

    @property
    def name(self) -> str:
        return self.report["bench"]

    @property
    def title(self) -> str:
        return self.report["title"]

    @property
    def notes(self) -> List[str]:
        return list(self.report["notes"])

    @property
    def kind(self) -> str:
        """``io`` (write, read), ``macro``, ``recovery``, ``memory`` or ``cpu``."""
        return self.report["result"]["kind"]

    @property
    def rows(self) -> List[Dict[str, Any]]:
        """The typed rows (a deep copy)."""
        return copy.deepcopy(self.report["result"]["rows"])

    def to_dict(self) -> Dict[str, Any]:
        """The full report (the CLI's JSON)."""
        return copy.deepcopy(self.report)

    @property
    def frame(self):
        """One row per measurement with the bench's typed fields (bytes, seconds, MB/s…; no
        units in names beyond the field's own). For ``macro``, one row per placement; its
        series are in `windows` and `zone_utilisation`."""
        import pandas as pd

        rows = [{k: v for k, v in r.items() if k not in _SERIES_FIELDS} for r in self.report["result"]["rows"]]
        df = pd.DataFrame(rows)
        df.attrs["bench"] = self.name
        return df

    @property
    def table(self):
        """The main table as printed (strings, the CLI's column names)."""
        return _table(self.report["table"])

    @property
    def tables(self) -> Dict[str, Any]:
        """Every printed table by name: ``"main"`` and the bench's extra ones (macro:
        ``"streams"``)."""
        out = {"main": self.table}
        for name, t in self.report["extra"]:
            out[name] = _table(t)
        return out

    @property
    def plot_keys(self) -> List[str]:
        """Keys of the bench's plots (the panels of the CLI's ``--png FILE``)."""
        return [p["key"] for p in self.report["plots"]]

    @property
    def series(self) -> Dict[str, Any]:
        """Each plot's data by key: a DataFrame with columns ``curve``, ``x``, ``y`` (and
        ``category`` for plots over categories such as I/O size, ``x`` then being its index);
        ``attrs`` holds ``title``, ``x_label`` and ``y_label``."""
        return {p["key"]: _series(p) for p in self.report["plots"]}

    @property
    def windows(self):
        """``macro``: user throughput per window over modelled time, one row per (placement,
        window): ``name``, ``t`` (s), ``written`` (user bytes so far / datazone capacity), ``mb_s``,
        ``gc_bytes``, ``deleting``."""
        import pandas as pd

        self._need("macro", "windows")
        rows = [{"name": r["name"], **w} for r in self.report["result"]["rows"] for w in r["windows"]]
        return pd.DataFrame(rows, columns=["name", "t", "written", "mb_s", "gc_bytes", "deleting"])

    @property
    def zone_utilisation(self):
        """``macro``: the valid-data fraction of each full zone at the end, one row per
        (placement, zone) in increasing utilisation, with its empirical CDF (``fraction`` of the
        placement's full zones at or below)."""
        import pandas as pd

        self._need("macro", "zone_utilisation")
        rows = []
        for r in self.report["result"]["rows"]:
            u = sorted(r["zone_utilisation"])
            rows += [{"name": r["name"], "utilisation": v, "fraction": (i + 1) / len(u)} for i, v in enumerate(u)]
        return pd.DataFrame(rows, columns=["name", "utilisation", "fraction"])

    def _need(self, kind: str, what: str) -> None:
        if self.kind != kind:
            raise AttributeError(f"store bench {self.name} has no {what} (only {kind} has)")

    def plot(self, key: Optional[str] = None, ax=None, out=None):
        """Draws plot ``key`` (one of `plot_keys`; all of them in one figure when None) as the
        CLI's ``--png`` does: lines, or grouped bars over categories. Saves to ``out`` when given
        and returns the figure."""
        from .plot import _done, _fig

        plots = self.report["plots"]
        if not plots:
            raise ValueError(f"store bench {self.name} has no plots (use .frame or .table)")
        if key is None and len(plots) > 1:
            if ax is not None:
                raise ValueError(f"store bench {self.name} has {len(plots)} plots: name one to draw on ax")
            import matplotlib.pyplot as plt

            cols = 2
            nrows = (len(plots) + cols - 1) // cols
            fig, axes = plt.subplots(nrows, cols, figsize=(7 * cols, 4 * nrows), layout="constrained", squeeze=False)
            flat = [a for row in axes for a in row]
            for p, a in zip(plots, flat):
                _draw(p, a)
            for a in flat[len(plots):]:
                a.set_visible(False)
            return _done(fig, out)
        if key is None:
            p = plots[0]
        else:
            found = [p for p in plots if p["key"] == key]
            if not found:
                raise ValueError(f"store bench {self.name} has no plot {key!r}; plots: {', '.join(self.plot_keys)}")
            p = found[0]
        fig, ax = _fig(ax)
        _draw(p, ax)
        return _done(fig, out)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StoreBenchResult) and self.report == other.report

    def __reduce__(self):
        return (StoreBenchResult, (self.report,))

    def __repr__(self) -> str:
        n = len(self.report["result"]["rows"])
        return f"StoreBenchResult({self.name!r}: {n} {self.kind} rows, plots {self.plot_keys})"


def _table(t: Dict[str, Any]):
    import pandas as pd

    return pd.DataFrame(t["rows"], columns=t["columns"])


def _series(p: Dict[str, Any]):
    import pandas as pd

    cats = p["categories"]
    rows = []
    for c in p["curves"]:
        for x, y in c["points"]:
            row = {"curve": c["name"], "x": x, "y": y}
            if cats:
                i = int(x)
                row["category"] = cats[i] if 0 <= i < len(cats) else None
            rows.append(row)
    df = pd.DataFrame(rows, columns=["curve", "x", "y"] + (["category"] if cats else []))
    df.attrs.update(title=p["title"], x_label=p["x_label"], y_label=p["y_label"])
    return df


def _draw(p: Dict[str, Any], ax) -> None:
    import numpy as np

    cats = p["categories"]
    curves = [c for c in p["curves"] if c["points"]]
    if cats:
        width = 0.8 / max(len(curves), 1)
        for ci, c in enumerate(curves):
            xs = np.array([x for x, _ in c["points"]], dtype=float)
            ax.bar(xs + ci * width - 0.4 + width / 2, [y for _, y in c["points"]], width, label=c["name"])
        ax.set_xticks(np.arange(len(cats)), cats)
        ax.grid(axis="y", alpha=0.3)
    else:
        for c in curves:
            ax.plot([x for x, _ in c["points"]], [y for _, y in c["points"]], label=c["name"])
        ax.grid(alpha=0.3)
    ax.set_xlabel(p["x_label"])
    ax.set_ylabel(p["y_label"])
    ax.set_title(p["title"], fontsize="medium")
    if curves:
        ax.legend(fontsize="small")


def _check_int(what: str, v: Any, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ConfigError(f"store bench {what} {v!r}: expected an integer")
    if not lo <= v < hi:
        raise ConfigError(f"store bench {what} {v}: must be in [{lo}, {hi})")
    return v


def store_bench(
    name: str, scale: float = 1.0, seed: int = 1, streams: int = 8, dir: Any = None, rounds: int = 1
) -> StoreBenchResult:
    """Runs one chunk store bench (``shingled store bench NAME``; names: `store_benches`):
    ``write``/``read`` (Figs. 14/16), ``macro`` (Table 3, Figs. 17–20), ``recovery`` (Fig. 21),
    ``memory``, ``cpu`` (§6.5).

    ``scale``: fraction of the documented sizes (1 = docs/benchmarks.md; ~0.001 for a quick
    look); ``seed``: of every random choice (modelled results are deterministic for it);
    ``streams``: chunks appended concurrently in write, read and cpu; ``dir``: where device and
    baseline files go (default: the system temp dir; put it on the file system to measure);
    ``rounds``: runs of every wall-clock cell of ``write`` (engine, raw device and files
    interleaved in each round), each cell reporting its median time.

    An unknown name or a bad value raises `ConfigError`; a store failure `StoreError`. The GIL
    is released while the bench runs; Ctrl-C takes effect when it returns.
    """
    if not isinstance(name, str):
        raise ConfigError(f"store bench name {name!r}: expected a str")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise ConfigError(f"store bench scale {scale!r}: expected a number")
    seed = _check_int("seed", seed, 0, _U64)
    streams = _check_int("streams", streams, 1, _U64)
    rounds = _check_int("rounds", rounds, 1, 1001)
    d = None if dir is None else os.fspath(dir)
    return StoreBenchResult(json.loads(_core.store_bench(name, float(scale), seed, streams, d, rounds)))
