"""One byte-level contract for every session store, plus what only the file store promises.

The contract runs against memory, the JSONL file, SQLite and PostgreSQL (on a server the tests
start; see tests/postgres_server.py).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from contextree.errors import SessionLockedError
from contextree.store import JsonlFileStore, MemoryStore, SessionStore
from contextree.store.postgres import PostgresStore
from contextree.store.sqlite import SqliteStore

StoreFactory = Callable[[bytes | None], SessionStore]


BACKENDS = ["file", "memory", "sqlite", "postgres"]


@pytest.fixture(params=BACKENDS)
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """A factory: a store holding ``data`` (``None``: nothing stored yet)."""
    if request.param == "postgres":
        server = request.getfixturevalue("postgres")
        session = uuid.uuid4().hex

    def make(data: bytes | None = None) -> SessionStore:
        if request.param == "memory":
            return MemoryStore(data) if data else MemoryStore()
        if request.param in ("sqlite", "postgres"):

            def fresh() -> SessionStore:
                if request.param == "sqlite":
                    return SqliteStore(tmp_path / "sessions.db", "s")
                return PostgresStore(server.url, session)

            if data is not None:
                with fresh().transaction() as txn:
                    txn.replace(data)
            return fresh()
        path = tmp_path / "session.jsonl"
        if data is not None:
            path.write_bytes(data)
        return JsonlFileStore(path)

    return make


# --- the shared contract ------------------------------------------------------------------------


def test_a_new_store_holds_nothing(make_store: StoreFactory) -> None:
    store = make_store(None)
    assert not store.exists()
    with pytest.raises(FileNotFoundError):
        store.read()


def test_a_transaction_creates_the_store_empty(make_store: StoreFactory) -> None:
    store = make_store(None)
    with store.transaction() as txn:
        assert txn.size == 0
        assert txn.read_from(0) == b""
        assert not txn.replaced
    assert store.exists()
    assert store.read() == b""


def test_append_adds_bytes_and_read_from_returns_the_tail(make_store: StoreFactory) -> None:
    store = make_store(None)
    with store.transaction() as txn:
        txn.append(b'{"a":1}\n')
        assert txn.size == 8
        txn.append(b'{"b":2}\n{"c":3}\n')
        assert txn.size == 24
        assert txn.read_from(0) == b'{"a":1}\n{"b":2}\n{"c":3}\n'
        assert txn.read_from(8) == b'{"b":2}\n{"c":3}\n'
        assert txn.read_from(24) == b""
        assert txn.read_from(100) == b""
    assert store.read() == b'{"a":1}\n{"b":2}\n{"c":3}\n'
    with store.transaction() as txn:  # a later transaction sees the same bytes
        assert txn.size == 24
        assert not txn.replaced


def test_replace_swaps_the_whole_content(make_store: StoreFactory) -> None:
    store = make_store(b'{"old":1}\n{"old":2}\n')
    with store.transaction() as txn:
        txn.replace(b'{"new":1}\n')
    assert store.read() == b'{"new":1}\n'
    with store.transaction() as txn:
        assert txn.size == 10
        assert txn.read_from(0) == b'{"new":1}\n'
        # Our own replace is not "someone else replaced the file".
        assert not txn.replaced
        txn.append(b'{"new":2}\n')
    assert store.read() == b'{"new":1}\n{"new":2}\n'


def test_replace_keeps_the_bytes_from_keep_from_after_the_new_content(
    make_store: StoreFactory,
) -> None:
    # An unfinished last line (maybe another writer's line in flight) is left as it is.
    store = make_store(b'{"old":1}\n{"b":')
    with store.transaction() as txn:
        txn.replace(b'{"new":1}\n', keep_from=10)
    assert store.read() == b'{"new":1}\n{"b":'
    with store.transaction() as txn:
        assert txn.size == 15
        txn.append(b'{"c":3}\n')
    assert store.read() == b'{"new":1}\n{"b":\n{"c":3}\n'


def test_a_torn_last_line_is_terminated_before_the_next_append(make_store: StoreFactory) -> None:
    store = make_store(b'{"a":1}\n{"b":')
    with store.transaction() as txn:
        txn.append(b'{"c":3}\n')
    # The torn bytes stay (nothing is lost) but can no longer swallow the new line.
    assert store.read() == b'{"a":1}\n{"b":\n{"c":3}\n'
    assert store.read().splitlines()[-1] == b'{"c":3}'


def test_append_to_a_store_ending_with_newline_adds_no_blank_line(
    make_store: StoreFactory,
) -> None:
    store = make_store(b'{"a":1}\n')
    with store.transaction() as txn:
        txn.append(b'{"b":2}\n')
    assert store.read() == b'{"a":1}\n{"b":2}\n'


def test_existing_content_is_visible_in_a_transaction(make_store: StoreFactory) -> None:
    store = make_store(b'{"a":1}\n')
    assert store.exists()
    assert store.read() == b'{"a":1}\n'
    with store.transaction() as txn:
        assert txn.size == 8
        assert txn.read_from(0) == b'{"a":1}\n'


# --- file store only --------------------------------------------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def umask_077() -> Iterator[None]:
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


def test_new_file_is_0600_and_new_directories_0700(tmp_path: Path, umask_022: None) -> None:
    path = tmp_path / "sessions" / "--work--" / "s.jsonl"
    store = JsonlFileStore(path)
    with store.transaction() as txn:
        txn.append(b"{}\n")
    assert _mode(path) == 0o600
    assert _mode(tmp_path / "sessions" / "--work--") == 0o700
    assert _mode(tmp_path / "sessions") == 0o700


def test_existing_directories_keep_their_mode(tmp_path: Path, umask_022: None) -> None:
    parent = tmp_path / "shared"
    parent.mkdir(mode=0o755)
    os.chmod(parent, 0o755)
    store = JsonlFileStore(parent / "s.jsonl")
    with store.transaction() as txn:
        txn.append(b"{}\n")
    assert _mode(parent) == 0o755


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o644], ids=oct)
def test_atomic_replace_keeps_the_original_mode(tmp_path: Path, umask_077: None, mode: int) -> None:
    # A restrictive umask must not narrow the mode of the rewritten file.
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n')
    os.chmod(path, mode)
    store = JsonlFileStore(path)
    with store.transaction() as txn:
        txn.replace(b'{"b":2}\n')
    assert path.read_bytes() == b'{"b":2}\n'
    assert _mode(path) == mode


def test_replace_is_a_rename_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n')
    before = path.stat().st_ino
    with open(path, "rb") as reader:
        store = JsonlFileStore(path)
        with store.transaction() as txn:
            txn.replace(b'{"b":2}\n')
        # A reader that had the file open still sees the old, complete content.
        assert reader.read() == b'{"a":1}\n'
    assert path.stat().st_ino != before
    assert path.read_bytes() == b'{"b":2}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_a_transaction_after_replace_refuses_more_writes(tmp_path: Path) -> None:
    store = JsonlFileStore(tmp_path / "s.jsonl")
    with store.transaction() as txn:
        txn.replace(b"{}\n")
        with pytest.raises(RuntimeError):
            txn.append(b"{}\n")


def test_the_lock_excludes_a_second_store_on_the_same_path(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    first = JsonlFileStore(path)
    second = JsonlFileStore(path, lock_timeout=0)
    with first.transaction() as txn:
        txn.append(b'{"a":1}\n')
        with pytest.raises(SessionLockedError) as info, second.transaction():
            pass
        assert str(path) in str(info.value)
    # Once released, the second store gets the lock and sees the first one's bytes.
    with second.transaction() as txn:
        assert txn.read_from(0) == b'{"a":1}\n'


def test_the_lock_excludes_another_process(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    src = Path(__file__).resolve().parents[2] / "src"
    script = textwrap.dedent(
        f"""
        import sys
        from contextree.store import JsonlFileStore
        store = JsonlFileStore({str(path)!r})
        with store.transaction() as txn:
            txn.append(b'{{"child":1}}\\n')
            print("locked", flush=True)
            sys.stdin.readline()
            txn.append(b'{{"child":2}}\\n')
        print("released", flush=True)
        """
    )
    env = dict(os.environ, PYTHONPATH=str(src))
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "locked"
        blocked = JsonlFileStore(path, lock_timeout=0)
        with pytest.raises(SessionLockedError), blocked.transaction():
            pass
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "released"
    finally:
        child.communicate(timeout=30)
    assert child.returncode == 0
    with JsonlFileStore(path).transaction() as txn:
        assert txn.read_from(0) == b'{"child":1}\n{"child":2}\n'


def test_a_replace_by_another_store_is_detected_once(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n')
    writer, watcher = JsonlFileStore(path), JsonlFileStore(path)
    with watcher.transaction() as txn:
        assert not txn.replaced
    with writer.transaction() as txn:
        txn.replace(b'{"b":2}\n')
    with watcher.transaction() as txn:
        assert txn.replaced
        assert txn.read_from(0) == b'{"b":2}\n'
        txn.append(b'{"c":3}\n')
    with watcher.transaction() as txn:
        assert not txn.replaced
    # The watcher's append went to the new file, not to the unlinked old inode.
    assert path.read_bytes() == b'{"b":2}\n{"c":3}\n'


def test_a_replace_after_our_read_is_detected(tmp_path: Path) -> None:
    # A reader that has only read() the file (as SessionTree.open does) must still learn that
    # the bytes it read were replaced, even when the new file is larger than what it read.
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n')
    reader, writer = JsonlFileStore(path), JsonlFileStore(path)
    assert reader.read() == b'{"a":1}\n'
    with writer.transaction() as txn:
        txn.replace(b'{"a":1,"pruned":"much longer now"}\n')
    with reader.transaction() as txn:
        assert txn.replaced


def test_a_store_follows_a_file_removed_and_recreated(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    store = JsonlFileStore(path)
    with store.transaction() as txn:
        txn.append(b'{"a":1}\n')
    path.unlink()
    with store.transaction() as txn:
        txn.append(b'{"b":2}\n')
    assert path.read_bytes() == b'{"b":2}\n'
