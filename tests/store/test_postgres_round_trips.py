"""PostgreSQL appends cost one network round trip (issue 27 item 4), whether or not other
workers appended since this one last looked, and give what an append under the lock gives.

Round trips are counted in libpq's protocol trace of the store's connection: each Sync (the
end of a pipeline or of a statement), simple Query, or Flush request not sent with a Sync is
a point where the client waits for the server."""

from __future__ import annotations

import os
import re
import tempfile
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from contextree.errors import ParentCycleError
from contextree.session.tree import SessionTree
from contextree.store.postgres import PostgresStore
from contextree.store.postgres_append import TakenIn

_WAITS = re.compile(r"^F\t\d+\t(Sync|Query|Flush)\b", re.M)


def _round_trips(store: PostgresStore, action: Callable[[], object]) -> int:
    """How many times ``action`` made the client wait for the server on the store's own
    connection."""
    from psycopg import pq

    if pq.version() < 140000:
        pytest.skip("libpq before 14 cannot trace without timestamps")
    conn = store._connect()
    fd, name = tempfile.mkstemp(prefix="ct-trace-")
    try:
        conn.pgconn.trace(fd)
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            action()
        finally:
            conn.pgconn.untrace()
        with open(name, encoding="utf-8", errors="replace") as trace:
            sent = _WAITS.findall(trace.read())
    finally:
        os.close(fd)
        os.unlink(name)
    # libpq sends a Flush right after the Sync that ends a pipeline: one wait, not two.
    return sum(
        1 for i, kind in enumerate(sent) if not (kind == "Flush" and sent[i - 1 : i] == ["Sync"])
    )


def _tree(postgres: Any, session: str) -> SessionTree:
    return SessionTree.open(f"{postgres.url}#{session}", cwd="/w")


def _store(tree: SessionTree) -> PostgresStore:
    assert isinstance(tree.store, PostgresStore)
    return tree.store


def _messages(tree: SessionTree) -> list[str]:
    return [e["message"]["content"] for e in tree.get_entries() if e["type"] == "message"]


def test_an_append_is_one_round_trip(postgres: Any) -> None:
    session = uuid.uuid4().hex
    tree = _tree(postgres, session)
    tree.append_message({"role": "user", "content": "first", "timestamp": 0})  # makes it
    for n in range(8):  # past psycopg's preparing of statements run often
        trips = _round_trips(
            _store(tree),
            lambda n=n: tree.append_message({"role": "user", "content": f"m{n}", "timestamp": n}),
        )
        assert trips == 1
    assert _messages(_tree(postgres, session)) == ["first", *(f"m{n}" for n in range(8))]


def test_after_other_workers_appended_still_one_round_trip_and_theirs_go_first(
    postgres: Any,
) -> None:
    session = uuid.uuid4().hex
    mine = _tree(postgres, session)
    mine.append_message({"role": "user", "content": "start", "timestamp": 0})
    theirs = _tree(postgres, session)
    start = mine.leaf_id
    theirs.append_message({"role": "user", "content": "theirs 1", "timestamp": 1})
    theirs.append_message({"role": "user", "content": "theirs 2", "timestamp": 2})
    trips = _round_trips(
        _store(mine),
        lambda: mine.append_message({"role": "user", "content": "mine", "timestamp": 3}),
    )
    assert trips == 1
    assert _messages(mine) == ["start", "theirs 1", "theirs 2", "mine"]
    # Our entry hangs below our leaf, not below theirs (as under the lock).
    assert mine.get_entry(str(mine.leaf_id))["parentId"] == start
    fresh = _tree(postgres, session)
    assert _messages(fresh) == _messages(mine)
    assert fresh.store.read() == mine.store.read()
    # Both sides go on appending after each other's lines, nothing lost or repeated.
    theirs.append_message({"role": "user", "content": "theirs 3", "timestamp": 4})
    mine.append_message({"role": "user", "content": "mine 2", "timestamp": 5})
    assert _messages(_tree(postgres, session)) == [
        "start",
        "theirs 1",
        "theirs 2",
        "mine",
        "theirs 3",
        "mine 2",
    ]


