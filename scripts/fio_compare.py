#!/usr/bin/env python3
"""`shingled replay` beside fio on the same requests: what each tool adds per request.

Writes a seeded random trace twice — an MSR CSV for `shingled replay`, a version-2 iolog for
fio's `--read_iolog` — over a file in DIR, caches the file, then runs both tools through the
page cache (ours `--buffered`; fio `--direct=0 --invalidate=0`, so it does not drop the file's
cached pages first), interleaved, and prints each round's replay-loop time and mean latencies.

    cargo build --release -p shingled-cli
    python3 scripts/fio_compare.py [--bin target/release/shingled] [--dir DIR] [--requests 200000] [--rounds 3]
"""
import argparse
import json
import os
import random
import subprocess
import tempfile


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="target/release/shingled")
    ap.add_argument("--dir")
    ap.add_argument("--requests", type=int, default=200_000)
    ap.add_argument("--blocks", type=int, default=262_144, help="file size in 4 KiB blocks (1 GiB)")
    ap.add_argument("--reads", type=float, default=0.7, help="share of reads")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    work = a.dir or tempfile.mkdtemp(prefix="fio-compare-")
    os.makedirs(work, exist_ok=True)
    disk = os.path.join(work, "disk.img")
    rng = random.Random(a.seed)
    reqs = [("Read" if rng.random() < a.reads else "Write", rng.randrange(a.blocks) * 4096) for _ in range(a.requests)]
    base = 128_166_372_000_000_000
    with open(os.path.join(work, "t.csv"), "w") as f:
        f.writelines(f"{base + i * 10},t,0,{op},{off},4096,100\n" for i, (op, off) in enumerate(reqs))
    with open(os.path.join(work, "t.iolog"), "w") as f:
        f.write(f"fio version 2 iolog\n{disk} add\n{disk} open\n")
        f.writelines(f"{disk} {op.lower()} {off} 4096\n" for op, off in reqs)
        f.write(f"{disk} close\n")
    # Allocated, not sparse: a write into a hole would time the file system's allocation.
    with open(disk, "wb") as f:
        for _ in range(a.blocks // 256):
            f.write(bytes(1 << 20))
        f.flush()
        os.fsync(f.fileno())
    with open(disk, "rb") as f:
        while f.read(1 << 20):
            pass
    print("| round | fio job_runtime (ms) | fio read / write clat mean (µs) | ours wall_s (ms) | ours read / write mean (µs) | ours flush_s (ms) |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in range(1, a.rounds + 1):
        out = os.path.join(work, "fio.json")
        subprocess.run(["fio", "--name=r", f"--read_iolog={os.path.join(work, 't.iolog')}", "--ioengine=psync",
                        "--direct=0", "--replay_no_stall=1", "--invalidate=0", "--output-format=json",
                        f"--output={out}"], check=True, capture_output=True)
        j = json.load(open(out))["jobs"][0]
        # fio's writes are left dirty (it does not sync at the end): written back before ours.
        os.sync()
        p = subprocess.run([os.path.abspath(a.bin), "replay", "--progress", "none", "--force", "--buffered",
                            "--target", disk, "--output", "json", os.path.join(work, "t.csv")],
                           check=True, capture_output=True, text=True)
        o = json.loads(p.stdout)
        os.sync()
        print(f"| {r} | {j['job_runtime']} | {j['read']['clat_ns']['mean'] / 1e3:.2f} / "
              f"{j['write']['clat_ns']['mean'] / 1e3:.2f} | {o['wall_s'] * 1e3:.0f} | "
              f"{o['reads']['latency']['mean_ms'] * 1e3:.2f} / {o['writes']['latency']['mean_ms'] * 1e3:.2f} | "
              f"{o['flush_s'] * 1e3:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
