"""Sessions of one database sharing a process's connections (``share_connections``): many
sessions on a few connections, threads appending at once, notifications told apart by writer,
a forked child making its own pool, and a clear error when no connection comes free."""

from __future__ import annotations

import multiprocessing
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from contextree.errors import SessionFileError
from contextree.session.check import check_session
from contextree.session.tree import SessionTree
from contextree.store.postgres import PostgresStore
from contextree.store.postgres_pool import pool_for, share_connections, stop_sharing


@pytest.fixture
def shared(postgres: Any) -> Iterator[str]:
    url = str(postgres.url)
    share_connections(url, max_size=4)
    yield url
    stop_sharing(url)


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": 0}


def test_many_sessions_share_a_few_connections(shared: str) -> None:
    names = [uuid.uuid4().hex for _ in range(64)]
    trees = [SessionTree.open(f"{shared}#{name}", cwd="/w") for name in names]
    for n, tree in enumerate(trees):
        tree.append_message(_user(f"hello {n}"))
    pool = pool_for(shared)
    assert pool is not None and pool.get_stats()["pool_size"] <= 4
    for tree in trees:
        store = tree.store
        assert isinstance(store, PostgresStore) and store._conn is None  # never its own
    for n, name in enumerate(names):
        reopened = SessionTree.open(f"{shared}#{name}", create=False)
        assert [e["message"]["content"] for e in reopened.get_branch()] == [f"hello {n}"]


def test_threads_append_to_their_sessions_at_once(shared: str) -> None:
    names = [uuid.uuid4().hex for _ in range(8)]
    errors: list[BaseException] = []

    def work(name: str, worker: int) -> None:
        try:
            tree = SessionTree.open(f"{shared}#{name}", cwd="/w")
            for n in range(25):
                tree.append_message(_user(f"w{worker} n{n}"))
        except BaseException as exc:  # reported below
            errors.append(exc)

    # Two threads per session: their appends take turns under the session's lock.
    threads = [
        threading.Thread(target=work, args=(name, worker)) for name in names for worker in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for name in names:
        tree = SessionTree.open(f"{shared}#{name}", create=False)
        texts = [e["message"]["content"] for e in tree.get_entries() if e["type"] == "message"]
        assert sorted(texts) == sorted(f"w{w} n{n}" for w in range(2) for n in range(25))
        assert check_session(tree).findings == []


def test_a_pooled_store_hears_others_commits_but_not_its_own(shared: str) -> None:
    url = f"{shared}#{uuid.uuid4().hex}"
    writer = SessionTree.open(url, cwd="/w")
    writer.append_message(_user("first"))
    reader = SessionTree.open(url, create=False)
    assert isinstance(reader.store, PostgresStore) and isinstance(writer.store, PostgresStore)
    reader.store.listen()
    writer.store.listen()
    writer.append_message(_user("second"))
    assert reader.store.wait_for_change(5.0)
    assert not writer.store.wait_for_change(0.3)  # its own commit, on a pooled connection


def _child_appends(url: str, done: Any) -> None:
    base = url.partition("#")[0]
    share_connections(base, max_size=2)  # the parent's pool was forgotten at the fork
    SessionTree.open(url, create=False).append_message(_user("from the child"))
    done.put(pool_for(base) is not None)


def test_a_forked_child_makes_its_own_pool(shared: str) -> None:
    url = f"{shared}#{uuid.uuid4().hex}"
    tree = SessionTree.open(url, cwd="/w")
    tree.append_message(_user("from the parent"))
    context = multiprocessing.get_context("fork")
    done = context.Queue()
    child = context.Process(target=_child_appends, args=(url, done))
    child.start()
    child.join(60)
    assert child.exitcode == 0 and done.get(timeout=5)
    tree.append_message(_user("parent again"))  # the parent's pool still works
    entries = SessionTree.open(url, create=False).get_entries()
    texts = [e["message"]["content"] for e in entries if e["type"] == "message"]
    assert texts == ["from the parent", "from the child", "parent again"]


def test_no_free_connection_is_a_clear_error(postgres: Any) -> None:
    url = str(postgres.url) + "?application_name=ct_pool_test"
    pool = share_connections(url, max_size=1, timeout=0.5)
    try:
        tree = SessionTree.open(f"{url}#{uuid.uuid4().hex}", cwd="/w")
        refused = pytest.raises(SessionFileError, match="no pooled connection came free")
        with pool.connection(), refused:  # the only connection, held
            tree.append_message(_user("waits"))
        tree.append_message(_user("goes through"))
    finally:
        stop_sharing(url)


def test_bad_sizes_are_refused(postgres: Any) -> None:
    with pytest.raises(ValueError):
        share_connections(str(postgres.url), max_size=0)
