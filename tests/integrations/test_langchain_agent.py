"""ContextreeMiddleware in LangChain's own agent loop (create_agent) against a fake server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from contextree.integrations.core import ManagedSession
from contextree.integrations.langchain import ContextreeMiddleware
from contextree.runtime.events import AgentEvent
from contextree.session import SessionTree
from fakes.langchain_server import MeasuringFakeServer
from integrations.langchain_helpers import (
    agent,
    ask,
    assert_requests_valid,
    assert_stored_once,
    compactions,
    middleware,
    script_turn,
    settings,
)

TURNS = 14


@pytest.fixture
def server() -> Iterator[MeasuringFakeServer]:
    with MeasuringFakeServer() as fake:
        yield fake


def test_a_long_tool_using_conversation_is_compacted_again_and_again(
    server: MeasuringFakeServer, tmp_path: Path
) -> None:
    events: list[AgentEvent] = []
    mw = middleware(tmp_path / "s.jsonl", listener=events.append)
    graph = agent(server, mw)

    for turn in range(TURNS):
        script_turn(server, turn)
        result = graph.invoke(ask(turn))
        assert result["messages"][-1].content == f"Module {turn} is fixed."

    tree = SessionTree.open(tmp_path / "s.jsonl")
    assert len(compactions(tree)) >= 2
    reasons = [e.data["reason"] for e in events if e.type == "auto_compaction_start"]
    assert reasons and set(reasons) == {"threshold"}
    assert_requests_valid(server)
    assert_stored_once(mw.session)
    # After a compaction the model gets the summary, not the whole history, and the largest
    # request stays under the window although the conversation grew far beyond it.
    sizes = [request.body["messages"] for request in server.requests]
    assert max(len(str(m)) // 4 for m in sizes) < 20_000
    total = sum(len(str(e["message"])) for e in tree.get_entries() if e["type"] == "message")
    assert total // 4 > 40_000
    last = server.requests[-1].body["messages"]
    assert "summary" in str(last[1]["content"]).lower()
    # The file keeps every message (append-only); the last request was its context (the
    # system prompt, then everything before the final reply).
    messages = [e for e in tree.get_entries() if e["type"] == "message"]
    assert len(messages) == TURNS * (2 + 2 * 3)
    context = mw.session.llm_messages()
    assert context[-1]["content"] == [{"type": "text", "text": f"Module {TURNS - 1} is fixed."}]
    assert len(last) == 1 + len(context[:-1])
    assert [m["role"] for m in last[1:]] == [
        "tool" if m["role"] == "toolResult" else m["role"] for m in context[:-1]
    ]
    assert SessionTree.open(tmp_path / "s.jsonl").build_session_context().messages == (
        mw.session.context_messages()
    )


def test_a_cut_inside_a_turn_keeps_every_call_paired(
    server: MeasuringFakeServer, tmp_path: Path
) -> None:
    # A keep budget smaller than one turn: the kept part starts in the middle of a turn,
    # after tool calls whose results were summarized away.
    mw = middleware(tmp_path / "s.jsonl", settings=settings(keep=1_000))
    graph = agent(server, mw)
    for turn in range(TURNS):
        script_turn(server, turn)
        graph.invoke(ask(turn))

    tree = mw.session.tree
    kept = [tree.get_entry(c["firstKeptEntryId"]) for c in compactions(tree)]
    assert len(kept) >= 2
    split = [
        entry
        for entry in kept
        if entry is not None
        and entry["message"]["role"] != "user"
        and tree.get_entry(entry["parentId"])["message"]["role"] in ("toolResult", "assistant")
    ]
    assert split, "no compaction cut inside a turn"
    assert_requests_valid(server)
    assert_stored_once(mw.session)


def test_replies_are_stored_with_their_measured_usage(
    server: MeasuringFakeServer, tmp_path: Path
) -> None:
    mw = middleware(tmp_path / "s.jsonl")
    script_turn(server, 0)
    agent(server, mw).invoke(ask(0))

    replies = [
        e["message"]
        for e in mw.session.tree.get_entries()
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    assert [r["stopReason"] for r in replies] == ["toolUse"] * 3 + ["stop"]
    assert [r["usage"]["output"] for r in replies] == [30, 30, 30, 12]
    inputs = [r["usage"]["input"] for r in replies]
    assert inputs == sorted(inputs) and inputs[0] > 0  # what each request measured
    assert {(r["provider"], r["model"]) for r in replies} == {("openai", "gpt-4o")}
    results = [
        e["message"]
        for e in mw.session.tree.get_entries()
        if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]
    assert [r["toolName"] for r in results] == ["read_file"] * 3
    assert [r["toolCallId"] for r in results] == ["call_0_0", "call_0_1", "call_0_2"]


@pytest.mark.anyio
async def test_async_with_a_checkpointer_stores_each_message_once(
    server: MeasuringFakeServer, tmp_path: Path
) -> None:
    mw = middleware(tmp_path / "s.jsonl")
    graph = agent(server, mw, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}

    for turn in range(TURNS):
        script_turn(server, turn)
        result = await graph.ainvoke(ask(turn), config)  # type: ignore[arg-type]

    # The checkpointer hands the whole history back every turn; the file has it once.
    assert len(result["messages"]) == TURNS * 8
    assert_stored_once(mw.session)
    assert len(compactions(mw.session.tree)) >= 2
    assert_requests_valid(server)


def test_an_overflow_compacts_and_retries_the_call(
    server: MeasuringFakeServer, tmp_path: Path
) -> None:
    events: list[AgentEvent] = []
    mw = middleware(tmp_path / "s.jsonl", listener=events.append)
    graph = agent(server, mw)
    for turn in range(3):
        script_turn(server, turn)
        graph.invoke(ask(turn))
    assert compactions(mw.session.tree) == []
    before = len(server.requests)

    server.enqueue_overflow()
    script_turn(server, 3)
    graph.invoke(ask(3))

    assert len(compactions(mw.session.tree)) == 1
    assert [e.data["reason"] for e in events if e.type == "auto_compaction_start"] == ["overflow"]
    rejected, retried = server.requests[before], server.requests[before + 1]
    assert len(retried.body["messages"]) < len(rejected.body["messages"])
    assert_requests_valid(server)


def test_an_overflow_right_after_compacting_is_raised(
    server: MeasuringFakeServer, tmp_path: Path
) -> None:
    mw = middleware(tmp_path / "s.jsonl")
    graph = agent(server, mw)
    for turn in range(3):
        script_turn(server, turn)
        graph.invoke(ask(turn))

    server.enqueue_overflow()
    server.enqueue_overflow()
    # The provider's error, as LangChain raised it (here its wording marks the overflow).
    with pytest.raises(openai.BadRequestError, match="maximum context length"):
        graph.invoke(ask(3))
    assert len(compactions(mw.session.tree)) == 1  # one try, no loop


def test_a_new_process_continues_from_the_file(server: MeasuringFakeServer, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    for turn in range(2):
        script_turn(server, turn)
        agent(server, middleware(path)).invoke(ask(turn))

    # A fresh middleware on the same file, no checkpointer: the state holds only the new
    # question, the model still sees the earlier turns.
    fresh = middleware(path)
    script_turn(server, 2)
    agent(server, fresh).invoke(ask(2))

    first_of_turn = server.requests[-4].body["messages"]
    texts = [str(m.get("content")) for m in first_of_turn]
    assert any("Step 0" in t for t in texts) and any("Step 2" in t for t in texts)
    assert_stored_once(fresh.session)


def test_a_return_direct_tool_result_is_stored_after_the_run(
    server: MeasuringFakeServer, tmp_path: Path
) -> None:
    mw = middleware(tmp_path / "s.jsonl")
    server.enqueue_tool_call("publish", {"summary": "all fixed"}, call_id="call_pub")
    result = agent(server, mw).invoke(ask(0))

    assert isinstance(result["messages"][-1], ToolMessage)  # the loop ended on the tool
    last = mw.session.tree.get_leaf_entry()
    assert last is not None and last["message"]["role"] == "toolResult"
    assert last["message"]["content"] == [{"type": "text", "text": "published: all fixed"}]


def test_system_messages_in_the_state_go_first_and_are_not_stored(
    server: MeasuringFakeServer, tmp_path: Path
) -> None:
    mw = middleware(tmp_path / "s.jsonl")
    server.enqueue_text("ok")
    agent(server, mw).invoke(
        {"messages": [SystemMessage("Answer in French."), HumanMessage("hello")]}
    )

    sent = server.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["system", "system", "user"]
    roles = [e["message"]["role"] for e in mw.session.tree.get_entries()]
    assert roles == ["user", "assistant"]


def test_a_session_and_options_together_is_a_usage_error(tmp_path: Path) -> None:
    session = ManagedSession.open(tmp_path / "s.jsonl", settings=settings())
    with pytest.raises(TypeError, match="pass a path"):
        ContextreeMiddleware(session, model="openai:gpt-4o")
    assert ContextreeMiddleware(session).session is session


def test_a_session_with_a_developer_message_continues_here(
    server: MeasuringFakeServer, tmp_path: Path
) -> None:
    # oh-my-pi writes "developer" messages, and so does the Agents SDK adapter for a system or
    # developer item: a session file from either goes on under LangChain, the message sent
    # as user text (as contextree's own OpenAI mapping sends it).
    path = tmp_path / "s.jsonl"
    note = [{"type": "text", "text": "Answer in French."}]
    ManagedSession.open(path).append([{"role": "developer", "content": note, "timestamp": 1}])
    mw = middleware(path)
    server.enqueue_text("ok")

    agent(server, mw).invoke(ask(0))

    sent = server.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "user"]
    assert "Answer in French." in str(sent[1]["content"])
    roles = [e["message"]["role"] for e in mw.session.tree.get_entries()]
    assert roles == ["developer", "user", "assistant"]
