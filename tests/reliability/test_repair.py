"""``contextree check --repair`` and ``repair_session``: back up first, reject bad lines
verbatim, replace atomically, report what only a person can decide."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from contextree.errors import SessionFileError
from contextree.session.repair import repair_session
from contextree.session.tree import SessionTree
from reliability.common import user
from reliability.fuzzing import run_cli

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
STAMP = "20260102T030405Z"


def _line(obj: dict[str, object]) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _entry(entry_id: str, parent: str | None, text: str, **extra: object) -> bytes:
    fields: dict[str, object] = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": user(text),
    }
    fields.update(extra)
    return _line(fields)


HEADER = _line({"type": "session", "version": 3, "id": "s", "timestamp": "t", "cwd": "/w"})
A = _entry("aaaaaaaa", None, "first")
B = _entry("bbbbbbbb", "aaaaaaaa", "second")
C = _entry("cccccccc", "bbbbbbbb", "third")
NOT_JSON = b'{"type":"message","id":"dddddddd",'
NO_TYPE = _line({"id": "eeeeeeee", "parentId": "cccccccc"})
BAD_UTF8 = _entry("ffffffff", "cccccccc", "caf").replace(b'"caf"', b'"caf\xe9"')
NO_MESSAGE = _line({"type": "message", "id": "gggggggg", "parentId": "cccccccc"})
ORPHAN = _entry("hhhhhhhh", "missing0", "orphan")
LABEL = _line(
    {"type": "label", "id": "iiiiiiii", "parentId": "cccccccc", "timestamp": "t", "targetId": "zz"}
)
DUPLICATE = _entry("bbbbbbbb", "aaaaaaaa", "second, again")


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _write(path: Path, *lines: bytes, end: bytes = b"\n") -> bytes:
    data = b"\n".join(lines) + end
    path.write_bytes(data)
    path.chmod(0o644)
    return data


@pytest.mark.usefixtures("umask_022")
def test_bad_lines_go_to_the_rejected_file_after_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = _write(path, b"garbage before", HEADER, A, NOT_JSON, B, b"", NO_TYPE, BAD_UTF8, C)
    report = repair_session(path, now=lambda: NOW)

    backup = tmp_path / f"s.jsonl.bak-{STAMP}"
    assert report.changed and report.backup == backup
    assert backup.read_bytes() == original
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    # A line with invalid UTF-8 is used (as pi reads it) and kept byte for byte.
    assert path.read_bytes() == b"\n".join([HEADER, A, B, BAD_UTF8, C]) + b"\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # the session keeps its own mode
    assert [r.line for r in report.rejected] == [1, 4, 7]
    assert report.blank_lines_dropped == 1
    rejected = report.rejected_file
    assert rejected == tmp_path / "s.jsonl.rejected"
    assert stat.S_IMODE(rejected.stat().st_mode) == 0o600
    lines = rejected.read_bytes().split(b"\n")
    assert lines[0].startswith(b"# contextree check --repair " + STAMP.encode())
    assert lines[1].startswith(b"# line 1: before the session header")
    assert lines[2] == b"garbage before"
    assert lines[3].startswith(b"# line 4: not valid JSON")
    assert lines[4] == NOT_JSON
    assert lines[6] == NO_TYPE and len(lines) == 8  # verbatim
    assert not report.damaged
    assert [(f.severity, f.line, f.entry_id) for f in report.findings] == [
        ("warning", 4, "ffffffff")
    ]
    assert "invalid UTF-8 read as U+FFFD" in report.findings[0].message
    assert SessionTree.open(path).report.clean


def test_dangling_references_and_duplicates_are_kept_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _write(path, HEADER, A, B, DUPLICATE, C, ORPHAN, LABEL, NO_MESSAGE)
    report = repair_session(path, now=lambda: NOW)
    assert [r.reason for r in report.rejected] == ['message entry has no "message" object']
    kept = path.read_bytes().split(b"\n")
    assert DUPLICATE in kept and ORPHAN in kept and LABEL in kept
    messages = "\n".join(report.messages())
    assert "duplicate id 'bbbbbbbb'" in messages
    assert "parent 'missing0' does not exist" in messages
    assert "label targets missing entry 'zz'" in messages
    assert report.damaged
    assert messages.endswith("repaired; the errors above need a decision by hand")


def test_a_clean_file_is_not_touched_and_gets_no_backup(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = _write(path, HEADER, A, B)
    report = repair_session(path, now=lambda: NOW)
    assert not report.changed and report.backup is None
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]
    assert report.messages()[-1].endswith("nothing to repair; the file was not changed")


def test_a_partial_last_line_is_rejected_and_a_complete_one_is_ended(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _write(path, HEADER, A, B[:20], end=b"")
    report = repair_session(path, now=lambda: NOW)
    assert [r.line for r in report.rejected] == [3]
    assert path.read_bytes() == HEADER + b"\n" + A + b"\n"
    other = tmp_path / "t.jsonl"
    _write(other, HEADER, A, end=b"")
    report = repair_session(other, now=lambda: NOW)
    assert report.last_line_terminated and not report.rejected
    assert other.read_bytes() == HEADER + b"\n" + A + b"\n"


def test_an_existing_backup_is_never_overwritten_and_rejects_accumulate(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    first = _write(path, HEADER, A, NOT_JSON)
    repair_session(path, now=lambda: NOW)
    second = _write(path, HEADER, A, NO_TYPE)
    report = repair_session(path, now=lambda: NOW)
    assert (tmp_path / f"s.jsonl.bak-{STAMP}").read_bytes() == first
    assert report.backup == tmp_path / f"s.jsonl.bak-{STAMP}-2"
    assert report.backup.read_bytes() == second
    rejected = (tmp_path / "s.jsonl.rejected").read_bytes().split(b"\n")
    assert NOT_JSON in rejected and NO_TYPE in rejected


def test_a_file_without_a_header_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = _write(path, b"not a session", A)
    with pytest.raises(SessionFileError, match="not a session file"):
        repair_session(path, now=lambda: NOW)
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_leftovers_of_interrupted_rewrites_are_removed(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _write(path, HEADER, A)
    stale = tmp_path / ".s.jsonl.0123abcd.tmp"
    stale.write_bytes(HEADER)
    unrelated = tmp_path / ".other.jsonl.0123abcd.tmp"
    unrelated.write_bytes(b"x")
    report = repair_session(path, now=lambda: NOW)
    assert report.stale_temp_files == [stale]
    assert not stale.exists() and unrelated.exists()


def test_a_writer_that_had_the_file_open_sees_the_repair_and_loses_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    _write(path, HEADER, A, NOT_JSON, B)
    writer = SessionTree.open(path)
    repair_session(path, now=lambda: NOW)
    new_id = writer.append_message(user("after the repair"))
    reopened = SessionTree.open(path)
    assert reopened.report.clean
    assert [r.id for r in reopened.records()] == ["aaaaaaaa", "bbbbbbbb", new_id]


def test_check_repair_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _write(path, HEADER, A, NOT_JSON, B)
    damaged = run_cli(["check", str(path)])
    assert damaged.exit_code == 1
    repaired = run_cli(["check", str(path), "--repair"])
    assert repaired.exit_code == 0, repaired.stdout + repaired.stderr
    assert f"{path}: original saved as {path}.bak-" in repaired.stdout
    assert f"{path}:3: moved to {path}.rejected: not valid JSON" in repaired.stdout
    assert repaired.stdout.rstrip().endswith(f"{path}: repaired")
    assert run_cli(["check", str(path)]).exit_code == 0
    again = run_cli(["check", str(path), "--repair"])
    assert again.exit_code == 0 and "nothing to repair" in again.stdout
    orphaned = tmp_path / "o.jsonl"
    _write(orphaned, HEADER, A, ORPHAN)
    assert run_cli(["check", str(orphaned), "--repair"]).exit_code == 1
    missing = run_cli(["check", str(tmp_path / "nope.jsonl"), "--repair"])
    assert missing.exit_code == 1 and missing.stderr.startswith("error: ")


def test_the_help_says_what_repair_does() -> None:
    text = " ".join(run_cli(["check", "--help"]).stdout.split())
    assert "Back up the file to <name>.bak-<time>" in text
    assert "<name>.rejected" in text


# -- a repair killed part-way, run again (issue 15 item 8) ----------------------------------------


class _Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs."""


