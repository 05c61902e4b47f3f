"""What machine a benchmark ran on: CPU model, cores, the per-core L2 and the L3, kernel.

Speed ratios against another program depend on the machine as much as on the code (LRU beside
libCacheSim's `cachesim` measured 2.2-3.6x on one 2 vCPU VM kind and 1.4-1.7x on another with
builds of the same day: docs/benchmarks.md), so the benchmark scripts print this line first and
keep it in their JSON.
"""
import os
import platform


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _cache_sizes(cpu_dir="/sys/devices/system/cpu/cpu0/cache"):
    """{level: size text} of the data or unified caches sysfs lists for cpu0."""
    out = {}
    try:
        entries = sorted(os.listdir(cpu_dir))
    except OSError:
        return out
    for e in entries:
        if not e.startswith("index"):
            continue
        d = os.path.join(cpu_dir, e)
        if _read(os.path.join(d, "type")) in ("Data", "Unified"):
            level, size = _read(os.path.join(d, "level")), _read(os.path.join(d, "size"))
            if level and size:
                out[f"L{level}"] = size
    return out


def describe():
    """The machine as a dict (every field may be None where the system does not say)."""
    model = None
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    caches = _cache_sizes()
    return {
        "cpu": model or platform.processor() or None,
        "cpus": os.cpu_count(),
        "l1d": caches.get("L1"),
        "l2": caches.get("L2"),
        "l3": caches.get("L3"),
        "kernel": platform.release(),
    }


def line(m=None):
    """One human-readable line of `describe()`."""
    m = m or describe()
    return (f"machine: {m['cpu'] or 'unknown CPU'}, {m['cpus']} CPUs, L2 {m['l2'] or '?'} per core, "
            f"L3 {m['l3'] or '?'}, Linux {m['kernel']}")


if __name__ == "__main__":
    print(line())
