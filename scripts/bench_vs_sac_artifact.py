#!/usr/bin/env python3
"""`shingled sim` beside the SAC paper's own artifact on the same requests.

The artifact (github.com/dcstrange/sac, Sun et al.) replays a trace through its SSD cache (SAC,
LRU, MOST, MOST+CDC) above its SMR emulator; with `--use-emulator --no-real-io` it does no I/O and
only counts (hits, dirty write-backs, RMWs). Build its optimised form first:

    git clone https://github.com/dcstrange/sac /tmp/sac-src
    scripts/build_sac_artifact.sh /tmp/sac-src      # -> target/peers/sac-artifact/sac
    cargo build --release -p shingled-cli            # or: make pgo
    python3 scripts/bench_vs_sac_artifact.py --trace TRACE.bin [--sizes 1GiB:200MiB,...]
        [--policies lru,most,most-cdc,sac] [--rounds 3] [--bin target/release/shingled]
        [--artifact PATH] [--json FILE]

For each policy and cache/PB size the script runs, interleaved `--rounds` times,

* the artifact's whole command on the trace in its own text format (`<op> 0 <block>`, one line per
  4 KiB block; written once from TRACE.bin into the work directory):
  `sac --algorithm A --workload-file F --workload-mode W --cache-size C --pb-size P
  --use-emulator --no-real-io`, write-only as SAC §6.2 measures;
* `shingled sim` on the same text file (`--drive sac-emulator`, the artifact's emulator: append-only
  PB, 20.48 MB bands; `--pb-size P`, `--mode write-only`), and on TRACE.bin itself;

and reports each command's CPU time (user + system of the child; median of the rounds), the ratio
(artifact CPU / ours) and both sides' counts after the warm-up (the artifact resets its counters
when the cache first evicts; ours reports `after_warmup` from the same point), so a reader sees
whether the two did the same work. Sizes are the artifact's: its `1G` is 1 GiB, `200M` 200 MiB.
"""
import argparse
import json
import os
import re
import resource
import statistics
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from machine import describe as describe_machine, line as machine_line  # noqa: E402
from text_table import print_table  # noqa: E402

# our policy names → the artifact's
ARTIFACT = {"lru": "LRU", "most": "MOST", "most-cdc": "MOST_CDC", "sac": "SAC"}
DEFAULT_SIZES = "1GiB:200MiB,4GiB:800MiB,16GiB:1600MiB,32GiB:6400MiB"
UNITS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def artifact_size(s):
    """`1GiB` → `1G`, `3.2GiB` → `3276M` (the artifact takes a whole number with a K/M/G suffix)."""
    m = re.fullmatch(r"([0-9.]+)(KiB|MiB|GiB)", s)
    if not m:
        sys.exit(f"--sizes: {s!r} is not a size in KiB, MiB or GiB (e.g. 1GiB, 200MiB)")
    n = float(m.group(1)) * UNITS[m.group(2)]
    for suffix, unit in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n % unit == 0:
            return f"{int(n // unit)}{suffix}"
    sys.exit(f"--sizes: {s!r} is not a whole number of KiB")


