"""The index in SQLite FTS5: a cache file beside nothing pi reads, or the store's own database.

Tokenizer: ``unicode61`` splits at punctuation, and every query term is searched as a phrase
with the same tokenizer, so ``src/app/main.py``, ``ERR_CONN_RESET``, ``v1.4.2`` or ``8472``
match exactly where they occur (as adjacent tokens), and ``main.py`` also matches inside a
longer path. ``tokenchars`` that keep ``._-/`` inside tokens would make ``main.py`` miss
``src/app/main.py``; a trigram index matches any substring but is several times larger and
slower to build (``bench/recall.py`` measures all three).

Tables (several sessions share one database in the SQLite store; a cache file holds one)::

    ct_recall_state (session PRIMARY KEY, config, identity, size, count, last_id)
    ct_recall_docs  FTS5 (text; session, entry_id, role, ts UNINDEXED)
    ct_recall_scope (session, key, identity, size, scope) PRIMARY KEY (session, key)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Container, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Final

from contextree.recall.base import TIP_KEY, Hit, IndexState, marked_hit
from contextree.recall.documents import Document
from contextree.recall.forms import term_forms

__all__ = ["TOKENIZER", "SqliteFtsBackend", "fts5_available", "fts_phrase"]

TOKENIZER: Final = "unicode61 remove_diacritics 2"


def _schema(tokenizer: str) -> tuple[str, ...]:
    quoted = tokenizer.replace("'", "''")
    return (
        "CREATE TABLE IF NOT EXISTS ct_recall_state (session TEXT PRIMARY KEY, "
        "config TEXT NOT NULL, identity TEXT NOT NULL, size INTEGER NOT NULL, "
        "count INTEGER NOT NULL, last_id TEXT)",
        "CREATE VIRTUAL TABLE IF NOT EXISTS ct_recall_docs USING fts5(text, session UNINDEXED, "
        f"entry_id UNINDEXED, role UNINDEXED, ts UNINDEXED, tokenize = '{quoted}')",
        "CREATE TABLE IF NOT EXISTS ct_recall_scope (session TEXT NOT NULL, key TEXT NOT NULL, "
        "identity TEXT NOT NULL, size INTEGER NOT NULL, scope BLOB NOT NULL, "
        "PRIMARY KEY (session, key))",
        # Merge segments when 8 of a level exist, not 4: an append's insert then rarely pays
        # for a merge (0.64 ms -> 0.12 ms per append on the 100k index, bench/recall.py).
        "INSERT INTO ct_recall_docs (ct_recall_docs, rank) VALUES ('automerge', 8)",
    )


_SNIPPET_TOKENS: Final = 24
_BATCH: Final = 256


def fts5_available() -> bool:
    """Whether this Python's SQLite library was built with FTS5."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
    except sqlite3.OperationalError:
        return False
    finally:
        conn.close()
    return True


def fts_phrase(term: str) -> str:
    """``term`` as an FTS5 phrase (the tokenizer splits it as it split the documents)."""
    return '"' + term.replace('"', '""') + '"'


def _any_form(term: str) -> str:
    """``term`` or one of its other written forms (:func:`term_forms`), as FTS5 matches."""
    forms = term_forms(term)
    if len(forms) == 1:
        return fts_phrase(term)
    return "(" + " OR ".join(fts_phrase(form) for form in forms) + ")"


