"""The values an index keeps and answers with, and the protocol every index backend follows."""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from contextree.recall.documents import Document

__all__ = ["TIP_KEY", "Hit", "IndexBackend", "IndexState"]

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
