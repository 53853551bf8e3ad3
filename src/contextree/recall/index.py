"""``RecallIndex``: keeps a session's search index in step with the session, and searches it.

The index is never needed for correctness: it is built on first use, brought up to date with
what was appended since (by anyone: pi appends without touching it), and rebuilt whole when
it is missing, damaged, made with other settings, or the session was rewritten. Where it lives:

- a JSONL file: ``<index dir>/<sha256 of the file's absolute path>.db`` (``recall.indexDir``,
  default ``$XDG_CACHE_HOME/contextree/recall``): a ``.db`` file in a cache folder, never a
  ``*.jsonl`` where pi lists sessions;
- a ``sqlite://`` session: tables in the store's own database;
- a ``postgresql://`` session: a ``tsvector`` table in the store's database;
- a session in memory, or a Python whose SQLite lacks FTS5: in memory (a plain scan without
  FTS5, with :attr:`RecallIndex.notice` saying so).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from contextree.entries.types import StoredEntry
from contextree.recall.appended import lines_since
from contextree.recall.base import Hit, IndexBackend, IndexState
from contextree.recall.build import documents_in_background
from contextree.recall.documents import Document, entry_document
from contextree.recall.scan import ScanBackend
from contextree.recall.sqlite_fts import TOKENIZER, SqliteFtsBackend, fts5_available
from contextree.store.index import Record

if TYPE_CHECKING:
    from contextree.recall.scope import SearchScope
    from contextree.session.tree import SessionTree

__all__ = ["NO_FTS5_NOTICE", "RecallIndex", "SyncReport", "default_index_dir", "index_path"]

_VERSION: Final = 1
NO_FTS5_NOTICE: Final = (
    "this Python's SQLite has no FTS5: recall scans the session instead of using an index "
    "(slower; ranking by term counts)"
)


def default_index_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/contextree/recall`` (``~/.cache/...`` when unset)."""
    env = os.environ if env is None else env
    cache = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "contextree" / "recall"