def write_sac_text(bin_path, out_path):
    """The requests of our `bin` trace as the artifact's text: one `<op> 0 <block>` line per
    4 KiB block (op 1 = write). Returns the number of lines."""
    with open(bin_path, "rb") as f:
        head = f.read(32)
        if head[:8] != b"\x89SHGTRC\n":
            sys.exit(f"{bin_path}: not a `bin` trace (convert it with `shingled trace convert`)")
        data = f.read()
    write_bit = 1 << 63
    n = 0
    with open(out_path, "w") as out:
        buf = []
        for _t, off, length, _vol in struct.iter_unpack("<QQII", data):
            op = "1" if off & write_bit else "0"
            off &= write_bit - 1
            for b in range(off // 4096, (off + length + 4095) // 4096):
                buf.append(f"{op} 0 {b}\n")
            if len(buf) >= 1 << 16:
                n += len(buf)
                out.write("".join(buf))
                buf = []
        n += len(buf)
        out.write("".join(buf))
    return n


def run_artifact(binary, text, policy, cache, pb, cwd):
    c0 = children_cpu()
    p = subprocess.run([binary, "--algorithm", ARTIFACT[policy], "--workload-file", text,
                        "--workload-mode", "W", "--cache-size", cache, "--pb-size", pb,
                        "--use-emulator", "--no-real-io"], capture_output=True, text=True, cwd=cwd)
    cpu = children_cpu() - c0
    if p.returncode != 0:
        # Reported in the table rather than ending the run: the artifact has crashed on some
        # sizes (SAC with a 3200 MiB PB: SIGSEGV, optimised or not).
        why = f"signal {-p.returncode}" if p.returncode < 0 else f"exit status {p.returncode}"
        print(f"the artifact failed ({why}): {' '.join(p.args)}\n{p.stderr[-500:]}", file=sys.stderr)
        return cpu, None
    out = p.stdout[p.stdout.rfind("RESULT"):]

    def field(name):
        m = re.search(rf"{name}\s*:?\s*([0-9]+)", out)
        if not m:
            sys.exit(f"the artifact's output has no {name!r}:\n{out[-2000:]}")
        return int(m.group(1))

    counts = {"requests": field("write_req_count"), "hits": field("hit num"),
              "dirty_evictions": field("flush_dirty_blocks"), "rmws": field("RMWs")}
    return cpu, counts


def run_ours(binary, trace, policy, cache, pb):
    c0 = children_cpu()
    p = subprocess.run([binary, "sim", "--trace", trace, "--policy", policy, "--mode", "write-only",
                        "--cache-size", cache, "--drive", "sac-emulator", "--pb-size", pb,
                        "--output", "json", "--progress", "none"], capture_output=True, text=True)
    cpu = children_cpu() - c0
    if p.returncode != 0:
        sys.exit(f"shingled sim failed:\n{p.stderr}")
    rep = json.loads(p.stdout)
    # With no eviction there is no warm-up to leave out (the artifact then reports every request).
    w = rep.get("after_warmup") or rep["total"]
    counts = {"requests": w["requests"], "hits": w["write_hits"] + w["read_hits"],
              "dirty_evictions": w["dirty_evictions"], "rmws": w["drive"]["rmws"]}
    return cpu, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trace", required=True, help="a `bin` trace (shingled trace convert)")
    ap.add_argument("--bin", default="target/release/shingled", help="the `shingled` binary")
    ap.add_argument("--artifact", default="target/peers/sac-artifact/sac")
    ap.add_argument("--policies", default="lru,most,most-cdc,sac")
    ap.add_argument("--sizes", default=DEFAULT_SIZES, help="CACHE:PB pairs, comma-separated")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", help="directory for the text trace and the artifact's logs (default: a temporary one)")
    ap.add_argument("--json", help="write the figures here")
    a = ap.parse_args()
    if a.rounds < 1:
        sys.exit("--rounds must be at least 1")
    for path, what in ((a.bin, "--bin"), (a.artifact, "--artifact")):
        if not os.access(path, os.X_OK):
            sys.exit(f"{what}: {path} is not an executable (see this script's help for how to build it)")
    policies = [p for p in a.policies.split(",") if p]
    for p in policies:
        if p not in ARTIFACT:
            sys.exit(f"--policies: {p!r} is not one of {', '.join(ARTIFACT)}")
    sizes = []
    for pair in a.sizes.split(","):
        cache, sep, pb = pair.partition(":")
        if not sep:
            sys.exit(f"--sizes: {pair!r} is not CACHE:PB (e.g. 1GiB:200MiB)")
        sizes.append((cache, pb, artifact_size(cache), artifact_size(pb)))
    work = a.work or tempfile.mkdtemp(prefix="bench-sac-")
    os.makedirs(os.path.join(work, "logs"), exist_ok=True)  # the artifact writes ./logs/iolat.log
    text = os.path.join(work, os.path.basename(a.trace) + ".sac")
    if not os.path.exists(text):
        lines = write_sac_text(a.trace, text)
        print(f"wrote {text}: {lines:,} lines", file=sys.stderr)
    binary, artifact = os.path.abspath(a.bin), os.path.abspath(a.artifact)
    machine = describe_machine()
    print(machine_line(machine))
    sides = ["artifact", "ours-text", "ours-bin"]
    cells = {}
    for r in range(a.rounds):
        for policy in policies:
            for cache, pb, acache, apb in sizes:
                cell = cells.setdefault((policy, cache, pb), {s: [] for s in sides} | {"counts": {}})
                if cell.get("failed"):
                    continue
                order = sides if r % 2 == 0 else sides[::-1]
                for side in order:
                    if side == "artifact":
                        cpu, counts = run_artifact(artifact, text, policy, acache, apb, work)
                    else:
                        trace = text if side == "ours-text" else a.trace
                        cpu, counts = run_ours(binary, trace, policy, cache, pb)
                    if counts is None:
                        cell["failed"] = True
                    else:
                        cell[side].append(cpu)
                        cell["counts"][side] = counts
                    print(f"round {r + 1}/{a.rounds} {policy:8} {cache:>6}/{pb:<7} {side:9} cpu {cpu:7.2f} s",
                          file=sys.stderr, flush=True)
    rows = []
    for (policy, cache, pb), cell in cells.items():
        if "artifact" not in cell["counts"]:
            rows.append({"policy": policy, "cache": cache, "pb": pb, "failed": True})
            continue
        med = {s: statistics.median(cell[s]) for s in sides}
        rows.append({"policy": policy, "cache": cache, "pb": pb,
                     "cpu_s": med, "cpu_s_all": {s: cell[s] for s in sides},
                     "ratio_text": med["artifact"] / med["ours-text"], "ratio_bin": med["artifact"] / med["ours-bin"],
                     "counts": cell["counts"]})
    print(f"trace {a.trace}, write-only, medians of {a.rounds} interleaved rounds, CPU s (user + sys)")
    head = ["policy", "cache/PB", "artifact", "ours (text)", "ours (bin)", "ratio text", "ratio bin",
            "hits artifact / ours", "dirty write-backs artifact / ours", "RMWs artifact / ours"]
    table = []
    for r in rows:
        if r.get("failed"):
            table.append([r["policy"], f"{r['cache']}/{r['pb']}", "crashed", "", "", "", "", "", "", ""])
            continue
        ca, co = r["counts"]["artifact"], r["counts"]["ours-text"]
        table.append([r["policy"], f"{r['cache']}/{r['pb']}", f"{r['cpu_s']['artifact']:.2f}",
                      f"{r['cpu_s']['ours-text']:.2f}", f"{r['cpu_s']['ours-bin']:.2f}",
                      f"{r['ratio_text']:.1f}x", f"{r['ratio_bin']:.1f}x",
                      f"{ca['hits']:,} / {co['hits']:,}", f"{ca['dirty_evictions']:,} / {co['dirty_evictions']:,}",
                      f"{ca['rmws']:,} / {co['rmws']:,}"])
    print_table(head, table)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"machine": machine, "trace": a.trace, "bin": a.bin, "artifact": a.artifact,
                       "rounds": a.rounds, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
