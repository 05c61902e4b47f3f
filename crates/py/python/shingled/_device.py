"""The plumbing shared by the byte-addressed devices (:class:`shingled.TranslationLayer`,
:class:`shingled.BlockCache`): forwarding to the ``_core`` object, closing, ``with`` blocks."""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar


class _Core(Protocol):
    """What the wrappers forward to a ``_core`` device."""

    def read(self, offset: int, length: int) -> bytes: ...
    def write(self, offset: int, data: bytes) -> None: ...
    def flush(self) -> None: ...
    def discard(self, offset: int, length: int) -> None: ...
    def close(self) -> None: ...


_Inner = TypeVar("_Inner", bound=_Core)
_Self = TypeVar("_Self", bound="_ByteDevice[Any]")


class _ByteDevice(Generic[_Inner]):
    """A ``_core`` device (``read``, ``write``, ``flush``, ``discard``, ``close`` with byte
    offsets) wrapped for Python; closes at the end of a ``with`` block."""

    def __init__(self, inner: _Inner) -> None:
        self._inner = inner

    def read(self, offset: int, length: int) -> bytes:
        """``length`` bytes at ``offset``."""
        return self._inner.read(offset, length)

    def write(self, offset: int, data: bytes) -> None:
        """Writes ``data`` at ``offset``."""
        self._inner.write(offset, bytes(data))

    def flush(self) -> None:
        """Every write before it survives a crash once this returns."""
        self._inner.flush()

    def discard(self, offset: int, length: int) -> None:
        """Forgets whole 4 KiB blocks: they read as zeros."""
        self._inner.discard(offset, length)

    def close(self) -> None:
        """Flushes and closes."""
        self._inner.close()

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
