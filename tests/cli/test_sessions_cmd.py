"""``contextree sessions``: listing session files (and ``contextree.session.listing`` below it).

Files are built with ``SessionTree`` or as raw JSONL in temporary folders; ``CONTEXTREE_HOME``
points into ``tmp_path``, so the default and ``--all`` folders are isolated too.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_env import clean_cli_env, invoke, ok, reset_consoles
from contextree.entries.codec import LineError
from contextree.session.listing import (
    SessionSummary,
    list_sessions,
    session_files,
    summarize_session_file,
)
from contextree.session.paths import new_session_path, sessions_dir, sessions_root
from contextree.session.tree import SessionTree
from pi_fixtures import pi_fixture

BASE = 1_767_225_600  # 2026-01-01T00:00:00Z


@pytest.fixture(autouse=True)
def clean_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    yield clean_cli_env(tmp_path, monkeypatch)
    reset_consoles()


def listed(*args: str | Path) -> list[dict[str, Any]]:
    """The ``--format json`` listing."""
    payload = json.loads(ok("sessions", *args, "--format", "json").stdout)
    assert isinstance(payload, list)
    return payload


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}


def assistant(text: str = "ok") -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "timestamp": 0}


def make_session(
    path: Path,
    *,
    first: str | list[dict[str, Any]] = "hello",
    name: str | None = None,
    turns: int = 1,
    mtime: float | None = None,
    session_id: str | None = None,
) -> SessionTree:
    """A session of ``turns`` user/assistant pairs, named ``name`` when given."""
    tree = SessionTree.open(path, cwd="/work/project", session_id=session_id)
    tree.append_message({"role": "user", "content": first, "timestamp": 0})
    tree.append_message(assistant())
    for turn in range(1, turns):
        tree.append_message(user(f"turn {turn}"))
        tree.append_message(assistant())
    if name is not None:
        tree.append_session_info(name)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return tree


def header_line(session_id: str = "11111111-2222-7333-8444-555555555555", **extra: Any) -> str:
    header = {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/work/project",
        **extra,
    }
    return json.dumps(header)


def entry_line(entry_id: str, parent: str | None, kind: str, **fields: Any) -> str:
    entry = {
        "type": kind,
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        **fields,
    }
    return json.dumps(entry)


def rows(output: str) -> list[str]:
    """The first line of each listed session (they start with the modified date)."""
    return [line for line in output.splitlines() if re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d ", line)]


# --- the command -------------------------------------------------------------------------------


def test_help_describes_the_command() -> None:
    listing = ok("--help").stdout
    assert "sessions" in listing
    text = ok("sessions", "--help").stdout
    assert text.startswith("Usage: contextree sessions [OPTIONS] [DIR]")
    for option in ("--all", "--limit", "--format"):
        assert option in text


def test_lists_this_directorys_sessions_newest_first(clean_cli: Path) -> None:
    folder = sessions_dir(clean_cli)
    folder.mkdir(parents=True)
    for number, (text, age) in enumerate([("oldest", 0), ("newest", 200), ("middle", 100)]):
        make_session(folder / f"s{number}.jsonl", first=text, mtime=BASE + age)
    output = ok("sessions").stdout
    assert f"Sessions in {folder}: 3, newest first" in output
    assert [line.split()[-1] for line in rows(output)] == ["newest", "middle", "oldest"]
    # One folder: file names, not paths.
    assert "  s1.jsonl" in output and str(folder / "s1.jsonl") not in output
    assert [Path(item["path"]).name for item in listed()] == ["s1.jsonl", "s2.jsonl", "s0.jsonl"]


def test_name_is_the_latest_session_info_and_an_empty_one_clears_it(tmp_path: Path) -> None:
    named = make_session(tmp_path / "named.jsonl", name="first name", mtime=BASE + 3)
    named.append_session_info("  the final name  ")
    os.utime(named.path, (BASE + 3, BASE + 3))  # type: ignore[arg-type]
    cleared = make_session(tmp_path / "cleared.jsonl", name="was named", mtime=BASE + 2)
    cleared.append_session_info("")
    os.utime(tmp_path / "cleared.jsonl", (BASE + 2, BASE + 2))
    make_session(tmp_path / "renamed.jsonl", name="old", mtime=BASE + 1).append_session_info("new")
    os.utime(tmp_path / "renamed.jsonl", (BASE + 1, BASE + 1))
    make_session(tmp_path / "never.jsonl", mtime=BASE)
    names = {Path(item["path"]).name: item["name"] for item in listed(tmp_path)}
    assert names == {
        "named.jsonl": "the final name",
        "cleared.jsonl": None,
        "renamed.jsonl": "new",
        "never.jsonl": None,
    }
    output = ok("sessions", tmp_path).stdout
    assert "the final name · hello" in output
    assert "was named" not in output


def test_first_user_message_preview_from_string_and_block_content(tmp_path: Path) -> None:
    long_text = "please refactor   the parser\nand then " + "run every test " * 10
    make_session(tmp_path / "string.jsonl", first=long_text, mtime=BASE + 2)
    make_session(
        tmp_path / "blocks.jsonl",
        first=[
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "text", "text": "what is"},
            {"type": "text", "text": "in this picture?"},
        ],
        mtime=BASE + 1,
    )
    # The first message is the assistant's; the first user message comes later.
    later = SessionTree.open(tmp_path / "later.jsonl", cwd="/w")
    later.append_custom("note", {"message": "not a message entry"})
    later.append_message(assistant("I start"))
    # pi's session list passes by a user message without text (an image only).
    image_only = [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]
    later.append_message({"role": "user", "content": image_only, "timestamp": 0})
    later.append_message(user("then the user speaks"))
    later.append_message(user("and again"))
    os.utime(tmp_path / "later.jsonl", (BASE, BASE))
    nothing = SessionTree.open(tmp_path / "nothing.jsonl", cwd="/w")
    nothing.append_message(assistant("only me"))
    os.utime(tmp_path / "nothing.jsonl", (BASE - 1, BASE - 1))

    first = {Path(item["path"]).name: item["firstMessage"] for item in listed(tmp_path)}
    assert first["string.jsonl"].startswith("please refactor the parser and then run every test")
    assert "\n" not in first["string.jsonl"]
    assert first["blocks.jsonl"] == "what is in this picture?"
    assert first["later.jsonl"] == "then the user speaks"
    assert first["nothing.jsonl"] is None

    lines = rows(ok("sessions", tmp_path).stdout)
    preview = lines[0].split("B  ", 1)[1]
    assert preview.startswith("please refactor the parser and then run")
    assert preview.endswith("…") and len(preview) == 60
    assert lines[1].endswith("what is in this picture?")
    assert lines[3].endswith("  -")


def test_limit_shows_the_newest(tmp_path: Path) -> None:
    for number in range(5):
        make_session(tmp_path / f"s{number}.jsonl", first=f"session {number}", mtime=BASE + number)
    output = ok("sessions", tmp_path, "--limit", "2").stdout
    assert "2 of 5, newest first (--limit 0 shows all)" in output
    assert [line.split()[-1] for line in rows(output)] == ["4", "3"]
    assert len(rows(ok("sessions", tmp_path, "--limit", "0").stdout)) == 5
    assert len(listed(tmp_path, "-n", "3")) == 3
    assert invoke("sessions", tmp_path, "--limit", "-1").exit_code == 2


def test_default_limit_is_twenty(tmp_path: Path) -> None:
    for number in range(23):
        (tmp_path / f"s{number:02}.jsonl").write_text(header_line() + "\n")
    assert len(listed(tmp_path)) == 20
    assert len(listed(tmp_path, "--limit", "0")) == 23


def test_all_lists_every_folder_under_the_home(clean_cli: Path, tmp_path: Path) -> None:
    here = new_session_path(clean_cli, "0194c3a0-0000-7000-8000-000000000001")
    there = new_session_path(Path("/somewhere/else"), "0194c3a0-0000-7000-8000-000000000002")
    here.parent.mkdir(parents=True)
    there.parent.mkdir(parents=True)
    make_session(here, first="in this project", mtime=BASE + 1)
    make_session(there, first="in another project", mtime=BASE + 2)
    assert here.parent != there.parent and here.parent.parent == there.parent.parent

    # Without --all: only this directory's folder.
    assert [item["path"] for item in listed()] == [str(here)]
    output = ok("sessions", "--all").stdout
    assert f"Sessions under {sessions_root()}: 2, newest first" in output
    assert [line.split("B  ", 1)[1] for line in rows(output)] == [
        "in another project",
        "in this project",
    ]
    # Several folders: whole paths (folded, never cut).
    squashed = re.sub(r"\s", "", output)
    assert str(there) in squashed and str(here) in squashed
    assert [item["path"] for item in listed("--all")] == [str(there), str(here)]


def test_all_with_a_dir_lists_the_folders_inside_it(tmp_path: Path) -> None:
    pi_root = tmp_path / ".pi" / "agent" / "sessions"
    for slug, stamp in (("--work--", BASE), ("--home-me--", BASE + 5)):
        (pi_root / slug).mkdir(parents=True)
        make_session(pi_root / slug / f"2026-01-01T00-00-00-000Z_{slug}.jsonl", mtime=stamp)
    (pi_root / "--empty--").mkdir()
    names = [Path(item["path"]).parent.name for item in listed(pi_root, "--all")]
    assert names == ["--home-me--", "--work--"]
    assert listed(pi_root) == []  # the root itself holds no session files


def test_dir_argument_lists_pi_named_files(tmp_path: Path) -> None:
    folder = tmp_path / "pi" / "--work--"
    folder.mkdir(parents=True)
    session_id = "0194c3a0-aaaa-7000-8000-000000000009"
    path = folder / f"2026-01-01T10-00-00-000Z_{session_id}.jsonl"
    make_session(path, first="from pi", name="pi session", session_id=session_id, mtime=BASE)
    (folder / "notes.txt").write_text("not listed")
    output = ok("sessions", folder).stdout
    assert f"Sessions in {folder}: 1, newest first" in output
    assert f"  {path.name}" in output
    assert "pi session · from pi" in output
    assert "notes.txt" not in output
    # The id is in the file name, so it is not repeated; a file named otherwise shows it.
    assert f"id {session_id}" not in output
    path.rename(folder / "renamed.jsonl")
    assert f"renamed.jsonl  id {session_id}" in ok("sessions", folder).stdout


def test_json_fields(tmp_path: Path) -> None:
    session_id = "0194c3a0-bbbb-7000-8000-000000000001"
    path = tmp_path / "one.jsonl"
    make_session(path, first="hi there", name="json", turns=2, session_id=session_id, mtime=BASE)
    result = ok("sessions", tmp_path, "--format", "json")
    assert result.stderr == ""
    (item,) = json.loads(result.stdout)
    assert set(item) == {
        "path",
        "id",
        "name",
        "modified",
        "entries",
        "bytes",
        "firstMessage",
        "cwd",
        "problem",
    }
    assert item["path"] == str(path)
    assert item["id"] == session_id
    assert item["name"] == "json"
    assert item["entries"] == 5
    assert item["bytes"] == path.stat().st_size
    assert item["firstMessage"] == "hi there"
    assert item["cwd"] == "/work/project"
    assert item["problem"] is None
    from datetime import datetime

    modified = datetime.fromisoformat(item["modified"])
    assert modified.tzinfo is not None and modified.timestamp() == BASE


def test_broken_files_are_listed_with_a_note(tmp_path: Path) -> None:
    make_session(tmp_path / "good.jsonl", first="still listed", mtime=BASE)
    (tmp_path / "garbage.jsonl").write_bytes(b"\xff\xfe not json at all\n")
    (tmp_path / "other.jsonl").write_text('{"type": "message", "id": "a"}\n')
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "folder.jsonl").mkdir()
    (tmp_path / "future.jsonl").write_text(header_line(version=99) + "\n")
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "missing")
    for number, name in enumerate(
        ["garbage", "other", "empty", "folder", "future", "dangling"], start=1
    ):
        if name != "dangling":
            os.utime(tmp_path / f"{name}.jsonl", (BASE + number, BASE + number))
    result = ok("sessions", tmp_path)
    assert result.stderr == ""
    output = result.stdout
    assert "still listed" in output
    problems = {Path(item["path"]).name: item["problem"] for item in listed(tmp_path)}
    assert problems["good.jsonl"] is None
    assert problems["garbage.jsonl"] == "not a session file: no valid session header"
    assert problems["other.jsonl"].startswith(
        'not a session file: expected a session header (type "session"), found type'
    )
    assert problems["empty.jsonl"] == "not a session file: the file is empty"
    assert problems["folder.jsonl"] == "not a session file: is a directory"
    assert "version 99 is newer" in problems["future.jsonl"]
    assert problems["dangling.jsonl"].startswith("not a session file: cannot be read")
    for problem in problems.values():
        if problem:
            assert problem in re.sub(r"\s+", " ", output)


def test_missing_dir_is_a_one_line_error(tmp_path: Path) -> None:
    for args in ([tmp_path / "nope"], [tmp_path / "nope", "--format", "json"]):
        result = invoke("sessions", *args)
        assert result.exit_code == 1
        assert result.stdout == ""
        assert result.stderr == f"error: {tmp_path / 'nope'}: no such directory\n"
    afile = tmp_path / "a.jsonl"
    make_session(afile)
    result = invoke("sessions", afile)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {afile}: not a directory")
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.output


def test_nothing_to_list_is_a_friendly_line(clean_cli: Path, tmp_path: Path) -> None:
    result = ok("sessions")
    assert result.stdout == (
        f"No sessions for this directory yet (looked in {sessions_dir(clean_cli)}).\n"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    assert ok("sessions", empty).stdout == f"No session files in {empty}.\n"
    assert ok("sessions", "--all").stdout == f"No session files under {sessions_root()}.\n"
    assert listed(empty) == []


def test_names_and_messages_are_shown_literally(tmp_path: Path) -> None:
    make_session(tmp_path / "x.jsonl", first="[bold]not markup[/] \x1b[31mred", name="[red]n[/]")
    output = ok("sessions", tmp_path).stdout
    assert "[red]n[/] · [bold]not markup[/]" in output
    assert "\x1b" not in output


# --- the listing, without the CLI ---------------------------------------------------------------


def test_does_not_decode_every_entry(tmp_path: Path) -> None:
    """An entry in the middle that cannot be decoded (a number out of range) does not stop the
    listing."""
    lines = [
        header_line().encode(),
        entry_line("a1", None, "message", message=user("the question")).encode(),
        entry_line("a2", "a1", "session_info", name="before").encode(),
        b'{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:02.000Z",'
        b'"message":{"role":"assistant","content":[{"type":"text","text":"big"}],"n":1e400}}',
        entry_line("a4", "a3", "session_info", name="after").encode(),
        entry_line("a5", "a4", "message", message=assistant()).encode(),
    ]
    path = tmp_path / "bad-middle.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    tree = SessionTree.open(path, create=False)
    with pytest.raises(LineError):
        tree.get_entries()  # decoding every entry fails ...
    summary = summarize_session_file(path)  # ... the summary never decodes that one
    assert summary.problem is None
    assert (summary.name, summary.first_message, summary.entries) == ("after", "the question", 5)
    assert "after · the question" in ok("sessions", tmp_path).stdout


def test_invalid_utf8_in_the_name_and_first_message_reads_as_pi_reads_it(tmp_path: Path) -> None:
    lines = [
        header_line().encode(),
        entry_line("a1", None, "message", message=user("caf@ question")).encode(),
        entry_line("a2", "a1", "session_info", name="n@me").encode(),
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines).replace(b"@", b"\xe9") + b"\n")
    summary = summarize_session_file(path)
    assert summary.problem is None
    assert (summary.name, summary.first_message) == ("n\ufffdme", "caf\ufffd question")


def test_damaged_session_info_lines_are_skipped(tmp_path: Path) -> None:
    lines = [
        header_line(),
        entry_line("a1", None, "session_info", name="good name"),
        entry_line("a2", "a1", "message", message=user('says "session_info" and session_info')),
        '{"type":"session_info","id":"a3","name":"torn',  # an interrupted write
        entry_line("a4", "a1", "custom", customType="x", data={"session_info": "a key"}),
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines))  # no final newline either
    summary = summarize_session_file(path)
    assert summary.name == "good name"
    assert summary.first_message == 'says "session_info" and session_info'
    assert summary.entries == 3  # the torn line is skipped by a load, so not counted (issue 12)


def test_entry_count_skips_blank_lines(tmp_path: Path) -> None:
    body = [
        entry_line("a1", None, "message", message=user("one")),
        "",
        "   ",
        entry_line("a2", "a1", "message", message=assistant()),
        "\t\r",
        " " + entry_line("a3", "a2", "message", message=user("indented")),
    ]
    path = tmp_path / "blank.jsonl"
    path.write_text("\n" + header_line() + "\n" + "\n".join(body) + "\n\n")
    assert summarize_session_file(path).entries == 3 == len(SessionTree.open(path))
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert summarize_session_file(crlf).entries == 3


def test_header_only_session(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text(header_line())
    summary = summarize_session_file(path)
    assert (summary.entries, summary.name, summary.first_message) == (0, None, None)
    assert summary.id == "11111111-2222-7333-8444-555555555555"


def _tree_name(tree: SessionTree) -> str | None:
    """The name as ``contextree info`` finds it: the last session_info entry's name."""
    names = [record.entry.get("name") for record in tree.records() if record.type == "session_info"]
    return str(names[-1]).strip() or None if names and names[-1] else None


