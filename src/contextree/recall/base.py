"""The values an index keeps and answers with, and the protocol every index backend follows."""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from contextree.recall.documents import Document

__all__ = ["MARK_END", "MARK_START", "TIP_KEY", "Hit", "IndexBackend", "IndexState", "marked_hit"]

TIP_KEY = "tip"
"""The scope key of the latest leaf's scope, kept across appends so that the next query can
extend it instead of walking the path again (see :mod:`contextree.recall.scope`)."""


@dataclass(frozen=True, slots=True)
class IndexState:
    """What an index covers, to tell whether it is still the session's.

    ``identity`` names the stored bytes (a file's device, inode and session id; a database
    session's generation): a rewrite gives new ones and the index is rebuilt. ``size`` is how
    many bytes of it were indexed, ``last_id`` the id of the last entry indexed and ``count``
    how many entries came before it. ``config`` names the tokenizer and redaction rules.
    """

    config: str
    identity: str
    size: int
    count: int
    last_id: str | None


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result."""

    entry_id: str
    role: str
    timestamp: str
    snippet: str
    score: float
    """Higher is better (BM25 for SQLite, ``ts_rank_cd`` for PostgreSQL, term counts for a
    scan); comparable within one result list only."""
    marks: tuple[tuple[int, int], ...] = ()
    """Where ``snippet`` marks a match: ``(start, end)`` of each ``[match]``, brackets
    included. The text may hold brackets of its own (``items[idx]``, ``[REDACTED:...]``);
    only these are marks."""


MARK_START: Final = "\x02"
MARK_END: Final = "\x03"
"""What a backend puts around a match in the snippet it cuts (FTS5's ``snippet()``,
PostgreSQL's ``ts_headline``): control characters, which no text a person reads holds, so a
mark cannot be told apart from a bracket of the text only after :func:`marked_hit` made
brackets of them."""


def marked_hit(entry_id: str, role: str, timestamp: str, cut: str, score: float) -> Hit:
    """The hit of a snippet ``cut`` whose matches are between :data:`MARK_START` and
    :data:`MARK_END`: those become ``[`` and ``]`` (as ``recall --format json`` shows them) and
    their places are kept in :attr:`Hit.marks`. A stray mark character (one the text held)
    is left out."""
    pieces: list[str] = []
    marks: list[tuple[int, int]] = []
    size = 0
    start: int | None = None
    for char in cut:
        if char == MARK_START and start is None:
            start, char = size, "["
        elif char == MARK_END and start is not None:
            marks.append((start, size + 1))
            start, char = None, "]"
        elif char in (MARK_START, MARK_END):
            continue
        pieces.append(char)
        size += 1
    if start is not None:  # a mark the cut left open: closed at the end
        pieces.append("]")
        marks.append((start, size + 1))
    return Hit(entry_id, role, timestamp, "".join(pieces), score, tuple(marks))


class IndexBackend(Protocol):
    """Where the documents of one session are kept and searched."""

    kind: str
    """``sqlite-fts5``, ``postgres`` or ``scan``, for messages."""

    def identity(self) -> str | None:
        """The current identity of the session's stored bytes (``None``: unknown)."""
        ...

    def load_state(self) -> IndexState | None:
        """The stored state, or ``None`` when there is no usable index."""
        ...

    def replace(self, documents: Iterable[Document], state: IndexState) -> None:
        """Drop what is indexed and index ``documents`` (one transaction)."""
        ...

    def add(self, documents: Sequence[Document], state: IndexState, previous: IndexState) -> bool:
        """Index ``documents`` too and store ``state`` (one transaction), if the stored state
        is still ``previous``; ``False`` (nothing written) when another process moved it on."""
        ...

    def load_scope(self, key: str, state: IndexState) -> bytes | None:
        """The scope stored under ``key`` while the index was at ``state`` (its identity and
        size), or ``None``."""
        ...

    def save_scope(self, key: str, state: IndexState, scope: bytes) -> None:
        """Keep ``scope`` under ``key`` for ``state``; scopes of other states are dropped, but
        the one under :data:`TIP_KEY` stays while the identity does."""
        ...

    def load_tip(self, identity: str) -> tuple[int, bytes] | None:
        """The size and scope stored under :data:`TIP_KEY` for ``identity`` (any size)."""
        ...

    def search(
        self, terms: Sequence[str], *, any_term: bool, allowed: Container[str] | None, limit: int
    ) -> list[Hit]:
        """The best ``limit`` documents holding every term (any, with ``any_term``) whose
        entry id is in ``allowed`` (``None``: all)."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...