def test_after_a_rewrite_elsewhere_the_append_goes_under_the_lock(postgres: Any) -> None:
    session = uuid.uuid4().hex
    mine = _tree(postgres, session)
    mine.append_message({"role": "user", "content": "a", "timestamp": 0})
    other = _tree(postgres, session)
    entry = other.get_entry(str(other.leaf_id))
    other.rewrite_entries([{**entry, "message": {"role": "user", "content": "A", "timestamp": 0}}])
    # One round trip that writes nothing (generation changed), then the locked append that
    # reads the rewritten session again.
    trips = _round_trips(
        _store(mine), lambda: mine.append_message({"role": "user", "content": "b", "timestamp": 1})
    )
    assert trips > 1
    assert _messages(mine) == ["A", "b"]
    assert _messages(_tree(postgres, session)) == ["A", "b"]


def _raw_store(postgres: Any, session: str, data: bytes) -> PostgresStore:
    store = PostgresStore(postgres.url, session)
    with store.transaction() as txn:
        txn.append(data)
    store.read()  # what this worker has seen
    return store


LINE_A = b'{"type":"message","id":"aaaa0001","parentId":null}\n'
LINE_B = b'{"type":"message","id":"bbbb0002","parentId":"aaaa0001"}\n'


@pytest.mark.parametrize(
    ("foreign", "ours"),
    [
        # another worker repeated an id the session held (the last one wins: paths move)
        (b'{"type":"message","id":"aaaa0001","parentId":null}\n', LINE_B),
        # another worker used the id we are about to write
        (b'{"type":"message","id":"bbbb0002","parentId":"aaaa0001"}\n', LINE_B),
        # another worker named our new id as its parent
        (b'{"type":"message","id":"cccc0003","parentId":"bbbb0002"}\n', LINE_B),
        # another worker left a torn last line
        (b'{"type":"message","id":"cccc0003"', LINE_B),
    ],
)
def test_append_at_end_declines_what_the_lock_must_decide(
    postgres: Any, foreign: bytes, ours: bytes
) -> None:
    session = uuid.uuid4().hex
    store = _raw_store(postgres, session, b'{"type":"session"}\n' + LINE_A)
    size = len(store.read())
    other = PostgresStore(postgres.url, session)
    with other.transaction() as txn:
        txn.append(foreign)
    after = other.read()
    assert store.append_at_end(size, ours) is None
    assert PostgresStore(postgres.url, session).read() == after  # nothing written


def test_append_at_end_takes_in_from_what_it_had_seen(postgres: Any) -> None:
    session = uuid.uuid4().hex
    store = _raw_store(postgres, session, b'{"type":"session"}\n' + LINE_A)
    size = len(store.read())
    other = PostgresStore(postgres.url, session)
    other.read()
    foreign = b'{"type":"message","id":"cccc0003","parentId":"aaaa0001"}\n'
    with other.transaction() as txn:
        txn.append(foreign)
    before = store.append_at_end(size, LINE_B)
    assert isinstance(before, TakenIn)
    assert before.size == size + len(foreign)
    assert before.read_from(size - 1) == b"\n" + foreign
    assert store.read() == b'{"type":"session"}\n' + LINE_A + foreign + LINE_B
    # A size that does not match what this store saw last is declined.
    assert store.append_at_end(size, b'{"type":"message","id":"dddd0004"}\n') is None


def test_a_refused_cycle_writes_nothing_and_costs_no_round_trip(postgres: Any) -> None:
    tree = _tree(postgres, uuid.uuid4().hex)
    tree.append_message({"role": "user", "content": "a", "timestamp": 0})
    data = tree.store.read()
    looped = {"type": "custom", "customType": "x", "id": "self0001", "parentId": "self0001"}

    def append_looped() -> None:
        with pytest.raises(ParentCycleError):
            tree.append_entry({**looped, "timestamp": "2026-01-01T00:00:00.000Z"})

    assert _round_trips(_store(tree), append_looped) == 0
    assert tree.store.read() == data
    tree.append_message({"role": "user", "content": "b", "timestamp": 1})
    assert _messages(_tree(postgres, tree.store.session)) == ["a", "b"]


