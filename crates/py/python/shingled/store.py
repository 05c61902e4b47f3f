"""The SMRSTORE-style chunk store (``shingled_store``) from Python.

>>> from shingled import ChunkStore
>>> with ChunkStore.in_memory(zones=16, zone_size=256 * 1024) as st:
...     cid = st.create(b"\\x00" * 23 + b"\\x07")
...     st.append(cid, b"hello, zones")
...     st.read(cid, 7, 5)
b'zones'

A store lives on an emulated zoned device file (``shingled zone create`` or
:meth:`ChunkStore.create_file`, the same files ``shingled store`` uses) or on an in-memory device.
Chunk ids are 24 bytes; every method takes them as ``bytes`` or as a 48-digit hex ``str`` and
returns them as hex ``str``. Errors raise :class:`StoreError` (a :class:`ShingledError`), or
its subclasses :class:`NoSuchChunk`, :class:`CorruptionError`, :class:`ReadOnlyError`
(a change to a store opened with ``read_only=True``) and :class:`ZonedError` (the zoned
device failed: not a device file, a corrupt header, an I/O error); malformed arguments raise
``ValueError`` / ``TypeError``; configuration mistakes raise :class:`ConfigError`.
"""

from __future__ import annotations

import json
import os
import secrets
from typing import Any, Dict, List, Optional, Union

from . import _core

ChunkIdLike = Union[bytes, str]
PathLike = Union[str, "os.PathLike[str]"]

#: Stream type names (SMRSTORE Table 1) and their numbers.
STREAMS: Dict[str, int] = {"data": 0, "metadata": 1, "gc": 2}


def _stream(stream: Union[int, str]) -> int:
    if isinstance(stream, str):
        try:
            return STREAMS[stream]
        except KeyError:
            raise ValueError(f"stream {stream!r}: known names are {', '.join(STREAMS)} (or a number 0-255)") from None
    if isinstance(stream, bool) or not isinstance(stream, int):
        raise TypeError(f"stream must be a name or an int, not {type(stream).__name__}")
    if not 0 <= stream <= 255:
        raise ValueError(f"stream {stream}: must be 0-255")
    return stream


def _config(**fields: Any) -> Optional[dict]:
    cfg = {k: v for k, v in fields.items() if v is not None}
    pools = cfg.pop("pools", None)
    if pools is not None:
        if len(pools) != 3:
            raise ValueError(f"pools {pools!r}: expected (gc, data, metadata) zone counts")
        cfg["pool_gc"], cfg["pool_data"], cfg["pool_metadata"] = pools
    return cfg or None


