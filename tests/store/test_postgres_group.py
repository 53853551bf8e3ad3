"""Group commit of pooled appends (``contextree.store.postgres_group``): the appends of a
process's sessions that wait while its statement is out go together in one statement and one
transaction, each checked as it would be alone; a session whose lock is busy does not hold up
the others; a group the server refuses is sent again one append at a time."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from contextree.session.check import check_session
from contextree.session.tree import SessionTree
from contextree.store import postgres_group
from contextree.store.postgres import PostgresStore
from contextree.store.postgres_pool import group_for, pool_for, share_connections, stop_sharing


@pytest.fixture
def shared(postgres: Any) -> Iterator[str]:
    # One connection, so that the test can hold it while appends queue behind it.
    url = str(postgres.url) + "?application_name=ct_group_test"
    share_connections(url, max_size=1, timeout=60)
    yield url
    stop_sharing(url)


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 0}


def _opened(url: str, count: int) -> list[SessionTree]:
    trees = [SessionTree.open(f"{url}#{uuid.uuid4().hex}", cwd="/w") for _ in range(count)]
    for tree in trees:
        tree.append_message(_user("first"))
        tree.append_message(_user("second"))  # the first write of a session takes the lock
    return trees


def _wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the appends never queued")
        time.sleep(0.005)


def _queued_then_sent(url: str, actions: list[Callable[[], object]]) -> list[_Thread]:
    """Start ``actions`` (one append each) in threads while the pool's only connection is
    held, wait until every append waits in the group, then let them go. An error of an
    action fails the test when its thread is joined (:func:`_join`)."""
    pool, group = pool_for(url), group_for(url)
    assert pool is not None and group is not None
    threads = [_Thread(action) for action in actions]
    with pool.connection():
        for thread in threads:
            thread.start()
        # One of them leads (it waits for the connection), the others wait for it.
        _wait_until(lambda: len(group._waiting) == len(actions) - 1)
    return threads


class _Thread(threading.Thread):
    def __init__(self, action: Callable[[], object]) -> None:
        super().__init__()
        self._action = action
        self.result: object = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self._action()
        except BaseException as exc:  # raised by _join
            self.error = exc


def _join(*threads: threading.Thread) -> None:
    for thread in threads:
        thread.join(60)
        assert not thread.is_alive()
        if isinstance(thread, _Thread) and thread.error is not None:
            raise thread.error


def _messages(url: str, session: str) -> list[str]:
    # Not through the pool: its one connection may be waiting for a lock.
    tree = SessionTree.open(f"{url.partition('?')[0]}#{session}", create=False)
    return [e["message"]["content"] for e in tree.get_entries() if e["type"] == "message"]


def _session(tree: SessionTree) -> str:
    assert isinstance(tree.store, PostgresStore)
    return tree.store.session


def _last_xmins(url: str, sessions: list[str]) -> set[str]:
    import psycopg

    with psycopg.connect(url.partition("?")[0], autocommit=True) as conn:
        rows = conn.execute(
            "SELECT l.xmin::text FROM ct_lines l JOIN ct_sessions s ON s.session = l.session "
            "AND l.seq = s.lines WHERE l.session = ANY(%s)",
            (sessions,),
        ).fetchall()
    return {row[0] for row in rows}


def test_appends_that_wait_go_in_one_transaction(shared: str) -> None:
    trees = _opened(shared, 3)
    watcher = SessionTree.open(f"{shared}#{_session(trees[1])}", create=False)
    assert isinstance(watcher.store, PostgresStore)
    watcher.store.listen()
    actions = [
        (lambda tree=tree, n=n: tree.append_message(_user(f"grouped {n}")))
        for n, tree in enumerate(trees)
    ]
    _join(*_queued_then_sent(shared, actions))
    sessions = [_session(tree) for tree in trees]
    assert len(_last_xmins(shared, sessions)) == 1  # one transaction
    for n, session in enumerate(sessions):
        assert _messages(shared, session) == ["first", "second", f"grouped {n}"]
    # Each store's notification is its own: another worker wakes, the writer would not.
    assert watcher.store.wait_for_change(5.0)
    assert watcher.refresh()
    assert watcher.get_entries()[-1]["message"]["content"] == "grouped 1"


def test_a_session_whose_lock_is_busy_does_not_hold_up_the_group(
    shared: str, postgres: Any
) -> None:
    import psycopg

    busy, free = _opened(shared, 2)
    holder = psycopg.connect(str(postgres.url))
    holder.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (_session(busy),)
    ).fetchall()
    try:
        waits, goes = _queued_then_sent(
            shared,
            [
                lambda: busy.append_message(_user("after the lock")),
                lambda: free.append_message(_user("not held up")),
            ],
        )[:2]
        _join(goes)
        assert _messages(shared, _session(free)) == ["first", "second", "not held up"]
        assert _messages(shared, _session(busy)) == ["first", "second"]
    finally:
        holder.rollback()  # the lock goes with the transaction
        holder.close()
    _join(waits)
    assert _messages(shared, _session(busy)) == ["first", "second", "after the lock"]


def test_each_append_of_a_group_is_checked_as_alone(shared: str) -> None:
    """One session was rewritten since its tree read it: its append is declined in the group
    and goes under the lock (taking the rewrite in), the other's is made in the group."""
    rewritten, other = _opened(shared, 2)
    elsewhere = SessionTree.open(f"{shared}#{_session(rewritten)}", create=False)
    first = elsewhere.get_entries()[0]
    elsewhere.rewrite_entries([{**first, "message": _user("first, rewritten")}])
    actions = [
        lambda: rewritten.append_message(_user("after the rewrite")),
        lambda: other.append_message(_user("grouped")),
    ]
    _join(*_queued_then_sent(shared, actions))
    expected = ["first, rewritten", "second", "after the rewrite"]
    assert _messages(shared, _session(rewritten)) == expected
    assert [e["message"]["content"] for e in rewritten.get_branch()] == expected
    assert _messages(shared, _session(other)) == ["first", "second", "grouped"]
    assert check_session(rewritten).findings == []


