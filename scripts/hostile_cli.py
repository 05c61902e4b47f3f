#!/usr/bin/env python3
"""A hostile-input campaign against the `shingled` binary: random bad command lines (hostile
values in every flag of the common subcommands, missing, odd and special files), each run with
a timeout and stdout closed early half the time. Counts panics (exit 101 or 'panicked'),
crashes (killed by a signal), hangs (timeout), unclear errors (exit 1 whose message does not
name a flag, field, file or value), and successes.

    python3 scripts/hostile_cli.py [--bin target/debug/shingled] [--n 400] [--seed 1] [--only curve]

The `cache` and `stl` commands that need no mount (cache create/check/stats/flush/detach/lost/
replay, stl format/check/stats) run against fixtures made first in the scratch directory: a
cache over a backing file, a SMaRT and a dm-zoned layer, a chunk store, a blank zoned device,
an empty file, random bytes, a directory, a FIFO and a symbolic link. Every run is limited to
4 GiB of address space (an allocation beyond it aborts: a crash, counted).

Prints the counts and the first examples of each bad outcome; exits 1 if any panic, crash or
hang was seen. Not run by the test suite (tests/crates cover the cases found); a tool for
reviews.
"""
import argparse
import os
import random
import resource
import subprocess
import tempfile

HOSTILE = ["-1", "0", "1e99", "nan", "inf", "", "18446744073709551616", "4294967295", "0.0000001",
           "abc", "1/0", "-5%", "200%", "1 GiB", "12ZB", "\x00", "../../etc/passwd", "/dev/null",
           "/nonexistent/file", "synth:", "synth:wdev,scale=0", "synth:wdev,scale=1e9", "x" * 300]

COMMANDS = {
    ("sim",): ["--trace", "--policy", "--cache-size", "--pb-size", "--mode", "--drive", "--bands",
               "--drive-capacity", "--replay", "--time-scale", "--lba-scale", "--fold", "--limit",
               "--io-unit", "--setup", "--write-cache", "--warmup", "--output", "--ssd", "--format",
               "--volume", "--pb-flavour"],
    ("compare",): ["--trace", "--schemes", "--cache-size", "--jobs", "--mode", "--setup"],
    ("curve",): ["--trace", "--policy", "--cache-size", "--pb-size", "--rate", "--unit", "--sampling",
                 "--samples", "--seed", "--validate", "--jobs", "--mode", "--output"],
    ("trace", "stats"): ["--format", "--volume", "--bands"],
    ("trace", "convert"): ["-o", "--format"],
    ("trace", "mix"): ["-o", "--copies", "--seed"],
    ("zone", "create"): ["--zones", "--zone-size", "--zone-capacity", "--conventional", "--max-open"],
    ("zone", "report"): [],
    ("store", "format"): ["--zones", "--zone-size", "--metazones", "--placement", "--metadata-chunk-limit"],
    ("store", "put"): ["--stream"],
    ("store", "get"): ["-o"],
    ("probe", "pb"): ["--drive", "--hidden", "--max-blocks"],
    ("drive", "bench"): ["--png"],
    ("experiment",): ["--on", "--jobs", "--mode"],
    ("cache", "create"): ["--backing", "--size", "--mode", "--policy", "--band-size", "--pb-size", "--capacity",
                          "--reserve", "--sequential-cutoff", "--seed", "--force"],
    ("cache", "check"): ["--output"],
    ("cache", "stats"): ["--output"],
    ("cache", "flush"): ["--backing"],
    ("cache", "detach"): ["--backing"],
    ("cache", "lost"): ["--backing", "--output"],
    ("cache", "replay"): ["--trace", "--policy", "--cache-size", "--pb-size", "--mode", "--reserve", "--flush-every",
                          "--limit", "--drive", "--bands", "--io-unit", "--warmup", "--output", "--no-compare"],
    ("stl", "format"): ["--size", "--track-size", "--zones", "--head-width", "--utilisation", "--staging-tracks",
                        "--zone-size", "--conventional", "--reserved-seq"],
    ("stl", "check"): ["--output"],
    ("stl", "stats"): ["--output"],
}

