"""Issue 28 point 4: ``check --repair`` never adds rejected lines to another session.

Repairing ``X`` used to append to whatever ``X.rejected`` held - an unrelated session of that
name in SQLite or PostgreSQL, or a session file - which then failed ``check``. Now only a
rejected-lines log is added to; anything else makes the repair take ``X.rejected-2``."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextree.session.check import check_session
from contextree.session.rejected_log import is_rejected_log
from contextree.session.repair import repair_session
from contextree.session.tree import SessionTree
from contextree.store.url import open_store
from reliability.test_repair import HEADER, NOT_JSON, NOW, A, B

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
