"""Group commit for the one-round-trip appends of sessions that share a pool.

When the threads of a process append to their sessions at the same moment, each append used to
borrow a pooled connection, send its own statement and commit its own transaction. The server
spends most of an append's CPU on what every statement costs (parsing the call, starting and
committing the transaction, the notification queue's lock at commit) and the client on
psycopg's work per statement, so with two cores the appends/s had a ceiling well below what the
lines themselves cost. Here the appends that wait while a process's connections are busy go
out together: the thread that next gets a turn (the leader) sends every waiting append in one
statement (:data:`~contextree.store.postgres_append.CALL_MANY`), one transaction, and hands each
waiting thread its own result. An append that finds nobody else waiting goes alone, exactly as
before.

Each append in a group is the one it would have been alone: the server makes the same checks
on it, under its own session's lock, and one that is declined (nothing written) is declined
alone. A session whose lock another transaction holds is skipped rather than waited for (the
group never waits for a lock while holding another, so two groups cannot deadlock, and one busy
session does not hold up the others); that append then goes alone and waits for the lock there.
When the server refuses the group's statement, nothing of it was committed and each append is
sent alone, so that each gets its own outcome; when the connection broke, whether it was
committed is unknown, and each append fails as a lone one would.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from contextree.errors import SessionFileError
from contextree.store.postgres_append import BUSY, CALL_MANY

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

__all__ = ["AppendGroup", "GroupedStore"]

_MOST: Final = 64
"""Appends sent in one statement at most: a longer group holds its first sessions' locks longer."""

Rows = list[tuple[Any, ...]]


class GroupedStore(Protocol):
    """What the group needs of a :class:`~contextree.store.postgres.PostgresStore`."""

    @property
    def name(self) -> str:
        """The session's name in messages."""
        ...

    def _append_ready(self, conn: psycopg.Connection[Any]) -> bool:
        """Whether the database has the append functions (made when missing)."""
        ...

    def _call_append(self, conn: psycopg.Connection[Any], params: tuple[Any, ...]) -> Rows:
        """The rows of one append sent alone."""
        ...

    def _function_gone(self) -> None:
        """The functions were dropped since they were found: look again on the next write."""
        ...

    def _error(self, exc: Exception) -> SessionFileError:
        """A driver error as this store's error."""
        ...


class _Request:
    __slots__ = ("done", "error", "params", "rows", "store", "wake")

    def __init__(self, store: GroupedStore, params: tuple[Any, ...]) -> None:
        self.store = store
        self.params = params
        self.done = False
        self.rows: Rows | None = None
        self.error: BaseException | None = None
        self.wake = threading.Lock()
        """Held until the append is done, or until its thread is to send what waits."""
        self.wake.acquire()

    def outcome(self) -> Rows | None:
        if self.error is not None:
            raise self.error
        return self.rows