# Values that pass the parser, so the cache and stl commands reach their own checks; drawn for
# half of their flags.
PLAUSIBLE = {
    "--size": ["64MiB", "16MiB", "256MiB", "4KiB", "1GiB", "8KiB", "100000"],
    "--track-size": ["256KiB", "1MiB", "4KiB", "64MiB", "12KiB"],
    "--zones": ["1", "4", "1000", "0"],
    "--head-width": ["1", "2", "50", "0"],
    "--utilisation": ["0.9", "1", "0", "0.01", "1.5"],
    "--staging-tracks": ["0", "2", "8", "100000"],
    "--zone-size": ["16MiB", "4KiB", "1MiB", "3MiB", "1GiB"],
    "--conventional": ["0", "1", "8", "100"],
    "--reserved-seq": ["0", "1", "100"],
    "--mode": ["read-write", "write-only", "read-only", "write-cache"],
    "--policy": ["lru", "pore", "sac", "lru-band", "most", "arc", "pore:period=0"],
    "--band-size": ["1MiB", "4KiB", "64MiB", "0"],
    "--pb-size": ["1MiB", "4KiB", "0", "64MiB"],
    "--capacity": ["0", "1", "100", "1000000"],
    "--reserve": ["0", "1", "16", "100000"],
    "--sequential-cutoff": ["0", "4KiB", "1MiB"],
    "--seed": ["0", "1"],
    "--backing": ["backing.img", "cache.img", "smart.stl", "dmz.stl", "link"],
    "--output": ["table", "json"],
    "--cache-size": ["1%", "100%", "4KiB", "1GiB"],
    "--flush-every": ["0", "1", "1000"],
    "--limit": ["0", "1", "100"],
}

# Flags that take no value.
SWITCHES = {"--force", "--no-compare", "--skip-bad-lines", "--no-cache"}

# Fixtures made once in the scratch directory (see `fixtures`).
FIXTURES = ["cache.img", "backing.img", "smart.stl", "dmz.stl", "store.zbd", "blank.zbd", "empty", "junk.csv",
            "fifo", "link", "dir", "new.img"]


def clear(stderr: str) -> bool:
    """An error message says what and where: a flag, field, file, value or line."""
    e = stderr.lower()
    return any(w in e for w in ("--", "field", "file", "line", "value", "expected", "unknown", "no such",
                                "invalid", "must", "cannot", "not a", "refus", "exists", "size", "zone",
                                "trace", "profile", "usage", "directory", "opening"))


def fixtures(bin_: str, d: str) -> None:
    """Every file the cache and stl commands are given, made with the binary itself."""
    def run(*args: str) -> None:
        subprocess.run([bin_, "--progress", "none", *args], cwd=d, check=True, capture_output=True, timeout=120)
    with open(os.path.join(d, "backing.img"), "wb") as f:
        f.truncate(64 << 20)
    run("cache", "create", "cache.img", "--backing", "backing.img", "--size", "8MiB")
    run("stl", "format", "smart", "smart.stl", "--size", "64MiB", "--track-size", "256KiB")
    run("stl", "format", "dm-zoned", "dmz.stl", "--size", "256MiB")
    run("store", "format", "--create", "--zones", "8", "--zone-size", "16MiB", "store.zbd")
    run("zone", "create", "--zones", "8", "--zone-size", "16MiB", "blank.zbd")
    os.mkdir(os.path.join(d, "dir"))
    os.mkfifo(os.path.join(d, "fifo"))
    os.symlink("cache.img", os.path.join(d, "link"))


def limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/debug/shingled")
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default=None, help="only this subcommand (e.g. curve)")
    ap.add_argument("--verbose", action="store_true", help="print every command line and its outcome")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    rng = random.Random(a.seed)
    counts = {"ok": 0, "error": 0, "unclear": 0, "panic": 0, "crash": 0, "hang": 0}
    examples = {k: [] for k in counts}
    with tempfile.TemporaryDirectory() as d:
        files = [os.path.join(d, "empty"), os.path.join(d, "junk.csv"), d, os.path.join(d, "new.zbd")]
        open(files[0], "w").close()
        with open(files[1], "wb") as f:
            f.write(os.urandom(5000))
        fixtures(a.bin, d)
        for i in range(a.n):
            cmd, flags = rng.choice([c for c in COMMANDS.items() if a.only is None or c[0][0] == a.only])
            args = list(cmd)
            if cmd[0] in ("trace", "zone", "store") and cmd[1] not in ("mix",):
                args.append(rng.choice(files + HOSTILE[:3]))
            if cmd == ("trace", "mix"):
                args += [rng.choice(files + ["synth:wdev,scale=0.01"]), "synth:prn,scale=0.01"]
            if cmd[0] == "drive":
                args.append(rng.choice(["fig3", "nope", ""]))
            if cmd[0] == "experiment":
                args.append(rng.choice(["pore-overall", "nope", ""]))
            if cmd[0] == "probe":
                pass
            if cmd[0] == "cache" and cmd[1] != "replay":
                args.append(rng.choice(FIXTURES + HOSTILE[:3]))
                if cmd[1] == "create" and rng.random() < 0.8:
                    args += ["--backing", rng.choice(["backing.img"] + FIXTURES)]
                    if rng.random() < 0.7:
                        args += ["--size", rng.choice(["8MiB", "4KiB"] + HOSTILE[:6])]
            if cmd == ("stl", "format"):
                args += [rng.choice(["smart", "dm-zoned", "nope", ""]), rng.choice(["new.stl", "new.img"] + FIXTURES)]
            elif cmd[0] == "stl":
                args.append(rng.choice(FIXTURES + HOSTILE[:3]))
            for fl in rng.sample(flags, k=min(len(flags), rng.randint(1, 3))):
                if fl in SWITCHES:
                    args.append(fl)
                elif cmd[0] in ("cache", "stl") and fl in PLAUSIBLE and rng.random() < 0.5:
                    args += [fl, rng.choice(PLAUSIBLE[fl])]
                else:
                    args += [fl, rng.choice(HOSTILE + files + (FIXTURES if cmd[0] in ("cache", "stl") else []))]
            if cmd == ("cache", "replay") and "--trace" not in args:
                args += ["--trace", "synth:wdev,scale=0.002"]
            if cmd[0] == "experiment" and "--on" not in args:
                args += ["--on", "synth:wdev,scale=0.002"]
            if cmd[0] in ("sim", "compare", "experiment", "curve"):
                args += ["--trace", "synth:wdev,scale=0.002"] if "--trace" not in args and cmd[0] != "experiment" else []
            args = [x.replace("\x00", "") for x in args]
            # A check reports what it found on stdout (exit 1): keep it to judge the message.
            checks = cmd[-1] in ("check", "fsck")
            close_early = rng.random() < 0.5 and not checks
            proc = subprocess.Popen([a.bin, "--progress", "none"] + args, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, cwd=d, preexec_fn=limit_memory)
            if close_early:
                proc.stdout.close()  # a reader that went away (`| head`)
            try:
                out, errb = proc.communicate(timeout=60)
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                counts["hang"] += 1
                examples["hang"].append(args)
                continue
            p = subprocess.CompletedProcess(args, proc.returncode, out, errb)
            err = (p.stderr or b"").decode(errors="replace")
            if checks:
                err += (p.stdout or b"").decode(errors="replace")
            if p.returncode == 101 or "panicked" in err:
                kind = "panic"
            elif p.returncode < 0:
                kind = "crash"
            elif p.returncode == 0:
                kind = "ok"
            elif clear(err):
                kind = "error"
            else:
                kind = "unclear"
            counts[kind] += 1
            if a.verbose:
                print(f"{kind}: {args}: " + " / ".join(err.strip().splitlines())[:300])
            if len(examples[kind]) < 5:
                examples[kind].append((args, err.strip()[:200]))
    print(f"{a.n} command lines (seed {a.seed}): " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for k in ("panic", "crash", "hang", "unclear"):
        for ex in examples[k]:
            print(f"  {k}: {ex}")
    return 1 if counts["panic"] + counts["crash"] + counts["hang"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
