"""Issue 24 point 5: a session that is not there reads the same in every command, and says what
is missing - a directory given for a file, a database file that does not exist, a session name
that an existing database does not hold."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cli_env import invoke
from contextree.session.tree import SessionTree
from core_helpers import user

pytestmark = pytest.mark.usefixtures("clean_cli")


def _one_line(args: list[str | Path]) -> str:
    result = invoke(*args)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


def test_a_directory_given_as_a_session(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    url = f"sqlite://{tmp_path}/x.db#a"
    expected = f"error: {folder}: is a directory, not a session file"
    for args in (
        ["import", folder, url],
        ["check", "--repair", folder],
        ["check", folder],
        ["info", folder],
        ["compact", folder],
    ):
        assert _one_line(args) == expected, args
    assert not (tmp_path / "x.db").exists()


def test_a_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "none.jsonl"
    expected = f"error: {missing}: no such session file"
    for args in (["info", missing], ["check", "--repair", missing], ["import", missing, "x"]):
        assert _one_line(args) == expected, args


def test_a_missing_database_reads_the_same_as_in_sessions(tmp_path: Path) -> None:
    base = f"sqlite://{tmp_path}/nofile.db"
    assert _one_line(["sessions", base]) == f"error: {base}: no such SQLite database"
    for args in (
        ["info", f"{base}#x"],
        ["check", "--repair", f"{base}#x"],
        ["export", f"{base}#x", tmp_path / "out.jsonl"],
    ):
        assert _one_line(args) == f"error: {base}#x: no such SQLite database", args
    assert not (tmp_path / "nofile.db").exists()


def test_a_directory_given_as_a_database(tmp_path: Path) -> None:
    base = f"sqlite://{tmp_path}"
    said = "is a directory, not an SQLite database"
    assert _one_line(["sessions", base]) == f"error: {base}: {said}"
    assert _one_line(["info", f"{base}#x"]) == f"error: {base}#x: {said}"


def test_a_session_the_database_does_not_hold(tmp_path: Path) -> None:
    base = f"sqlite://{tmp_path}/s.db"
    SessionTree.open(f"{base}#one").append_message(user("hi"))
    line = _one_line(["info", f"{base}#two"])
    assert line == (
        f"error: {base}#two: no session 'two' in this database (contextree sessions {base} "
        "lists them)"
    )
    assert invoke("sessions", base).exit_code == 0


def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "n.db"
    path.write_bytes(b"not sqlite at all" * 100)
    assert _one_line(["sessions", f"sqlite://{path}"]).endswith("is not an SQLite database")
    assert sqlite3.sqlite_version  # the module under test is the standard one
