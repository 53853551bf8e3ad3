"""A value a damaged file lacks (a message entry without a message, a null summary) is shown
with a placeholder that says so, never as Python's "None" (``info`` used to print
``2 None`` and ``"messageRoles": {"None": 2}``, ``tree`` ``[compaction] None``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_env import invoke
from core_helpers import Chain, assistant, header, jsonl, user

pytestmark = pytest.mark.usefixtures("clean_cli")


def _session(path: Path) -> Path:
    chain = Chain()
    chain.msg(user("hello"))
    chain.add("message")  # no message object
    chain.add("message", message=None)
    chain.msg({"role": 5, "content": "x"})  # a role that is not a string
    chain.msg({"role": None, "content": "y"})
    chain.msg(assistant("hi"))
    chain.add("compaction", summary=None, firstKeptEntryId="e006", tokensBefore=10)
    chain.add("branch_summary", fromId="e007", summary=None)
    chain.add("thinking_level_change", thinkingLevel=None)  # oh-my-pi's "off"
    chain.add("model_change", model=None)
    chain.add("label", targetId="e001", label=None)
    chain.add("session_info", name=None)
    chain.msg({"role": "bashExecution", "command": None, "output": "", "timestamp": 0})
    chain.msg(
        assistant("", calls=[{"type": "toolCall", "id": "c1", "name": None, "arguments": {}}])
    )
    chain.msg({"role": "toolResult", "toolCallId": "c1", "content": [], "timestamp": 0})
    chain.msg(user("bye"))
    path.write_bytes(jsonl(header(), *chain.entries))
    return path


def test_info_counts_message_entries_without_a_role_under_a_placeholder(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl")
    text = invoke("info", path)
    assert text.exit_code == 0, text.output
    assert "None" not in text.output
    (messages,) = [line for line in text.output.splitlines() if line.startswith("messages")]
    assert "4 (no role)" in messages
    shown = invoke("info", path, "-f", "json")
    roles: dict[str, Any] = json.loads(shown.stdout)["messageRoles"]
    assert roles == {
        "user": 2,
        "(no role)": 4,
        "assistant": 2,
        "bashExecution": 1,
        "toolResult": 1,
    }


def test_tree_shows_placeholders_for_missing_values(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl")
    result = invoke("tree", path, "--fold", "0")
    assert result.exit_code == 0, result.output
    assert "None" not in result.output
    lines = {line.split()[1]: line for line in result.output.splitlines()[1:]}
    assert lines["e002"].endswith("e002 message")
    assert lines["e004"].endswith("e004 message x")
    assert "[compaction] (no summary)" in lines["e007"]
    assert "[branch summary] (no summary)" in lines["e008"]
    assert lines["e009"].endswith("thinking_level_change off")
    assert lines["e010"].endswith("model_change (no model)")
    assert lines["e011"].endswith("label e001 = (cleared)")
    assert lines["e012"].endswith("session_info (cleared)")
    assert lines["e013"].endswith("bashExecution $")
    assert lines["e014"].endswith("assistant → ?()")


def test_info_on_a_session_without_entries_shows_no_leaf(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(header()))
    result = invoke("info", path)
    assert result.exit_code == 0, result.output
    assert "None" not in result.output
