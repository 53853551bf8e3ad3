"""Sessions in PostgreSQL (psycopg 3, the ``[postgres]`` extra), shared by many workers.

The tables are those of :mod:`contextree.store.rowstore` (``bytea`` lines, so every byte of a
pi file survives). A write transaction first takes a transaction-scoped advisory lock keyed by
the session (``pg_advisory_xact_lock``), so writers of one session take turns while writers of
other sessions do not wait. The lock ends with the transaction, so a worker that dies releases
it. An append is one round trip: a server-side function takes the lock, appends and returns what
other workers appended meanwhile (:mod:`contextree.store.postgres_append`); sessions sharing
a pool send their threads' simultaneous appends together (:mod:`~contextree.store.postgres_group`).
Each
committed change sends ``NOTIFY contextree`` with the session, its size and generation as JSON,
so another worker can wait for appends (:meth:`PostgresStore.wait_for_change`) instead of
polling.

psycopg is imported when a store first connects: ``import contextree`` never loads it.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from contextree.errors import SessionFileError, SessionLockedError
from contextree.store.masking import mask_passwords, passwords_in
from contextree.store.postgres_append import (
    CALL_APPEND,
    CREATE_FUNCTION,
    CREATE_MANY_FUNCTION,
    FUNCTION_EXISTS,
    TakenIn,
)
from contextree.store.postgres_group import no_connection_came_free, pool_was_closed
from contextree.store.postgres_pool import SESSION_SETTINGS, group_for, pool_for
from contextree.store.rows import Row, rows_of
from contextree.store.rowstore import (
    INSERT_LINE,
    SCHEMA_VERSION,
    TAIL_FROM,
    WRITE_STATE,
    RowBytes,
    RowStore,
)

if TYPE_CHECKING:
    import psycopg

__all__ = ["CHANNEL", "PostgresStore", "list_postgres_sessions"]

CHANNEL: Final = "contextree"
"""The LISTEN/NOTIFY channel every change of every session is announced on."""

_SCHEMA_LOCK: Final = 0x63747265  # "ctre": serializes creating the tables
_COPY_FROM: Final = 16
"""From this many rows on (an import, a rewrite) rows go in with COPY rather than INSERTs."""
_ANALYZE_FROM: Final = 1000
"""After writing this many rows at once the table is analyzed: with statistics that have not
seen a new session, the planner looked a line up by ``(session, seq)`` through the
``(session, id)`` index and filtered every line of the session (70 ms per append at 100k)."""

SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS ct_meta (key text PRIMARY KEY, value text NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ct_sessions (session text PRIMARY KEY, "
    "generation bigint NOT NULL, size bigint NOT NULL, lines bigint NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ct_lines (session text NOT NULL, seq bigint NOT NULL, "
    "byte_offset bigint NOT NULL, line bytea NOT NULL, type text, id text, parent_id text, "
    "PRIMARY KEY (session, seq))",
    "CREATE UNIQUE INDEX IF NOT EXISTS ct_lines_offset ON ct_lines (session, byte_offset)",
    "CREATE INDEX IF NOT EXISTS ct_lines_id ON ct_lines (session, id)",
)


def _pg(sql: str) -> str:
    return sql.replace("?", "%s")


class _Runner:
    """Statements of one transaction. Those without results (the appended lines, the new
    size, the notification) wait to go with the COMMIT in one pipeline: a locked write is
    then two round trips (lock + state, then writes + commit) instead of nine."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn
        self.rows_written = 0
        self._deferred: list[Callable[[], object]] = []

    def one(self, sql: str, params: Sequence[Any]) -> tuple[Any, ...] | None:
        self._flush()
        row: tuple[Any, ...] | None = self._conn.execute(_pg(sql), params).fetchone()
        return row

    def all(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        self._flush()
        # Binary results: bytea arrives as bytes without hex decoding.
        return self._conn.execute(_pg(sql), params, binary=True).fetchall()

    def run(self, sql: str, params: Sequence[Any]) -> None:
        conn, text = self._conn, _pg(sql)
        self._deferred.append(lambda: conn.execute(text, params))

    def insert_rows(self, session: str, rows: list[Row]) -> None:
        self.rows_written += len(rows)
        values = [(session, *row) for row in rows]
        if len(rows) < _COPY_FROM:

            def insert() -> None:
                with self._conn.cursor() as cur:
                    cur.executemany(_pg(INSERT_LINE), values)

            self._deferred.append(insert)
            return
        self._flush()  # COPY cannot run in a pipeline: what waits goes first
        columns = "session, seq, byte_offset, line, type, id, parent_id"
        with self._conn.cursor() as cur, cur.copy(f"COPY ct_lines ({columns}) FROM STDIN") as copy:
            for value in values:
                copy.write_row(value)

    def commit(self) -> None:
        """Send what waits and the COMMIT, in one round trip."""
        self._flush(then="COMMIT")

    def _flush(self, then: str | None = None) -> None:
        if not self._deferred and then is None:
            return
        deferred, self._deferred = self._deferred, []
        with self._conn.pipeline():
            for statement in deferred:
                statement()
            if then is not None:
                self._conn.execute(then)


class PostgresStore(RowStore):
    """The session ``session`` in the PostgreSQL database at ``conninfo`` (a libpq URL)."""

    def __init__(
        self,
        conninfo: str,
        session: str,
        *,
        lock_timeout: float = 30.0,
        connect_timeout: float = 10.0,
        name: str | None = None,
    ) -> None:
        super().__init__(session, mask_passwords(name or f"postgresql://...#{session}"))
        self.conninfo = conninfo
        self.lock_timeout = lock_timeout
        self.connect_timeout = connect_timeout
        self._conn: psycopg.Connection[Any] | None = None
        self._listener: psycopg.Connection[Any] | None = None
        self._schema_ready = False
        self._append_function = False
        """Whether the database has the append function (known once the schema is)."""
        self._writer = uuid.uuid4().hex
        """Marks this store's notifications (see :meth:`wait_for_change`)."""

    # -- connections ---------------------------------------------------------------------------

    def _open(self) -> psycopg.Connection[Any]:
        try:
            import psycopg
        except ImportError:
            raise SessionFileError(
                self.name,
                "PostgreSQL sessions need psycopg: pip install 'contextree[postgres]'",
            ) from None
        try:
            conn = psycopg.connect(
                self.conninfo, autocommit=True, connect_timeout=max(1, round(self.connect_timeout))
            )
            # A plan made for the statement's actual values: psycopg prepares statements it
            # runs often, and a generic plan for "the lines of some session from seq N on"
            # expected thousands of rows and ran a parallel scan (12 ms) to return one. And no
            # parallel workers: every statement here reads a few rows through an index, but
            # the table-wide statistics of a byte offset can promise thousands, and starting
            # the workers took 5 ms of an append that needs 0.1.
            conn.execute(SESSION_SETTINGS)
            return conn
        except psycopg.Error as exc:
            problem = f"cannot connect to PostgreSQL: {self._driver_text(exc)}"
            raise SessionFileError(self.name, problem) from None

    def _connect(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            self._conn = self._open()
        return self._conn

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The store's own connection, or one borrowed from the process's pool for this
        database (:func:`~contextree.store.postgres_pool.share_connections`) for the length
        of one transaction."""
        pool = pool_for(self.conninfo)
        if pool is None:
            yield self._connect()
            return
        from psycopg_pool import PoolClosed, PoolTimeout

        try:
            with pool.connection() as conn:
                yield conn
        except PoolTimeout:
            # Only borrowing waits on the pool: the transaction's own waits are lock timeouts.
            raise no_connection_came_free(self.name, pool) from None
        except PoolClosed:
            # stop_sharing closed the pool while this transaction waited to borrow.
            raise pool_was_closed(self.name) from None

    def close(self) -> None:
        """Close the connections (a later call opens new ones)."""
        for conn in (self._conn, self._listener):
            if conn is not None:
                conn.close()
        self._conn = self._listener = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def _error(self, exc: Exception) -> SessionFileError:
        import psycopg.errors

        if isinstance(exc, psycopg.errors.LockNotAvailable):
            return SessionLockedError(
                self.name,
                f"another worker holds the session's write lock for over "
                f"{self.lock_timeout:g} s; try again later",
            )
        return SessionFileError(self.name, f"PostgreSQL: {self._driver_text(exc)}")

    def _driver_text(self, exc: BaseException) -> str:
        """The first line of a driver error, every password masked (libpq may quote the
        connection string or a parameter of it)."""
        return mask_passwords(_first(exc), known=passwords_in(self.conninfo))

    # -- transactions --------------------------------------------------------------------------

    def _has_schema(self, conn: psycopg.Connection[Any]) -> bool:
        row = conn.execute("SELECT to_regclass('ct_meta') IS NOT NULL").fetchone()
        if row is None or not row[0]:
            return False
        version = conn.execute("SELECT value FROM ct_meta WHERE key = 'schema'").fetchone()
        if version is not None and int(version[0]) > SCHEMA_VERSION:
            raise SessionFileError(
                self.name,
                f"the database holds sessions in schema version {version[0]}, newer than this "
                f"contextree understands ({SCHEMA_VERSION}); upgrade contextree",
            )
        return version is not None

    def _ensure_schema(self, conn: psycopg.Connection[Any]) -> None:
        if self._schema_ready:
            return
        with conn.transaction():
            # CREATE TABLE IF NOT EXISTS races with itself across connections: one at a time.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            if not self._has_schema(conn):
                for statement in SCHEMA:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO ct_meta (key, value) VALUES ('schema', %s) "
                    "ON CONFLICT (key) DO NOTHING",
                    (str(SCHEMA_VERSION),),
                )
            self._append_function = self._has_append_function(conn)
        self._schema_ready = True

    @staticmethod
    def _has_append_function(conn: psycopg.Connection[Any]) -> bool:
        """Whether the database has the append function, made now when it has not: a
        database made by an older contextree gets it on the first write (its tables stay as
        they were, so that version goes on working with them). ``False`` when this role may
        not create functions: appends then take the lock. Called under the schema lock."""
        import psycopg

        found = conn.execute(FUNCTION_EXISTS).fetchone()
        if found is not None and found[0]:
            return True
        try:
            with conn.transaction():  # a savepoint: a refusal leaves the tables' work intact
                conn.execute(CREATE_FUNCTION)
                conn.execute(CREATE_MANY_FUNCTION)
        except psycopg.errors.InsufficientPrivilege:
            return False
        return True

    def open_bytes(self) -> RowBytes | None:
        """The session as it is now, to be read by range from one REPEATABLE READ snapshot on
        a connection of its own (see :class:`~contextree.store.rowstore.RowBytes`); ``None``
        when the session does not exist, or when sessions share pooled connections (a
        snapshot held for a while would keep one of the pool's few connections from the
        others: such a session is read whole)."""
        import psycopg

        if pool_for(self.conninfo) is not None:
            return None
        conn = self._open()
        size = None
        try:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            if self._has_schema(conn):
                size = self._snapshot_size(_Runner(conn))
        except psycopg.Error as exc:
            conn.close()
            raise self._error(exc) from None
        except BaseException:
            conn.close()
            raise
        if size is None:
            conn.close()
            return None

        def failure(exc: Exception) -> SessionFileError | None:
            return self._error(exc) if isinstance(exc, psycopg.Error) else None

        return RowBytes(_Runner(conn), self.session, size, release=conn.close, failure=failure)

    @contextmanager
    def _reading(self) -> Iterator[_Runner | None]:
        with self._connection() as conn, self._read_transaction(conn) as runner:
            yield runner

    @contextmanager
    def _read_transaction(self, conn: psycopg.Connection[Any]) -> Iterator[_Runner | None]:
        import psycopg

        try:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        except psycopg.Error as exc:
            raise self._error(exc) from None
        try:
            yield _Runner(conn) if self._has_schema(conn) else None
        except psycopg.Error as exc:
            raise self._error(exc) from None
        finally:
            if not conn.closed:
                conn.execute("ROLLBACK")

    @contextmanager
    def _writing(
        self, tail_from: int | None
    ) -> Iterator[tuple[_Runner, tuple[Any, ...] | None, list[Any] | None]]:
        with self._connection() as conn, self._write_transaction(conn, tail_from) as opened:
            yield opened

    @contextmanager
    def _write_transaction(
        self, conn: psycopg.Connection[Any], tail_from: int | None
    ) -> Iterator[tuple[_Runner, tuple[Any, ...] | None, list[Any] | None]]:
        import psycopg

        try:
            self._ensure_schema(conn)
            # One round trip: the transaction, its lock wait limit, the session's lock, the
            # session's state read under it and what other workers appended since we looked.
            with conn.pipeline():
                self._begin_locked(conn)
                state = conn.execute(_pg(WRITE_STATE), (self.session,))
                tail = (
                    conn.execute(_pg(TAIL_FROM), (self.session, tail_from), binary=True)
                    if tail_from is not None
                    else None
                )
            row = state.fetchone()
            tail_rows = tail.fetchall() if tail is not None else None
        except psycopg.Error as exc:
            self._rollback(conn)
            raise self._error(exc) from None
        runner = _Runner(conn)
        try:
            yield runner, row, tail_rows
        except BaseException as exc:
            self._rollback(conn)
            if isinstance(exc, psycopg.Error):
                raise self._error(exc) from None
            raise
        try:
            runner.commit()
        except psycopg.Error as exc:
            self._rollback(conn)
            raise self._error(exc) from None
        if runner.rows_written >= _ANALYZE_FROM:
            # Committed already: fresher statistics are worth a try, not a failure.
            with contextlib.suppress(psycopg.Error):
                conn.execute("ANALYZE ct_lines")

    def append_at_end(self, known_size: int, data: bytes) -> TakenIn | None:
        """Append ``data`` (whole lines) after what the session holds now, in one round trip,
        when the outcome is the one :meth:`transaction` would have had (see
        :mod:`contextree.store.postgres_append`); ``known_size`` is how much of the session
        the caller has taken in. Returns the session as it was just before ``data``, to take
        in what others appended since (in front of ``data``), or ``None`` when nothing was
        written: then append in a :meth:`transaction`."""
        seen, generation = self._seen_line_start, self._generation
        if seen is None or generation is None or not 0 <= seen < known_size:
            return None
        rows = rows_of(data, first_seq=1, first_offset=0)
        if not data.endswith(b"\n") or len(rows) >= _COPY_FROM:
            return None
        params = (
            self.session,
            generation,
            known_size,
            seen,
            f"{max(1, round(self.lock_timeout * 1000))}ms",
            [row.line for row in rows],
            [row.type for row in rows],
            [row.id for row in rows],
            [row.parent_id for row in rows],
            self._writer,
        )
        group = group_for(self.conninfo)
        # Sessions sharing a pool append together when their threads append at once.
        found = group.append(self, params) if group is not None else None
        if found is None:  # alone, or the session's lock was busy for the group
            with self._connection() as conn:
                found = self._call_append(conn, params)
        if not found:
            return None
        size = int(found[0][0])
        self._seen_line_start = size + rows[-1].offset
        return TakenIn(self.name, size, seen, b"".join(bytes(row[2]) for row in found))

    def _append_ready(self, conn: psycopg.Connection[Any]) -> bool:
        """Whether appends can go through the server-side functions (made when missing)."""
        import psycopg

        try:
            self._ensure_schema(conn)
        except psycopg.Error as exc:
            raise self._error(exc) from None
        return self._append_function

    def _function_gone(self) -> None:
        self._schema_ready = self._append_function = False

    def _call_append(
        self, conn: psycopg.Connection[Any], params: tuple[Any, ...]
    ) -> list[tuple[Any, ...]]:
        """The rows of :data:`CALL_APPEND`; none when the function wrote nothing, or when
        the database has no such function."""
        import psycopg

        try:
            self._ensure_schema(conn)
            if not self._append_function:
                return []
            # One statement in its own transaction (the connection commits each): one round
            # trip, and the session's lock is held only while the server runs the function.
            # Not prepared: psycopg prepares a statement in a round trip of its own, and the
            # function keeps its own statements' plans.
            return conn.execute(CALL_APPEND, params, prepare=False, binary=True).fetchall()
        except psycopg.errors.UndefinedFunction:
            # Dropped since we looked (a restore of an older dump, say): nothing was written;
            # this append takes the lock and the next write makes the function again.
            self._function_gone()
            return []
        except psycopg.Error as exc:
            raise self._error(exc) from None

    def _begin_locked(self, conn: psycopg.Connection[Any]) -> None:
        """Queue BEGIN, the lock wait limit and this session's lock (in a pipeline)."""
        conn.execute("BEGIN")
        # Waiting for the advisory lock counts against lock_timeout like any lock wait.
        conn.execute(
            "SELECT set_config('lock_timeout', %s, true)",
            (f"{max(1, round(self.lock_timeout * 1000))}ms",),
        )
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (self.session,))

    @staticmethod
    def _rollback(conn: psycopg.Connection[Any]) -> None:
        if not conn.closed:
            conn.execute("ROLLBACK")

    def _notify(self, sql: Any, txn: Any) -> None:
        payload = json.dumps(
            {
                "session": self.session,
                "size": txn.size,
                "generation": txn.generation,
                "writer": self._writer,
            }
        )
        sql.run("SELECT pg_notify(?, ?)", (CHANNEL, payload))

    # -- other workers' changes ----------------------------------------------------------------

    def listen(self) -> None:
        """Start listening for changes (a change committed from now on is not missed)."""
        if self._listener is None or self._listener.closed:
            listener = self._open()
            listener.execute(f"LISTEN {CHANNEL}")
            self._listener = listener

    def wait_for_change(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for another worker's commit to this session (since
        :meth:`listen` or the last call); ``True`` when one came. Then re-sync, e.g. with
        :meth:`contextree.session.tree.SessionTree.refresh`."""
        self.listen()
        listener = self._listener
        assert listener is not None
        deadline = time.monotonic() + timeout
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            for note in listener.notifies(timeout=remaining, stop_after=1):
                try:
                    payload = json.loads(note.payload)
                    session, writer = payload.get("session"), payload.get("writer")
                except (ValueError, AttributeError):
                    continue
                # Our own commit is known by our mark, not by the connection: a pooled
                # connection commits for several stores.
                if session == self.session and writer != self._writer:
                    return True
            if time.monotonic() >= deadline:
                return False


def list_postgres_sessions(conninfo: str, name: str) -> list[tuple[str, int, int]]:
    """``(session, lines, bytes)`` of every session in the database at ``conninfo``."""
    store = PostgresStore(conninfo, "-", name=name)
    try:
        with store._reading() as sql:
            if sql is None:
                return []
            rows = sql.all("SELECT session, lines, size FROM ct_sessions ORDER BY session", ())
    finally:
        store.close()
    return [(str(r[0]), int(r[1]), int(r[2])) for r in rows]


def _first(exc: BaseException) -> str:
    """The first line of a driver error (libpq adds hints and context lines)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
