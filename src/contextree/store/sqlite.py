"""Sessions in one SQLite file: WAL, many readers, one writer at a time.

Each session is a set of rows (see :mod:`contextree.store.rowstore`), named by the ``#SESSION``
part of ``sqlite:///path/to/file.db#SESSION``. Writes run in ``BEGIN IMMEDIATE`` transactions:
SQLite lets one writer at a time into a database file, and that is the session's write lock
(held for the whole :meth:`SqliteStore.transaction` block, as ``flock`` is for a file). WAL
mode lets readers read a consistent snapshot while a writer works. A commit is durable when the
process is killed; ``fsync=True`` (``synchronous=FULL``) makes it survive a power loss too.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from contextree.errors import SessionFileError, SessionLockedError
from contextree.store.jsonl import make_dirs
from contextree.store.rows import Row
from contextree.store.rowstore import (
    INSERT_LINE,
    SCHEMA_VERSION,
    WRITE_STATE,
    RowBytes,
    RowStore,
)

__all__ = ["SqliteStore", "list_sqlite_sessions"]

_FILE_MODE: Final = 0o600
_READ_MAP_BYTES: Final = 1 << 30
"""How much of the database a snapshot reader maps (SQLite caps it at its build's limit)."""

SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS ct_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ct_sessions (session TEXT PRIMARY KEY, "
    "generation INTEGER NOT NULL, size INTEGER NOT NULL, lines INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ct_lines (session TEXT NOT NULL, seq INTEGER NOT NULL, "
    "byte_offset INTEGER NOT NULL, line BLOB NOT NULL, type TEXT, id TEXT, parent_id TEXT, "
    "PRIMARY KEY (session, seq)) WITHOUT ROWID",
    "CREATE UNIQUE INDEX IF NOT EXISTS ct_lines_offset ON ct_lines (session, byte_offset)",
    "CREATE INDEX IF NOT EXISTS ct_lines_id ON ct_lines (session, id)",
)


class _Runner:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def one(self, sql: str, params: Sequence[Any]) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._conn.execute(sql, params).fetchone()
        return row

    def all(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self._conn.execute(sql, params).fetchall()

    def run(self, sql: str, params: Sequence[Any]) -> None:
        self._conn.execute(sql, params)

    def insert_rows(self, session: str, rows: list[Row]) -> None:
        self._conn.executemany(INSERT_LINE, [(session, *row) for row in rows])


class SqliteStore(RowStore):
    """The session ``session`` in the SQLite database at ``path`` (created when first written)."""

    def __init__(
        self,
        path: str | Path,
        session: str,
        *,
        fsync: bool = False,
        lock_timeout: float = 30.0,
        name: str | None = None,
    ) -> None:
        self.path = Path(path)
        super().__init__(session, name or f"sqlite://{self.path}#{session}")
        self.fsync = fsync
        self.lock_timeout = lock_timeout
        self._conn: sqlite3.Connection | None = None
        self._schema_ready = False

    def close(self) -> None:
        """Close the database connection (a later call opens a new one)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connect(self, *, create: bool) -> sqlite3.Connection | None:
        if self._conn is not None:
            return self._conn
        if self.path.is_dir():
            raise SessionFileError(self.name, "is a directory, not an SQLite database")
        if not self.path.exists():
            if not create:
                return None
            make_dirs(self.path.parent)
            try:
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, _FILE_MODE))
            except OSError as exc:
                raise SessionFileError(self.path, f"cannot create ({exc.strerror})") from None
        try:
            conn = sqlite3.connect(
                self.path, timeout=self.lock_timeout, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={'FULL' if self.fsync else 'NORMAL'}")
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from None
        self._conn = conn
        return conn

    def _error(self, exc: sqlite3.Error) -> SessionFileError:
        text = str(exc)
        if "locked" in text or "busy" in text:
            return SessionLockedError(
                self.name,
                f"another process holds the database's write lock for over "
                f"{self.lock_timeout:g} s; try again later",
            )
        if "not a database" in text:
            return SessionFileError(self.path, "is not an SQLite database")
        return SessionFileError(self.name, f"SQLite: {text}")

    def _ensure_schema(self, conn: sqlite3.Connection) -> None:
        if self._schema_ready:
            return
        has_meta = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ct_meta'"
        ).fetchone()
        if has_meta is None:
            for statement in SCHEMA:
                conn.execute(statement)
            conn.execute(
                "INSERT OR IGNORE INTO ct_meta (key, value) VALUES ('schema', ?)",
                (str(SCHEMA_VERSION),),
            )
        self._check_version(conn)
        self._schema_ready = True

    def _check_version(self, conn: sqlite3.Connection) -> bool:
        """Whether the schema exists; refuses one newer than ours."""
        try:
            row = conn.execute("SELECT value FROM ct_meta WHERE key = 'schema'").fetchone()
        except sqlite3.OperationalError:
            return False  # no ct_meta: a database without sessions
        if row is not None and int(row[0]) > SCHEMA_VERSION:
            raise SessionFileError(
                self.path,
                f"holds sessions in schema version {row[0]}, newer than this contextree "
                f"understands ({SCHEMA_VERSION}); upgrade contextree",
            )
        return row is not None

    @contextmanager
    def _reading(self) -> Iterator[_Runner | None]:
        conn = self._connect(create=False)
        if conn is None:
            yield None
            return
        try:
            conn.execute("BEGIN")
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        try:
            yield _Runner(conn) if self._check_version(conn) else None
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        finally:
            conn.execute("ROLLBACK")  # read only: nothing to keep

    @contextmanager
    def _writing(
        self, tail_from: int | None
    ) -> Iterator[tuple[_Runner, tuple[Any, ...] | None, list[Any] | None]]:
        # tail_from is not read ahead: a local database answers each query at once.
        conn = self._connect(create=True)
        assert conn is not None
        try:
            conn.execute("BEGIN IMMEDIATE")
            self._ensure_schema(conn)
            row = conn.execute(WRITE_STATE, (self.session,)).fetchone()
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise self._error(exc) from None
        try:
            yield _Runner(conn), row, None
        except BaseException as exc:
            conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise self._error(exc) from None
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise self._error(exc) from None

    def open_bytes(self) -> RowBytes | None:
        """The session as it is now, to be read by range from one snapshot of the database
        (see :class:`~contextree.store.rowstore.RowBytes`); ``None`` when the database or the
        session does not exist, or the database is not in WAL mode (then only a whole read
        keeps writers unblocked)."""
        if not self.path.is_file():
            return None
        try:
            conn = sqlite3.connect(
                self.path, timeout=self.lock_timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from None
        size = None
        try:
            # Rows of a session's lines spill into overflow pages, one read each: mapped,
            # they cost no system call and no copy (open + context at 100k: 1.33-1.39x the
            # file store's, 1.16-1.22x mapped).
            conn.execute(f"PRAGMA mmap_size={_READ_MAP_BYTES}")
            # Without WAL a long read transaction would hold off every writer: read whole.
            if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
                conn.execute("BEGIN")
                if self._check_version(conn):
                    size = self._snapshot_size(_Runner(conn))
        except sqlite3.Error as exc:
            conn.close()
            raise self._error(exc) from None
        except BaseException:
            conn.close()
            raise
        if size is None:
            conn.close()
            return None

        def release() -> None:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            conn.close()

        def failure(exc: Exception) -> SessionFileError | None:
            return self._error(exc) if isinstance(exc, sqlite3.Error) else None

        return RowBytes(_Runner(conn), self.session, size, release=release, failure=failure)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


def list_sqlite_sessions(path: str | Path, shown: str | None = None) -> list[tuple[str, int, int]]:
    """``(session, lines, bytes)`` of every session in the SQLite database at ``path``
    (``shown`` in messages, default ``path``: the URL as given)."""
    from contextree.store.sqlite_file import missing_database

    file = Path(path)
    shown = shown or str(file)
    problem = missing_database(file, shown)
    if problem is not None:
        raise problem
    conn = sqlite3.connect(file, isolation_level=None)
    try:
        try:
            rows = conn.execute(
                "SELECT session, lines, size FROM ct_sessions ORDER BY session"
            ).fetchall()
        except sqlite3.OperationalError:
            return []
        except sqlite3.DatabaseError:
            raise SessionFileError(shown, "is not an SQLite database") from None
    finally:
        conn.close()
    return [(str(r[0]), int(r[1]), int(r[2])) for r in rows]
