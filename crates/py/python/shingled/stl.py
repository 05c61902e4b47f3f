"""Translation layers: a shingled device as an ordinary block device (``shingled stl``).

>>> import shingled, tempfile, os
>>> d = tempfile.mkdtemp()
>>> with shingled.TranslationLayer.format_smart(os.path.join(d, "s.img"), size=64 << 20,
...                                             track_size=256 << 10, zones=2) as dev:
...     dev.write(5000, b"hello, shingles")
...     dev.read(5000, 15)
b'hello, shingles'

Three layers, each kept in a file (the same files the CLI uses):

- **SMaRT** (track-level shingled translation) on a shingled track medium whose emulator
  poisons the tracks a write overlaps; the layer executes the simulator's SMaRT decisions and
  adds footers, checkpoints and recovery.
- **dm-zoned** (zone chunks, conventional-zone write buffers, reclaim) on an emulated
  host-managed zoned device.
- **dm-smr**, an emulated drive-managed SMR drive: the simulator's DM-SMR model of a drive
  profile (persistent buffer, bands, cleaning) decides, and its PB appends and band
  read-modify-writes are done for real in the file; ``stats()`` counts them in the model's
  terms.

Offsets are bytes; partial 4 KiB blocks are read-modified-written. :meth:`flush` is the
durability barrier. Errors raise :class:`TranslationLayerError` (a :class:`ShingledError`).
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _core
from ._core import TranslationLayerError
from ._device import _ByteDevice

PathLike = Union[str, "os.PathLike[str]"]


class TranslationLayer(_ByteDevice["_core.TranslationLayer"]):
    """A translation layer opened from a file. Use :meth:`format_smart`,
    :meth:`format_dm_zoned`, :meth:`format_dm_smr` or :meth:`open`; close with :meth:`close` or a ``with`` block."""

    @classmethod
    def format_smart(cls, path: PathLike, size: int, track_size: int = 1 << 20, zones: int = 4,
                     head_width: int = 2, utilisation: float = 0.9,
                     staging_tracks: int = 8) -> "TranslationLayer":
        """Creates ``path`` (which must not exist) as a shingled medium of ``size`` bytes in
        ``zones`` recording zones of ``track_size``-byte tracks and formats SMaRT on it, the
        host addressing a share ``utilisation`` of the shingled tracks."""
        return cls(_core.TranslationLayer.format_smart(os.fspath(path), size, track_size, zones,
                                                       head_width, utilisation, staging_tracks))

    @classmethod
    def format_dm_zoned(cls, path: PathLike, size: int, zone_size: int = 16 << 20,
                        conventional: int = 8,
                        reserved_seq: Optional[int] = None) -> "TranslationLayer":
        """Creates ``path`` (which must not exist) as a zoned device of ``size`` bytes
        (``conventional`` conventional zones first) and formats the dm-zoned-style layer."""
        return cls(_core.TranslationLayer.format_dm_zoned(os.fspath(path), size, zone_size,
                                                          conventional, reserved_seq))

    @classmethod
    def format_dm_smr(cls, path: PathLike, size: int, drive: str = "st5000as0011-scaled",
                      pb_size: Optional[Union[int, str]] = None) -> "TranslationLayer":
        """Creates ``path`` (which must not exist) as an emulated DM-SMR drive of ``size``
        bytes (headers, PB and bands) from the DM-SMR drive profile ``drive``; ``pb_size`` in
        bytes or as a fraction of the capacity (``"1/256"``), default the profile's."""
        pb = None if pb_size is None else (f"{pb_size}B" if isinstance(pb_size, int) else pb_size)
        return cls(_core.TranslationLayer.format_dm_smr(os.fspath(path), size, drive, pb))

    @classmethod
    def open(cls, path: PathLike) -> "TranslationLayer":
        """Opens ``path``, recovering after a crash."""
        return cls(_core.TranslationLayer.open(os.fspath(path)))

    @property
    def layer(self) -> str:
        """``"smart"``, ``"dm-zoned"`` or ``"dm-smr"``."""
        return self._inner.layer()

    @property
    def capacity(self) -> int:
        """Capacity in bytes."""
        return self._inner.capacity()

    def idle(self, seconds: float) -> None:
        """Background work (SMaRT's GC, dm-zoned's reclaim, the DM-SMR drive's idle cleaning)
        for an idle period."""
        self._inner.idle(seconds)

    def stats(self) -> Dict[str, Any]:
        """Statistics: ``{"layer", "capacity_bytes", "stats": {...}}``."""
        return json.loads(self._inner.stats_json())

    def check(self) -> List[str]:
        """The consistency check: one string per problem (empty: clean)."""
        return list(self._inner.check())


def inspect(path: PathLike) -> Tuple[str, List[str], Dict[str, Any]]:
    """Checks ``path`` without writing: ``(layer, problems, statistics)``."""
    layer, problems, stats = _core.stl_inspect(os.fspath(path))
    return layer, list(problems), json.loads(stats)


__all__ = ["TranslationLayer", "TranslationLayerError", "inspect"]
