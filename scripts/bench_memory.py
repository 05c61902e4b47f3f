#!/usr/bin/env python3
"""Bytes per cached block, measured as peak RSS, not computed from structure sizes.

For each K in `--blocks` (default 1M and 2M) the script writes a trace of K distinct 4 KiB
writes (sequential, MSR CSV, converted to `bin` so that `sim` reads it once), runs the whole
`shingled sim` command with a cache of exactly K blocks (it fills, nothing is evicted) under
`/usr/bin/time -v`, and reports peak RSS; the slope between two K is the memory one more cached
block costs, everything the run holds per block included (block table, policy, drive model).

    cargo build --release -p shingled-cli
    python3 scripts/bench_memory.py [--policies lru,most,sac,pore] [--blocks 1048576,2097152]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def peak_rss_kb(cmd):
    p = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    return int(m.group(1))


def trace(binary, d, k):
    csv = os.path.join(d, f"w{k}.csv")
    with open(csv, "w") as f:
        for i in range(k):
            # MSR: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
            f.write(f"{128166372000000000 + i * 10},h,0,Write,{i * 4096},4096,0\n")
    out = os.path.join(d, f"w{k}.bin")
    subprocess.run([binary, "trace", "convert", csv, "--output", out], check=True, capture_output=True)
    os.remove(csv)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/shingled")
    ap.add_argument("--policies", default="lru,most,sac,pore")
    ap.add_argument("--blocks", default="1048576,2097152")
    ap.add_argument("--mode", default="read-write")
    a = ap.parse_args()
    ks = [int(x) for x in a.blocks.split(",")]
    with tempfile.TemporaryDirectory() as d:
        traces = {k: trace(a.bin, d, k) for k in ks}
        print(f"peak RSS, cache of exactly K blocks filled by K distinct writes (no eviction), mode {a.mode}")
        print(f"{'policy':<8} " + " ".join(f"{'K=' + str(k):>14}" for k in ks) + "   bytes per cached block (slope)")
        for p in a.policies.split(","):
            rss = [peak_rss_kb([a.bin, "sim", "--trace", traces[k], "--policy", p, "--mode", a.mode,
                                "--cache-size", f"{k * 4096}B", "--output", "json"]) for k in ks]
            slope = (rss[-1] - rss[0]) * 1024 / (ks[-1] - ks[0])
            print(f"{p:<8} " + " ".join(f"{r / 1024:>11.1f} MiB" for r in rss) + f"   {slope:.1f}")


if __name__ == "__main__":
    main()
