"""Rewrites keep the appends of a writer that takes no lock (issue 15 item 1).

pi appends with ``appendFileSync(path)`` and never takes our advisory lock, so an append it
starts just before our rename lands in the old inode. The rewrite copies such bytes over to
the new file; these tests drive the carry-over step by step (the loop against a whole appender
process is tests/reliability/test_unlocked.py, and with the real pi
tests/differential/test_pi_concurrent.py).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

import contextree.store.jsonl as jsonl_store
from contextree.session.tree import SessionTree
from core_helpers import Chain, assistant, header, jsonl, user


def _two_line_session(path: Path) -> SessionTree:
    chain = Chain()
    chain.msg(user("hello"))
    chain.msg(assistant("hi"))
    path.write_bytes(jsonl(header(), *chain.entries))
    return SessionTree.open(path)


def _rewrite_first(tree: SessionTree, text: str) -> None:
    first = tree.get_entries()[0]
    tree.rewrite_entries([{**first, "message": {**first["message"], "content": text}}])


def _late_line(n: int, parent: str) -> bytes:
    entry = {
        "type": "custom",
        "id": f"c{n:07d}",
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "customType": "late",
    }
    return json.dumps(entry).encode()


def _ids(path: Path) -> list[str | None]:
    return [json.loads(line).get("id") for line in path.read_bytes().splitlines() if line.strip()]


def test_a_rewrite_nobody_appends_to_waits_one_pause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _two_line_session(tmp_path / "s.jsonl")
    pauses: list[float] = []
    monkeypatch.setattr(jsonl_store.time, "sleep", pauses.append)
    _rewrite_first(tree, "quiet")
    assert pauses == [jsonl_store._CARRY_PAUSE_S]


def test_a_rewrite_after_our_own_appends_waits_one_pause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Our appends keep a write-only descriptor open (the one that fills the reserved line);
    it is not another writer: the carry-over must not wait its full limit for it (issue 27
    item 2: every rewrite after an append took 2 s)."""
    tree = _two_line_session(tmp_path / "s.jsonl")
    tree.append_message(user("one more"))
    tree.append_message(assistant("noted"))
    pauses: list[float] = []
    monkeypatch.setattr(jsonl_store.time, "sleep", pauses.append)
    _rewrite_first(tree, "after appends")
    assert pauses == [jsonl_store._CARRY_PAUSE_S]
    assert SessionTree.open(tmp_path / "s.jsonl").get_entries()[-1]["message"] == assistant("noted")


def test_the_carry_over_waits_for_a_writer_that_holds_the_old_file_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A writer that opened the file before the rename but writes only later (pi between its
    # open() and write(), descheduled): nothing grows for many pauses, yet its line must
    # still be carried over once it is written.
    path = tmp_path / "s.jsonl"
    tree = _two_line_session(path)
    parent = tree.get_entries()[-1]["id"]
    late = open(path, "ab")  # noqa: SIM115 - closed by the pause below, as pi would
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 30 and not late.closed:
            late.write(_late_line(0, parent) + b"\n")
            late.close()

    monkeypatch.setattr(jsonl_store.time, "sleep", pause)
    try:
        _rewrite_first(tree, "busy")
    finally:
        late.close()
    assert len(pauses) >= 30
    assert _ids(path)[-1] == "c0000000"
    assert SessionTree.open(path).report.clean


def test_a_line_in_flight_at_the_rewrite_stays_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The rewrite reads the file while pi is in the middle of writing a line: the half it
    # sees must not be ended with a newline of ours (pi's rest would become a second line).
    path = tmp_path / "s.jsonl"
    tree = _two_line_session(path)
    parent = tree.get_entries()[-1]["id"]
    line = _late_line(0, parent) + b"\n"
    late = open(path, "ab")  # noqa: SIM115 - closed by the pause below
    late.write(line[:25])
    late.flush()

    def pause(seconds: float) -> None:
        if not late.closed:
            late.write(line[25:])
            late.close()

    monkeypatch.setattr(jsonl_store.time, "sleep", pause)
    try:
        _rewrite_first(tree, "in flight")
    finally:
        late.close()
    assert path.read_bytes().endswith(b"\n" + line)
    reopened = SessionTree.open(path)
    assert reopened.report.clean, reopened.report.messages()
    assert reopened.get_entries()[-1]["id"] == "c0000000"
    # The tree that rewrote knows the line too, once it looks again.
    _rewrite_first(tree, "again")
    assert _ids(path)[-1] == "c0000000" and _ids(path).count("c0000000") == 1


def test_a_torn_line_nobody_is_writing_is_kept_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    tree = _two_line_session(path)
    torn = _late_line(0, "x")[:30]
    with open(path, "ab") as dead_writer:
        dead_writer.write(torn)
    _rewrite_first(tree, "after a crash")
    data = path.read_bytes()
    assert data.endswith(b"\n" + torn)  # the same bytes, still unfinished: nothing invented
    reopened = SessionTree.open(path)
    assert [bad.raw for bad in reopened.report.bad_lines] == [torn]
    # Our next append ends the torn line first, so our entry stays a line of its own.
    reopened.append_message(user("next"))
    assert SessionTree.open(path).get_entries()[-1]["message"] == user("next")


def test_an_append_waits_for_a_line_another_writer_is_finishing(tmp_path: Path) -> None:
    # Our lock does not stop pi: when the file ends in half a line that a process holding it
    # open write-only is still writing, our append must not end that line with a newline of
    # its own (pi's rest would become a broken line of its own).
    path = tmp_path / "s.jsonl"
    tree = _two_line_session(path)
    line = _late_line(0, tree.get_entries()[-1]["id"]) + b"\n"
    late = open(path, "ab", buffering=0)  # noqa: SIM115 - closed by the thread

    def finish() -> None:
        time.sleep(0.05)
        late.write(line[25:])
        late.close()

    late.write(line[:25])
    finisher = threading.Thread(target=finish)
    finisher.start()
    try:
        tree.append_message(user("ours"))
    finally:
        finisher.join()
    reopened = SessionTree.open(path)
    assert reopened.report.clean, reopened.report.messages()
    assert _ids(path)[-2] == "c0000000"
    assert reopened.get_entries()[-1]["message"] == user("ours")
