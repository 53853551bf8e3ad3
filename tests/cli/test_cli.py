"""The ``contextree`` command (typer's CliRunner; fixed width, no colour, a clean home).

``navigate`` is tested with the branching code; ``serve`` in ``tests/test_serve.py``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from cli_env import copy_pi_fixture as copy
from cli_env import invoke, ok
from contextree.context.convert import compaction_summary_text
from contextree.context.provider import MISSING_RESULT_TEXT
from contextree.session.tree import SessionTree
from core_helpers import Chain, assistant, header, jsonl, tool_call, tool_result, user
from pi_fixtures import pi_fixture
from provider_rules import anthropic_problems, openai_problems

FIXTURES = ["before-compaction.jsonl", "large-session.jsonl"]
COMMANDS = ["info", "tree", "context", "check", "compact", "prune", "navigate", "serve", "config"]


pytestmark = pytest.mark.usefixtures("clean_cli")


def squash(text: str) -> str:
    """Table text without borders and whitespace, so that wrapped cells read as one."""
    return re.sub(r"[\s│┃]", "", text)


def assert_one_line_error(result: Result, *fragments: str) -> None:
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
    assert result.stderr.count("\n") == 1 and result.stderr.endswith("\n")
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.stderr


def context_json(path: Path) -> Any:
    return json.loads(ok("context", path, "--format", "json").stdout)


# --- help ----------------------------------------------------------------------------------------


def test_every_command_has_help() -> None:
    listing = ok("--help").stdout
    for command in COMMANDS:
        assert command in listing
        assert ok(command, "--help").stdout.startswith("Usage: ")


# --- info, tree, context -------------------------------------------------------------------------


def test_info_on_before_compaction(tmp_path: Path) -> None:
    path = copy("before-compaction.jsonl", tmp_path)
    out = ok("info", path).stdout
    rows = {line.split("  ", 1)[0]: line.split("  ", 1)[1].strip() for line in out.splitlines()}
    assert rows["format version"] == "3 (file is v1; migrated in memory)"
    assert rows["entries"] == "1002 (5 thinking_level_change, 5 model_change, 2 compaction)"
    assert rows["messages"] == "484 assistant, 448 toolResult, 55 user, 3 bashExecution"
    assert rows["branches (leaves)"] == "1"
    assert rows["context"] == "446 messages, ~180,820 tokens"
    assert rows["problems"] == "none found on load (contextree check validates every entry)"
    assert path.read_bytes() == pi_fixture("before-compaction.jsonl").read_bytes()


def test_info_on_large_session(tmp_path: Path) -> None:
    out = ok("info", copy("large-session.jsonl", tmp_path)).stdout
    assert "914 messages" in out
    assert "anthropic/claude-sonnet-4-5" in out


def test_tree_marks_the_compactions_and_the_leaf(tmp_path: Path) -> None:
    path = copy("before-compaction.jsonl", tmp_path)
    out = ok("tree", path).stdout
    assert out.startswith("session ")
    assert out.count("[compaction]") == 2
    assert out.count("◀ leaf") == 1
    assert "more entries" in out  # long runs are folded
    full = ok("tree", path, "--fold", "0").stdout
    assert "more entries" not in full
    assert len(full.splitlines()) == 1 + 1002


@pytest.mark.parametrize("name", FIXTURES)
def test_context_text_and_json_agree(tmp_path: Path, name: str) -> None:
    path = copy(name, tmp_path)
    tree = SessionTree.open(path)
    expected = len(tree.build_session_context().messages)
    data = context_json(path)
    assert len(data["messages"]) == expected
    assert data["model"]["provider"] == "anthropic"
    text = ok("context", path).stdout
    assert text.startswith("── 1. ")
    assert f"── {expected}. " in text
    assert f"── {expected + 1}. " not in text
    assert f"{expected} messages, ~" in text.splitlines()[-1]


def test_context_of_before_compaction_starts_with_the_summary(tmp_path: Path) -> None:
    path = copy("before-compaction.jsonl", tmp_path)
    messages = context_json(path)["messages"]
    tree = SessionTree.open(path)
    compaction = next(e for e in reversed(tree.get_branch()) if e["type"] == "compaction")
    assert messages[0] == {
        "entryId": compaction["id"],
        "role": "user",
        "content": [{"type": "text", "text": compaction_summary_text(compaction["summary"])}],
        "timestamp": messages[0]["timestamp"],
    }


def test_context_at_another_leaf(tmp_path: Path) -> None:
    path = copy("large-session.jsonl", tmp_path)
    data = path.read_bytes()
    # A v1 file: its ids are derived on each load, the same each time (issue 11).
    third = SessionTree.open(path).get_entries()[2]["id"]
    messages = context_json(path)["messages"]
    at_third = json.loads(ok("context", path, "--leaf", third, "-f", "json").stdout)["messages"]
    assert at_third == messages[: len(at_third)]
    assert 1 <= len(at_third) <= 3
    assert_one_line_error(invoke("context", path, "--leaf", "zzzzzzzz"), "zzzzzzzz not found")
    assert path.read_bytes() == data  # no command needed to write the migration first


def test_ids_printed_for_a_v1_file_work_in_the_next_command(tmp_path: Path) -> None:
    path = copy("large-session.jsonl", tmp_path)
    data = path.read_bytes()

    def leaf_row() -> str:
        rows = [r for r in ok("info", path).stdout.splitlines() if r.strip("│ ").startswith("leaf")]
        assert len(rows) == 1
        return rows[0]

    assert leaf_row() == leaf_row()
    printed = re.findall(r"\b[0-9a-f]{8}\b", ok("tree", path, "--fold", "0").stdout)
    assert len(set(printed)) >= 1019 - 1
    chosen = printed[len(printed) // 2]
    messages = json.loads(ok("context", path, "--leaf", chosen, "-f", "json").stdout)["messages"]
    assert messages
    assert ok("compact", path, "--dry-run").stdout == ok("compact", path, "--dry-run").stdout
    assert path.read_bytes() == data


def _damaged_pairing_session(tmp_path: Path) -> Path:
    """An aborted reply with its placeholder result, a call left unanswered with a steering
    message after it, and an orphan result."""
    chain = Chain()
    chain.msg(user("read a"))
    chain.msg(assistant("", calls=[tool_call("c1", "read")], stop="aborted"))
    chain.msg(tool_result("c1", "aborted", name="read", isError=True))
    chain.msg(user("try again"))
    thinking = {"type": "thinking", "thinking": "plan", "thinkingSignature": "sig"}
    retry = assistant("Reading.", calls=[tool_call("c2", "read")])
    retry["content"].insert(0, thinking)
    chain.msg(retry)
    chain.msg(user("and b too"))
    chain.msg(tool_result("gone", "orphan", name="read"))
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(jsonl(header(), *chain.entries))
    return path


def test_context_openai_format_is_a_valid_request(tmp_path: Path) -> None:
    path = _damaged_pairing_session(tmp_path)
    # json stays pi's context: the aborted reply and the orphan are there.
    assert len(context_json(path)["messages"]) == 7
    messages = json.loads(ok("context", path, "--format", "openai").stdout)["messages"]
    assert openai_problems(messages) == []
    assert [m["role"] for m in messages] == ["user", "user", "assistant", "tool", "user"]
    assert messages[2] == {
        "role": "assistant",
        "content": "Reading.",
        "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        ],
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "c2", "content": MISSING_RESULT_TEXT}
    assert messages[4] == {"role": "user", "content": "and b too"}


def test_context_anthropic_format_is_a_valid_request(tmp_path: Path) -> None:
    path = _damaged_pairing_session(tmp_path)
    result = ok("context", path, "-f", "anthropic")
    messages = json.loads(result.stdout)["messages"]
    assert anthropic_problems(messages) == []
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"] == [
        {"type": "text", "text": "read a"},
        {"type": "text", "text": "try again"},
    ]
    assert [b["type"] for b in messages[1]["content"]] == ["thinking", "text", "tool_use"]
    assert messages[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "c2",
            "content": [{"type": "text", "text": MISSING_RESULT_TEXT}],
            "is_error": True,
        },
        {"type": "text", "text": "and b too"},
    ]


@pytest.mark.parametrize("name", FIXTURES)
def test_provider_formats_of_the_pi_fixtures_are_valid_requests(tmp_path: Path, name: str) -> None:
    path = copy(name, tmp_path)
    openai = json.loads(ok("context", path, "-f", "openai").stdout)["messages"]
    assert openai_problems(openai) == []
    anthropic = json.loads(ok("context", path, "-f", "anthropic").stdout)["messages"]
    assert anthropic_problems(anthropic) == []
    assert anthropic[0]["role"] == "user"


def test_text_from_the_session_cannot_drive_the_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chain = Chain()
    chain.msg(user("clear \x1b[2J the screen\x07\ttab\r\nnext line"))
    chain.msg(assistant("fine \x9b31m"))
    chain.add("session_info", name="\x1b[41mNAME")
    chain.add("label", targetId="e001", label="\x1b]0;title\x07mark")
    path = tmp_path / "s.jsonl"
    hostile = header(session_id="\x1b]0;PWNED\x07id", cwd="/w\x1b[2J")
    path.write_bytes(jsonl(hostile, *chain.entries))
    plain = ok("context", path).stdout
    assert "clear [2J the screen\ttab\nnext line" in plain
    assert "fine 31m" in plain
    tree = ok("tree", path).stdout
    # Message text loses its control characters; names, ids and labels show them escaped.
    assert "[41mNAME" in tree and "#\\x1b]0;title\\x07mark" in tree
    info = ok("info", path).stdout
    assert "\\x1b]0;PWNED\\x07id" in info
    sessions = ok("sessions", tmp_path).stdout
    for output in (plain, tree, info, sessions):
        assert not any(c in output for c in "\x1b\x07\r\x9b")
    # On a terminal rich renders it (and would pass ESC through): the same text goes in.
    from contextree.cli import context_render as render
    from contextree.context.convert import convert_to_llm

    messages = convert_to_llm(SessionTree.open(path).build_session_context().messages)
    assert render.context_text(messages).renderables[1].plain == (  # type: ignore[attr-defined]
        "clear [2J the screen\ttab\nnext line"
    )


# --- check ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", FIXTURES)
def test_check_passes_on_the_fixtures(tmp_path: Path, name: str) -> None:
    path = copy(name, tmp_path)
    out = ok("check", path).stdout
    assert out.splitlines()[-1].startswith("ok: no damage found")
    assert path.read_bytes() == pi_fixture(name).read_bytes()


def test_check_reports_a_bad_line_and_a_dangling_parent(tmp_path: Path) -> None:
    chain = Chain()
    chain.msg(user("hello"))
    chain.msg(assistant("hi"))
    orphan = chain.msg(user("lost"), parent="gone0000")
    chain.msg(assistant("still here"))
    lines = jsonl(header(), *chain.entries).split(b"\n")
    lines.insert(3, b'{"type": "message", "id": broken')
    path = tmp_path / "damaged.jsonl"
    path.write_bytes(b"\n".join(lines))
    before = path.read_bytes()

    result = invoke("check", path)

    assert result.exit_code == 1
    out = " ".join(result.stdout.split())  # undo the wrapping at 100 columns
    assert f"{path}:4: error: unreadable line skipped: not valid JSON" in out
    assert f"{path}:5: error: parent 'gone0000' does not exist (entry {orphan['id']})" in out
    assert out.endswith("damaged: 2 error(s), 0 warning(s)")
    assert path.read_bytes() == before


# --- compact -------------------------------------------------------------------------------------


def test_compact_dry_run_writes_nothing(tmp_path: Path) -> None:
    path = copy("before-compaction.jsonl", tmp_path)
    out = ok("compact", path, "--dry-run").stdout
    assert "Compaction plan (dry run: nothing written)" in out
    assert "split turn        yes, turn starts at index" in out
    assert "previous summary  yes (update prompt)" in out
    assert "boundary          path index 550 (previous compaction's first kept entry)" in out
    assert path.read_bytes() == pi_fixture("before-compaction.jsonl").read_bytes()


def test_compact_appends_exactly_one_compaction_line(tmp_path: Path) -> None:
    path = copy("before-compaction.jsonl", tmp_path)
    SessionTree.open(path).flush()  # write the v1 -> v3 migration first
    before = path.read_bytes()

    out = ok("compact", path, "--quiet").stdout

    after = path.read_bytes()
    assert after.startswith(before)
    (line,) = after[len(before) :].splitlines()
    entry = json.loads(line)
    assert entry["type"] == "compaction"
    assert entry["fromExtension"] is False and entry["fromHook"] is False
    rows = squash(out)
    assert f"compactionentry{entry['id']}" in rows
    assert f"firstkeptentry{entry['firstKeptEntryId']}" in rows
    assert "tokensbefore180,820" in rows
    assert "splitturnyes" in rows
    assert "## " not in out  # --quiet: no summary

    messages = context_json(path)["messages"]
    assert messages[0]["content"][0]["text"] == compaction_summary_text(entry["summary"])
    assert len(messages) < 446

    again = ok("compact", path)
    assert again.stdout == "Nothing to do: Already compacted.\n"
    assert path.read_bytes() == after


def test_compact_of_a_v1_file_migrates_it_and_adds_one_line(tmp_path: Path) -> None:
    path = copy("large-session.jsonl", tmp_path)
    lines_before = pi_fixture("large-session.jsonl").read_bytes().count(b"\n")
    out = ok("compact", path, "--instructions", "the theme work").stdout
    data = path.read_bytes()
    assert data.count(b"\n") == lines_before + 1
    assert json.loads(data.split(b"\n", 1)[0])["version"] == 3
    last = json.loads(data.splitlines()[-1])
    assert last["type"] == "compaction"
    assert "summary" in out  # the summary panel
    assert ok("check", path).stdout.splitlines()[-1].startswith("ok: no damage found")
    assert context_json(path)["messages"][0]["content"][0]["text"] == compaction_summary_text(
        last["summary"]
    )


def test_compact_a_session_too_small(tmp_path: Path) -> None:
    path = tmp_path / "small.jsonl"
    chain = Chain()
    chain.msg(user("hello"))
    chain.msg(assistant("hi"))
    path.write_bytes(jsonl(header(), *chain.entries))
    before = path.read_bytes()
    said = "Nothing to compact: with a keep budget of 20,000 tokens every message in the context"
    assert " ".join(ok("compact", path).stdout.split()).startswith(said)
    assert " ".join(ok("compact", path, "--dry-run").stdout.split()).startswith(said)
    assert path.read_bytes() == before


def test_compact_with_an_unknown_provider_is_a_one_line_error(tmp_path: Path) -> None:
    path = copy("large-session.jsonl", tmp_path)
    result = invoke("compact", path, "--model", "opnai:gpt-4o")
    assert_one_line_error(result, 'unknown provider "opnai"', 'did you mean "openai"?')
    assert path.read_bytes() == pi_fixture("large-session.jsonl").read_bytes()


# --- prune ---------------------------------------------------------------------------------------


def test_prune_dry_run_and_prune(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = copy("before-compaction.jsonl", tmp_path)
    original = pi_fixture("before-compaction.jsonl").read_bytes()
    # Without stale reads the default window (40k protected, 20k minimum) prunes nothing in
    # this context; its 44 stale reads lift the savings over the minimum, old outputs join.
    monkeypatch.setenv("CONTEXTREE_PRUNING_SUPERSEDED_READS", "false")
    assert ok("prune", path).stdout.startswith("Nothing to prune: pruning would save ~")
    assert path.read_bytes() == original
    monkeypatch.setenv("CONTEXTREE_PRUNING_SUPERSEDED_READS", "true")
    stale, _, report = ok("prune", path, "--dry-run").stdout.partition("\n")
    assert "The next 10 requests (est.)" in report  # the cost report (issue 30)
    assert re.fullmatch(
        r"would prune 78 tool result\(s\) \(44 superseded\), saving ~56,810 "
        r"tokens",
        stale,
    )
    monkeypatch.setenv("CONTEXTREE_PRUNING_PROTECT_TOKENS", "2000")
    monkeypatch.setenv("CONTEXTREE_PRUNING_MINIMUM_SAVINGS", "1000")

    dry = ok("prune", path, "--dry-run").stdout.partition("\n")[0]
    assert re.fullmatch(
        r"would prune (\d+) tool result\(s\) \(\d+ superseded\), saving ~[\d,]+ tokens", dry
    )
    assert path.read_bytes() == original
    count = int(dry.split()[2])

    out = ok("prune", path).stdout
    assert out.startswith(f"pruned {count} tool result(s)")
    assert "original outputs kept in the file (prunedContent)" in " ".join(out.split())

    old_lines = [json.loads(line) for line in original.splitlines()]
    new_lines = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert len(new_lines) == len(old_lines)  # rewritten in place, line for line
    assert new_lines[0]["version"] == 3
    pruned = 0
    for old, new in zip(old_lines[1:], new_lines[1:], strict=True):
        assert new["type"] == old["type"]
        message = new.get("message")
        if isinstance(message, dict) and "prunedAt" in message:
            pruned += 1
            assert message["role"] == "toolResult"
            assert message["prunedContent"] == old["message"]["content"]
            assert message["content"][0]["text"].startswith(
                ("[Output truncated - ", "[Output superseded - file ")
            )
        elif old["type"] == "message":
            assert message == old["message"]
    assert pruned == count
    assert ok("check", path).stdout.splitlines()[-1].startswith("ok: no damage found")
    assert ok("prune", path).stdout.startswith("Nothing to prune")


# --- config --------------------------------------------------------------------------------------


def test_config_shows_values_and_where_they_come_from(monkeypatch: pytest.MonkeyPatch) -> None:
    project = Path.cwd() / ".contextree"
    project.mkdir()
    (project / "settings.toml").write_text("[compaction]\nreserveTokens = 8000\n", "utf-8")
    monkeypatch.setenv("CONTEXTREE_COMPACTION_KEEP_RECENT_TOKENS", "12345")

    out = squash(ok("config").stdout)

    assert "compaction.reserveTokens8000" + str(project / "settings.toml") in out
    assert "compaction.keepRecentTokens12345envCONTEXTREE_COMPACTION_KEEP_RECENT_TOKENS" in out
    assert "compaction.enabledtruedefault" in out
    assert "modelunsetdefault" in out


def test_a_bad_setting_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTEXTREE_COMPACTION_RESERVE_TOKENS", "lots")
    result = invoke("config")
    assert_one_line_error(
        result, "CONTEXTREE_COMPACTION_RESERVE_TOKENS", "compaction.reserveTokens"
    )


# --- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["info", "tree", "context", "check", "compact", "prune"])
def test_a_missing_file_is_a_one_line_error(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "missing.jsonl"
    result = invoke(command, missing)
    assert_one_line_error(result, str(missing), "no such session file")
    assert not missing.exists()


@pytest.mark.parametrize("command", ["info", "tree", "context", "check", "compact", "prune"])
def test_a_file_without_a_header_is_a_one_line_error_and_left_alone(
    tmp_path: Path, command: str
) -> None:
    chain = Chain()
    chain.msg(user("hello"))
    chain.msg(assistant("hi"))
    path = tmp_path / "headless.jsonl"
    path.write_bytes(jsonl(*chain.entries))
    before = path.read_bytes()
    result = invoke(command, path)
    assert_one_line_error(result, "not a session file", "left unchanged")
    assert path.read_bytes() == before


def test_serve_refuses_a_public_address_without_a_token() -> None:
    result = invoke("serve", "--host", "0.0.0.0", "--port", "0")
    assert_one_line_error(result, "pass --token")


def test_serve_max_connections_reaches_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    import contextree.serve

    seen: list[Any] = []

    class Recorder:
        url = "http://127.0.0.1:1/summarize"

        def __init__(self, client: object, config: object, **options: object) -> None:
            seen.append(config)
            assert "redactor" in options  # serve redacts what reaches the model

        def serve_forever(self) -> None:
            raise KeyboardInterrupt

    monkeypatch.setattr(contextree.serve, "SummaryServer", Recorder)
    result = invoke("serve", "--port", "0", "--max-connections", "3")

    assert result.exit_code == 0, result.output
    assert seen[0].max_connections == 3
    assert invoke("serve", "--max-connections", "0").exit_code == 2


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    result = invoke("--debug", "info", tmp_path / "missing.jsonl")
    assert result.exit_code == 1
    assert result.exception is not None
    assert type(result.exception).__name__ == "SessionFileError"
