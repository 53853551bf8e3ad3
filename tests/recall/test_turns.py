"""A recalled reply comes with the user message it answers: the user's own words hold the exact
figure that the reply restated in other words."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from contextree.compaction import compact_session
from contextree.llm.scripted import ScriptedClient
from contextree.recall import folded_entry_ids
from contextree.recall.tool import SessionRecall
from contextree.recall.turns import MAX_TURN_STEPS, asking_message
from contextree.session.tree import SessionTree
from contextree.settings import CompactionSettings
from recall.recall_session import add_turns

_MODEL = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-test"}
BUDGET = "our budget is $38,000 including everything, no exceptions"


def _assistant(text: str, *calls: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}, *calls]
    return {
        "role": "assistant",
        "content": content,
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": 2,
        **_MODEL,
    }


def _result(call_id: str, text: str) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "ledger",
        "content": [{"type": "text", "text": text}],
        "timestamp": 3,
    }


def _compacted(tree: SessionTree, tool_results: int = 1) -> SessionTree:
    tree.append_message({"role": "user", "content": BUDGET, "timestamp": 1})
    call = {"type": "toolCall", "id": "c0", "name": "ledger", "arguments": {}}
    tree.append_message(_assistant("Understood: a hard cap, all-in. Noting it.", call))
    for i in range(tool_results):
        tree.append_message(_result(f"c{i}", f"ledger row {i} written: cap recorded"))
        if i + 1 < tool_results:
            more = {"type": "toolCall", "id": f"c{i + 1}", "name": "ledger", "arguments": {}}
            tree.append_message(_assistant(f"step {i}", more))
    add_turns(tree, 30)
    settings = CompactionSettings(keep_recent_tokens=2000, record_facts=False)
    summarizer = ScriptedClient(default="## Goal\nPlan the kitchen.")
    asyncio.run(compact_session(tree, summarizer, settings=settings))
    return tree


def test_a_recalled_reply_shows_the_users_message_it_answers(tmp_path: Path) -> None:
    tree = _compacted(SessionTree.open(tmp_path / "s.jsonl", cwd="/w"))
    recall = SessionRecall(tree)
    text = recall.search_text('"hard cap"')
    assert "Understood: a hard cap" in text and "$38,000" in text
    assert "in reply to [" in text
    # A tool result of the same turn leads back to the same request.
    assert "$38,000" in recall.search_text('"cap recorded"')
    recall.close()


def test_the_request_is_not_repeated_when_it_is_a_hit_itself(tmp_path: Path) -> None:
    tree = _compacted(SessionTree.open(tmp_path / "s.jsonl", cwd="/w"))
    recall = SessionRecall(tree)
    text = recall.search_text("budget cap")
    assert text.count("$38,000") == 1 and "in reply to" not in text
    recall.close()


def test_only_a_folded_request_is_shown(tmp_path: Path) -> None:
    tree = _compacted(SessionTree.open(tmp_path / "s.jsonl", cwd="/w"))
    folded = folded_entry_ids(tree)
    reply = next(e for e in tree.get_entries() if "hard cap" in str(e.get("message")))
    request = str(reply["parentId"])
    assert asking_message(tree, str(reply["id"]), folded) == (request, BUDGET)
    assert asking_message(tree, str(reply["id"]), folded - {request}) is None
    # A user message answers nothing.
    assert asking_message(tree, request, folded) is None


def test_a_turn_longer_than_the_bound_is_shown_without_its_request(tmp_path: Path) -> None:
    tree = _compacted(SessionTree.open(tmp_path / "s.jsonl", cwd="/w"), MAX_TURN_STEPS)
    folded = folded_entry_ids(tree)
    results = [e for e in tree.get_entries() if "ledger row" in str(e.get("message"))]
    first, last = str(results[0]["id"]), str(results[-1]["id"])
    assert asking_message(tree, first, folded) is not None
    assert asking_message(tree, last, folded) is None
