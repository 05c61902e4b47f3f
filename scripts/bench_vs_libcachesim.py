#!/usr/bin/env python3
"""`shingled sim` beside libCacheSim's C simulator, `cachesim`, on the same requests.

libCacheSim (Yang et al.) is the reference cache simulator; its `cachesim` command is the C
program a researcher compares with. Build it from source first (the peer is a Release, -O3
build of the version named; 0.3.5 is the `libcachesim` PyPI release's C core):

    scripts/build_libcachesim.sh 0.3.5          # -> target/peers/libcachesim-0.3.5/cachesim
    cargo build --release -p shingled-cli
    python3 scripts/bench_vs_libcachesim.py [--trace synth:prn --trace synth:hm ...]
        [--policy lru --policy arc --policy s3fifo] [--cache 2%] [--rounds 5]
        [--peer NAME=PATH ...] [--bindings] [--json FILE]

For each trace the script

1. converts it to our `bin` format (`shingled trace convert`, which keeps its statistics beside
   it, so `sim` reads it once), and writes the same 4 KiB block requests in libCacheSim's binary
   format, oracleGeneral, with `shingled trace convert --to oracleGeneral` (24-byte records: u32
   time, u64 object id, u32 size, i64 next access; one record per 4 KiB block, id = block);
2. for each policy runs, interleaved `--rounds` times, each peer's whole `cachesim` command
   (`cachesim FILE oracleGeneralBin POLICY BLOCKS --ignore-obj-size 1 --num-thread 1`: one cache
   of BLOCKS objects) and the whole `shingled sim` command (`--policy P --cache-size BLOCKS*4KiB`;
   S3-FIFO as `s3-fifo:move_threshold=2`, libCacheSim's default threshold,
   read-write, with the DM-SMR drive model every `sim` run has, JSON output);
3. reports each command's CPU time (user + system of the child: process start, reading the
   file, simulation and output included; median of the rounds), block requests per CPU second,
   the ratio (peer CPU / shingled CPU: above 1, shingled is faster) and both hit ratios (which
   must agree for LRU and ARC: the same requests and capacity).

Peers: `--peer NAME=PATH` (repeatable; default `cachesim-0.3.5=target/peers/libcachesim-0.3.5/cachesim`).
`--also NAME=PATH` runs another `shingled` binary (an earlier build) beside, as one more row.
`--bindings` adds libCacheSim's Python bindings (`pip install libcachesim`; their
`process_trace`, CPU time of this process around the call) as one more row.
Traces default to synth:prn, synth:hm and, when the shared samples are present
($SHINGLED_SHARED_TRACES or ../shared/traces), the CloudPhysics sample.
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from machine import describe as describe_machine, line as machine_line  # noqa: E402


# our policy names for libCacheSim's
# Ours with libCacheSim's S3-FIFO default: a block moves from S to M when its frequency exceeds 1
# (our own default is 1 hit). So configured, our hit ratios equal its 2024 build's to its four
# digits (docs/benchmarks.md), and the rows compare the same work.
OURS = {"lru": "lru", "arc": "arc", "s3fifo": "s3-fifo:move_threshold=2"}


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_shingled(binary, trace_bin, policy, blocks, mode):
    t0 = children_cpu()
    w0 = time.perf_counter()
    p = subprocess.run([binary, "sim", "--trace", trace_bin, "--policy", OURS[policy], "--mode", mode,
                        "--cache-size", f"{blocks * 4096}B", "--output", "json", "--progress", "none"],
                       capture_output=True, text=True)
    wall = time.perf_counter() - w0
    if p.returncode != 0:
        sys.exit(f"shingled sim failed:\n{p.stderr}")
    r = json.loads(p.stdout)
    return children_cpu() - t0, wall, r


def run_cachesim(binary, path, policy, blocks):
    binary = os.path.abspath(binary)
    """One whole `cachesim` command: CPU seconds, wall seconds, hit ratio."""
    t0 = children_cpu()
    w0 = time.perf_counter()
    p = subprocess.run([binary, path, "oracleGeneralBin", policy, str(blocks), "--ignore-obj-size", "1",
                        "--num-thread", "1"], capture_output=True, text=True,
                       cwd=os.path.dirname(os.path.abspath(path)))  # it writes its result files there
    wall = time.perf_counter() - w0
    if p.returncode != 0:
        sys.exit(f"{binary} failed:\n{p.stderr[-2000:]}")
    m = re.findall(r"miss ratio (\d+\.\d+), throughput", p.stdout + p.stderr)
    if not m:
        sys.exit(f"{binary}: no final miss ratio in its output:\n{(p.stdout + p.stderr)[-2000:]}")
    return children_cpu() - t0, wall, 1.0 - float(m[-1])


def run_bindings(lcs, path, policy, blocks):
    cls = {"lru": lcs.LRU, "arc": lcs.ARC, "s3fifo": lcs.S3FIFO}[policy]
    reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = cls(cache_size=blocks * 4096)
    c0, w0 = time.process_time(), time.perf_counter()
    miss = cache.process_trace(reader)
    return time.process_time() - c0, time.perf_counter() - w0, 1.0 - miss[0]


def write_oracle_general(binary, trace_bin, out):
    """Every 4 KiB block of every request of `trace_bin` as oracleGeneral records, written by
    `shingled trace convert` (object id = block number, size 4096, time in whole seconds, next
    access filled in); returns the number of records."""
    subprocess.run([binary, "trace", "convert", trace_bin, "--to", "oracleGeneral", "-o", out],
                   check=True, capture_output=True)
    return os.path.getsize(out) // 24


def default_traces():
    traces = ["synth:prn", "synth:hm"]
    shared = os.environ.get("SHINGLED_SHARED_TRACES") or os.path.join(os.path.dirname(__file__), "..", "..",
                                                                       "shared", "traces")
    cp = os.path.join(shared, "cloudphysics-libcachesim-sample.vscsi")
    if os.path.exists(cp):
        traces.append(cp)
    return traces


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="target/release/shingled")
    ap.add_argument("--trace", action="append", help="a trace spec or file (repeatable)")
    ap.add_argument("--cache", default="2%", help="cache size as a share of the accessed range, or NNN blocks")
    ap.add_argument("--policy", action="append", choices=["lru", "arc", "s3fifo"], help="repeatable; default all three")
    ap.add_argument("--peer", action="append", help="NAME=PATH of a cachesim binary (repeatable)")
    ap.add_argument("--bindings", action="store_true", help="also run libCacheSim's Python bindings")
    ap.add_argument("--also", action="append", help="NAME=PATH of another shingled binary to run beside (e.g. an "
                    "earlier build; repeatable): its row is compared with the peers too")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--work", help="directory for the converted traces (kept; default a temporary one)")
    ap.add_argument("--json")
    a = ap.parse_args()
    traces = a.trace or default_traces()
    policies = a.policy or ["lru", "arc", "s3fifo"]
    peers = [p.split("=", 1) for p in (a.peer or ["cachesim-0.3.5=target/peers/libcachesim-0.3.5/cachesim"])]
    for name, path in peers:
        if not os.access(path, os.X_OK):
            sys.exit(f"peer {name}: {path} is not an executable; build it with scripts/build_libcachesim.sh")
    also = [p.split("=", 1) for p in (a.also or [])]
    lcs = None
    if a.bindings:
        import libcachesim as lcs

    results = []
    machine = describe_machine()
    print(machine_line(machine))
    with tempfile.TemporaryDirectory() as tmp:
        work = a.work or tmp
        os.makedirs(work, exist_ok=True)
        for trace in traces:
            tag = re.sub(r"[^A-Za-z0-9]+", "_", os.path.basename(trace))
            ours = os.path.join(work, f"{tag}.bin")
            theirs = os.path.join(work, f"{tag}.oracleGeneral")
            if not (os.path.exists(ours) and os.path.exists(theirs)):
                subprocess.run([a.bin, "trace", "convert", trace, "--output", ours], check=True, capture_output=True)
                write_oracle_general(a.bin, ours, theirs)
            blocks_total = os.path.getsize(theirs) // 24
            if a.cache.endswith("%"):
                # the cache the simulator would size: ask it (read-write sizes by the accessed range)
                r = json.loads(subprocess.run([a.bin, "sim", "--trace", ours, "--policy", "lru", "--cache-size",
                                               a.cache, "--output", "json", "--progress", "none"],
                                              capture_output=True, text=True, check=True).stdout)
                blocks = r["sizing"]["cache_blocks"]
            else:
                blocks = int(a.cache)
            for policy in policies:
                rows = {"shingled": []}
                rows.update({name: [] for name, _ in also})
                rows.update({name: [] for name, _ in peers})
                if lcs:
                    rows["bindings"] = []
                hits = {}
                res = None
                for _ in range(a.rounds):
                    cpu, wall, res = run_shingled(a.bin, ours, policy, blocks, "read-write")
                    rows["shingled"].append((cpu, wall))
                    hits["shingled"] = res["total"]["hit_ratio"]
                    for name, path in also:
                        cpu, wall, other = run_shingled(path, ours, policy, blocks, "read-write")
                        rows[name].append((cpu, wall))
                        hits[name] = other["total"]["hit_ratio"]
                    for name, path in peers:
                        cpu, wall, hit = run_cachesim(path, theirs, policy, blocks)
                        rows[name].append((cpu, wall))
                        hits[name] = hit
                    if lcs:
                        cpu, wall, hit = run_bindings(lcs, theirs, policy, blocks)
                        rows["bindings"].append((cpu, wall))
                        hits["bindings"] = hit
                t = res["total"]
                n = t["blocks_read"] + t["blocks_written"]
                assert n == blocks_total, f"block counts differ: shingled {n}, oracleGeneral {blocks_total}"
                cpu = {k: statistics.median(c for c, _ in v) for k, v in rows.items()}
                out = {"trace": trace, "policy": policy, "cache_blocks": blocks, "block_requests": n,
                       "cpu_s": cpu, "M_per_cpu_s": {k: n / c / 1e6 for k, c in cpu.items()},
                       "ratio": {k: cpu[k] / cpu["shingled"] for k in cpu if k != "shingled"},
                       "hit_ratio": hits, "rounds": rows}
                results.append(out)
                print(f"{trace}: {n:,} block requests, {policy}, cache {blocks:,} blocks, {a.rounds} rounds")
                for k in cpu:
                    ratio = "" if k == "shingled" else f"  shingled is {out['ratio'][k]:.2f}x faster"
                    print(f"  {k:<24} {cpu[k]:7.3f} CPU s = {n / cpu[k] / 1e6:6.2f} M/s; hit ratio {hits[k]:.6f}{ratio}")
                sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": machine, "peers": dict(peers), "also": dict(also), "results": results}, f,
                      indent=2)


if __name__ == "__main__":
    main()
