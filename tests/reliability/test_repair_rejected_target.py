"""Issue 28 point 4: ``check --repair`` never adds rejected lines to another session.

Repairing ``X`` used to append to whatever ``X.rejected`` held - an unrelated session of that
name in SQLite or PostgreSQL, or a session file - which then failed ``check``. Now only a
rejected-lines log is added to; anything else makes the repair take ``X.rejected-2``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from contextree.session.check import check_session
from contextree.session.rejected_log import is_rejected_log
from contextree.session.repair import repair_session
from contextree.session.tree import SessionTree
from contextree.store.url import open_store
from reliability.test_repair import HEADER, NOT_JSON, NOW, STAMP, A, B

DAMAGED = b"\n".join([HEADER, A, NOT_JSON, B]) + b"\n"
OTHER = b'{"type":"session","version":3,"id":"other","timestamp":"t","cwd":"/w"}\n' + A + b"\n"


def _url(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if kind == "postgres":
        return f"{request.getfixturevalue('postgres').url}#{tmp_path.name}-X"
    return f"sqlite://{tmp_path}/s.db#X"


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_session_named_x_rejected_is_left_alone(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = _url(kind, tmp_path, request)
    with open_store(url).transaction() as txn:
        txn.replace(DAMAGED)
    with open_store(f"{url}.rejected").transaction() as txn:
        txn.replace(OTHER)
    report = repair_session(url, now=lambda: NOW)
    assert report.changed and report.rejected_file is not None
    assert str(report.rejected_file).endswith(".rejected-2")
    assert open_store(f"{url}.rejected").read() == OTHER
    assert not check_session(SessionTree.open(f"{url}.rejected", create=False)).damaged
    log = open_store(f"{url}.rejected-2").read()
    assert NOT_JSON in log.split(b"\n") and is_rejected_log(log)
    # A second repair adds to the log it made, not to the session.
    with open_store(url).transaction() as txn:
        txn.replace(DAMAGED.replace(b"dddddddd", b"d2d2d2d2"))
    again = repair_session(url, now=lambda: NOW)
    assert str(again.rejected_file).endswith(".rejected-2")
    assert open_store(f"{url}.rejected").read() == OTHER


def test_a_session_file_named_x_rejected_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(DAMAGED)
    squatter = tmp_path / "s.jsonl.rejected"
    squatter.write_bytes(OTHER)
    report = repair_session(path, now=lambda: NOW)
    assert report.rejected_file == tmp_path / "s.jsonl.rejected-2"
    assert squatter.read_bytes() == OTHER
    assert NOT_JSON in (tmp_path / "s.jsonl.rejected-2").read_bytes().split(b"\n")


@pytest.mark.parametrize(
    ("data", "is_log"),
    [
        (b"", True),
        (b"# contextree check --repair 2026: 1 line(s)\n# line 3: bad\n{junk\n", True),
        (b"# contextree check --repair 2026: 1 line(s)\n# line 3: bad\n{junk", True),
        (OTHER, False),
        (b"# contextree check --repair x\n" + OTHER, False),
        (b"# not ours\n", False),
    ],
)
def test_what_counts_as_a_rejected_lines_log(data: bytes, is_log: bool) -> None:
    assert is_rejected_log(data) is is_log


def test_a_dangling_symlink_named_x_rejected_is_not_followed(tmp_path: Path) -> None:
    """A symbolic link ``X.rejected`` pointing nowhere used to be written through: the
    rejected lines landed in the file it named, outside the session's folder."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(DAMAGED)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    planted = elsewhere / "planted.txt"
    (tmp_path / "s.jsonl.rejected").symlink_to(planted)
    report = repair_session(path, now=lambda: NOW)
    assert report.rejected_file == tmp_path / "s.jsonl.rejected-2"
    assert not planted.exists() and list(elsewhere.iterdir()) == []
    assert os.readlink(tmp_path / "s.jsonl.rejected") == str(planted)
    log = tmp_path / "s.jsonl.rejected-2"
    assert not log.is_symlink() and NOT_JSON in log.read_bytes().split(b"\n")


def test_a_symlink_to_a_rejected_lines_log_is_not_followed(tmp_path: Path) -> None:
    """Even a link to a genuine log elsewhere is not written through (nor replaced)."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(DAMAGED)
    other = tmp_path / "other"
    other.mkdir()
    foreign = other / "x.jsonl.rejected"
    foreign_log = b"# contextree check --repair 2026: 1 line(s)\n# line 3: bad\n{junk\n"
    foreign.write_bytes(foreign_log)
    (tmp_path / "s.jsonl.rejected").symlink_to(foreign)
    report = repair_session(path, now=lambda: NOW)
    assert report.rejected_file == tmp_path / "s.jsonl.rejected-2"
    assert foreign.read_bytes() == foreign_log and list(other.iterdir()) == [foreign]
    assert (tmp_path / "s.jsonl.rejected").is_symlink()


def test_every_rejected_name_taken_by_symlinks_or_directories_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(DAMAGED)
    (tmp_path / "s.jsonl.rejected").symlink_to(tmp_path / "nowhere-1")
    (tmp_path / "s.jsonl.rejected-2").mkdir()
    (tmp_path / "s.jsonl.rejected-3").symlink_to(tmp_path / "s.jsonl.rejected-2")
    report = repair_session(path, now=lambda: NOW)
    assert report.rejected_file == tmp_path / "s.jsonl.rejected-4"
    assert not (tmp_path / "nowhere-1").exists()
    assert list((tmp_path / "s.jsonl.rejected-2").iterdir()) == []
    # Run again on a freshly damaged copy: the log made the first time is added to.
    path.write_bytes(DAMAGED.replace(b"dddddddd", b"d2d2d2d2"))
    again = repair_session(path, now=lambda: NOW)
    assert again.rejected_file == tmp_path / "s.jsonl.rejected-4"
    assert b"d2d2d2d2" in (tmp_path / "s.jsonl.rejected-4").read_bytes()


def test_a_dangling_symlink_named_like_the_backup_is_not_followed(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(DAMAGED)
    planted = tmp_path / "elsewhere-bak"
    (tmp_path / f"s.jsonl.bak-{STAMP}").symlink_to(planted)
    report = repair_session(path, now=lambda: NOW)
    assert report.backup == tmp_path / f"s.jsonl.bak-{STAMP}-2"
    assert not planted.exists()
    assert (tmp_path / f"s.jsonl.bak-{STAMP}-2").read_bytes() == DAMAGED
