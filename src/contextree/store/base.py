"""The byte-level contract every session store keeps.

A store holds the lines of one session as bytes and knows how to make them durable; it knows
nothing about entries (that is :mod:`contextree.store.index`). All writes happen inside a
:meth:`SessionStore.transaction`, which holds the store's write lock, so a reader of the tail and
a writer never interleave with another process's writes.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

__all__ = ["AppendsAtEnd", "SessionStore", "StoreTransaction"]


class StoreTransaction(Protocol):
    """What may be done while a store's write lock is held."""

    @property
    def size(self) -> int:
        """Current size of the stored bytes."""
        ...

    @property
    def replaced(self) -> bool:
        """True when another writer replaced the whole content since our last transaction."""
        ...

    def read_from(self, offset: int) -> bytes:
        """The stored bytes from ``offset`` to the end."""
        ...

    def append(self, data: bytes) -> None:
        """Append ``data`` (whole lines); a torn last line is terminated first. A crash part-way
        leaves no unfinished line that begins with part of ``data`` (pi would append onto it)."""
        ...

    def replace(self, data: bytes, *, keep_from: int | None = None) -> None:
        """Replace the whole content atomically: readers see the old or the new bytes.

        With ``keep_from``, the stored bytes from that offset on (an unfinished last line,
        which a writer that takes no lock may still be writing) follow ``data`` as they are,
        or as that writer finishes them, instead of being part of ``data``.
        """
        ...


class SessionStore(Protocol):
    """Durable bytes of one session: a JSONL file or a buffer in memory."""

    @property
    def name(self) -> str:
        """Where the session lives, for messages (a path, or ``<memory>``)."""
        ...

    def exists(self) -> bool:
        """Whether there is anything stored yet."""
        ...

    def read(self) -> bytes:
        """All stored bytes. Raises ``FileNotFoundError`` when nothing exists."""
        ...

    def transaction(self) -> AbstractContextManager[StoreTransaction]:
        """Hold the write lock (creating the store if needed) for the duration of the block."""
        ...


class AppendsAtEnd(Protocol):
    """A store that can append without its caller holding the write lock across round trips
    (PostgreSQL): the lines go after whatever others appended meanwhile, when that gives the
    outcome an append under the lock would have had. Optional: ``SessionTree`` uses the
    method when a store has it."""

    def append_at_end(self, known_size: int, data: bytes) -> StoreTransaction | None:
        """Append ``data`` after the current end; ``known_size`` is how much of the stored
        bytes the caller has taken in. Returns a read-only view of the content just before
        ``data`` (to take in others' lines from), or ``None`` when nothing was written."""
        ...
