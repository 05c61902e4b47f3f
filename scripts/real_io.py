#!/usr/bin/env python3
"""PORE's and SAC's scheme comparison with real I/O: for each scheme, a fresh emulated DM-SMR
drive in a file (`shingled stl format dm-smr`: the DM-SMR model decides, the file takes the PB
appends and band read-modify-writes for real), a fresh cache device in front of it (`shingled
cache create --policy SCHEME`), and the trace replayed against the cache in process (`shingled
replay`, O_DIRECT where the file system allows it), timed by the wall clock. Beside it, the same
set-up in the simulator (`shingled sim`): its modelled time and counts.

    cargo build --release -p shingled-cli
    python3 scripts/real_io.py [--bin target/release/shingled] [--dir DIR] [--trace synth:wdev]
        [--limit N] [--schemes lru,lru-band,most,pore,sac] [--json OUT]

Prints a Markdown table: per scheme the measured wall time, the drive's RMWs and PB writes as
the emulated drive counted them, and the simulator's modelled time and RMWs, with the order of
the schemes by each time. On a virtual disk the absolute times mean little; the orderings are
the result.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def sh(bin_path, *args):
    p = subprocess.run([bin_path, "--progress", "none", *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"shingled {' '.join(args)} failed:\n{p.stderr}")
    return p.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="target/release/shingled")
    ap.add_argument("--dir", help="where the drive and cache files go (default: a temporary directory)")
    ap.add_argument("--trace", default="synth:wdev")
    ap.add_argument("--limit", type=int, default=200_000, help="trace requests replayed")
    ap.add_argument("--schemes", default="lru,lru-band,most,pore,sac")
    ap.add_argument("--drive", default="st5000as0011-scaled", help="the emulated drive's profile")
    ap.add_argument("--drive-size", default="6GiB")
    ap.add_argument("--bands", default="18MiB", help="fixed band size (the drive's and the policies')")
    ap.add_argument("--pb-size", default="18MiB")
    ap.add_argument("--cache-blocks", type=int, default=8192, help="blocks the policy manages")
    ap.add_argument("--json", help="also write every report here")
    ap.add_argument("--keep", action="store_true", help="keep each scheme's drive and cache files (GBs each)")
    a = ap.parse_args()
    bin_path = os.path.abspath(a.bin)
    work = a.dir or tempfile.mkdtemp(prefix="real-io-")
    os.makedirs(work, exist_ok=True)
    slots = a.cache_blocks + max(1, a.cache_blocks // 64)
    rows, reports = [], {}
    for scheme in a.schemes.split(","):
        emu = os.path.join(work, f"emu-{scheme}.img")
        ssd = os.path.join(work, f"ssd-{scheme}.img")
        for f in (emu, ssd):
            if os.path.exists(f):
                os.remove(f)
        sh(bin_path, "stl", "format", "dm-smr", emu, "--size", a.drive_size, "--drive", a.drive,
           "--pb-size", a.pb_size, "--bands", f"fixed:{a.bands}")
        sh(bin_path, "cache", "create", ssd, "--backing", emu, "--size", f"{slots * 4096}B", "--mode",
           "write-only", "--policy", scheme, "--capacity", str(a.cache_blocks), "--band-size", a.bands,
           "--pb-size", a.pb_size)
        t0 = time.time()
        rep = json.loads(sh(bin_path, "replay", "--target", ssd, "--write-only", "--limit", str(a.limit),
                            "--output", "json", a.trace))
        took = time.time() - t0
        emu_stats = json.loads(sh(bin_path, "stl", "stats", emu, "--output", "json"))
        sim = json.loads(sh(bin_path, "sim", "--trace", a.trace, "--limit", str(a.limit), "--mode", "write-only",
                            "--policy", scheme, "--cache-size", f"{a.cache_blocks * 4096}B", "--drive", a.drive,
                            "--bands", f"fixed:{a.bands}", "--pb-size", a.pb_size, "--output", "json"))
        run = sim["runs"][0] if "runs" in sim else sim
        counts = emu_stats["stats"]["counts"] if "counts" in emu_stats["stats"] else emu_stats["stats"]
        rows.append(dict(scheme=scheme, wall_s=rep["wall_s"] + rep["flush_s"], replay_s=took,
                         rmws=counts.get("rmws"), pb_writes=counts.get("pb_writes"),
                         sim_time_s=run["total"]["total_time_s"], sim_rmws=run["total"]["drive"]["rmws"]))
        reports[scheme] = dict(replay=rep, drive=emu_stats, sim=run)
        if not a.keep:
            os.remove(emu)
            os.remove(ssd)
        print(f"{scheme}: measured {rows[-1]['wall_s']:.1f} s, RMWs {rows[-1]['rmws']} (sim {rows[-1]['sim_rmws']})",
              file=sys.stderr)
    by_wall = sorted(rows, key=lambda r: r["wall_s"])
    by_sim = sorted(rows, key=lambda r: r["sim_time_s"])
    print("| scheme | measured time (s) | RMWs (emulated drive) | PB writes | modelled time (s) | RMWs (sim) |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['scheme']} | {r['wall_s']:.1f} | {r['rmws']} | {r['pb_writes']} | {r['sim_time_s']:.1f} | "
              f"{r['sim_rmws']} |")
    print()
    print("measured order: " + " < ".join(r["scheme"] for r in by_wall))
    print("modelled order: " + " < ".join(r["scheme"] for r in by_sim))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(rows=rows, reports=reports), f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