def index_path(session_file: Path, index_dir: Path) -> Path:
    """The cache file of the index of ``session_file``."""
    key = hashlib.sha256(str(session_file.resolve()).encode("utf-8", "surrogateescape"))
    return index_dir / f"{key.hexdigest()[:32]}.db"


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What bringing the index up to date did."""

    rebuilt: bool
    added: int
    """Documents indexed by this sync (all of them on a rebuild)."""
    reason: str
    """``fresh``, ``appended``, or why it was rebuilt (``missing``, ``rewritten``, ...)."""


def _file_identity(path: Path, session_id: str) -> Callable[[], str | None]:
    def identity() -> str | None:
        try:
            stat = path.stat()
        except OSError:
            return None
        return f"file:{stat.st_dev}:{stat.st_ino}:{session_id}"

    return identity


def _open_cache(path: Path) -> sqlite3.Connection:
    from contextree.store.jsonl import make_dirs

    make_dirs(path.parent)
    if not path.exists():
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    # A cache: losing the last write to a power cut only means a rebuild.
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # raises if not a database
    return conn


class RecallIndex:
    """The search index of one session (see the module docstring for where it lives)."""

    def __init__(
        self,
        backend: IndexBackend,
        *,
        redact: Callable[[str], str] | None,
        config: str,
        notice: str | None = None,
        reset: Callable[[], IndexBackend] | None = None,
    ) -> None:
        self.backend = backend
        self._redact = redact
        self._config = config
        self.notice = notice
        """A one-line note for the user (no FTS5, or the index had to be recreated)."""
        self._reset = reset
        self.scopes: dict[str, tuple[IndexState, SearchScope]] = {}
        """Scopes this process found or read back, by key (:mod:`contextree.recall.scope`)."""

    @classmethod
    def for_tree(
        cls,
        tree: SessionTree,
        *,
        index_dir: str | Path | None = None,
        redact: Callable[[str], str] | None = None,
        redaction_key: str = "",
    ) -> RecallIndex:
        """The index of ``tree``'s session, in the place its store calls for.

        Args:
            index_dir: where JSONL sessions' indexes are cached (default
                :func:`default_index_dir`).
            redact: applied to each document's text before it is indexed.
            redaction_key: names the redaction rules; other rules than the index was built
                with rebuild it.
        """
        config = f"v{_VERSION};{TOKENIZER};{redaction_key}"
        store = tree.store
        from contextree.store.jsonl import JsonlFileStore
        from contextree.store.sqlite import SqliteStore

        if type(store).__name__ == "PostgresStore":
            # By name: importing the PostgreSQL store would import psycopg for every session.
            from contextree.recall.postgres_fts import PostgresFtsBackend
            from contextree.store.postgres import PostgresStore

            assert isinstance(store, PostgresStore)
            backend: IndexBackend = PostgresFtsBackend.for_store(store)
            return cls(backend, redact=redact, config=config)
        if not fts5_available():
            return cls(ScanBackend(), redact=redact, config=config, notice=NO_FTS5_NOTICE)
        if isinstance(store, SqliteStore):
            path = store.path
            session = store.session

            def reopen(*, drop: bool = False) -> IndexBackend:
                conn = sqlite3.connect(
                    path, timeout=30.0, isolation_level=None, check_same_thread=False
                )
                if drop:
                    # Damaged recall tables: only ours go; the sessions' tables stay.
                    for table in ("ct_recall_docs", "ct_recall_state", "ct_recall_scope"):
                        conn.execute(f"DROP TABLE IF EXISTS {table}")
                return SqliteFtsBackend(conn, session, identity=_row_identity(conn, session))

            return cls(reopen(), redact=redact, config=config, reset=lambda: reopen(drop=True))
        if isinstance(store, JsonlFileStore):
            directory = Path(index_dir) if index_dir is not None else default_index_dir()
            cache = index_path(store.path, directory)
            identity = _file_identity(store.path, tree.session_id)

            def recreate() -> IndexBackend:
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{cache}{suffix}").unlink(missing_ok=True)
                return SqliteFtsBackend(_open_cache(cache), "", identity=identity)

            try:
                backend = SqliteFtsBackend(_open_cache(cache), "", identity=identity)
            except sqlite3.DatabaseError:
                backend = recreate()
            return cls(backend, redact=redact, config=config, reset=recreate)
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        return cls(SqliteFtsBackend(conn, "", identity=lambda: None), redact=redact, config=config)

    # -- keeping up -----------------------------------------------------------------------------

    def sync(self, tree: SessionTree) -> SyncReport:
        """Bring the index up to date with ``tree`` (rebuilding a damaged one)."""
        try:
            return self._sync(tree)
        except sqlite3.DatabaseError:
            if self._reset is None:
                raise
            self.backend.close()
            self.backend = self._reset()
            self.notice = "the recall index was damaged; it was rebuilt"
            return self._rebuild(tree, "damaged")

    def needs_rebuild(self, tree: SessionTree) -> bool:
        """Whether bringing the index up to date means indexing the session anew (missing,
        other settings, the session rewritten), not only adding what was appended: a caller
        that must not wait for that (``recall.auto``) can leave it for later."""
        state = self.backend.load_state()
        if state is None or state.config != self._config:
            return True
        identity = self.backend.identity() or "unknown"
        return identity != state.identity or tree.known_size < state.size

    def _sync(self, tree: SessionTree) -> SyncReport:
        state = self.backend.load_state()
        if state is None:
            return self._rebuild(tree, "missing")
        if state.config != self._config:
            return self._rebuild(tree, "settings changed")
        identity = self.backend.identity() or "unknown"
        if identity != state.identity:
            return self._rebuild(tree, "rewritten")
        if identity != "unknown" and state.size == tree.known_size:
            return SyncReport(False, 0, "fresh")
        if tree.known_size < state.size:
            return self._rebuild(tree, "rewritten")
        # Appended since: the lines after the bytes indexed (read from the end).
        appended = lines_since(tree, state.size, state.last_id)
        if appended is None:
            return self._rebuild(tree, "rewritten")
        new = [item.entry for item in appended if type(item) is Record]
        documents = self._documents(new, state.count)
        last = new[-1].get("id") if new else state.last_id
        count = state.count + len(new)
        after = IndexState(self._config, identity, tree.known_size, count, last)
        if not self.backend.add(documents, after, state):
            return self._sync(tree)  # another process brought it up to date meanwhile
        return SyncReport(False, len(documents), "appended")

    def _documents(self, entries: Sequence[StoredEntry], first_seq: int) -> list[Document]:
        redact = self._redact
        return [
            document
            for seq, entry in enumerate(entries, first_seq)
            if (document := entry_document(entry, seq, redact)) is not None
        ]

    def rebuild(self, tree: SessionTree, reason: str) -> SyncReport:
        """Index ``tree`` anew (``reason`` is the report's)."""
        return self._rebuild(tree, reason)

    def _rebuild(self, tree: SessionTree, reason: str) -> SyncReport:
        records = list(tree.records())
        last = records[-1].id if records else None
        identity = self.backend.identity() or "unknown"
        state = IndexState(self._config, identity, tree.known_size, len(records), last)
        counted = _Counted(documents_in_background(records, 0, self._redact))
        self.backend.replace(counted, state)
        return SyncReport(True, counted.count, reason)

    # -- searching ------------------------------------------------------------------------------

    def search(
        self,
        terms: Sequence[str],
        *,
        allowed: Container[str] | None = None,
        limit: int = 10,
        any_term: bool = False,
    ) -> list[Hit]:
        """The best ``limit`` hits for ``terms`` among the entries in ``allowed``."""
        return self.backend.search(terms, any_term=any_term, allowed=allowed, limit=limit)

    def close(self) -> None:
        """Release the index's connection."""
        self.backend.close()


class _Counted:
    """Passes documents through, counting them (a rebuild streams them to the backend)."""

    def __init__(self, documents: Iterator[Document]) -> None:
        self._documents = documents
        self.count = 0

    def __iter__(self) -> Iterator[Document]:
        for document in self._documents:
            self.count += 1
            yield document


def _row_identity(conn: sqlite3.Connection, session: str) -> Callable[[], str | None]:
    def identity() -> str | None:
        row = conn.execute(
            "SELECT generation FROM ct_sessions WHERE session = ?", (session,)
        ).fetchone()
        return f"rows:{row[0]}" if row is not None else None

    return identity