def _tree_first_user_text(tree: SessionTree) -> str | None:
    for entry in tree.get_entries():
        message = entry.get("message")
        if (
            entry.get("type") == "message"
            and isinstance(message, dict)
            and message.get("role") == "user"
        ):
            content = message.get("content")
            if isinstance(content, str):
                return " ".join(content.split())
            texts = [b["text"] for b in content if b.get("type") == "text"]
            return " ".join(" ".join(texts).split())
    return None


def test_summary_matches_the_session_tree(tmp_path: Path) -> None:
    path = tmp_path / "normal.jsonl"
    tree = make_session(path, first="the start", name="alpha", turns=4)
    tree.branch(tree.get_entries()[1]["id"])
    tree.append_message(user("a branch"))
    tree.append_session_info("beta")
    tree.append_label(str(tree.leaf_id), "mark")
    summary = summarize_session_file(path)
    fresh = SessionTree.open(path, create=False)
    assert summary.entries == len(fresh)
    assert summary.name == _tree_name(fresh) == "beta"
    assert summary.id == fresh.session_id
    assert summary.first_message == _tree_first_user_text(fresh) == "the start"
    assert summary.size == path.stat().st_size


@pytest.mark.parametrize("name", ["before-compaction.jsonl", "large-session.jsonl"])
def test_summary_matches_the_session_tree_on_pi_files(name: str) -> None:
    path = pi_fixture(name)
    summary = summarize_session_file(path, preview_chars=10_000)
    tree = SessionTree.open(path, create=False)
    assert summary.problem is None
    assert summary.entries == len(tree)
    assert summary.name == _tree_name(tree)
    assert summary.id == tree.session_id
    assert summary.first_message == _tree_first_user_text(tree)


def test_list_sessions_reads_only_the_files_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for number in range(4):
        make_session(tmp_path / f"s{number}.jsonl", mtime=BASE + number)
    read: list[str] = []
    real = Path.read_bytes

    def spy(self: Path) -> bytes:
        read.append(self.name)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", spy)
    summaries = list_sessions(session_files(tmp_path), limit=2)
    assert [s.path.name for s in summaries] == ["s3.jsonl", "s2.jsonl"]
    assert sorted(read) == ["s2.jsonl", "s3.jsonl"]
    assert all(isinstance(s, SessionSummary) for s in summaries)
    assert len(list_sessions(session_files(tmp_path), limit=0)) == 4


def test_a_session_line_fits_the_terminal_but_paths_are_never_cut(tmp_path: Path) -> None:
    folder = tmp_path / ("deep-" * 20)
    folder.mkdir()
    make_session(folder / "s.jsonl", first="word " * 40, name="a rather long session name " * 3)
    output = ok("sessions", folder).stdout
    (line,) = rows(output)
    assert len(line) == 100 and line.endswith("…")
    assert f"Sessions in {folder}: 1, newest first\n" in output  # whole, on one line
