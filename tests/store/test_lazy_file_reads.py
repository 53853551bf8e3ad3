"""A large session is read by range as its index needs it (issue 27: `context` at 100k).

Opening reads the first and last bytes; stepping back reads the ranges before, from the one
file descriptor opened first (a file) or in the one read transaction opened first (SQLite).
Whatever is read lazily must equal what the whole read gives: entries, leaf, load report, line
numbers, contexts. (``pytest --small-reads`` runs the whole
suite through this path.)
"""

from __future__ import annotations

import json
import mmap
import os
import random
import uuid
from pathlib import Path
from typing import Any

import pytest

from contextree.errors import SessionFileError
from contextree.session import tree_state
from contextree.session.tree import SessionTree
from contextree.store import byte_source, record_index
from contextree.store.byte_source import Buffer, BufferBytes, FileBytes
from core_helpers import Chain, assistant, header, jsonl, user


@pytest.fixture
def lazy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files of any size are read lazily, in steps of a few hundred bytes."""
    monkeypatch.setattr(tree_state, "LAZY_READ_MIN_BYTES", 0)
    monkeypatch.setattr(tree_state, "_EDGE_BYTES", 512)
    monkeypatch.setattr(record_index, "FIRST_CHUNK_BYTES", 300)


def _eager(path: Path | str) -> SessionTree:
    saved = tree_state.LAZY_READ_MIN_BYTES
    tree_state.LAZY_READ_MIN_BYTES = 1 << 62
    try:
        return SessionTree.open(path)
    finally:
        tree_state.LAZY_READ_MIN_BYTES = saved


def _messy_session(path: Path, seed: int) -> list[str]:
    """A branching session with damage of every kind the loader reports; returns its ids."""
    rng = random.Random(seed)
    chain = Chain(f"s{seed}-")
    lines: list[bytes] = [jsonl(header())]
    for n in range(rng.randrange(20, 80)):
        if chain.entries and rng.random() < 0.15:
            chain.leaf = rng.choice(chain.entries)["id"]  # a branch from an earlier entry
        message = (
            user(f"u{n} " + "w" * rng.randrange(0, 700))
            if n % 2 == 0
            else assistant(f"a{n} " + "v" * rng.randrange(0, 300))
        )
        entry = chain.msg(message)
        if rng.random() < 0.05:
            entry = dict(entry, parentId="missing-parent")  # an orphan
        lines.append(jsonl(entry))
        roll = rng.random()
        if roll < 0.05:
            lines.append(b"not json at all\n")
        elif roll < 0.08:
            lines.append(b"\n")
        elif roll < 0.10 and chain.entries:
            lines.append(jsonl(dict(chain.entries[0], parentId=None)))  # a repeated id
        elif roll < 0.12:
            text = json.dumps(dict(chain.msg(user("bad utf8 \ufffd")), parentId=chain.leaf))
            lines.append(text.replace("\\ufffd", "\udcff").encode("utf-8", "surrogateescape")
                         .replace(b"\xed\xb3\xbf", b"\xff") + b"\n")
    if seed % 3 == 0:
        lines.append(b'{"type":"message","id":"torn"')  # a torn last line
    path.write_bytes(b"".join(lines))
    return [entry["id"] for entry in chain.entries]


def _view(tree: SessionTree, ids: list[str]) -> dict[str, Any]:
    contexts = {
        entry_id: tree.build_session_context(entry_id).messages
        for entry_id in ids[-5:]
        if tree.has_entry(entry_id) and not tree.path_cycle(entry_id)
    }
    return {
        "leaf": tree.leaf_id,
        "header": tree.header,
        "contexts": contexts,
        "lines": {entry_id: tree.line_of(entry_id) for entry_id in ids},
        "entries": tree.get_entries(),
        "report": tree.report.messages(),
        "partial": tree.report.partial_last_line,
    }


@pytest.mark.parametrize("seed", range(12))
def test_a_lazily_read_file_reads_as_the_whole_file(
    tmp_path: Path, seed: int, lazy: None
) -> None:
    path = tmp_path / "s.jsonl"
    ids = _messy_session(path, seed)
    assert _view(SessionTree.open(path), ids) == _view(_eager(path), ids)


@pytest.mark.parametrize("seed", range(6))
def test_a_file_read_into_memory_of_its_own_reads_as_the_whole_file(
    tmp_path: Path, seed: int, lazy: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every range, however small, read into anonymous memory (huge pages where the kernel has
    # them), as ranges of 2 MB and more are.
    monkeypatch.setattr(byte_source, "_HUGE_PAGE_READ", 1)
    path = tmp_path / "s.jsonl"
    ids = _messy_session(path, seed)
    assert _view(SessionTree.open(path), ids) == _view(_eager(path), ids)


def test_a_large_range_is_read_into_memory_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "bytes"
    data = random.Random(5).randbytes(3 << 20)
    path.write_bytes(data)
    source = FileBytes(path.open("rb"), str(path), len(data))
    region, base = source.region(7, len(data))
    assert (bytes(region), base) == (data[7:], 7)
    assert isinstance(region, mmap.mmap) == hasattr(mmap, "MADV_HUGEPAGE")
    source.read_ahead(0, len(data) - 1)
    region, base = source.region(0, len(data) - 1)
    assert (region[:], region[5], region.find(data[100:120])) == (data[:-1], data[5], 100)
    with path.open("r+b") as handle:
        handle.truncate(1 << 20)
    with pytest.raises(SessionFileError, match="cut short by another program"):
        source.region(0, len(data))
    source.close()


@pytest.mark.parametrize("seed", range(6))
def test_line_numbers_are_the_files_before_the_whole_file_is_read(
    tmp_path: Path, seed: int, lazy: None
) -> None:
    path = tmp_path / "s.jsonl"
    ids = _messy_session(path, seed)
    whole = _eager(path)
    tree = SessionTree.open(path)
    for entry_id in reversed(ids):  # newest first: each lookup reads a little further back
        assert tree.line_of(entry_id) == whole.line_of(entry_id)
    tree = SessionTree.open(path)
    tree.build_session_context()
    whole_lines = {bad.line for bad in whole.report.bad_lines}
    assert {bad.line for bad in tree.read_report.bad_lines} <= whole_lines


def test_the_file_is_read_from_the_descriptor_opened_first(tmp_path: Path, lazy: None) -> None:
    path = tmp_path / "s.jsonl"
    ids = _messy_session(path, 1)
    tree = SessionTree.open(path)
    expected = _eager(path).get_entries()
    # Another program rewrites the file by rename (as pi's oh-my-pi and we do): the open tree
    # reads on from the file it opened.
    replacement = tmp_path / "other.jsonl"
    replacement.write_bytes(jsonl(header(session_id="other"), Chain("o").msg(user("new"))))
    os.replace(replacement, path)
    assert tree.get_entries() == expected
    assert ids


def test_a_file_cut_short_in_place_is_a_clear_error(tmp_path: Path, lazy: None) -> None:
    path = tmp_path / "s.jsonl"
    _messy_session(path, 2)
    tree = SessionTree.open(path)
    with path.open("r+b") as handle:  # what writeFileSync does to a file it rewrites
        handle.truncate(600)
    with pytest.raises(SessionFileError, match="cut short by another program"):
        tree.get_entries()


def _region(source: FileBytes, start: int, end: int) -> tuple[bytes, int]:
    """``source.region`` as bytes (a region may be anonymous memory: see --small-reads)."""
    found, base = source.region(start, end)
    return bytes(found), base


def test_a_range_read_ahead_is_the_range_read(tmp_path: Path) -> None:
    path = tmp_path / "bytes"
    data = bytes(range(256)) * 64
    path.write_bytes(data)
    source = FileBytes(path.open("rb"), str(path), len(data))
    source.read_ahead(100, 4000)
    assert _region(source, 100, 4000) == (data[100:4000], 100)
    source.read_ahead(0, 50)
    assert _region(source, 10, 50) == (data[10:50], 10)  # not the range read ahead: as usual
    assert _region(source, 0, 50) == (data[0:50], 0)
    source.read_ahead(0, len(data))
    source.close()  # waits for the read ahead before it closes the file
    with pytest.raises(RuntimeError, match="closed"):
        source.region(0, len(data))


def test_a_walk_to_the_root_takes_each_step_from_the_read_ahead(
    tmp_path: Path, lazy: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    chain = Chain("r-")
    lines = [jsonl(header())] + [jsonl(chain.msg(user(f"step {n}"))) for n in range(200)]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines))
    tree = SessionTree.open(path)
    reads: list[tuple[int, int]] = []
    read = FileBytes.read_region

    def counted(self: FileBytes, start: int, end: int) -> Buffer:
        reads.append((start, end))
        return read(self, start, end)

    monkeypatch.setattr(FileBytes, "read_region", counted)
    assert [entry["id"] for entry in tree.get_branch()] == [e["id"] for e in chain.entries]
    # Only the first step back is read where it is asked for: each later step's range is
    # the one read ahead while the step before it decoded.
    assert len(reads) == 1, reads


def test_a_read_ahead_past_a_cut_raises_where_the_bytes_are_taken(tmp_path: Path) -> None:
    path = tmp_path / "bytes"
    path.write_bytes(b"x" * 1000)
    source = FileBytes(path.open("rb"), str(path), 1000)
    with path.open("r+b") as handle:
        handle.truncate(300)
    source.read_ahead(200, 1000)  # no error here
    with pytest.raises(SessionFileError, match="cut short by another program"):
        source.region(200, 1000)
    source.close()


def test_a_read_ahead_that_cannot_start_a_thread_reads_as_usual(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    path = tmp_path / "bytes"
    data = bytes(range(256)) * 16
    path.write_bytes(data)
    source = FileBytes(path.open("rb"), str(path), len(data))
    monkeypatch.setattr(threading.Thread, "start", refuse)
    source.read_ahead(0, 1000)
    assert _region(source, 0, 1000) == (data[:1000], 0)
    source.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_child_forked_during_a_read_ahead_reads_the_bytes_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    import time

    from contextree.store import byte_source

    path = tmp_path / "bytes"
    data = bytes(range(256)) * 32
    path.write_bytes(data)
    started = threading.Event()
    read = byte_source._read_region

    def slow(*args: Any) -> Buffer:
        started.set()
        time.sleep(0.5)  # still reading when the process forks
        return read(*args)

    monkeypatch.setattr(byte_source, "_read_region", slow)
    source = FileBytes(path.open("rb"), str(path), len(data))
    source.read_ahead(0, 4000)
    assert started.wait(10)
    child = os.fork()
    if child == 0:  # the child: its copy of the reading thread never runs
        try:
            got, _ = _region(source, 0, 4000)
            os._exit(0 if got == data[:4000] else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert _region(source, 0, 4000) == (data[:4000], 0)
    source.close()


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_the_file_is_closed_once_every_line_is_read(tmp_path: Path, lazy: None) -> None:
    path = tmp_path / "s.jsonl"
    _messy_session(path, 4)
    before = _open_descriptors()
    tree = SessionTree.open(path)
    assert _open_descriptors() == before + 1  # the file, held for the reads to come
    tree.get_entries()
    assert _open_descriptors() == before


def test_a_large_file_is_not_read_whole_on_open(tmp_path: Path, lazy: None) -> None:
    path = tmp_path / "s.jsonl"
    chain = Chain("big")
    for n in range(400):
        chain.msg(user(f"message {n} " + "x" * 1000))
    path.write_bytes(jsonl(header(), *chain.entries))
    tree = SessionTree.open(path)
    assert tree.leaf_id == chain.leaf
    assert not tree._index.complete  # only the end was read
    context = tree.build_session_context()
    assert len(context.messages) == 400
    # Appends by another writer are taken in as for a file read whole.
    other = SessionTree.open(path)
    other.append_message(user("from elsewhere"))
    tree.append_message(user("mine"))
    last = [entry["message"]["content"][0]["text"] for entry in tree.get_entries()[-2:]]
    assert last == ["from elsewhere", "mine"]


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a database session goes: an SQLite file, or a PostgreSQL server's database."""
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres").url) + "#" + uuid.uuid4().hex
    return f"sqlite://{tmp_path / 'sessions.db'}#s"