def _kill_at_rename_to(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """Kill the repair as it renames (or, for a new ``.rejected``, hard-links) onto ``target``."""
    real_replace, real_link = os.replace, os.link

    def replace(src: str | Path, dst: str | Path) -> None:
        if Path(dst) == target:
            raise _Killed
        real_replace(src, dst)

    def link(src: str | Path, dst: str | Path, **options: Any) -> None:
        if Path(dst) == target:
            raise _Killed
        real_link(src, dst, **options)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "link", link)


def _rejected_once(path: Path, *lines: bytes) -> bytes:
    rejected = path.with_name(f"{path.name}.rejected").read_bytes()
    held = rejected.split(b"\n")
    for line in lines:
        assert held.count(line) == 1, (line, rejected)
    return rejected


@pytest.mark.parametrize("killed_at", ["session", "rejected"])
def test_a_repair_killed_before_its_renames_sets_each_line_aside_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, killed_at: str
) -> None:
    # Killed after .rejected was written but before the session was renamed (or while
    # .rejected itself was being replaced): the session still holds the bad lines, and the
    # repair run again must not set them aside a second time.
    path = tmp_path / "s.jsonl"
    original = _write(path, HEADER, A, NOT_JSON, B, NO_TYPE, C)
    rejected_file = tmp_path / "s.jsonl.rejected"
    with monkeypatch.context() as patch:
        _kill_at_rename_to(patch, path if killed_at == "session" else rejected_file)
        with pytest.raises(_Killed):
            repair_session(path, now=lambda: NOW)
    assert path.read_bytes() == original
    assert rejected_file.exists() == (killed_at == "session")
    report = repair_session(path, now=lambda: NOW)
    assert report.changed and [r.line for r in report.rejected] == [3, 5]
    assert path.read_bytes() == b"\n".join([HEADER, A, B, C]) + b"\n"
    rejected = _rejected_once(path, NOT_JSON, NO_TYPE)
    assert rejected.count(b"# contextree check --repair") == 1
    assert report.rejected_file == rejected_file
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp"))
    assert leftovers == []  # the killed run's temporary copy was removed
    assert report.stale_temp_files  # and reported


def test_a_repair_run_again_on_a_database_session_sets_each_line_aside_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contextree.store.rowstore import _RowTransaction
    from contextree.store.url import open_store

    url = f"sqlite:///{tmp_path / 'sessions.db'}#s"
    data = b"\n".join([HEADER, A, NOT_JSON, B, NO_TYPE, C]) + b"\n"
    with open_store(url).transaction() as txn:
        txn.replace(data)
    real_replace = _RowTransaction.replace

    def replace(self: _RowTransaction, new: bytes) -> None:
        if new != data and b"# contextree" not in new and new.startswith(HEADER):
            raise _Killed  # the session's own replacement: the backup is written before it
        real_replace(self, new)

    with monkeypatch.context() as patch:
        patch.setattr(_RowTransaction, "replace", replace)
        with pytest.raises(_Killed):
            repair_session(url, now=lambda: NOW)
    assert open_store(url).read() == data
    report = repair_session(url, now=lambda: NOW)
    assert report.changed
    rejected = open_store(f"{url}.rejected").read().split(b"\n")
    assert rejected.count(NOT_JSON) == 1 and rejected.count(NO_TYPE) == 1
