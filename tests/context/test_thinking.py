"""Old thinking left out of the provider view, never out of the file or pi's context (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_env import ok
from contextree.context import ProviderView, convert_to_llm, provider_messages
from contextree.context.thinking import drop_old_thinking
from contextree.session import SessionTree
from contextree.settings import load_settings
from core_helpers import assistant, tool_call, tool_result, user

Json = dict[str, Any]


def _thinking_reply(text: str, *calls: Json) -> Json:
    message = assistant(text, calls=calls)
    message["content"].insert(
        0, {"type": "thinking", "thinking": f"why {text}", "thinkingSignature": "s"}
    )
    return message


def _session() -> SessionTree:
    tree = SessionTree.in_memory()
    for turn in range(3):
        tree.append_message(user(f"turn {turn}"))
        tree.append_message(_thinking_reply(f"a{turn}", tool_call(f"c{turn}", "bash")))
        tree.append_message(tool_result(f"c{turn}"))
        tree.append_message(_thinking_reply(f"b{turn}"))
    return tree


def _thinking(messages: list[Json]) -> list[str]:
    return [
        block["thinking"]
        for m in messages
        if m["role"] == "assistant"
        for block in m["content"]
        if block.get("type") == "thinking"
    ]


def test_thinking_older_than_the_last_turns_is_left_out() -> None:
    llm = convert_to_llm(_session().build_session_context().messages)
    assert _thinking(provider_messages(llm)) == [f"why {x}{t}" for t in range(3) for x in "ab"]
    assert _thinking(provider_messages(llm, keep_thinking_turns=1)) == ["why a2", "why b2"]
    two = provider_messages(llm, keep_thinking_turns=2)
    assert _thinking(two) == ["why a1", "why b1", "why a2", "why b2"]
    # Text and tool calls stay; pi's context (convert_to_llm) keeps every thinking block.
    assert [b["type"] for b in two[1]["content"]] == ["text", "toolCall"]
    assert len(_thinking(llm)) == 6


def test_a_reply_of_nothing_but_thinking_is_kept_whole() -> None:
    only = assistant("")
    only["content"] = [{"type": "thinking", "thinking": "alone"}]
    messages = [user("a"), only, user("b"), assistant("x")]
    assert drop_old_thinking(messages, 1)[1] is only


def test_the_provider_view_cache_clears_thinking_as_turns_age() -> None:
    tree = _session()
    view = ProviderView()
    for _ in range(2):
        context = tree.build_session_context().messages
        expected = provider_messages(convert_to_llm(context), keep_thinking_turns=1)
        assert view.messages(context, keep_thinking_turns=1) == expected
        tree.append_message(user("more"))
        tree.append_message(_thinking_reply("c"))


def test_the_file_keeps_the_thinking(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    tree = SessionTree.open(path)
    for entry in _session().get_branch():
        tree.append_message(entry["message"])
    provider_messages(convert_to_llm(tree.build_session_context().messages), keep_thinking_turns=1)
    assert path.read_text().count('"type":"thinking"') == 6


def test_context_anthropic_uses_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    tree = SessionTree.open(path)
    for entry in _session().get_branch():
        tree.append_message(entry["message"])

    def thinking_blocks() -> int:
        body = json.loads(ok("context", path, "-f", "anthropic").stdout)
        return sum(block["type"] == "thinking" for m in body["messages"] for block in m["content"])

    assert thinking_blocks() == 6
    monkeypatch.setenv("CONTEXTREE_CONTEXT_KEEP_THINKING_TURNS", "1")
    assert thinking_blocks() == 2


def test_the_setting_defaults_to_keeping_all(tmp_path: Path) -> None:
    assert (
        load_settings(cwd=tmp_path, env={"HOME": str(tmp_path)}).settings.keep_thinking_turns == -1
    )
