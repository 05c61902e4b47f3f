"""SAC Table 5 at small scale: LRU, MOST, MOST+CDC, SAC in read/write-mixed mode, plus a cache
size sweep of LRU vs SAC. Run: python examples/sac_table5.py"""

import shingled
import shingled.plot as splot

df = shingled.experiment("sac-rw", traces=["synth:wdev,scale=0.02"])
print(df[["label", "total_time_s", "hit_ratio", "write_amplification", "rmws"]].to_string(index=False))
splot.overview(df, out="sac_table5.png")

sw = shingled.sweep({"policy": ["lru", "sac"], "cache": ["1%", "2%", "4%"]}, "synth:wdev,scale=0.02",
                    config=shingled.Config.default().with_mode("write-only"), out="sac_sweep.csv")
sw["cache_pct"] = sw["cache"].str.rstrip("%").astype(float)
splot.sweep_lines(sw, "cache_pct", hue="policy", out="sac_sweep.png")
print("wrote sac_table5.png, sac_sweep.png, sac_sweep.csv")
