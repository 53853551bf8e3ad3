"""A session store that keeps its lines in memory (``SessionTree.in_memory()``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["MemoryStore"]


class _MemoryTransaction:
    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    @property
    def size(self) -> int:
        return len(self._store._data)

    @property
    def replaced(self) -> bool:
        return False

    def read_from(self, offset: int) -> bytes:
        return bytes(self._store._data[offset:])

    def append(self, data: bytes) -> None:
        buf = self._store._data
        if buf and not buf.endswith(b"\n"):
            buf += b"\n"
        buf += data

    def replace(self, data: bytes, *, keep_from: int | None = None) -> None:
        kept = self._store._data[keep_from:] if keep_from is not None else b""
        self._store._data = bytearray(data) + kept


class MemoryStore:
    """Bytes in a buffer; the same contract as the JSONL file store, without durability."""

    def __init__(self, data: bytes = b"") -> None:
        self._data = bytearray(data)
        self._created = bool(data)

    @property
    def name(self) -> str:
        return "<memory>"

    def exists(self) -> bool:
        return self._created

    def read(self) -> bytes:
        if not self._created:
            raise FileNotFoundError(self.name)
        return bytes(self._data)

    @contextmanager
    def transaction(self) -> Iterator[_MemoryTransaction]:
        self._created = True
        yield _MemoryTransaction(self)

    def getvalue(self) -> bytes:
        """The stored bytes (for tests and export)."""
        return bytes(self._data)