class AppendGroup:
    """The one-round-trip appends of one process's sessions of one database (one pool)."""

    def __init__(self, pool: ConnectionPool[Any], leaders: int = 1) -> None:
        """Send through ``pool``, at most ``leaders`` statements at once. One: the appends
        that arrive while a statement is out all go in the next one. With 8 processes of 8
        threads on 2 cores, one statement at a time per process made 3,200-4,400 appends/s,
        two 2,900-3,600/s and four (the pool's size) 2,500-3,000/s: fewer, larger groups
        cost the server and the client less per append, and the server has cores enough to
        run the other processes' statements meanwhile."""
        self._pool = pool
        self._guard = threading.Lock()
        self._waiting: list[_Request] = []
        self._free = leaders

    def append(self, store: GroupedStore, params: tuple[Any, ...]) -> Rows | None:
        """The rows of ``store``'s append (the parameters of
        :data:`~contextree.store.postgres_append.CALL_APPEND`), sent alone or with others
        that wait; ``None`` when its session's lock was busy and nothing was written (then
        send it alone)."""
        request = _Request(store, params)
        with self._guard:
            leading = self._free > 0
            if leading:
                self._free -= 1
            else:
                self._waiting.append(request)
        if not leading:
            # Each thread waits on a lock of its own, woken only when it has something to
            # do: a condition shared by all (notify_all) took a quarter of the client's CPU.
            request.wake.acquire()
            if request.done:
                return request.outcome()
        self._lead(request)
        return request.outcome()

    def _lead(self, request: _Request) -> None:
        """Borrow a connection, then send ``request`` with what waits by then (the appends
        that arrive while the connection is awaited go too); then wake the threads of those
        appends, and hand the turn to the first append that waits."""
        from psycopg_pool import PoolTimeout

        batch = [request]
        try:
            with self._pool.connection() as conn:
                with self._guard:
                    batch.extend(self._waiting[: _MOST - 1])
                    del self._waiting[: _MOST - 1]
                _send(conn, batch)
        except PoolTimeout:
            # Only borrowing waits on the pool (the batch is this append alone then): the
            # statement's own waits are lock timeouts.
            request.error = SessionFileError(
                request.store.name,
                f"no pooled connection came free within {self._pool.timeout:g} s",
            )
        except BaseException as exc:
            for taken in batch:
                if taken.rows is None and taken.error is None:
                    taken.error = exc
            raise
        finally:
            with self._guard:
                for taken in batch:
                    taken.done = True
                successor = self._waiting.pop(0) if self._waiting else None
                if successor is None:
                    self._free += 1
            for taken in batch[1:]:
                taken.wake.release()
            if successor is not None:
                successor.wake.release()  # it leads next, in this one's place


def _send(conn: psycopg.Connection[Any], batch: list[_Request]) -> None:
    ready = []
    for request in batch:
        try:
            if request.store._append_ready(conn):
                ready.append(request)
            else:
                request.rows = []
        except SessionFileError as exc:
            request.error = exc
    if len(ready) == 1:
        _alone(conn, ready[0])
    elif ready:
        _together(conn, ready)


def _alone(conn: psycopg.Connection[Any], request: _Request) -> None:
    try:
        request.rows = request.store._call_append(conn, request.params)
    except SessionFileError as exc:
        request.error = exc


def _together(conn: psycopg.Connection[Any], requests: list[_Request]) -> None:
    import psycopg

    try:
        found = conn.execute(CALL_MANY, _flat(requests), prepare=False, binary=True).fetchall()
    except psycopg.errors.UndefinedFunction:
        # Dropped since we looked: nothing was written; each append takes the lock, and the
        # next write makes the functions again.
        for request in requests:
            request.store._function_gone()
            request.rows = []
        return
    except psycopg.Error as exc:
        if conn.broken or conn.closed:
            # Whether the commit happened is unknown: a lone append would fail the same way.
            for request in requests:
                request.error = request.store._error(exc)
            return
        # The server refused the statement, so none of it was committed: each goes alone.
        for request in requests:
            _alone(conn, request)
        return
    rows: list[Rows] = [[] for _ in requests]
    for row in found:
        rows[int(row[0]) - 1].append(row[1:])
    for request, mine in zip(requests, rows, strict=True):
        request.rows = None if mine and int(mine[0][0]) == BUSY else mine


def _flat(requests: Sequence[_Request]) -> tuple[list[Any], ...]:
    """The parameters of :data:`CALL_MANY`: one entry per append, its lines end to end (its
    lock wait limit is not needed: the group only tries locks)."""
    columns: tuple[list[Any], ...] = tuple([] for _ in range(10))
    sessions, generations, known, seen, ends = columns[:5]
    lines, types, ids, parents, writers = columns[5:]
    for request in requests:
        session, generation, size, start, _timeout, *its, writer = request.params
        sessions.append(session)
        generations.append(generation)
        known.append(size)
        seen.append(start)
        for column, values in zip((lines, types, ids, parents), its, strict=True):
            column.extend(values)
        ends.append(len(lines))
        writers.append(writer)
    return columns