class SqliteFtsBackend:
    """The documents of session ``session`` in the FTS5 tables of ``conn``'s database."""

    kind = "sqlite-fts5"

    def __init__(
        self,
        conn: sqlite3.Connection,
        session: str,
        *,
        identity: Callable[[], str | None],
        tokenizer: str = TOKENIZER,
    ) -> None:
        self._conn = conn
        self._schema = _schema(tokenizer)
        self._session = session
        self._identity = identity
        self._ready = False

    def identity(self) -> str | None:
        return self._identity()

    def _ensure(self) -> None:
        if not self._ready:
            for statement in self._schema:
                self._conn.execute(statement)
            self._ready = True

    def load_state(self) -> IndexState | None:
        try:
            row = self._conn.execute(
                "SELECT config, identity, size, count, last_id FROM ct_recall_state "
                "WHERE session = ?",
                (self._session,),
            ).fetchone()
        except sqlite3.OperationalError:
            return None  # no tables yet
        if row is None:
            return None
        return IndexState(str(row[0]), str(row[1]), int(row[2]), int(row[3]), row[4])

    def _save(self, state: IndexState) -> None:
        self._conn.execute(
            "INSERT OR REPLACE INTO ct_recall_state "
            "(session, config, identity, size, count, last_id) VALUES (?, ?, ?, ?, ?, ?)",
            (self._session, state.config, state.identity, state.size, state.count, state.last_id),
        )

    def _insert(self, documents: Iterable[Document]) -> None:
        session = self._session
        self._conn.executemany(
            "INSERT INTO ct_recall_docs (text, session, entry_id, role, ts) VALUES (?, ?, ?, ?, ?)",
            ((d.text, session, d.entry_id, d.role, d.timestamp) for d in documents),
        )

    def replace(self, documents: Iterable[Document], state: IndexState) -> None:
        with self._writing():
            self._ensure()
            self._conn.execute("DELETE FROM ct_recall_docs WHERE session = ?", (self._session,))
            self._conn.execute("DELETE FROM ct_recall_scope WHERE session = ?", (self._session,))
            self._insert(documents)
            self._save(state)

    def add(self, documents: Sequence[Document], state: IndexState, previous: IndexState) -> bool:
        with self._writing():
            if self.load_state() != previous:
                return False  # another process indexed the same tail meanwhile: nothing written
            self._insert(documents)
            self._save(state)
        return True

    def load_scope(self, key: str, state: IndexState) -> bytes | None:
        try:
            row = self._conn.execute(
                "SELECT scope FROM ct_recall_scope WHERE session = ? AND key = ? "
                "AND identity = ? AND size = ?",
                (self._session, key, state.identity, state.size),
            ).fetchone()
        except sqlite3.OperationalError:
            return None  # an index made before scopes were kept
        return bytes(row[0]) if row is not None else None

    def load_tip(self, identity: str) -> tuple[int, bytes] | None:
        try:
            row = self._conn.execute(
                "SELECT size, scope FROM ct_recall_scope WHERE session = ? AND key = ? "
                "AND identity = ?",
                (self._session, TIP_KEY, identity),
            ).fetchone()
        except sqlite3.OperationalError:
            return None  # an index made before scopes were kept
        return (int(row[0]), bytes(row[1])) if row is not None else None

    def save_scope(self, key: str, state: IndexState, scope: bytes) -> None:
        with self._writing():
            self._ensure()
            self._conn.execute(
                "DELETE FROM ct_recall_scope WHERE session = ? "
                "AND (identity != ? OR (size != ? AND key != ?))",
                (self._session, state.identity, state.size, TIP_KEY),
            )
            self._conn.execute(
                "INSERT OR REPLACE INTO ct_recall_scope (session, key, identity, size, scope) "
                "VALUES (?, ?, ?, ?, ?)",
                (self._session, key, state.identity, state.size, scope),
            )

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A write transaction that takes the database's write lock at once; rolled back when
        the block raises."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def search(
        self, terms: Sequence[str], *, any_term: bool, allowed: Container[str] | None, limit: int
    ) -> list[Hit]:
        if not terms or limit <= 0:
            return []
        match = (" OR " if any_term else " AND ").join(_any_form(t) for t in terms)
        # Rank first without snippets (cheap), keep the allowed ones, then cut snippets for
        # the few that are shown.
        cursor = self._conn.execute(
            "SELECT rowid, entry_id, bm25(ct_recall_docs) FROM ct_recall_docs "
            "WHERE ct_recall_docs MATCH ? AND session = ? ORDER BY rank",
            (match, self._session),
        )
        chosen: list[tuple[int, float]] = []
        while len(chosen) < limit:
            rows = cursor.fetchmany(_BATCH)
            if not rows:
                break
            for rowid, entry_id, score in rows:
                if allowed is None or entry_id in allowed:
                    chosen.append((int(rowid), float(score)))
                    if len(chosen) == limit:
                        break
        cursor.close()
        if not chosen:
            return []
        marks = ",".join("?" * len(chosen))
        details = {
            int(row[0]): row[1:]
            for row in self._conn.execute(
                # Matches between MARK_START and MARK_END: marked_hit makes brackets of them.
                "SELECT rowid, entry_id, role, ts, "
                "snippet(ct_recall_docs, 0, char(2), char(3), '…', "
                f"{_SNIPPET_TOKENS}) FROM ct_recall_docs WHERE ct_recall_docs MATCH ? "
                f"AND rowid IN ({marks})",
                (match, *(rowid for rowid, _ in chosen)),
            )
        }
        # bm25() is lower for better matches; a Hit's score is higher for better ones.
        return [
            marked_hit(str(d[0]), str(d[1]), str(d[2]), " ".join(str(d[3]).split()), -score)
            for rowid, score in chosen
            if (d := details.get(rowid)) is not None
        ]

    def close(self) -> None:
        self._conn.close()
