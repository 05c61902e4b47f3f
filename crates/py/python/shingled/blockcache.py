"""The SSD block cache: a cache device in front of a backing device (``shingled cache``).

>>> import shingled, tempfile, os
>>> d = tempfile.mkdtemp()
>>> with open(os.path.join(d, "disk.img"), "wb") as f:
...     _ = f.truncate(8 << 20)
>>> with shingled.BlockCache.create(os.path.join(d, "cache.img"), os.path.join(d, "disk.img"),
...                                 size=1 << 20, policy="lru") as c:
...     c.write(5000, b"hello, cache")
...     c.read(5000, 12), c.dirty_blocks()
(b'hello, cache', [1])

The cache is ``shingled-blockcache``'s write-back cache: every block goes through the
simulator's controller and policy (the same hits, evictions and write-backs as ``shingled
sim``), the data lands in 4 KiB slots of the cache device with crash-consistent slot records,
and the backing device is a file, a block device, or a translation layer's file
(``shingled stl format``). The cache device keeps the backing device's path, so
:meth:`BlockCache.open` needs the cache file only.

Offsets are bytes; partial 4 KiB blocks are read-modified-written. :meth:`BlockCache.flush` is
the durability barrier (a commit), :meth:`BlockCache.clean` writes every dirty block back,
:meth:`BlockCache.detach` cleans and retires the cache device. :func:`cache_inspect` and
:func:`cache_lost_blocks` read a cache device's metadata without writing; :func:`cache_replay`
drives a simulation's trace through the real data path and compares it with the simulator.
Errors raise :class:`BlockCacheError` (a :class:`ShingledError`).
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

from . import _core
from ._core import BlockCacheError
from ._device import _ByteDevice

PathLike = Union[str, "os.PathLike[str]"]

BLOCK = 4096


class BlockCache(_ByteDevice["_core.BlockCache"]):
    """A cache device (a file or block device) in front of a backing device, as one
    byte-addressed device. Use :meth:`create` or :meth:`open`; close with :meth:`close` or a
    ``with`` block."""

    @classmethod
    def create(cls, cache_path: PathLike, backing_path: PathLike, size: Optional[int] = None,
               mode: str = "read-write", policy: str = "lru", capacity: Optional[int] = None,
               reserve: Optional[int] = None, sequential_cutoff: Optional[int] = None,
               pb_blocks: Optional[int] = None, band_size: Optional[int] = None,
               force: bool = False) -> "BlockCache":
        """Formats ``cache_path`` as a cache of ``backing_path`` (``shingled cache create``).

        A missing cache file is created with ``size`` bytes; an existing file (or block device)
        is used whole, and refused when it holds anything — an attached cache (its dirty blocks
        would be lost), another format, a file system, a partition table, any non-zero byte in
        its first MiB — unless ``force``; a backing device that is the cache device itself is
        always refused. Both devices are locked while the cache is open: a second open, here or
        in another process, raises ``BlockCacheError`` saying the device is in use.

        ``mode``: ``read-write``, ``write-only``, ``read-only`` or ``write-cache``; ``policy``: a name or ``name:field=value,…`` (``shingled.policies()``).
        ``capacity``: blocks the policy manages (default: the slots less ``reserve``, itself
        1/64 of the slots by default). ``sequential_cutoff``: bytes after which a sequential
        stream bypasses the cache. ``pb_blocks`` and ``band_size`` (bytes, fixed bands) describe
        the backing drive to the policies that use them (``pore`` and ``sac`` need both)."""
        return cls(_core.BlockCache.create(os.fspath(cache_path), os.fspath(backing_path), size, mode,
                                           policy, capacity, reserve, sequential_cutoff, pb_blocks,
                                           band_size, force))

    @classmethod
    def open(cls, cache_path: PathLike, backing_path: Optional[PathLike] = None,
             backing_moved: bool = False) -> "BlockCache":
        """Opens the cache at ``cache_path`` (recovering after a crash) over ``backing_path``, or
        over the backing device its superblock records. The backing device must be the one the
        cache was created over (its inode or disk serial, not only its size); ``backing_moved``
        accepts another (moved or copied on purpose) and records it."""
        backing = os.fspath(backing_path) if backing_path is not None else None
        return cls(_core.BlockCache.open(os.fspath(cache_path), backing, backing_moved))

    @property
    def size(self) -> int:
        """Size in bytes (the backing device's)."""
        return self._inner.size()

    @property
    def mode(self) -> str:
        """The cache mode: ``read-write``, ``write-only``, ``read-only`` or ``write-cache``."""
        return self._inner.mode()

    @property
    def policy(self) -> str:
        """The replacement policy's name."""
        return self._inner.policy()

    @property
    def capacity(self) -> int:
        """Blocks the policy manages."""
        return self._inner.capacity()

    @property
    def closed(self) -> bool:
        """Whether the cache was closed (or detached)."""
        return self._inner.closed

    def flush(self) -> None:
        """Every write before it survives a crash once this returns (a commit)."""
        super().flush()

    def discard(self, offset: int, length: int) -> None:
        """Forgets whole 4 KiB blocks (``offset`` and ``length`` multiples of 4096): they read
        as zeros."""
        super().discard(offset, length)

    def stats(self) -> Dict[str, Any]:
        """The cache's counters since it was created or opened (hits, misses, evictions,
        write-backs, slot and backing I/O, commits) and its occupancy (``cached_blocks``,
        ``dirty_blocks``)."""
        return json.loads(self._inner.stats_json())

    def inspect(self) -> Dict[str, Any]:
        """What the cache device's committed metadata says, as :func:`shingled.cache_inspect`
        gives it for a closed cache (which refuses a cache open here: it is locked)."""
        return json.loads(self._inner.inspect_json())

    def dirty_blocks(self) -> List[int]:
        """The cached dirty blocks (4 KiB block numbers), ascending."""
        return list(self._inner.dirty_blocks())

    def clean(self) -> int:
        """Writes back every dirty block and commits them clean (they stay cached); returns the
        number of blocks written back."""
        return self._inner.clean()

    def detach(self) -> None:
        """Cleans, then marks the cache device detached: the backing device alone holds every
        block, and the cache device cannot be opened again until it is formatted anew. Closes
        this object."""
        self._inner.detach()

    def close(self) -> None:
        """Flushes and closes; the cache stays attached (:meth:`open` takes it back)."""
        super().close()

    def __repr__(self) -> str:
        if self.closed:
            return "<BlockCache (closed)>"
        return f"<BlockCache {self.mode} {self.policy}, {self.capacity} blocks over {self.size} bytes>"


def cache_inspect(cache_path: PathLike) -> Dict[str, Any]:
    """What the metadata of the cache at ``cache_path`` says, without writing (``shingled cache
    check``): ``state`` (``attached``/``detached``), ``setup``, ``capacity``, ``slots``,
    ``cached_blocks``, ``dirty_blocks``, ``stale_records``…"""
    return json.loads(_core.cache_inspect(os.fspath(cache_path)))


def cache_lost_blocks(backing_path: PathLike, cache_path: Optional[PathLike] = None) -> Dict[str, Any]:
    """What ``backing_path`` alone lacks without its cache device, from the cache device's
    metadata when ``cache_path`` is given: ``{"known", "detached", "ranges", "blocks"}``, the
    ranges ``[start, end)`` in 4 KiB blocks. Without the metadata nothing can be known
    (``known`` False, ``blocks`` None)."""
    cache = os.fspath(cache_path) if cache_path is not None else None
    return json.loads(_core.cache_lost_blocks(os.fspath(backing_path), cache))


def _config(config: Any, **overrides: Any):
    from . import make_config
    from ._config import Config

    if isinstance(config, Mapping) and not isinstance(config, Config):
        config = Config(config)
    return make_config(config=config, **overrides)


def cache_replay(config: Any = None, reserve: Optional[int] = None, flush_every: Optional[int] = None,
                 final_check: bool = True, metadata_on_clock: bool = True, compare: bool = True, *,
                 trace: Optional[PathLike] = None, policy: Union[str, Mapping[str, Any], None] = None,
                 drive: Union[str, Mapping[str, Any], None] = None, cache: Union[str, bool, None] = None,
                 mode: Optional[str] = None, setup: Optional[str] = None,
                 **fields: Any) -> Dict[str, Any]:
    """Replays a simulation's trace through the real data path (``shingled cache replay``):
    a cache device and a backing device modelled as the simulator's SSD and drive, moving
    real bytes, every read checked. ``config``: a `Config`, a dict, or a TOML path or text,
    with the same overrides as `simulate` (``trace``, ``policy``, ``cache``…).

    ``reserve``: spare slots beyond the policy's capacity; ``flush_every``: a host flush
    every this many requests; ``final_check``: read every written block back through the
    cache, clean, and read them from the backing device alone; ``metadata_on_clock``: the
    slot records' I/O advances the modelled clock (off, the modelled times equal the
    simulator's exactly). With ``compare`` the simulator runs the same configuration.

    Returns ``{"replay": {"run": RunReport, "data_path": {...}}, "sim": RunReport or None,
    "differences": [{"field", "time", "sim", "data_path"}, …]}``; empty differences: the
    simulator's numbers describe the data path. `replay_frame` tabulates it."""
    cfg = _config(config, trace=trace, policy=policy, drive=drive, cache=cache, mode=mode, setup=setup,
                  **fields)
    return json.loads(_core.cache_replay(cfg.to_json(), reserve, flush_every, final_check,
                                         metadata_on_clock, compare))


def stats_frame(stats: Union[Mapping[str, Any], "BlockCache", Iterable[Any]]):
    """A pandas DataFrame of cache statistics, one row per stats dict (or `BlockCache`, whose
    current stats are taken)."""
    import pandas as pd

    if isinstance(stats, (Mapping, BlockCache)):
        stats = [stats]
    rows = [s.stats() if isinstance(s, BlockCache) else dict(s) for s in stats]
    return pd.DataFrame(rows)


REPLAY_COLUMNS = ("read_hits", "write_hits", "dirty_evictions", "clean_evictions", "drive_blocks_written",
                  "rmws", "write_amplification", "total_time_s")


def replay_frame(result: Mapping[str, Any]):
    """The main counters of a `cache_replay` result as a DataFrame indexed by ``source``: a
    ``sim`` row (when the simulator ran) and a ``data path`` row. ``rmws`` is the drive's
    read-modify-writes; the differences are in ``df.attrs["differences"]``."""
    import pandas as pd

    def row(run: Mapping[str, Any]) -> Dict[str, Any]:
        t = run["total"]
        return {c: (t.get("drive", {}).get("rmws") if c == "rmws" else t.get(c)) for c in REPLAY_COLUMNS}

    runs = [("sim", result.get("sim")), ("data path", result["replay"]["run"])]
    rows = [dict(source=name, **row(r)) for name, r in runs if r is not None]
    df = pd.DataFrame(rows).set_index("source")
    df.attrs["differences"] = list(result.get("differences", []))
    return df


__all__ = [
    "BlockCache",
    "BlockCacheError",
    "cache_inspect",
    "cache_lost_blocks",
    "cache_replay",
    "stats_frame",
    "replay_frame",
]
