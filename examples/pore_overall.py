"""PORE Figs. 11-12: SMR-only, CMR-only, LRU, LRU-band, PORE-BL (read-write) on synthetic wdev
and mds, as a table and a figure. Run: python examples/pore_overall.py [scale] (default 1, the
full-length synthetic traces: about 15 s on two cores).

The scale matters for the result, not only for the run time. A scaled-down trace keeps the
volume's LBA footprint (so its bands and the PB, 1/256 of the written range) but has fewer
requests, so each RMW (reading and rewriting a whole 17-36 MB band) is shared by fewer cached
writes. At scale=0.02 every cache is slower than CMR-only, the reverse of the full-scale result;
from about scale=0.5 LRU-band and PORE-BL beat CMR-only as in PORE Fig. 11."""

import sys

import shingled
import shingled.plot as splot

scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
traces = [f"synth:wdev,scale={scale}", f"synth:mds,scale={scale}"]
df = shingled.experiment("pore-overall", traces=traces)
print(df[["trace", "label", "total_time_s", "read_hit_ratio", "write_hit_ratio", "rmws"]].to_string(index=False))
for trace, rows in df.groupby("trace", sort=False):
    cmr = rows.loc[rows.label == "cmr-only", "total_time_s"].iloc[0]
    faster = rows.loc[(rows.total_time_s < cmr) & ~rows.label.isin(["smr-only", "cmr-only"]), "label"]
    print(f"{trace}: caches faster than CMR-only: {', '.join(faster) or 'none (see the note on scale above)'}")
splot.total_time(df, out="pore_overall.png")
print("wrote pore_overall.png")