class _ChunkApi:
    """The chunk API that :class:`ChunkStore` and :class:`StoreFront` share, over their
    ``_core`` object ``self._inner``.

    A store belongs to the process that opened it: a child made by ``fork`` shares its device
    file but not its in-memory index, so its appends would be lost without an error. Any use
    from another process raises :class:`StoreError`; open the device again in the child."""

    @property
    def _inner(self) -> Any:
        pid = self.__dict__.get("_pid")
        if pid is not None and pid != os.getpid():
            raise _core.StoreError(
                f"this store was opened by process {pid} and cannot be used from process {os.getpid()} "
                "(a forked child): its writes would be lost; open the device again in this process"
            )
        return self.__dict__["_obj"]

    @_inner.setter
    def _inner(self, obj: Any) -> None:
        self.__dict__["_obj"] = obj
        self.__dict__["_pid"] = os.getpid()

    def create(self, id: Optional[ChunkIdLike] = None, stream: Union[int, str] = "data") -> str:
        """Creates an empty chunk (a fresh random id when ``id`` is None); returns its hex id."""
        if id is None:
            id = secrets.token_bytes(24)
        self._inner.create(id, _stream(stream))
        # The canonical form, as ``list()`` gives it (a str id may carry spaces or capitals).
        return id.hex() if isinstance(id, bytes) else id.strip().lower()

    def append(self, id: ChunkIdLike, data: Union[bytes, bytearray, memoryview]) -> None:
        """Appends ``data`` (durable on return with the default ``every-append`` durability)."""
        if not isinstance(data, bytes):
            if not isinstance(data, (bytearray, memoryview)):
                raise TypeError(f"data must be bytes-like, not {type(data).__name__}")
            data = bytes(data)
        self._inner.append(id, data)

    def read(self, id: ChunkIdLike, offset: int = 0, length: Optional[int] = None) -> bytes:
        """``length`` bytes from ``offset`` (to the end when None); every slice is verified."""
        for name, v in (("offset", offset), ("length", length)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise TypeError(f"read {name}: an integer, not {type(v).__name__} {v!r:.80}")
        if offset < 0 or (length is not None and length < 0):
            raise ValueError(f"offset {offset} and length {length} must not be negative")
        return self._inner.read(id, offset, length)

    def seal(self, id: ChunkIdLike) -> None:
        self._inner.seal(id)

    def delete(self, id: ChunkIdLike) -> None:
        self._inner.delete(id)

    def sync(self) -> None:
        self._inner.sync()

    def _rows(self, as_frame: bool, cols: List[str]):
        rows = json.loads(self._inner.list())
        if not as_frame:
            return rows
        import pandas as pd

        return pd.DataFrame(rows, columns=cols).set_index("id")

    def reopen(self) -> None:
        """Drops the store without syncing or checkpointing (the engine's crash) and recovers
        it from the device. The device keeps what it holds, unflushed writes included: a
        power cut that loses them is the Rust crash tests' job (``SimStorage``)."""
        self._inner.reopen()

    def close(self) -> None:
        """Syncs, checkpoints and releases the device (idempotent; read-only: only
        releases it)."""
        self._inner.close()

    @property
    def closed(self) -> bool:
        return self._inner.closed

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class ChunkStore(_ChunkApi):
    """A chunk store on one zoned device. Use the constructors :meth:`create_file`,
    :meth:`format`, :meth:`open` and :meth:`in_memory`; close it (or use ``with``) to sync,
    checkpoint and release the device file.

    Configuration keywords (all optional): ``metazones`` (format only), ``pools`` =
    ``(gc, data, metadata)`` open zones, ``placement`` (``guided``, ``one-zone``,
    ``no-separate-streams``, ``no-chunk-limit``, ``no-round-robin``), ``durability``
    (``every-append`` or ``batched``), ``metadata_chunk_limit``, ``gc_free_zones``,
    ``gc_stop_free_zones``, ``gc_step_bytes``, ``gc_max_bandwidth``, ``max_record``,
    ``checkpoint_every_bytes``, ``ckpt_step_bytes``, ``scan_buffer_bytes`` (bytes per device
    read of recovery's zone scan and of ``fsck``).
    """

    def __init__(self, inner: "_core.ChunkStore", path: Optional[str] = None):
        self._inner = inner
        self.path = path

    @classmethod
    def create_file(cls, path: PathLike, zones: int, zone_size: int = 256 << 20, conventional: int = 1,
               max_open: int = 128, **config: Any) -> "ChunkStore":
        """Creates device file ``path`` (must not exist) and formats it."""
        p = os.fspath(path)
        return cls(_core.ChunkStore.create_file(p, zones, zone_size, conventional, max_open, _config(**config)), p)

    @classmethod
    def format(cls, path: PathLike, **config: Any) -> "ChunkStore":
        """Formats the existing device file ``path`` (its chunks are lost)."""
        p = os.fspath(path)
        return cls(_core.ChunkStore.format_file(p, _config(**config)), p)

    @classmethod
    def open(cls, path: PathLike, read_only: bool = False, **config: Any) -> "ChunkStore":
        """Opens the store on device file ``path`` (recovery included) with the pools and
        placement it was formatted with, unless ``config`` overrides them.

        ``read_only=True``: recovery into memory only, nothing is ever written to the file (no
        checkpoint at open or close; for checkers and inspection). Reads, listings, ``stats``
        and ``fsck`` work; ``create``, ``append``, ``seal``, ``delete``, ``sync``,
        ``checkpoint`` and ``gc`` raise :class:`ReadOnlyError`."""
        p = os.fspath(path)
        return cls(_core.ChunkStore.open_file(p, _config(**config), read_only), p)

    @classmethod
    def in_memory(cls, zones: int = 16, zone_size: int = 256 << 10, **config: Any) -> "ChunkStore":
        """A formatted store on an in-memory device (for tests and experiments)."""
        return cls(_core.ChunkStore.in_memory(zones, zone_size, _config(**config)))

    # -- chunks ---------------------------------------------------------------------------

    def chunk(self, id: ChunkIdLike) -> Optional[dict]:
        """``{"id", "stream", "length", "sealed", "records", "groups"}``, or None."""
        j = self._inner.chunk(id)
        return None if j is None else json.loads(j)

    def list(self, as_frame: bool = False):
        """Every chunk in id order: a list of dicts (see :meth:`chunk`), or a pandas DataFrame
        indexed by id with ``as_frame=True``."""
        return self._rows(as_frame, ["id", "stream", "length", "sealed", "records", "groups"])

    def __contains__(self, id: ChunkIdLike) -> bool:
        return self._inner.chunk(id) is not None

    def __len__(self) -> int:
        return int(self.stats()["chunks"])

    # -- store ----------------------------------------------------------------------------

    def checkpoint(self) -> None:
        self._inner.checkpoint()

    def gc(self) -> Optional[int]:
        """One GC round: the zone reclaimed, or None."""
        return self._inner.gc()

    def config(self) -> dict:
        """The configuration in force (format fields from the superzone when opened)."""
        return json.loads(self._inner.config())

    def stats(self) -> dict:
        """Counters, zone census (``zones_by_state``) and index memory (``memory``)."""
        return json.loads(self._inner.stats())

    def fsck(self) -> dict:
        """Checks every record and the index: ``{"clean", "problems": [{"zone", "offset",
        "chunk", "chunk_offset", "what"}], ...counts}``."""
        return json.loads(self._inner.fsck())

    @property
    def read_only(self) -> bool:
        """Whether the store was opened with ``read_only=True``."""
        return self._inner.read_only

    def __repr__(self) -> str:
        where = self.path if self.path is not None else "memory"
        if self.closed:
            return f"ChunkStore({where!r}, closed)"
        s = self.stats()
        return f"ChunkStore({where!r}, {s['chunks']} chunks, {s['live_bytes']} live bytes)"


class StoreFront(_ChunkApi):
    """Several drives, one chunk store each, behind the chunk API of :class:`ChunkStore`
    (``shingled_store::StoreFront``). A new chunk goes to the freer of two drives its id
    hashes to; the chunk → drive map is rebuilt at open by listing the drives, so device files
    may be given in any order. Use :meth:`open` (files formatted by
    ``shingled store format DEV -d DEV2 …``) or :meth:`in_memory`.
    """

    def __init__(self, inner: "_core.StoreFront", paths: Optional[List[str]] = None):
        self._inner = inner
        self.paths = paths

    @classmethod
    def open(cls, paths: "List[PathLike]", read_only: bool = False, **config: Any) -> "StoreFront":
        """Opens the stores on ``paths`` (any order). ``read_only=True``: as
        :meth:`ChunkStore.open`, nothing is written to the files."""
        ps = [os.fspath(p) for p in paths]
        return cls(_core.StoreFront.open_files(ps, _config(**config), read_only), ps)

    @classmethod
    def in_memory(cls, drives: int = 3, zones: int = 16, zone_size: int = 256 << 10, **config: Any) -> "StoreFront":
        return cls(_core.StoreFront.in_memory(drives, zones, zone_size, _config(**config)))

    def drive_of(self, id: ChunkIdLike) -> Optional[int]:
        return self._inner.drive_of(id)

    def list(self, as_frame: bool = False):
        """Every chunk in id order with its ``drive`` (dicts, or a DataFrame indexed by id)."""
        return self._rows(as_frame, ["id", "drive", "stream", "length", "sealed", "records", "groups"])

    def sync(self) -> None:
        """Syncs every drive (one thread per drive)."""
        self._inner.sync()

    def gc(self) -> List[Optional[int]]:
        return self._inner.gc()

    def stats(self) -> dict:
        """``{"drives": [per-drive counters], "total": sums}``."""
        return json.loads(self._inner.stats())

    def fsck(self) -> List[dict]:
        """One :meth:`ChunkStore.fsck` report per drive."""
        return json.loads(self._inner.fsck())



__all__: List[str] = ["ChunkStore", "StoreFront", "STREAMS"]
