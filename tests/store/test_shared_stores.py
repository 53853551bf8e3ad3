"""What every durable store promises when several stores (workers) share one session: file,
SQLite and PostgreSQL alike; plus the database stores' own errors and queries."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from contextree.errors import SessionFileError, SessionLockedError
from contextree.session.tree import SessionTree
from contextree.store import JsonlFileStore, SessionStore
from contextree.store.postgres import PostgresStore
from contextree.store.sqlite import SqliteStore, list_sqlite_sessions
from contextree.store.url import open_store, parse_target

Opener = Callable[..., SessionStore]
"""A new store on the one shared session (``lock_timeout`` may be passed)."""


@pytest.fixture(params=["file", "sqlite", "postgres"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    session = uuid.uuid4().hex
    if request.param == "postgres":
        url = request.getfixturevalue("postgres").url
        return lambda **kw: PostgresStore(url, session, **kw)
    if request.param == "sqlite":
        return lambda **kw: SqliteStore(tmp_path / "s.db", session, **kw)
    return lambda **kw: JsonlFileStore(tmp_path / "s.jsonl", **kw)


ODD_BYTES = (
    b'\xef\xbb\xbf{"type":"session"}\r\n'  # BOM and CRLF
    b"\n"  # blank
    b'{"type":"message","id":"a\\u0000b","x":"\xff\xfe"}\n'  # NUL escape, invalid UTF-8
    b"\x00raw nul\x00\n"
    b"not json at all\n"
    b'{"torn":'
)


def test_odd_bytes_survive_exactly(opener: Opener) -> None:
    store = opener()
    with store.transaction() as txn:
        txn.replace(ODD_BYTES)
    assert opener().read() == ODD_BYTES
    with opener().transaction() as txn:
        assert txn.size == len(ODD_BYTES)
        for offset in (0, 1, 5, 30, len(ODD_BYTES) - 3, len(ODD_BYTES) - 1):
            assert txn.read_from(offset) == ODD_BYTES[offset:]


def test_a_second_store_sees_appends_and_detects_a_replace(opener: Opener) -> None:
    writer, watcher = opener(), opener()
    with writer.transaction() as txn:
        txn.append(b'{"a":1}\n')
    assert watcher.read() == b'{"a":1}\n'
    with writer.transaction() as txn:
        txn.append(b'{"b":2}\n')
    with watcher.transaction() as txn:
        assert not txn.replaced
        assert txn.read_from(8) == b'{"b":2}\n'
    with writer.transaction() as txn:
        txn.replace(b'{"c":3}\n')
    with watcher.transaction() as txn:
        assert txn.replaced
        assert txn.read_from(0) == b'{"c":3}\n'
        txn.append(b'{"d":4}\n')
    with watcher.transaction() as txn:
        assert not txn.replaced
    assert writer.read() == b'{"c":3}\n{"d":4}\n'


def test_the_write_lock_excludes_a_second_store(opener: Opener) -> None:
    first, second = opener(), opener(lock_timeout=0.05)
    with first.transaction() as txn:
        txn.append(b'{"a":1}\n')
        with pytest.raises(SessionLockedError) as info, second.transaction():
            pass
        assert "lock" in str(info.value)
    with second.transaction() as txn:
        assert txn.read_from(0) == b'{"a":1}\n'


def test_a_tree_takes_in_another_trees_appends(opener: Opener) -> None:
    one = SessionTree(opener(), cwd="/w")
    first = one.append_custom("x", {"n": 1})
    two = SessionTree(opener())
    assert two.leaf_id == first
    two.append_custom("x", {"n": 2})
    assert one.refresh() is True
    assert one.refresh() is False
    assert [e["data"]["n"] for e in one.get_entries()] == [1, 2]
    one.append_custom("x", {"n": 3})  # a child of entry 1: our leaf stayed there
    assert one.get_branch()[-1]["parentId"] == first
    assert len(SessionTree(opener())) == 3


def test_an_exception_after_a_write_keeps_the_write(opener: Opener) -> None:
    store = opener()
    with pytest.raises(KeyError), store.transaction() as txn:
        txn.append(b'{"a":1}\n')
        raise KeyError("after the append")
    assert opener().read() == b'{"a":1}\n'


# --- SQLite ---------------------------------------------------------------------------------


def test_sqlite_reading_a_missing_database_creates_nothing(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "none.db", "s")
    assert not store.exists()
    with pytest.raises(FileNotFoundError):
        store.read()
    assert not (tmp_path / "none.db").exists()


def test_sqlite_database_is_0600_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "new" / "s.db"
    with SqliteStore(path, "s").transaction() as txn:
        txn.append(b"{}\n")
    assert path.stat().st_mode & 0o777 == 0o600
    assert (path.parent.stat().st_mode & 0o777) == 0o700
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_sqlite_snapshot_reader_maps_the_database(tmp_path: Path) -> None:
    # Lines spill into overflow pages; mapped, reading them costs no system call each.
    store = SqliteStore(tmp_path / "s.db", "s")
    with store.transaction() as txn:
        txn.append(b'{"type":"session"}\n' + b'{"x":"' + b"y" * 9000 + b'"}\n')
    snapshot = store.open_bytes()
    assert snapshot is not None
    try:
        assert snapshot._rows("PRAGMA mmap_size", ())[0][0] > 0
        assert snapshot.read(0, snapshot.size).endswith(b"y" * 10 + b'"}\n')
    finally:
        snapshot.close()


def test_sqlite_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    path.write_bytes(b"this is a text file, not a database" * 100)
    with pytest.raises(SessionFileError, match="is not an SQLite database"):
        SqliteStore(path, "s").read()


def test_sqlite_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path, "s").transaction() as txn:
        txn.append(b"{}\n")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE ct_meta SET value = '99' WHERE key = 'schema'")
    conn.commit()
    conn.close()
    with pytest.raises(SessionFileError, match="schema version 99"):
        SqliteStore(path, "s").read()


def test_sqlite_holds_many_sessions_and_lists_them(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    for name, body in (("b", b"{}\n{}\n"), ("a", b"{}\n")):
        with SqliteStore(path, name).transaction() as txn:
            txn.append(body)
    assert list_sqlite_sessions(path) == [("a", 1, 3), ("b", 2, 6)]
    assert SqliteStore(path, "a").read() == b"{}\n"
    assert not SqliteStore(path, "c").exists()


# --- PostgreSQL -----------------------------------------------------------------------------


def test_postgres_unreachable_server_is_one_clear_error(postgres: object) -> None:
    store = PostgresStore("postgresql://nobody@127.0.0.1:1/db", "s", connect_timeout=2)
    with pytest.raises(SessionFileError, match="cannot connect to PostgreSQL"):
        store.exists()


def test_postgres_wait_for_change_wakes_on_another_workers_commit(postgres: object) -> None:
    url = postgres.url  # type: ignore[attr-defined]
    session = uuid.uuid4().hex
    watcher, writer, other = (
        PostgresStore(url, session),
        PostgresStore(url, session),
        PostgresStore(url, uuid.uuid4().hex),
    )
    watcher.listen()
    assert watcher.wait_for_change(0.05) is False
    with other.transaction() as txn:  # another session: not ours
        txn.append(b"{}\n")
    assert watcher.wait_for_change(0.2) is False
    with watcher.transaction() as txn:  # our own commit does not wake us
        txn.append(b"{}\n")
    assert watcher.wait_for_change(0.2) is False
    with writer.transaction() as txn:
        txn.append(b'{"b":2}\n')
    assert watcher.wait_for_change(5) is True
    for store in (watcher, writer, other):
        store.close()


# --- both databases -------------------------------------------------------------------------


def _db_store(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> SessionStore:
    if kind == "sqlite":
        return open_store(f"sqlite://{tmp_path}/s.db#tree")
    return open_store(request.getfixturevalue("postgres").url + "#" + uuid.uuid4().hex)


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_branch_rows_walks_the_path_in_the_database(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store = _db_store(kind, tmp_path, request)
    tree = SessionTree(store, cwd="/w")
    a = tree.append_custom("x")
    b = tree.append_custom("x")
    tree.branch(a)
    c = tree.append_custom("x")
    rows = store.branch_rows(c)  # type: ignore[attr-defined]
    assert [row[2] for row in rows] == [a, c]
    assert [row[1] for row in rows] == ["custom", "custom"]
    assert [row[2] for row in store.branch_rows(b)] == [a, b]  # type: ignore[attr-defined]
    assert store.branch_rows("missing") == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_branch_rows_stops_at_a_cycle(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store = _db_store(kind, tmp_path, request)
    with store.transaction() as txn:
        txn.replace(
            b'{"type":"session","id":"s","version":3}\n'
            b'{"type":"custom","id":"a","parentId":"b"}\n'
            b'{"type":"custom","id":"b","parentId":"a"}\n'
        )
    assert [row[2] for row in store.branch_rows("b")] == ["a", "b"]  # type: ignore[attr-defined]


# --- URLs -----------------------------------------------------------------------------------


def test_urls_name_the_store_and_session(tmp_path: Path) -> None:
    assert parse_target("a/b.jsonl").kind == "file"
    sqlite_target = parse_target("sqlite:///tmp/x.db#my%23session")
    assert (sqlite_target.kind, sqlite_target.location, sqlite_target.session) == (
        "sqlite",
        "/tmp/x.db",
        "my#session",
    )
    assert parse_target("sqlite://rel/x.db#s").location == "rel/x.db"
    pg = parse_target("postgresql://me:secret@db.example:5433/sessions#s1")
    assert pg.kind == "postgres" and pg.session == "s1"
    assert pg.location == "postgresql://me:secret@db.example:5433/sessions"
    assert "secret" not in pg.display and pg.display.endswith("#s1")
    with pytest.raises(SessionFileError, match="names no session"):
        open_store(f"sqlite://{tmp_path}/x.db")
    with pytest.raises(SessionFileError, match="names no database file"):
        open_store("sqlite://#s")
    assert isinstance(open_store(f"sqlite://{tmp_path}/x.db", default_session="d"), SqliteStore)
    assert isinstance(open_store(tmp_path / "f.jsonl"), JsonlFileStore)


def test_session_tree_open_accepts_urls(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path}/t.db#one"
    with pytest.raises(SessionFileError, match="no such SQLite database"):
        SessionTree.open(url, create=False)
    tree = SessionTree.open(url, cwd="/w")
    entry = tree.append_message({"role": "user", "content": "hi", "timestamp": 1})
    again = SessionTree.open(url, create=False)
    assert again.leaf_id == entry and again.session_id == tree.session_id
    assert again.path is None
    assert again.store.name == url
