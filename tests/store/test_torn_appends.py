"""A kill in the middle of our append cannot make pi's next line unreadable (issue 15 item 8).

pi appends with ``appendFileSync(path, json + "\\n")`` and never ends a torn line first. Had a
SIGKILL cut our append short, pi's next line would be glued onto our partial line and lost to
both readers. Our appends first reserve a blank line (spaces, then a newline) and then fill it
in with ``pwrite``, so a kill leaves either only whitespace unfinished, which a JSON parser
skips in front of pi's line, or a line that is already terminated.

The kill is simulated in-process: ``os.write`` / ``os.pwrite`` write part of their bytes and
raise, at every call an append makes and at several cut points. pi's side is a plain
``open(path, "a").write(line + "\\n")``; ``tests/differential/test_pi_torn_append.py`` has the
real pi 0.73.1 read the result.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextree.session.tree import SessionTree
from core_helpers import user
from torn_appends import CUTS, PI_TEXT, Injector, append_killed, pi_append, start_session


def _writes_of_one_append(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    path = tmp_path / "dry.jsonl"
    start_session(path)
    counter = Injector()
    append_killed(path, counter, monkeypatch)
    return counter.calls


def _kill_points(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, str]]:
    for call in range(1, _writes_of_one_append(tmp_path, monkeypatch) + 1):
        for name in CUTS:
            yield call, name


def test_a_killed_append_leaves_nothing_that_a_foreign_append_merges_into(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    points = list(_kill_points(tmp_path, monkeypatch))
    assert len(points) >= len(CUTS)
    failures = []
    for call, name in points:
        path = tmp_path / f"kill-{call}-{name.replace(' ', '-')}.jsonl"
        before = start_session(path)
        append_killed(path, Injector(call, CUTS[name]), monkeypatch)
        foreign = pi_append(path, before[-1])
        tree = SessionTree.open(path)
        where = f"killed at write {call}, {name} written"
        if not tree.has_entry(foreign):
            failures.append(f"{where}: the foreign entry is lost: {tree.report.messages()}")
        elif tree.get_entry(foreign)["message"]["content"] != PI_TEXT:
            failures.append(f"{where}: the foreign entry reads wrong")
        if not all(tree.has_entry(i) for i in before):
            failures.append(f"{where}: an earlier entry is lost")
        if len(tree.report.bad_lines) > 1:
            failures.append(f"{where}: {tree.report.messages()}")
        for bad in tree.report.bad_lines:
            if "interrupted" not in bad.reason:
                failures.append(f"{where}: the bad line is not called interrupted: {bad.reason}")
        # The session goes on: our next append lands as an entry of its own too.
        after = tree.append_message(user("after"))
        again = SessionTree.open(path)
        if not (again.has_entry(after) and again.has_entry(foreign)):
            failures.append(f"{where}: the next append did not land cleanly")
        for raw in path.read_bytes().split(b"\n"):
            if raw.strip():
                # Every line pi reads (JSON.parse skips leading whitespace) is one of ours, pi's
                # or the one interrupted line, which ends in its blank padding.
                try:
                    json.loads(raw)
                except ValueError:
                    if not raw.endswith(b" "):
                        failures.append(f"{where}: a bad line that is not padded: {raw[:60]!r}")
    assert not failures, "\n".join(failures)


def test_a_reserved_line_filled_in_after_an_unlocked_read_is_not_missed(tmp_path: Path) -> None:
    # Another process reads the file (without the lock) between our reservation and the fill:
    # it sees a blank line. Its next write must take in the entry that is there by then, not
    # skip it - a rewrite from its index would drop the line from the file.
    path = tmp_path / "s.jsonl"
    before = start_session(path)
    entry = {
        "type": "message",
        "id": "0ddba11a",
        "parentId": before[-1],
        "timestamp": "2026-01-01T00:10:00.000Z",
        "message": user("reserved, then filled in"),
    }
    line = json.dumps(entry).encode()
    with open(path, "ab") as handle:
        handle.write(b" " * len(line) + b"\n")
    offset = path.stat().st_size - len(line) - 1
    reader = SessionTree.open(path)
    assert not reader.has_entry("0ddba11a")
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, line, offset)
    finally:
        os.close(fd)
    first = reader.get_entries()[0]
    reader.rewrite_entries([{**first, "message": user("edited")}])
    assert reader.has_entry("0ddba11a")
    assert SessionTree.open(path).has_entry("0ddba11a")


def test_appends_are_whole_lines_at_the_end(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    start_session(path)
    tree = SessionTree.open(path)
    ids = [tree.append_message(user(f"message {n} " + "y" * (n * 97))) for n in range(30)]
    data = path.read_bytes()
    assert data.endswith(b"}\n")
    assert b"  " not in data  # every reserved line was filled in completely
    reread = SessionTree.open(path)
    assert reread.report.clean
    assert [e["id"] for e in reread.get_entries()][-30:] == ids
