"""PORE Figs. 11-12 at small scale: SMR-only, CMR-only, LRU, LRU-band, PORE-BL (read-write) on
synthetic wdev and mds, as a table and a figure. Run: python examples/pore_overall.py"""

import shingled
import shingled.plot as splot

df = shingled.experiment("pore-overall", traces=["synth:wdev,scale=0.02", "synth:mds,scale=0.02"])
print(df[["trace", "label", "total_time_s", "read_hit_ratio", "write_hit_ratio", "rmws"]].to_string(index=False))
splot.total_time(df, out="pore_overall.png")
print("wrote pore_overall.png")
