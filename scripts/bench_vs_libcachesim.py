#!/usr/bin/env python3
"""`shingled sim` beside libCacheSim on the same requests (issue 18).

libCacheSim (Yang et al.; PyPI `libcachesim`, whose simulation loop runs in C) is the reference
cache simulator. This script

1. converts a trace to our `bin` format (`shingled trace convert`, which keeps its statistics
   beside it, so `sim` reads it once), and writes the same 4 KiB block requests in
   libCacheSim's own binary format, oracleGeneral (24-byte records: u32 time, u64 object id,
   u32 size, i64 next access; one record per 4 KiB block, size 4096);
2. runs, interleaved `--rounds` times, libCacheSim's LRU on its file (`LRU(cache_size).process_trace`)
   and the whole `shingled sim` command with LRU (and the DM-SMR drive model it always runs) on
   ours, with the same cache capacity in blocks;
3. reports each side's CPU seconds (median; libCacheSim: this process's CPU time around
   `process_trace`, reading its file included; shingled: the child's CPU time, process start,
   reading, replay, drive model and JSON output included), block requests per CPU second, the
   ratio, and both hit ratios (LRU over the same blocks and capacity: they must agree).

    cargo build --release -p shingled-cli
    pip install libcachesim
    python3 scripts/bench_vs_libcachesim.py [--trace synth:wdev] [--cache 2%] [--rounds 3]

`--json FILE` writes the figures. Extra policies: `--policy arc` / `s3fifo` (libCacheSim's ARC,
S3FIFO; ours the same names, no drive-model difference).
"""
import argparse
import json
import os
import resource
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np


# our policy names for libCacheSim's
OURS = {"lru": "lru", "arc": "arc", "s3fifo": "s3-fifo"}


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_shingled(binary, trace_bin, policy, blocks, mode):
    t0 = children_cpu()
    w0 = time.perf_counter()
    p = subprocess.run([binary, "sim", "--trace", trace_bin, "--policy", OURS[policy], "--mode", mode,
                        "--cache-size", f"{blocks * 4096}B", "--output", "json"],
                       capture_output=True, text=True)
    wall = time.perf_counter() - w0
    if p.returncode != 0:
        sys.exit(f"shingled sim failed:\n{p.stderr}")
    r = json.loads(p.stdout)
    return children_cpu() - t0, wall, r


def run_libcachesim(lcs, path, policy, blocks):
    cls = {"lru": lcs.LRU, "arc": lcs.ARC, "s3fifo": lcs.S3FIFO}[policy]
    reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = cls(cache_size=blocks * 4096)
    c0, w0 = time.process_time(), time.perf_counter()
    miss = cache.process_trace(reader)
    return time.process_time() - c0, time.perf_counter() - w0, miss


def write_oracle_general(binary, trace_bin, out):
    """Every 4 KiB block of every request of `trace_bin` (our bin format, read with the
    `shingled` Python package), as oracleGeneral records."""
    import shingled
    n = 0
    rec = np.dtype([("t", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")])
    with open(out, "wb") as f:
        for chunk in shingled.open_trace(trace_bin).chunks(1 << 20):
            off = np.asarray(chunk["offset"], dtype=np.uint64)
            ln = np.asarray(chunk["len"], dtype=np.uint64)
            t = np.asarray(chunk["time_ns"], dtype=np.uint64)
            first = off // 4096
            last = np.where(ln > 0, (off + ln - 1) // 4096, first - 1)
            count = (last + 1 - first).astype(np.int64)
            count[ln == 0] = 0
            total = int(count.sum())
            if total == 0:
                continue
            starts = np.repeat(first, count)
            within = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
            a = np.empty(total, dtype=rec)
            a["t"] = (np.repeat(t, count) // 1_000_000_000).astype(np.uint32)
            a["id"] = starts + within.astype(np.uint64)
            a["size"] = 4096
            a["next"] = -1
            a.tofile(f)
            n += total
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/shingled")
    ap.add_argument("--trace", default="synth:wdev")
    ap.add_argument("--cache", default="2%", help="cache size as a share of the accessed range, or NNN blocks")
    ap.add_argument("--policy", default="lru", choices=["lru", "arc", "s3fifo"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    import libcachesim as lcs

    with tempfile.TemporaryDirectory() as d:
        ours = os.path.join(d, "t.bin")
        subprocess.run([a.bin, "trace", "convert", a.trace, "--output", ours], check=True, capture_output=True)
        theirs = os.path.join(d, "t.oracleGeneral")
        blocks_total = write_oracle_general(a.bin, ours, theirs)
        if a.cache.endswith("%"):
            # the cache the simulator would size: ask it (read-write sizes by the accessed range)
            r = json.loads(subprocess.run([a.bin, "sim", "--trace", ours, "--policy", OURS[a.policy], "--cache-size",
                                           a.cache, "--output", "json"],
                                          capture_output=True, text=True, check=True).stdout)
            blocks = r["sizing"]["cache_blocks"]
        else:
            blocks = int(a.cache)
        rows = {"shingled": [], "libcachesim": []}
        res = None
        for _ in range(a.rounds):
            cpu, wall, res = run_shingled(a.bin, ours, a.policy, blocks, "read-write")
            rows["shingled"].append((cpu, wall))
            cpu, wall, miss = run_libcachesim(lcs, theirs, a.policy, blocks)
            rows["libcachesim"].append((cpu, wall))
        t = res["total"]
        n = t["blocks_read"] + t["blocks_written"]
        assert n == blocks_total, f"block counts differ: shingled {n}, oracleGeneral {blocks_total}"
        ours_cpu = statistics.median(c for c, _ in rows["shingled"])
        theirs_cpu = statistics.median(c for c, _ in rows["libcachesim"])
        out = {
            "trace": a.trace, "policy": a.policy, "cache_blocks": blocks, "block_requests": n,
            "shingled_cpu_s": ours_cpu, "libcachesim_cpu_s": theirs_cpu,
            "shingled_M_per_cpu_s": n / ours_cpu / 1e6, "libcachesim_M_per_cpu_s": n / theirs_cpu / 1e6,
            "ratio": theirs_cpu / ours_cpu,
            "shingled_hit_ratio": t["hit_ratio"], "libcachesim_hit_ratio": 1.0 - miss[0],
            "rounds": rows, "libcachesim_version": getattr(lcs, "__version__", "?"),
        }
        print(f"{a.trace}: {n:,} block requests, {a.policy}, cache {blocks:,} blocks")
        print(f"  shingled sim (whole command, DM-SMR model): {ours_cpu:.3f} CPU s "
              f"= {out['shingled_M_per_cpu_s']:.2f} M/s; hit ratio {t['hit_ratio']:.6f}")
        print(f"  libCacheSim {out['libcachesim_version']} {a.policy} (process_trace): {theirs_cpu:.3f} CPU s "
              f"= {out['libcachesim_M_per_cpu_s']:.2f} M/s; hit ratio {1 - miss[0]:.6f}")
        print(f"  ratio (libCacheSim CPU / shingled CPU): {out['ratio']:.2f}x")
        if a.json:
            with open(a.json, "w") as f:
                json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