def test_one_step_appends_wake_other_workers_but_not_ourselves(postgres: Any) -> None:
    session = uuid.uuid4().hex
    mine = _tree(postgres, session)
    mine.append_message({"role": "user", "content": "a", "timestamp": 0})
    watcher_tree = _tree(postgres, session)
    watcher = _store(watcher_tree)
    watcher.listen()
    watcher_tree.append_message({"role": "user", "content": "own", "timestamp": 1})
    assert watcher.wait_for_change(0.2) is False
    mine.append_message({"role": "user", "content": "b", "timestamp": 2})
    assert watcher.wait_for_change(5) is True
    assert watcher_tree.refresh() is True
    assert _messages(watcher_tree) == ["a", "own", "b"]


def _sql(postgres: Any, statement: str) -> Any:
    import psycopg

    with psycopg.connect(postgres.url, autocommit=True) as conn:
        cursor = conn.execute(statement)
        return cursor.fetchall() if statement.startswith("SELECT") else None


def test_a_database_without_the_function_gets_it_and_keeps_schema_version_1(
    postgres: Any,
) -> None:
    """A database made by an older contextree (tables, no function) is upgraded by the first
    write; its schema version stays 1, so that older version goes on using it."""
    session = uuid.uuid4().hex
    tree = _tree(postgres, session)
    tree.append_message({"role": "user", "content": "a", "timestamp": 0})
    _sql(postgres, "DROP FUNCTION ct_append_v1")
    # A worker that had seen the function finds it gone: the append takes the lock.
    tree.append_message({"role": "user", "content": "b", "timestamp": 1})
    assert _sql(postgres, "SELECT to_regproc('ct_append_v1')::text") == [("ct_append_v1",)]
    assert _sql(postgres, "SELECT value FROM ct_meta WHERE key = 'schema'") == [("1",)]
    newer = _tree(postgres, session)
    newer.append_message({"role": "user", "content": "c", "timestamp": 2})
    trips = _round_trips(
        _store(newer),
        lambda: newer.append_message({"role": "user", "content": "d", "timestamp": 3}),
    )
    assert trips == 1
    assert _messages(_tree(postgres, session)) == ["a", "b", "c", "d"]


def test_a_role_that_may_not_create_functions_appends_under_the_lock(postgres: Any) -> None:
    session = uuid.uuid4().hex
    _tree(postgres, session).append_message({"role": "user", "content": "a", "timestamp": 0})
    _sql(postgres, "DROP FUNCTION ct_append_v1")
    role = f"ct_limited_{uuid.uuid4().hex[:8]}"
    _sql(postgres, f"CREATE ROLE {role} LOGIN")
    _sql(postgres, "REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    _sql(
        postgres,
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ct_meta, ct_sessions, ct_lines TO {role}",
    )
    limited_url = postgres.url.replace("postgresql://postgres@", f"postgresql://{role}@")
    try:
        tree = SessionTree.open(f"{limited_url}#{session}", cwd="/w")
        for n in range(3):
            tree.append_message({"role": "user", "content": f"m{n}", "timestamp": n})
        assert _sql(postgres, "SELECT to_regproc('ct_append_v1') IS NULL") == [(True,)]
        trips = _round_trips(
            _store(tree),
            lambda: tree.append_message({"role": "user", "content": "x", "timestamp": 9}),
        )
        assert trips == 2  # the lock and the state, then the lines and the COMMIT
        assert _messages(_tree(postgres, session)) == ["a", "m0", "m1", "m2", "x"]
        tree.store.close()  # type: ignore[attr-defined]
    finally:
        _sql(postgres, f"DROP OWNED BY {role}")
        _sql(postgres, f"DROP ROLE {role}")
    # The next write by a role that may create it makes the function again.
    _tree(postgres, session).append_message({"role": "user", "content": "y", "timestamp": 10})
    assert _sql(postgres, "SELECT to_regproc('ct_append_v1') IS NOT NULL") == [(True,)]
