"""Sweep throughput: the local backend at jobs=1 and jobs=2, and the Ray backend against local
on the same grid (a local Ray started with ``ray.init(num_cpus=2)``).

Run inside the project venv (``make pytest`` creates it and builds the extension)::

    .venv/bin/python crates/py/benches/sweep_bench.py [--trace synth:wdev,scale=0.05] [--reps 2]

Prints one line per measurement and a Markdown table for docs/benchmarks.md. Simulations per
second count grid points; block requests per second count the 4 KiB block requests replayed by
all points, over the sweep's wall-clock time (trace measurement, scheduling and result
conversion included).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import shingled

GRID = {"policy": ["lru", "most", "sac", "pore-bl"], "cache": ["1%", "2%", "5%"]}


def blocks(df) -> int:
    return int((df["blocks_read"] + df["blocks_written"]).sum())


CPU = {}


def timed(fn):
    """(wall seconds, result); CPU[wall] = this process's user+system CPU seconds meanwhile
    (the local backend's threads; Ray's tasks run in other processes)."""
    c, t = os.times(), time.perf_counter()
    df = fn()
    wall, c2 = time.perf_counter() - t, os.times()
    CPU[wall] = (c2.user - c.user) + (c2.system - c.system)
    return wall, df


def best_of(reps, fn):
    runs = [timed(fn) for _ in range(reps)]
    return min(runs, key=lambda r: r[0]), [r[0] for r in runs]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default="synth:wdev,scale=0.05")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--no-ray", action="store_true")
    a = ap.parse_args()

    cfg = shingled.Config.default().with_mode("write-only")
    points = len(GRID["policy"]) * len(GRID["cache"])
    print(f"python {platform.python_version()} | {os.cpu_count()} CPUs | load {os.getloadavg()} | "
          f"grid {GRID} | trace {a.trace} | {points} points | best of {a.reps}", flush=True)
    print(f"extension {shingled._core.__file__}", flush=True)

    rows = []

    def report(name, secs, all_secs, df):
        n = len(df)
        b = blocks(df)
        rows.append((name, secs, n / secs, b / secs, all_secs))
        print(f"{name:<28} {secs:8.2f} s  {n / secs:7.3f} sims/s  {b / secs / 1e6:7.3f} M block req/s  "
              f"{CPU[secs]:6.2f} CPU s in this process  "
              f"(runs {', '.join(f'{s:.2f}' for s in all_secs)})", flush=True)
        return df

    ref = None
    for jobs in (1, 2):
        (secs, df), all_secs = best_of(a.reps, lambda: shingled.sweep(GRID, a.trace, config=cfg, jobs=jobs))
        report(f"local jobs={jobs}", secs, all_secs, df)
        ref = df if ref is None else ref
        assert len(df) == points

    if not a.no_ray:
        try:
            import ray
        except ImportError as e:
            print(f"ray not importable: {e}")
        else:
            t = time.perf_counter()
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            print(f"ray.init(num_cpus=2)            {time.perf_counter() - t:8.2f} s", flush=True)
            try:
                where = ray.get(ray.remote(lambda: __import__("shingled")._core.__file__).remote())
                print(f"ray workers load {where}", flush=True)
                secs, df = timed(lambda: shingled.sweep(GRID, a.trace, backend="ray", config=cfg))
                report("ray (first, cold workers)", secs, [secs], df)
                (secs, df), all_secs = best_of(
                    a.reps, lambda: shingled.sweep(GRID, a.trace, backend="ray", config=cfg))
                report("ray (warm workers)", secs, all_secs, df)
                key = ["policy", "cache"]
                same = (df.sort_values(key)["total_time_s"].to_numpy()
                        == ref.sort_values(key)["total_time_s"].to_numpy()).all()
                print(f"ray results identical to local: {bool(same)}")
            finally:
                ray.shutdown()

    print("\n| backend | wall s (best) | simulations/s | M block requests/s |")
    print("|---|---:|---:|---:|")
    for name, secs, sps, bps, _ in rows:
        print(f"| {name} | {secs:.2f} | {sps:.3f} | {bps / 1e6:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
