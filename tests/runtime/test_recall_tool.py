"""The built-in agent offers ``recall`` once its path has a compaction: the tool is in the
request, the summary's wrapper says so in one line (our provider view only: pi's context is
unchanged), and a call round-trips through the agent loop with a bounded result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contextree.context.convert import RECALL_HINT, convert_to_llm
from contextree.recall.tool import MAX_RESULT_CHARS, SessionRecall
from contextree.session.tree import SessionTree
from fakes.fake_llm import FakeLLMServer
from recall.recall_session import PORT, TOOL_DETAIL, add_turns, agent_on, compacted_file


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools", [])]


def _all_text(body: dict[str, Any]) -> str:
    return "\n".join(str(message.get("content")) for message in body["messages"])


@pytest.fixture
def compacted(tmp_path: Path) -> SessionTree:
    return compacted_file(tmp_path / "s.jsonl")  # asyncio.run: outside the test's loop


@pytest.mark.anyio
async def test_recall_round_trips_through_the_agent(
    fake_llm: FakeLLMServer, tmp_path: Path, compacted: SessionTree
) -> None:
    tree = compacted
    fake_llm.enqueue_tool_call("recall", {"query": PORT})
    fake_llm.enqueue_text("The flaky port was 8472.")
    agent = agent_on(tree, fake_llm, tmp_path)
    await agent.prompt("Which port was flaky?")
    first, second = (request.body for request in fake_llm.requests)
    assert "recall" in _tool_names(first)
    assert RECALL_HINT in _all_text(first)
    result = second["messages"][-1]
    assert result["role"] == "tool" and f"The flaky port is {PORT}" in result["content"]
    # The file and pi's context are unchanged by the hint.
    assert RECALL_HINT not in str(convert_to_llm(tree.build_session_context().messages))


@pytest.mark.anyio
async def test_no_recall_before_a_compaction(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    tree = SessionTree.open(tmp_path / "s.jsonl", cwd=str(tmp_path))
    add_turns(tree, 1)
    fake_llm.enqueue_text("ok")
    await agent_on(tree, fake_llm, tmp_path).prompt("hi")
    body = fake_llm.requests[0].body
    assert "recall" not in _tool_names(body) and RECALL_HINT not in _all_text(body)


@pytest.mark.anyio
async def test_recall_can_be_turned_off(
    fake_llm: FakeLLMServer, tmp_path: Path, compacted: SessionTree
) -> None:
    fake_llm.enqueue_text("ok")
    await agent_on(compacted, fake_llm, tmp_path, recall=False).prompt("hi")
    body = fake_llm.requests[0].body
    assert "recall" not in _tool_names(body) and RECALL_HINT not in _all_text(body)


def test_results_are_bounded(tmp_path: Path) -> None:
    tree = compacted_file(tmp_path / "s.jsonl")
    recall = SessionRecall(tree)
    text = recall.search_text('"go on" filler', limit=50)
    assert 0 < len(text) <= MAX_RESULT_CHARS and text.count("\n[") <= 9
    assert TOOL_DETAIL in recall.search_text(TOOL_DETAIL)
    assert "Nothing in the condensed part" in recall.search_text("zebra")
    recall.close()
