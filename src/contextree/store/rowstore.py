"""What the SQLite and PostgreSQL stores share: the byte contract kept as one row per line.

The tables (``ct_`` prefix, so they can live in a database that holds other things)::

    ct_meta     (key PRIMARY KEY, value)                       schema version
    ct_sessions (session PRIMARY KEY, generation, size, lines)
    ct_lines    (session, seq, byte_offset, line, type, id, parent_id)
                PRIMARY KEY (session, seq), UNIQUE (session, byte_offset), INDEX (session, id)

``line`` holds the exact bytes of a line (a BLOB / ``bytea``: invalid UTF-8 and NUL survive), so
the rows of a session joined in ``seq`` order are the bytes a file would hold. ``size`` and
``lines`` make :attr:`StoreTransaction.size` one lookup; ``generation`` grows by one with each
:meth:`StoreTransaction.replace`, which is how another worker learns of a rewrite
(:attr:`StoreTransaction.replaced`). Rows are keyed by sequence, not by entry id: a pi file may
repeat an id or hold lines without one, and every line must survive.

A subclass opens the database's transactions: :meth:`RowStore._reading` (a consistent
snapshot) and :meth:`RowStore._writing` (the session's write lock held until commit, with the
session's :data:`WRITE_STATE` read under it, so that a database far away can send the lock and
that query in one round trip).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Final, Protocol

from contextree.errors import SessionFileError
from contextree.store.rows import Row, rows_of

__all__ = ["SCHEMA_VERSION", "TAIL_FROM", "WRITE_STATE", "RowBytes", "RowStore", "SqlRunner"]

SCHEMA_VERSION: Final = 1
_ROWS_PER_CHUNK: Final = 512


class SqlRunner(Protocol):
    """A database connection inside an open transaction, with ``?`` placeholders."""

    def one(self, sql: str, params: Sequence[Any]) -> tuple[Any, ...] | None:
        """The first row of ``sql``, or ``None``."""
        ...

    def all(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """Every row of ``sql``."""
        ...

    def run(self, sql: str, params: Sequence[Any]) -> None:
        """Execute ``sql`` for its effect."""
        ...

    def insert_rows(self, session: str, rows: list[Row]) -> None:
        """Insert ``rows`` of ``session`` into ``ct_lines``."""
        ...


WRITE_STATE: Final = (
    "SELECT s.generation, s.size, s.lines, (SELECT substr(l.line, length(l.line)) FROM ct_lines l"
    " WHERE l.session = s.session AND l.seq = s.lines) FROM ct_sessions s WHERE s.session = ?"
)
"""A session's generation, size and line count, and the last byte of its last line (whether
that line is finished), in one query; bound to the session."""

TAIL_FROM: Final = (
    "SELECT byte_offset, line FROM ct_lines WHERE session = ? AND byte_offset >= ? "
    "ORDER BY byte_offset"
)
"""The lines from the one that starts at a byte offset (the last line a worker saw) to the
end: what other writers appended since, read together with the lock (``RowStore._writing``).
The offset is a parameter, not a subquery, so that the planner sees how few rows follow it."""

INSERT_LINE: Final = (
    "INSERT INTO ct_lines (session, seq, byte_offset, line, type, id, parent_id) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)


_RANGE: Final = (
    "SELECT byte_offset, line FROM ct_lines WHERE session = ? AND seq BETWEEN "
    "(SELECT seq FROM ct_lines WHERE session = ? AND byte_offset <= ? "
    "ORDER BY byte_offset DESC LIMIT 1) AND "
    "(SELECT seq FROM ct_lines WHERE session = ? AND byte_offset < ? "
    "ORDER BY byte_offset DESC LIMIT 1) ORDER BY seq"
)
"""The lines that hold the bytes ``[start, end)``: the bounds by offset (two index lookups), the
rows by sequence (one range of the primary key; rows selected by offset are a lookup each)."""


class RowBytes:
    """A session's rows read by byte range inside one read-only transaction: every read sees
    the database as it was when the session was opened, whatever other workers write meanwhile
    (SQLite's WAL, PostgreSQL's REPEATABLE READ snapshot). The transaction ends once every
    line is read (:meth:`close`). Lines are rows, so a range begins at a line's start."""

    def __init__(
        self,
        sql: SqlRunner,
        session: str,
        size: int,
        *,
        release: Callable[[], None],
        failure: Callable[[Exception], SessionFileError | None],
    ) -> None:
        """Read ``session``'s ``size`` bytes through ``sql``; ``release`` ends the transaction
        and closes its connection; ``failure`` turns a driver error into the store's error
        (``None``: not a driver error, raised as it is)."""
        self._sql: SqlRunner | None = sql
        self._session = session
        self.size = size
        self._release = release
        self._failure = failure

    def region(self, start: int, end: int) -> tuple[bytes, int]:
        session = self._session
        rows = self._rows(_RANGE, (session, session, start, session, end))
        if not rows:
            return b"", start
        return b"".join(bytes(row[1]) for row in rows), int(rows[0][0])

    def read(self, start: int, end: int) -> bytes:
        data, base = self.region(start, end)
        return data[start - base : end - base]

    def count_newlines(self, start: int, end: int) -> int:
        # One row per line, each ending with a newline before the last line's start.
        found = self._rows(
            "SELECT count(*) FROM ct_lines WHERE session = ? AND byte_offset >= ? "
            "AND byte_offset < ?",
            (self._session, start, end),
        )
        return int(found[0][0])

    def _rows(self, statement: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
        sql = self._sql
        if sql is None:
            raise RuntimeError("the session's snapshot was closed")
        try:
            return sql.all(statement, params)
        except Exception as exc:
            error = self._failure(exc)
            if error is None:
                raise
            raise error from None

    def close(self) -> None:
        if self._sql is not None:
            self._sql = None
            self._release()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


class _RowTransaction:
    """:class:`~contextree.store.base.StoreTransaction` over the rows of one session."""

    def __init__(
        self,
        sql: SqlRunner,
        session: str,
        state: tuple[int, int, int],
        *,
        last_byte: bytes,
        tail: tuple[int, bytes] | None = None,
        last_line_start: int | None = None,
    ) -> None:
        self._sql = sql
        self._session = session
        self.generation, self._size, self._lines = state
        self._last_byte = last_byte
        self._tail = tail  # (offset, bytes from there to the end), read with the lock
        self.last_line_start = last_line_start
        """Where the session's last line starts, when this transaction knows it."""
        self.replaced = False
        self.changed = False
        self.failed = False

    @property
    def size(self) -> int:
        return self._size

    def read_from(self, offset: int) -> bytes:
        if offset >= self._size:
            return b""
        tail = self._tail
        if tail is not None and tail[0] <= max(offset, 0):
            return tail[1][max(offset, 0) - tail[0] :]
        self.last_line_start = None
        found = self._sql.one(
            "SELECT seq, byte_offset FROM ct_lines WHERE session = ? AND byte_offset <= ? "
            "ORDER BY byte_offset DESC LIMIT 1",
            (self._session, max(offset, 0)),
        )
        if found is None:
            return b""
        seq, start = found
        rows = self._sql.all(
            "SELECT line FROM ct_lines WHERE session = ? AND seq >= ? ORDER BY seq",
            (self._session, seq),
        )
        data = b"".join(bytes(row[0]) for row in rows)
        return data[max(offset, 0) - start :]

    def append(self, data: bytes) -> None:
        if not data:
            return
        self._guarded(lambda: self._append(data))

    def replace(self, data: bytes, *, keep_from: int | None = None) -> None:
        # Every writer of a database session goes through its lock: nothing can still be
        # writing the kept bytes, so they are simply carried into the new rows.
        kept = self.read_from(keep_from) if keep_from is not None else b""
        self._guarded(lambda: self._replace(data + kept))

    def replace_chunks(self, chunks: Iterable[bytes]) -> None:
        """:meth:`replace` with the new content given piece by piece, each cut after a
        newline (an import of a large session holds one piece in memory, not the whole)."""
        self._guarded(lambda: self._replace_chunks(chunks))

    def _guarded(self, operation: Callable[[], None]) -> None:
        self._tail = None  # what was read with the lock is no longer the end
        try:
            operation()
        except BaseException:
            # A failed statement may have aborted the database transaction: roll it back.
            self.failed = True
            raise
        self.changed = True

    def _append(self, data: bytes) -> None:
        sql, session = self._sql, self._session
        if self._lines and self._last_byte != b"\n":
            found = sql.one(
                "SELECT line FROM ct_lines WHERE session = ? AND seq = ?", (session, self._lines)
            )
            last = bytes(found[0]) if found is not None else b"\n"
            if not last.endswith(b"\n"):
                # A crash (or an import) left a torn last line: end it, as the file store
                # does, so the new line stays a line of its own.
                sql.run(
                    "UPDATE ct_lines SET line = ? WHERE session = ? AND seq = ?",
                    (last + b"\n", session, self._lines),
                )
                self._size += 1
        rows = rows_of(data, first_seq=self._lines + 1, first_offset=self._size)
        sql.insert_rows(session, rows)
        self._size += len(data)
        self._lines += len(rows)
        self._last_byte = data[-1:]
        self.last_line_start = rows[-1].offset if rows else self.last_line_start
        self._save()

    def _replace(self, data: bytes) -> None:
        self._replace_chunks((data,))

    def _replace_chunks(self, chunks: Iterable[bytes]) -> None:
        self._sql.run("DELETE FROM ct_lines WHERE session = ?", (self._session,))
        size = lines = 0
        last = b""
        start: int | None = None
        for chunk in chunks:
            rows = rows_of(chunk, first_seq=lines + 1, first_offset=size)
            self._sql.insert_rows(self._session, rows)
            size, lines = size + len(chunk), lines + len(rows)
            last = chunk[-1:] or last
            start = rows[-1].offset if rows else start
        self.generation += 1
        self._size, self._lines = size, lines
        self._last_byte = last
        self.last_line_start = start
        self._save()

    def _save(self) -> None:
        self._sql.run(
            "UPDATE ct_sessions SET generation = ?, size = ?, lines = ? WHERE session = ?",
            (self.generation, self._size, self._lines, self._session),
        )


class RowStore:
    """A session kept as rows of a database; see the module docstring for the tables."""

    def __init__(self, session: str, name: str) -> None:
        if not session:
            raise SessionFileError(name, "names no session: add #SESSION to the URL")
        self.session = session
        self._name = name
        self._generation: int | None = None
        self._seen_line_start: int | None = None
        """Where the last line started when this store last read or wrote the session (what
        others append after it is read with the lock); ``None`` when not known."""

    @property
    def name(self) -> str:
        """The URL of the session (without a password), for messages."""
        return self._name

    # -- provided by a subclass ----------------------------------------------------------------

    def _reading(self) -> AbstractContextManager[SqlRunner | None]:
        """A read-only snapshot; ``None`` when the database does not exist yet."""
        raise NotImplementedError

    def _writing(
        self, tail_from: int | None
    ) -> AbstractContextManager[tuple[SqlRunner, tuple[Any, ...] | None, list[Any] | None]]:
        """A transaction holding this session's write lock (schema created), the row of
        :data:`WRITE_STATE` for this session read under the lock (``None``: no such session
        yet), and, when the store chooses to read them at once, the rows of :data:`TAIL_FROM`
        from ``tail_from`` (``None``: not read); commits on exit."""
        raise NotImplementedError

    def _notify(self, sql: SqlRunner, txn: _RowTransaction) -> None:
        """Tell other workers that this session changed (delivered at commit)."""

    # -- the SessionStore protocol ---------------------------------------------------------------

    def exists(self) -> bool:
        with self._reading() as sql:
            return sql is not None and self._state(sql) is not None

    def read(self) -> bytes:
        with self._reading() as sql:
            state = self._state(sql) if sql is not None else None
            if sql is None or state is None:
                raise FileNotFoundError(self.name)
            rows = sql.all(
                "SELECT line FROM ct_lines WHERE session = ? ORDER BY seq", (self.session,)
            )
        if self._generation is None:
            # Our first view: a later rewrite by another worker shows up as ``replaced``.
            self._generation = state[0]
        lines = [bytes(row[0]) for row in rows]
        self._seen_line_start = state[1] - len(lines[-1]) if lines else None
        return b"".join(lines)

    def read_chunks(self, rows: int = _ROWS_PER_CHUNK) -> Iterator[bytes]:
        """The stored bytes, ``rows`` lines at a time, from one consistent snapshot, read as
        they are consumed. Raises ``FileNotFoundError`` when the session does not exist."""
        with self._reading() as sql:
            state = self._state(sql) if sql is not None else None
            if sql is None or state is None:
                raise FileNotFoundError(self.name)
            for first in range(1, state[2] + 1, rows):
                found = sql.all(
                    "SELECT line FROM ct_lines WHERE session = ? AND seq >= ? AND seq < ? "
                    "ORDER BY seq",
                    (self.session, first, first + rows),
                )
                yield b"".join(bytes(row[0]) for row in found)

    @contextmanager
    def transaction(self) -> Iterator[_RowTransaction]:
        with self._writing(self._seen_line_start) as (sql, row, tail_rows):
            if row is None:
                sql.run(
                    "INSERT INTO ct_sessions (session, generation, size, lines) "
                    "VALUES (?, 0, 0, 0)",
                    (self.session,),
                )
                state, last = (0, 0, 0), b""
            else:
                state = (int(row[0]), int(row[1]), int(row[2]))
                last = bytes(row[3]) if row[3] is not None else b"\n"
            tail, last_start = None, None
            if tail_rows:
                # What other writers appended since we last looked came with the lock: taking
                # it in costs no round trip while every other worker waits for the lock.
                tail = (int(tail_rows[0][0]), b"".join(bytes(r[1]) for r in tail_rows))
                last_start = int(tail_rows[-1][0])
            txn = _RowTransaction(
                sql, self.session, state, last_byte=last, tail=tail, last_line_start=last_start
            )
            txn.replaced = self._generation is not None and self._generation != txn.generation
            error: BaseException | None = None
            try:
                yield txn
            except BaseException as exc:
                if txn.failed:
                    raise  # the database refused a statement: roll the whole block back
                # Like a file's writes, what the block wrote stays even if it then raised.
                error = exc
            if txn.changed:
                self._notify(sql, txn)
            self._generation = txn.generation
            self._seen_line_start = txn.last_line_start
        if error is not None:
            raise error

    def branch_rows(self, leaf_id: str) -> list[tuple[int, str | None, str | None, str | None]]:
        """``(seq, type, id, parent_id)`` of the root-to-``leaf_id`` path, root first, by a
        recursive query on the database (no bytes read); the first row with a given id wins,
        as in the tree. For tools that query the database; ``SessionTree`` uses its index."""
        with self._reading() as sql:
            state = self._state(sql) if sql is not None else None
            if sql is None or state is None:
                return []
            rows = sql.all(
                "WITH RECURSIVE firsts AS ("
                "  SELECT id, MIN(seq) AS seq FROM ct_lines WHERE session = ? AND id IS NOT NULL"
                "  GROUP BY id),"
                " path (seq, type, id, parent_id, depth) AS ("
                "  SELECT l.seq, l.type, l.id, l.parent_id, 0 FROM ct_lines l"
                "  JOIN firsts f ON f.seq = l.seq WHERE l.session = ? AND l.id = ?"
                "  UNION ALL"
                "  SELECT l.seq, l.type, l.id, l.parent_id, p.depth + 1 FROM path p"
                "  JOIN firsts f ON f.id = p.parent_id"
                "  JOIN ct_lines l ON l.session = ? AND l.seq = f.seq"
                "  WHERE p.depth < ?)"  # a cycle stops after as many steps as lines
                " SELECT seq, type, id, parent_id FROM path ORDER BY depth DESC",
                (self.session, self.session, leaf_id, self.session, state[2]),
            )
        path = [(int(r[0]), r[1], r[2], r[3]) for r in rows]
        seen: set[str | None] = set()
        for index, row in enumerate(reversed(path)):
            if row[2] in seen:  # a cycle: keep the part before it repeats
                return path[len(path) - index :]
            seen.add(row[2])
        return path

    def _snapshot_size(self, sql: SqlRunner) -> int | None:
        """In a read transaction just begun: the session's size, taking the view as :meth:`read`
        does (the first generation seen, where the last line starts); ``None`` when the
        session does not exist."""
        row = sql.one(
            "SELECT s.generation, s.size, (SELECT byte_offset FROM ct_lines l "
            "WHERE l.session = s.session AND l.seq = s.lines) "
            "FROM ct_sessions s WHERE s.session = ?",
            (self.session,),
        )
        if row is None:
            return None
        if self._generation is None:
            # Our first view: a later rewrite by another worker shows up as ``replaced``.
            self._generation = int(row[0])
        self._seen_line_start = int(row[2]) if row[2] is not None else None
        return int(row[1])

    def _state(self, sql: SqlRunner) -> tuple[int, int, int] | None:
        row = sql.one(
            "SELECT generation, size, lines FROM ct_sessions WHERE session = ?", (self.session,)
        )
        return (int(row[0]), int(row[1]), int(row[2])) if row is not None else None
