"""The commands on a session with one invalid UTF-8 byte inside a message's text (issue 11).

Every command works on it as pi does (the byte reads as U+FFFD), says which line it was, and
leaves the line's bytes as they are, through appends and repairs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_env import invoke, ok
from core_helpers import Chain, assistant, header, jsonl, user

WARNING = "invalid UTF-8 read as U+FFFD (as pi reads it); the line is kept byte for byte"


pytestmark = pytest.mark.usefixtures("clean_cli")


def _session(tmp_path: Path) -> tuple[Path, bytes]:
    """Five entries; line 3 (entry e002, in the context) says "caf\\xe9" in Latin-1."""
    chain = Chain()
    chain.msg(user("first question"))
    chain.msg(assistant("caf@ au lait"))
    chain.msg(user("second question"))
    chain.msg(assistant("second answer"))
    chain.msg(user("third question"))
    data = jsonl(header(), *chain.entries).replace(b"@", b"\xe9")
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    return path, data


def test_info_works_and_names_the_line(tmp_path: Path) -> None:
    path, data = _session(tmp_path)
    result = ok("info", path)
    assert f"warning: {path}:3: {WARNING}" in result.stderr.replace("\n", " ")
    assert "1 (run contextree check)" in result.stdout
    assert "5 messages" in result.stdout
    assert path.read_bytes() == data


def test_context_shows_the_replacement_character(tmp_path: Path) -> None:
    path, data = _session(tmp_path)
    text = ok("context", path)
    assert "caf\ufffd au lait" in text.stdout
    assert f"{path}:3: invalid UTF-8" in text.stderr
    as_json = json.loads(ok("context", path, "--format", "json").stdout)
    assert as_json["messages"][1]["content"][0]["text"] == "caf\ufffd au lait"
    assert path.read_bytes() == data


def test_tree_works(tmp_path: Path) -> None:
    path, _ = _session(tmp_path)
    out = ok("tree", path, "--fold", "0").stdout
    assert "e002" in out and "◀ leaf" in out


def test_check_reports_a_warning_and_exits_0(tmp_path: Path) -> None:
    path, data = _session(tmp_path)
    result = ok("check", path)
    flat = " ".join(result.stdout.split())
    assert f"{path}:3: warning: {WARNING} (entry e002)" in flat
    assert result.stdout.splitlines()[-1] == "ok: no damage found (1 warning(s))"
    assert path.read_bytes() == data


def test_check_repair_changes_nothing_and_rejects_nothing(tmp_path: Path) -> None:
    path, data = _session(tmp_path)
    result = ok("check", path, "--repair")
    assert "nothing to repair; the file was not changed" in result.stdout
    assert f"{path}:3: warning: {WARNING}" in result.stdout
    assert path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["s.jsonl"]


def test_check_repair_of_other_damage_keeps_the_line_and_orphans_nothing(tmp_path: Path) -> None:
    path, data = _session(tmp_path)
    lines = data.split(b"\n")
    path.write_bytes(b"\n".join([*lines[:3], b"not json", *lines[3:]]))
    result = ok("check", path, "--repair")
    assert f"{path}:4: moved to" in result.stdout
    assert path.read_bytes() == data  # only the junk line went; the bad byte's line stayed
    rejected = (tmp_path / "s.jsonl.rejected").read_bytes()
    assert b"not json" in rejected and b"\xe9" not in rejected
    assert "parent" not in result.stdout  # no entry lost its parent
    assert ok("check", path).stdout.splitlines()[-1] == "ok: no damage found (1 warning(s))"


def test_appends_afterwards_keep_the_line_byte_for_byte(tmp_path: Path) -> None:
    path, data = _session(tmp_path)
    ok("navigate", path, "e002")  # appends a contextree.leaf entry there
    after_move = path.read_bytes()
    assert after_move.startswith(data) and after_move.count(b"\n") == data.count(b"\n") + 1
    ok("compact", path, "--keep-recent", "1", "--quiet")
    after = path.read_bytes()
    assert after.startswith(after_move)
    assert json.loads(after.split(b"\n")[-2])["type"] == "compaction"
    assert after.split(b"\n")[2] == data.split(b"\n")[2]
    assert invoke("check", path).exit_code == 0
