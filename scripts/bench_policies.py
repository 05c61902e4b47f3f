#!/usr/bin/env python3
"""The SMR-aware policies' speed beside an older build of `shingled`, interleaved.

Runs two `shingled` binaries (a baseline build and a new one) on the same trace, one after the
other, `--rounds` times (the order alternates per round, so neither always runs on a warm page
cache), for each policy and each (cache size, persistent-buffer size) pair:

    shingled sim --trace T --policy P --mode write-only --cache-size C --pb-size PB \
        --output json --progress none

It measures the whole command (process start, trace reading and parsing, cost fitting, replay,
drive model, JSON output) as the child's CPU time (user + system, `getrusage(RUSAGE_CHILDREN)`
before and after), takes the median over the rounds, and reports block requests and trace
requests (lines of a text trace) per CPU second and the ratio new / baseline. Every pair of
runs must give identical results: the report's `total` (counts and modelled times), `dirty_left`
and `sizing` are compared field by field (the fields both builds report) and the script stops,
naming the fields, when they differ.

    cargo build --release -p shingled-cli
    python3 scripts/bench_policies.py --baseline OLD/target/release/shingled \
        [--new target/release/shingled] --trace prn3.bin [--rounds 3] \
        [--policies most,sac,pore,lru] [--sizes 1GiB:200MiB,4GiB:800MiB,16GiB:3.2GiB] \
        [--json out.json]

`--trace` takes anything `shingled sim --trace` does: a `bin` trace (read once when its
`.stats.json` is beside it), a text trace such as an MSR CSV (SAC and PORE with fitted costs
measure its footprint first), or a `synth:` spec. `--extra ARG` (repeatable) passes further
arguments to both binaries, e.g. `--extra=--costs --extra=paper`. The machine is noisy (two
vCPUs shared with builds): use at least 3 rounds and read the medians, never single runs.
"""
import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from machine import describe as describe_machine, line as machine_line  # noqa: E402
from text_table import print_table  # noqa: E402

DEFAULT_SIZES = "1GiB:200MiB,4GiB:800MiB,16GiB:3.2GiB"
# report fields that depend on the host, not on the simulation
HOST_FIELDS = {"wall_time_s", "block_requests_per_s"}


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(binary, trace, policy, cache, pb, extra):
    cmd = [binary, "sim", "--trace", trace, "--policy", policy, "--mode", "write-only",
           "--cache-size", cache, "--pb-size", pb, "--output", "json", "--progress", "none", *extra]
    c0, w0 = children_cpu(), time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - w0, children_cpu() - c0
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    return cpu, wall, json.loads(p.stdout)


def differences(a, b, path=""):
    """Field paths where two JSON values differ (fields only one build reports are skipped: a
    newer build may report more)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) & set(b)):
            out += differences(a.get(k), b.get(k), f"{path}.{k}" if path else k)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += differences(x, y, f"{path}[{i}]")
        return out
    return [] if a == b else [f"{path}: {a!r} vs {b!r}"]


def compared(report):
    return {k: report.get(k) for k in ("total", "dirty_left", "sizing")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", required=True, help="the older `shingled` binary")
    ap.add_argument("--new", default="target/release/shingled", help="the newer `shingled` binary")
    ap.add_argument("--trace", required=True)
    ap.add_argument("--policies", default="most,sac,pore,lru")
    ap.add_argument("--sizes", default=DEFAULT_SIZES, help="CACHE:PB pairs, comma-separated")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--extra", action="append", default=[], help="an argument for both binaries")
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    if a.rounds < 1:
        sys.exit("--rounds must be at least 1")
    policies = [p for p in a.policies.split(",") if p]
    sizes = []
    for pair in a.sizes.split(","):
        cache, sep, pb = pair.partition(":")
        if not sep or not cache or not pb:
            sys.exit(f"--sizes: {pair!r} is not CACHE:PB (e.g. 1GiB:200MiB)")
        sizes.append((cache, pb))
    machine = describe_machine()
    print(machine_line(machine))
    sides = {"baseline": a.baseline, "new": a.new}
    cells = {}
    for r in range(a.rounds):
        for policy in policies:
            for cache, pb in sizes:
                cell = cells.setdefault((policy, cache, pb), {"baseline": [], "new": [], "report": None})
                order = ["baseline", "new"] if r % 2 == 0 else ["new", "baseline"]
                got = {}
                for side in order:
                    cpu, wall, rep = run(sides[side], a.trace, policy, cache, pb, a.extra)
                    cell[side].append({"cpu_s": cpu, "wall_s": wall})
                    got[side] = rep
                    print(f"round {r + 1}/{a.rounds} {policy:5} {cache:>6}/{pb:<7} {side:8} "
                          f"cpu {cpu:7.2f} s  wall {wall:7.2f} s", file=sys.stderr, flush=True)
                diff = differences(compared(got["baseline"]), compared(got["new"]))
                if diff:
                    sys.exit(f"{policy} at {cache}/{pb}: the two builds disagree:\n  " + "\n  ".join(diff[:40]))
                if cell["report"] is None:
                    cell["report"] = got["new"]
                elif differences(compared(cell["report"]), compared(got["new"])):
                    sys.exit(f"{policy} at {cache}/{pb}: a rerun of the same build gave other results")
    rows = []
    for (policy, cache, pb), cell in cells.items():
        t = cell["report"]["total"]
        blocks = t["blocks_read"] + t["blocks_written"]
        lines = t["requests"] + t.get("skipped_requests", 0)
        base = statistics.median(x["cpu_s"] for x in cell["baseline"])
        new = statistics.median(x["cpu_s"] for x in cell["new"])
        rows.append({
            "policy": policy, "cache": cache, "pb": pb, "block_requests": blocks, "trace_requests": lines,
            "dirty_evictions": t["dirty_evictions"], "hit_ratio": t["hit_ratio"],
            "baseline_cpu_s": base, "new_cpu_s": new,
            "baseline_cpu_s_all": [x["cpu_s"] for x in cell["baseline"]],
            "new_cpu_s_all": [x["cpu_s"] for x in cell["new"]],
            "baseline_m_blocks_per_cpu_s": blocks / base / 1e6, "new_m_blocks_per_cpu_s": blocks / new / 1e6,
            "baseline_m_lines_per_cpu_s": lines / base / 1e6, "new_m_lines_per_cpu_s": lines / new / 1e6,
            "ratio": base / new,
        })
    head = ["policy", "cache/PB", "dirty evictions", "base CPU s", "new CPU s", "base M blk/CPU s",
            "new M blk/CPU s", "new M lines/CPU s", "new/base"]
    table = [[r["policy"], f"{r['cache']}/{r['pb']}", f"{r['dirty_evictions']:,}", f"{r['baseline_cpu_s']:.2f}",
              f"{r['new_cpu_s']:.2f}", f"{r['baseline_m_blocks_per_cpu_s']:.2f}",
              f"{r['new_m_blocks_per_cpu_s']:.2f}", f"{r['new_m_lines_per_cpu_s']:.2f}",
              f"{r['ratio']:.2f}x"] for r in rows]
    print(f"trace {a.trace}, write-only, medians of {a.rounds} interleaved rounds, CPU time (user + sys)")
    print_table(head, table)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": machine, "trace": a.trace, "baseline": a.baseline, "new": a.new,
                       "rounds": a.rounds, "extra": a.extra, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