def _in_database(path: Path, target: str) -> str:
    from contextree.store.transfer import copy_session

    copy_session(path, target, fsync=False)
    return target


@pytest.mark.parametrize("seed", range(6))
def test_a_database_session_read_by_range_reads_as_a_whole_read(
    tmp_path: Path, seed: int, lazy: None, database: str
) -> None:
    path = tmp_path / "s.jsonl"
    ids = _messy_session(path, seed)
    target = _in_database(path, database)
    lazily = SessionTree.open(target)
    assert not lazily._index.complete or len(ids) < 5
    view = _view(lazily, ids)
    assert view == _view(_eager(target), ids)
    from_file = _view(_eager(path), ids)
    assert view["report"] == [line.replace(str(path), target) for line in from_file["report"]]
    assert {**view, "report": []} == {**from_file, "report": []}


def test_a_database_session_is_read_from_the_snapshot_opened_first(
    tmp_path: Path, lazy: None, database: str
) -> None:
    path = tmp_path / "s.jsonl"
    _messy_session(path, 5)
    target = _in_database(path, database)
    tree = SessionTree.open(target)
    expected = _eager(target).get_entries()
    other = SessionTree.open(target)
    first = other.get_entries()[0]
    changed = {**first, "message": user("rewritten")}
    other.rewrite_entries([changed])  # a rewrite by another worker: every row anew
    other.append_message(user("after the rewrite"))
    assert tree.get_entries() == expected  # read on from the snapshot taken on open
    # The next write notices the rewrite and reads the session afresh.
    tree.append_message(user("mine"))
    texts = [e["message"]["content"][0]["text"] for e in tree.get_entries()[-2:]]
    assert texts == ["after the rewrite", "mine"]


def test_pooled_postgresql_sessions_are_read_whole(
    tmp_path: Path, lazy: None, postgres: object
) -> None:
    from contextree.store.postgres_pool import share_connections, stop_sharing

    path = tmp_path / "s.jsonl"
    ids = _messy_session(path, 3)
    url = str(postgres.url)  # type: ignore[attr-defined]
    target = _in_database(path, url + "#" + uuid.uuid4().hex)
    share_connections(url)
    try:
        tree = SessionTree.open(target)
        # Read whole into memory: no snapshot holds one of the pool's connections.
        assert isinstance(tree._index._source, BufferBytes)
        assert tree.get_entries() == _eager(path).get_entries()
        assert ids
    finally:
        stop_sharing(url)
