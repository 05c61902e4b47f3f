#!/usr/bin/env python3
"""A hostile-input campaign against the `shingled` Python package: bad arguments to every public
function and class (simulate, compare, sweep, curve, experiment, convert, mix, generate,
trace_stats, Config, BlockCache, TranslationLayer, ChunkStore, StoreFront, probe, cache_replay
…), one call at a time in a worker process, each with a timeout. Counts panics (a
`PanicException` reached Python), crashes (the worker died: abort, signal), hangs (timeout),
unclear errors (an exception whose message names neither the argument, the value nor a file,
field or range), errors and successes.

    python3 scripts/hostile_py.py [--python .venv/bin/python] [--n 400] [--seed 1] [--only curve]

Run with the interpreter that has the package installed (`maturin develop`). Prints the counts
and the first examples of each bad outcome; exits 1 if any panic, crash or hang was seen. Not
run by the test suite (crates/py/tests cover the cases found); a tool for reviews. Every worker
is limited to 4 GiB of address space (an allocation beyond it aborts: a crash, counted).
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

# Hostile values, as Python source (evaluated in the worker).
HOSTILE = ["-1", "0", "2**64", "2**63", "-2**63", "1e300", "float('nan')", "float('inf')", "''", "'abc'",
           "None", "True", "[]", "{}", "b'\\x00'", "'\\x00'", "'-5%'", "'200%'", "'1 GiB'", "'12ZB'",
           "'/nonexistent/file'", "'/dev/null'", "'/dev/full'", "'synth:'", "'synth:wdev,scale=0'",
           "'x' * 300", "object()", "1.5", "'lru,lru'", "[1, 2]", "{'a': 1}"]
# Scratch files every worker sees (its working directory is the scratch directory).
FILES = ["'empty'", "'junk.csv'", "'dir'", "'fifo'", "'cache.img'", "'backing.img'", "'smart.stl'", "'store.zbd'",
         "'link'", "'new.bin'"]

TRACE = "'synth:hm,scale=0.002'"

# name -> (call template, {placeholder: default}); each call replaces 1 to 3 placeholders with
# hostile values. Templates are Python expressions run in the worker with `shingled` imported.
CALLS = {
    "simulate": ("shingled.simulate({trace}, policy={policy}, cache={cache}, mode={mode}, drive={drive}, limit={limit})",
                 {"trace": TRACE, "policy": "'lru'", "cache": "'1%'", "mode": "None", "drive": "None", "limit": "None"}),
    "compare": ("shingled.compare({trace}, schemes={schemes}, jobs={jobs})",
                {"trace": TRACE, "schemes": "['lru']", "jobs": "1"}),
    "curve": ("shingled.curve({trace}, policies={policies}, cache_sizes={sizes}, rate={rate}, seed={seed}, "
              "samples={samples}, jobs={jobs}, validate={validate}, unit={unit})",
              {"trace": TRACE, "policies": "'lru'", "sizes": "['1%']", "rate": "0.5", "seed": "0", "samples": "1",
               "jobs": "1", "validate": "0", "unit": "'band'"}),
    "experiment": ("shingled.experiment({name}, traces={traces}, jobs={jobs}, config={config})",
                   {"name": "'pore-overall'", "traces": TRACE, "jobs": "1", "config": "None"}),
    "sweep": ("shingled.sweep({grid}, {traces}, jobs={jobs}, out={out})",
              {"grid": "{'policy': ['lru']}", "traces": TRACE, "jobs": "1", "out": "None"}),
    "convert": ("shingled.convert({input}, {out})", {"input": TRACE, "out": "'new.bin'"}),
    "mix": ("shingled.mix({inputs}, {out}, copies={copies}, seed={seed})",
            {"inputs": f"[{TRACE}]", "out": "'new.bin'", "copies": "1", "seed": "0"}),
    "generate": ("shingled.generate({profile}, {out}, scale={scale}, seed={seed})",
                 {"profile": "'hm'", "out": "'new.bin'", "scale": "0.001", "seed": "0"}),
    "trace_stats": ("shingled.trace_stats({path}, format={format}, volume={volume})",
                    {"path": TRACE, "format": "None", "volume": "None"}),
    "config": ("shingled.Config.from_toml({text})", {"text": "'[cache]\\nsize = \"1%\"\\n'"}),
    "make_config": ("shingled.make_config({trace}, policy={policy}, cache={cache}, config={config})",
                    {"trace": TRACE, "policy": "'lru'", "cache": "'1%'", "config": "None"}),
    "cache_create": ("shingled.BlockCache.create({cache}, {backing}, size={size}, mode={mode}, policy={policy}, "
                     "reserve={reserve}, pb_blocks={pb}, band_size={band}, force={force})",
                     {"cache": "'c2.img'", "backing": "'backing.img'", "size": "8 << 20", "mode": "'read-write'",
                      "policy": "'lru'", "reserve": "None", "pb": "None", "band": "None", "force": "False"}),
    "cache_io": ("(lambda c: (c.{op}({off}, {arg}), c.close()))(shingled.BlockCache.open({cache}))",
                 {"op": "read", "off": "0", "arg": "4096", "cache": "'cache.img'"}),
    "cache_inspect": ("shingled.cache_inspect({cache})", {"cache": "'cache.img'"}),
    "cache_lost": ("shingled.cache_lost_blocks({backing}, {cache})", {"backing": "'backing.img'", "cache": "'cache.img'"}),
    "cache_replay": ("shingled.cache_replay({config}, reserve={reserve}, flush_every={flush}, trace={trace}, "
                     "cache={cache})",
                     {"config": "None", "reserve": "None", "flush": "None", "trace": TRACE, "cache": "'1%'"}),
    "stl_smart": ("shingled.TranslationLayer.format_smart({path}, {size}, track_size={track}, zones={zones}, "
                  "head_width={head}, utilisation={u}, staging_tracks={staging})",
                  {"path": "'s2.stl'", "size": "64 << 20", "track": "256 << 10", "zones": "4", "head": "2",
                   "u": "0.9", "staging": "8"}),
    "stl_dmzoned": ("shingled.TranslationLayer.format_dm_zoned({path}, {size}, zone_size={zone}, "
                    "conventional={conv}, reserved_seq={res})",
                    {"path": "'d2.stl'", "size": "256 << 20", "zone": "16 << 20", "conv": "8", "res": "None"}),
    "stl_io": ("(lambda t: (t.{op}({off}, {arg}), t.close()))(shingled.TranslationLayer.open({path}))",
               {"op": "read", "off": "0", "arg": "4096", "path": "'smart.stl'"}),
    "stl_idle": ("(lambda t: (t.idle({s}), t.idle({s}), t.close()))(shingled.TranslationLayer.open({path}))",
                 {"s": "0.1", "path": "'smart.stl'"}),
    "store_create": ("shingled.ChunkStore.create_file({path}, {zones}, zone_size={zs}, conventional={conv})",
                     {"path": "'n.zbd'", "zones": "8", "zs": "16 << 20", "conv": "1"}),
    "store_open": ("shingled.ChunkStore.open({path}, read_only={ro})", {"path": "'store.zbd'", "ro": "True"}),
    "store_mem": ("(lambda s: s.read(s.create(stream={stream}), {off}, {len}))(shingled.ChunkStore.in_memory({zones}, {zs}))",
                  {"stream": "'data'", "off": "0", "len": "None", "zones": "16", "zs": "256 << 10"}),
    "store_append": ("(lambda s: s.append(s.create(), {data}))(shingled.ChunkStore.in_memory())", {"data": "b'x'"}),
    "front": ("shingled.StoreFront.in_memory({drives}, {zones}, {zs})", {"drives": "3", "zones": "16", "zs": "256 << 10"}),
    "probe": ("shingled.probe({drive}, hidden={hidden}, seed={seed})", {"drive": "None", "hidden": "1", "seed": "0"}),
}

# Op names for the device calls, drawn as values of `op`.
OPS = ["read", "write", "discard"]

WORKER = r'''
import json, os, resource, sys, traceback
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
import shingled
for line in sys.stdin:
    src = json.loads(line)
    try:
        eval(src, {"shingled": shingled})
        out = {"kind": "ok"}
    except BaseException as e:
        out = {"kind": "exc", "type": type(e).__name__, "module": type(e).__module__, "msg": str(e)[:400]}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
'''

WORDS = ("field", "file", "line", "value", "expected", "unknown", "no such", "invalid", "must", "cannot", "not a",
         "refus", "exists", "size", "zone", "trace", "profile", "range", "at least", "at most", "out of",
         "directory", "positive", "integer", "negative", "given twice", "takes", "argument", "empty", "too ")


def clear(msg: str, replaced: dict) -> bool:
    """An error names the argument or value, or says what is expected."""
    m = msg.lower()
    if any(k in m for k in replaced):
        return True
    for v in replaced.values():
        v = v.strip("'\"")
        if len(v) > 1 and v.lower() in m:
            return True
    return any(w in m for w in WORDS)


class Worker:
    def __init__(self, python: str, cwd: str):
        self.python, self.cwd = python, cwd
        self.p = None

    def start(self):
        self.p = subprocess.Popen([self.python, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, cwd=self.cwd, text=True)

    def call(self, src: str, timeout: float):
        if self.p is None or self.p.poll() is not None:
            self.start()
        self.p.stdin.write(json.dumps(src) + "\n")
        self.p.stdin.flush()
        import selectors
        sel = selectors.DefaultSelector()
        sel.register(self.p.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            self.p.kill()
            self.p.wait()
            self.p = None
            return {"kind": "hang"}
        line = self.p.stdout.readline()
        if not line:
            rc = self.p.wait()
            err = self.p.stderr.read()[-300:]
            self.p = None
            return {"kind": "crash", "msg": f"exit {rc}: {err}"}
        return json.loads(line)

    def stop(self):
        if self.p is not None:
            self.p.kill()
            self.p.wait()


def fixtures(python: str, d: str) -> None:
    """The scratch files, made with the package itself."""
    open(os.path.join(d, "empty"), "w").close()
    with open(os.path.join(d, "junk.csv"), "wb") as f:
        f.write(os.urandom(5000))
    with open(os.path.join(d, "backing.img"), "wb") as f:
        f.truncate(64 << 20)
    os.mkdir(os.path.join(d, "dir"))
    os.mkfifo(os.path.join(d, "fifo"))
    os.symlink("cache.img", os.path.join(d, "link"))
    subprocess.run([python, "-c", "import shingled\n"
                    "shingled.BlockCache.create('cache.img', 'backing.img', size=8 << 20).close()\n"
                    "shingled.TranslationLayer.format_smart('smart.stl', 64 << 20, track_size=256 << 10).close()\n"
                    "shingled.ChunkStore.create_file('store.zbd', 8, zone_size=16 << 20).close()\n"],
                   cwd=d, check=True, timeout=120)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=".venv/bin/python")
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--only", default=None, help="only this call (e.g. curve)")
    a = ap.parse_args()
    a.python = os.path.abspath(a.python) if os.sep in a.python else a.python
    rng = random.Random(a.seed)
    counts = {"ok": 0, "error": 0, "unclear": 0, "panic": 0, "crash": 0, "hang": 0}
    examples = {k: [] for k in counts}
    names = [n for n in CALLS if a.only is None or n == a.only]
    with tempfile.TemporaryDirectory() as d:
        fixtures(a.python, d)
        w = Worker(a.python, d)
        try:
            for _ in range(a.n):
                name = rng.choice(names)
                template, defaults = CALLS[name]
                values = dict(defaults)
                replaced = {}
                for k in rng.sample(sorted(values), k=min(len(values), rng.randint(1, 3))):
                    if k == "op":
                        values[k] = rng.choice(OPS)
                        continue
                    values[k] = rng.choice(HOSTILE + FILES)
                    replaced[k] = values[k]
                src = template.format(**values)
                r = w.call(src, a.timeout)
                if r["kind"] == "exc":
                    if r["type"] == "PanicException":
                        kind = "panic"
                    elif r["type"] in ("MemoryError", "SystemError"):
                        kind = "crash"
                    elif clear(r["msg"], replaced):
                        kind = "error"
                    else:
                        kind = "unclear"
                else:
                    kind = r["kind"]
                counts[kind] += 1
                if len(examples[kind]) < 8:
                    examples[kind].append((src, f"{r.get('type', '')}: {r.get('msg', '')}"[:300]))
        finally:
            w.stop()
    print(f"{a.n} calls (seed {a.seed}): " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for k in ("panic", "crash", "hang", "unclear"):
        for ex in examples[k]:
            print(f"  {k}: {ex}")
    return 1 if counts["panic"] + counts["crash"] + counts["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
