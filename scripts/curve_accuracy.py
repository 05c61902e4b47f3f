#!/usr/bin/env python3
"""Accuracy and cost of `shingled curve` (docs/benchmarks.md, "Curves by sampling").

For each trace, policy and rate: a 20-point cache-size curve from sampled mini-simulations,
validated against full simulations at VALIDATE points spread over it; prints one Markdown row with
the mean and largest error per metric (hit ratio in percentage points; WA, RMWs and total I/O
time in percent) and the cost ratio (full simulations of every point, estimated from the
validated runs, over the sampled curve's cost). The real sample traces are read from
$SHINGLED_SHARED_TRACES when it is set.

    python3 scripts/curve_accuracy.py [--bin target/release/shingled] [--rates 0.1,0.05,auto]
        [--traces T1,T2] [--policies lru,sac] [--validate N] [-- more curve flags]
"""

import argparse
import json
import os
import subprocess
import sys

SIZES = ",".join(f"{x:g}%" for x in (0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 12, 15))
POLICIES = ["lru", "most", "pore", "sac"]
VALIDATE = 5


def traces():
    out = ["synth:wdev", "synth:hm", "synth:prn"]
    real = os.environ.get("SHINGLED_SHARED_TRACES")
    if real:
        out.append(os.path.join(real, "cloudphysics-libcachesim-sample.vscsi"))
    return out


def run(binary, trace, policy, rate, validate, extra):
    cmd = [binary, "curve", "--trace", trace, "--policy", policy, "--cache-size", SIZES, "--rate", rate,
           "--validate", str(validate), "--jobs", "2", "--output", "json", "--progress", "none", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: {r.stderr}")
    return json.loads(r.stdout)


def cell(e):
    if e["mean_abs"] is None:
        return "-"
    return f"{e['mean_abs']:.2f} / {e['max_abs']:.2f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/shingled")
    ap.add_argument("--rates", default="0.1,0.05,auto")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--validate", type=int, default=VALIDATE, help="full runs per curve")
    ap.add_argument("--traces", default=None, help="comma-separated; default: synth wdev, hm, prn and the real sample")
    ap.add_argument("extra", nargs="*", help="more flags for every curve (after --)")
    a = ap.parse_args()
    print("| trace | policy | rate | bands sampled | hit ratio (pp) | WA (%) | RMWs (%) | time (%) | cost ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for t in a.traces.split(",") if a.traces else traces():
        for p in a.policies.split(","):
            for rate in a.rates.split(","):
                rep = run(a.bin, t, p, rate, a.validate, a.extra)
                e = {x["metric"]: x for x in rep["errors"]}
                ratio = rep["full_cost_s"] / max(rep["sampled_cost_s"], 1e-9) if rep["full_cost_s"] else None
                name = os.path.basename(t)
                r = f"{rep['rate']:.3g}" + (" (auto)" if rep["rate_auto"] else "")
                cost = f"{ratio:.1f}x" if ratio else "-"
                print(
                    f"| {name} | {p} | {r} | {rep['units_sampled']} of {rep['units_touched']} | "
                    f"{cell(e['hit_ratio'])} | {cell(e['write_amplification'])} | {cell(e['rmws'])} | "
                    f"{cell(e['total_time_s'])} | {cost} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