def test_a_group_the_server_refuses_goes_again_one_by_one(
    shared: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Refused when planned (division by zero): nothing of the statement is committed.
    monkeypatch.setattr(postgres_group, "CALL_MANY", postgres_group.CALL_MANY + " WHERE 1/0 = 1")
    trees = _opened(shared, 3)
    actions = [
        (lambda tree=tree, n=n: tree.append_message(_user(f"alone {n}")))
        for n, tree in enumerate(trees)
    ]
    _join(*_queued_then_sent(shared, actions))
    sessions = [_session(tree) for tree in trees]
    assert len(_last_xmins(shared, sessions)) == 3
    for n, session in enumerate(sessions):
        assert _messages(shared, session) == ["first", "second", f"alone {n}"]


def _raw_store(url: str, data: bytes) -> PostgresStore:
    store = PostgresStore(url, uuid.uuid4().hex)
    with store.transaction() as txn:
        txn.append(data)
    store.read()  # what this worker has seen
    return store


_HEADER = b'{"type":"session"}\n'
_LINE_A = b'{"type":"message","id":"aaaa0001","parentId":null}\n'
_LINE_B = b'{"type":"message","id":"bbbb0002","parentId":"aaaa0001"}\n'


@pytest.mark.parametrize(
    "foreign",
    [
        b'{"type":"message","id":"aaaa0001","parentId":null}\n',  # repeats an id it held
        b'{"type":"message","id":"bbbb0002","parentId":"aaaa0001"}\n',  # takes our new id
        b'{"type":"message","id":"cccc0003","parentId":"bbbb0002"}\n',  # names it as parent
        b'{"type":"message","id":"cccc0003"',  # a torn last line
    ],
)
def test_a_group_declines_what_the_lock_must_decide(shared: str, foreign: bytes) -> None:
    """The checks of the one-round-trip append hold for each append of a group: the one
    whose session another worker changed in a way the lock must decide writes nothing, the
    one beside it is made and takes in what others appended before it."""
    declined = _raw_store(shared, _HEADER + _LINE_A)
    declined_size = len(declined.read())
    made = _raw_store(shared, _HEADER + _LINE_A)
    made_size = len(made.read())
    for store, line in ((declined, foreign), (made, b'{"type":"message","id":"dddd0004"}\n')):
        other = PostgresStore(shared, store.session)
        with other.transaction() as txn:
            txn.append(line)
    after = PostgresStore(shared, declined.session).read()
    threads = _queued_then_sent(
        shared,
        [
            lambda: declined.append_at_end(declined_size, _LINE_B),
            lambda: made.append_at_end(made_size, _LINE_B),
        ],
    )
    _join(*threads)
    assert threads[0].result is None
    assert PostgresStore(shared, declined.session).read() == after  # nothing written
    assert threads[1].result is not None
    assert PostgresStore(shared, made.session).read() == (
        _HEADER + _LINE_A + b'{"type":"message","id":"dddd0004"}\n' + _LINE_B
    )


def test_a_thread_interrupted_while_it_waits_leaves_no_one_stuck(shared: str) -> None:
    """Ctrl-C in a thread waiting for its turn: its append leaves the queue unsent, and the
    appends after it still go (the turn was once handed to a thread that had left, and every
    later append of the process waited forever)."""
    interrupted, later = _opened(shared, 2)
    pool, group = pool_for(shared), group_for(shared)
    assert pool is not None and group is not None
    leader = _Thread(lambda: later.append_message(_user("leads")))

    def waits_then_interrupted() -> object:
        request_made = threading.Event()
        real = postgres_group._Request

        class Interrupted(real):  # type: ignore[misc, valid-type]
            def __init__(self, *args: Any) -> None:
                super().__init__(*args)
                lock = self.wake

                class Wake:
                    def acquire(self) -> bool:
                        request_made.set()
                        raise KeyboardInterrupt

                    def release(self) -> None:
                        lock.release()

                self.wake = Wake()

        postgres_group._Request = Interrupted  # type: ignore[misc]
        try:
            return interrupted.append_message(_user("never sent"))
        finally:
            postgres_group._Request = real  # type: ignore[misc]

    with pool.connection():
        leader.start()
        _wait_until(lambda: group._free == 0)
        waiter = _Thread(waits_then_interrupted)
        waiter.start()
        waiter.join(60)
    assert isinstance(waiter.error, KeyboardInterrupt) and group._waiting == []
    _join(leader)
    done = _Thread(lambda: later.append_message(_user("after it")))
    done.start()
    _join(done)
    assert _messages(shared, _session(later))[-2:] == ["leads", "after it"]
    assert _messages(shared, _session(interrupted)) == ["first", "second"]


def test_a_large_append_goes_alone(shared: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A statement holds at most so many bytes of lines (the server drops a connection sent
    more than 1 GB, failing every append of the group): the rest wait for the next."""
    monkeypatch.setattr(postgres_group, "_MOST_BYTES", 4096)
    trees = _opened(shared, 3)
    big = "x" * 3000
    actions = [
        (lambda tree=tree, n=n: tree.append_message(_user(f"{n} {big}")))
        for n, tree in enumerate(trees)
    ]
    _join(*_queued_then_sent(shared, actions))
    sessions = [_session(tree) for tree in trees]
    assert len(_last_xmins(shared, sessions)) == 3  # each in a statement of its own
    for n, session in enumerate(sessions):
        assert _messages(shared, session)[-1] == f"{n} {big}"


def test_appends_waiting_for_a_connection_give_up_at_their_own_timeout(
    postgres: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each append waits for a pooled connection no longer than a lone one would, from when
    it was made: the ones queued behind a leader that waited the whole timeout do not each
    wait it again (with 64 threads the last waited 64 timeouts)."""
    url = str(postgres.url) + "?application_name=ct_group_timeout"
    share_connections(url, max_size=1, timeout=1.0)
    try:
        trees = _opened(url, 3)
        pool = pool_for(url)
        assert pool is not None
        real = pool.connection
        asked: list[float] = []

        def borrow(timeout: float | None = None) -> Any:
            asked.append(timeout if timeout is not None else pool.timeout)
            return real(timeout=timeout)

        threads = [_Thread(lambda tree=tree: tree.append_message(_user("late"))) for tree in trees]
        with real():  # the pool's one connection, held throughout
            monkeypatch.setattr(pool, "connection", borrow)
            started = time.monotonic()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(30)
            took = time.monotonic() - started
        for thread in threads:
            assert thread.error is not None and "no pooled connection" in str(thread.error)
        assert asked[0] > 0.9 and all(wait < 0.9 for wait in asked[1:])
        assert took < 2.5  # one timeout and a little, not three (3 s)
    finally:
        stop_sharing(url)


def test_appends_queued_when_the_pool_closes_fail_with_a_clear_error(postgres: Any) -> None:
    from contextree.errors import SessionFileError

    url = str(postgres.url) + "?application_name=ct_group_closed"
    share_connections(url, max_size=1, timeout=30)
    trees = _opened(url, 2)
    pool, group = pool_for(url), group_for(url)
    assert pool is not None and group is not None
    threads = [_Thread(lambda tree=tree: tree.append_message(_user("late"))) for tree in trees]
    with pool.connection():
        for thread in threads:
            thread.start()
        _wait_until(lambda: len(group._waiting) == 1)
        stop_sharing(url)
    for thread in threads:
        thread.join(30)
    assert all(isinstance(thread.error, SessionFileError) for thread in threads)


def test_a_lone_transaction_waiting_when_the_pool_closes_fails_with_a_clear_error(
    postgres: Any,
) -> None:
    from contextree.errors import SessionFileError

    url = str(postgres.url) + "?application_name=ct_lone_closed"
    share_connections(url, max_size=1, timeout=30)
    name = f"{url}#{uuid.uuid4().hex}"
    pool = pool_for(url)
    assert pool is not None
    # Opening a session reads it: a transaction of its own, not an append of the group.
    reader = _Thread(lambda: SessionTree.open(name, cwd="/w"))
    with pool.connection():
        reader.start()
        _wait_until(lambda: pool.get_stats().get("requests_waiting", 0) == 1)
        stop_sharing(url)
    reader.join(30)
    assert isinstance(reader.error, SessionFileError), reader.error
    assert "closed (stop_sharing)" in str(reader.error)
