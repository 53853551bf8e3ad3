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

A statement carries at most 64 appends and 64 MB of lines (a larger append goes alone: the
server drops a connection sent more than 1 GB). An append waits for a pooled connection no
longer than a lone one would, counted from when it was made, however many lead before it. A
thread interrupted while it waits (Ctrl-C) takes its append off the queue, or hands on the
turn it was given; one interrupted while it sends tells the others of its group that their
outcome is unknown, as a lone append interrupted in its statement would be.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from contextree.errors import SessionFileError
from contextree.store.postgres_append import BUSY, CALL_MANY

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

__all__ = ["AppendGroup", "GroupedStore", "no_connection_came_free", "pool_was_closed"]

_MOST: Final = 64
"""Appends sent in one statement at most: a longer group holds its first sessions' locks longer."""
_MOST_BYTES: Final = 64 * 1024 * 1024
"""The lines of one statement at most: PostgreSQL drops a connection sent a message of more
than 1 GB, which would fail every append of the group; a larger append goes alone."""

Rows = list[tuple[Any, ...]]


def no_connection_came_free(name: str, pool: ConnectionPool[Any]) -> SessionFileError:
    """The error of a transaction of session ``name`` that waited for one of ``pool``'s
    connections until its timeout (alone or in a group)."""
    return SessionFileError(name, f"no pooled connection came free within {pool.timeout:g} s")


def pool_was_closed(name: str) -> SessionFileError:
    """The error of a transaction of session ``name`` whose pool was closed (by
    :func:`~contextree.store.postgres_pool.stop_sharing`) while it waited for a connection."""
    return SessionFileError(name, "the pooled connections were closed (stop_sharing)")


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
    __slots__ = (
        "deadline",
        "done",
        "error",
        "params",
        "rows",
        "size",
        "store",
        "taken",
        "turn",
        "wake",
    )

    def __init__(self, store: GroupedStore, params: tuple[Any, ...], deadline: float) -> None:
        self.store = store
        self.params = params
        self.size = sum(len(line) for line in params[5])
        self.deadline = deadline
        """When waiting for a pooled connection gives up (as a lone append's borrowing does)."""
        self.done = False
        self.taken = False
        """A leader's batch holds it: it is being sent."""
        self.turn = False
        """It was handed the turn to lead."""
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
        request = _Request(store, params, time.monotonic() + self._pool.timeout)
        with self._guard:
            leading = self._free > 0
            if leading:
                self._free -= 1
            else:
                self._waiting.append(request)
        if not leading:
            try:
                # Each thread waits on a lock of its own, woken only when it has something to
                # do: a condition shared by all (notify_all) took a quarter of the client's
                # CPU.
                request.wake.acquire()
                done = request.done
            except BaseException:
                self._abandon(request)  # Ctrl-C while waiting: nobody may wait for this one
                raise
            if done:
                return request.outcome()
        self._lead(request)
        return request.outcome()

    def _abandon(self, request: _Request) -> None:
        """``request``'s thread stops waiting (an exception, such as KeyboardInterrupt): a
        queued append leaves the queue unsent; the turn it was handed goes on to the next; one
        a leader already sends is sent (its outcome is unknown to its caller, as a lone
        append's interrupted in its statement)."""
        with self._guard:
            if request in self._waiting:
                self._waiting.remove(request)
                return
            if request.done or request.taken or not request.turn:
                return
            successor = self._next_turn()
        if successor is not None:
            successor.wake.release()

    def _next_turn(self) -> _Request | None:
        """The waiting append that leads next, or none (then one more may lead at once).
        Called with the guard held."""
        successor = self._waiting.pop(0) if self._waiting else None
        if successor is None:
            self._free += 1
        else:
            successor.turn = True
        return successor

    def _take_waiting(self, batch: list[_Request]) -> None:
        """Add the appends that wait to ``batch``, oldest first, while the statement stays
        within :data:`_MOST` appends and :data:`_MOST_BYTES` of lines. Guard held."""
        size = sum(request.size for request in batch)
        taken = 0
        for waiting in self._waiting:
            if len(batch) >= _MOST or size + waiting.size > _MOST_BYTES:
                break
            waiting.taken = True
            batch.append(waiting)
            size += waiting.size
            taken += 1
        del self._waiting[:taken]

    def _expired(self) -> list[_Request]:
        """The waiting appends whose time to get a connection is up, taken off the queue with
        that error. Guard held."""
        now = time.monotonic()
        expired = [request for request in self._waiting if request.deadline <= now]
        for request in expired:
            self._waiting.remove(request)
            request.error = no_connection_came_free(request.store.name, self._pool)
            request.done = True
        return expired

    def _lead(self, request: _Request) -> None:
        """Borrow a connection, then send ``request`` with what waits by then (the appends
        that arrive while the connection is awaited go too); then wake the threads of those
        appends, and hand the turn to the first append that waits."""
        from psycopg_pool import PoolClosed, PoolTimeout

        batch = [request]
        expired: list[_Request] = []
        try:
            # Borrowing waits no longer than this append's own time, which began when it
            # was made: the appends behind one that waited the whole timeout do not each
            # wait it again.
            left = max(request.deadline - time.monotonic(), 0.001)
            with self._pool.connection(timeout=left) as conn:
                with self._guard:
                    self._take_waiting(batch)
                _send(conn, batch)
        except PoolTimeout:
            # Only borrowing waits on the pool (the batch is this append alone then): the
            # statement's own waits are lock timeouts.
            request.error = no_connection_came_free(request.store.name, self._pool)
            with self._guard:
                expired = self._expired()
        except PoolClosed:
            request.error = pool_was_closed(request.store.name)
        except BaseException:
            # This thread was interrupted (Ctrl-C) or the driver failed unexpectedly: the
            # others' appends may or may not have been committed.
            for taken in batch[1:]:
                if taken.rows is None and taken.error is None:
                    taken.error = SessionFileError(
                        taken.store.name,
                        "the thread sending this append with others stopped: whether it was "
                        "written is unknown (reopen the session to see)",
                    )
            raise
        finally:
            with self._guard:
                for taken in batch:
                    taken.done = True
                successor = self._next_turn()
            for taken in [*batch[1:], *expired]:
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
