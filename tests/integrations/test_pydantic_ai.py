"""SessionHistory driven by pydantic-ai's own agent loop against the fake OpenAI-compatible
server on 127.0.0.1: storing, compaction (threshold and overflow), provider-valid requests,
system prompts across a compaction, the plain history-processor form, and import isolation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelRequest, SystemPromptPart, UserPromptPart
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from contextree import SessionTree
from contextree.integrations.pydantic_ai import SessionHistory
from contextree.settings.load import Settings
from contextree.settings.schema import CompactionSettings, PruneSettings
from differential.installs import Install, find_pi, require
from differential.pi_checks import check_contexts
from fakes.fake_llm import FakeLLMServer
from provider_rules import openai_problems

pytestmark = pytest.mark.anyio

WINDOW = 12_000
RESERVE = 3_000  # compaction above 9,000 tokens
KEEP = 1_500
OUTPUT = "x = 1  # line of a.py\n" * 120  # ~2,600 characters per tool result


def settings() -> Settings:
    return Settings(
        compaction=CompactionSettings(
            reserve_tokens=RESERVE, keep_recent_tokens=KEEP, adjust_keep_recent_by_usage=False
        ),
        prune=PruneSettings(enabled=False),
    )


def make_agent(server: FakeLLMServer, history: SessionHistory, **options: Any) -> Agent[None, str]:
    provider = OpenAIProvider(base_url=f"{server.url}/v1", api_key="sk-test")
    agent: Agent[None, str] = Agent(
        OpenAIChatModel("gpt-4o", provider=provider), capabilities=[history], **options
    )

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file of the project."""
        return f"{path}:\n{OUTPUT}"

    return agent


def _announces_recall(message: dict[str, Any]) -> bool:
    """pydantic-ai's system note when a tool becomes available mid-run: ``recall`` is listed
    from the first compaction on (issue 26)."""
    return message == {
        "role": "system",
        "content": "The following tool(s) are now available: `recall`",
    }


def compactions(path: Path) -> list[dict[str, Any]]:
    return [e for e in SessionTree.open(path).get_entries() if e["type"] == "compaction"]


def script_turn(server: FakeLLMServer, turn: int, input_tokens: int) -> None:
    """One turn: two tool calls in one reply, then a final answer."""
    server.enqueue_tool_call(
        "read_file",
        {"path": f"src/m{turn}.py"},
        call_id=f"call_{turn}_a",
        usage={"input": input_tokens, "output": 40},
    )
    server.enqueue_tool_call(
        "read_file",
        {"path": f"src/n{turn}.py"},
        call_id=f"call_{turn}_b",
        usage={"input": input_tokens + 700, "output": 40},
    )
    server.enqueue_text(f"Turn {turn} done.", usage={"input": input_tokens + 1400, "output": 30})


async def drive_long_conversation(
    server: FakeLLMServer, path: Path, turns: int = 10, **options: Any
) -> tuple[SessionHistory, list[str]]:
    history = SessionHistory.open(
        path, model="openai:gpt-4o", settings=settings(), context_window=WINDOW
    )
    agent = make_agent(server, history, **options)
    prompts = []
    done = 0
    for turn in range(turns):
        # The fake reports what a provider would measure: the context grows each turn and
        # shrinks after a compaction (what the kept part and the summary still hold).
        seen = len(compactions(path))
        if seen != done:
            done, grown = seen, 0
        grown = turn - 0 if done == 0 else grown + 1
        script_turn(server, turn, 2_000 + 1_600 * grown)
        prompt = f"Please review module {turn} and tell me what it does."
        prompts.append(prompt)
        result = await agent.run(prompt)
        assert result.output == f"Turn {turn} done."
    return history, prompts


async def test_a_long_tool_using_conversation_compacts_and_every_request_is_valid(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "chat.jsonl"
    history, prompts = await drive_long_conversation(fake_llm, path)
    assert len(compactions(path)) >= 2
    assert len(fake_llm.requests) == 30
    for number, request in enumerate(fake_llm.requests):
        messages = request.body["messages"]
        assert openai_problems(messages) == [], f"request {number}"
        if _announces_recall(messages[-1]):
            messages = messages[:-1]  # pydantic-ai's note when the recall tool appears
        assert messages[-1]["role"] in ("user", "tool")
    # After a compaction the model gets the summary first, not the whole history.
    last = fake_llm.requests[-1].body["messages"]
    assert "<summary>" in json.dumps(last[0])
    assert len(last) < 20  # of the 60 messages the file holds
    # Nothing is lost: the file holds every prompt, call and result, and the measured usage.
    entries = SessionTree.open(path).get_entries()
    stored = [e["message"] for e in entries if e["type"] == "message"]
    texts = [m["content"] for m in stored if m["role"] == "user"]
    assert texts == prompts
    assert sum(m["role"] == "toolResult" for m in stored) == 20
    replies = [m for m in stored if m["role"] == "assistant"]
    assert len(replies) == 30
    assert replies[0]["usage"]["input"] == 2_000
    assert all(r["provider"] == "openai" and r["model"] == "gpt-4o" for r in replies)
    assert history.last_compaction is not None


async def test_the_session_is_the_history_across_runs_and_processes(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "chat.jsonl"
    first = SessionHistory.open(path, model="openai:gpt-4o", settings=settings())
    fake_llm.enqueue_text("Hello, Ada.")
    await make_agent(fake_llm, first).run("My name is Ada.")
    # A new process: a new agent and history on the same file, no message_history.
    second = SessionHistory.open(path, model="openai:gpt-4o", settings=settings())
    fake_llm.enqueue_text("You are Ada.")
    result = await make_agent(fake_llm, second).run("What is my name?")
    sent = fake_llm.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[0]["content"] == "My name is Ada."
    # Passing the result's messages back in changes nothing: they are marked as stored.
    fake_llm.enqueue_text("Still Ada.")
    await make_agent(fake_llm, second).run("Again?", message_history=result.all_messages())
    assert len(fake_llm.requests[-1].body["messages"]) == 5
    roles = [e["message"]["role"] for e in SessionTree.open(path).get_entries()]
    assert roles == ["user", "assistant"] * 3


async def test_an_overflow_compacts_and_the_request_is_attempted_again(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "chat.jsonl"
    history = SessionHistory.open(
        path, model="openai:gpt-4o", settings=settings(), context_window=200_000
    )
    agent = make_agent(fake_llm, history)
    for turn in range(3):
        script_turn(fake_llm, turn, 2_000)  # far below the threshold of this window
        await agent.run(f"Review module {turn}.")
    assert compactions(path) == []
    fake_llm.enqueue_overflow()
    fake_llm.enqueue_text("Done after compacting.")
    result = await agent.run("And module 3?")
    assert result.output == "Done after compacting."
    assert len(compactions(path)) == 1
    retried = fake_llm.requests[-1].body["messages"]
    assert len(retried) < len(fake_llm.requests[-2].body["messages"])
    assert openai_problems(retried) == []


async def test_system_prompts_open_the_conversation_after_a_compaction(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    path = tmp_path / "chat.jsonl"
    await drive_long_conversation(fake_llm, path, turns=6, system_prompt="You review Python code.")
    assert compactions(path)
    for request in fake_llm.requests:
        first = request.body["messages"][0]
        assert first == {"role": "system", "content": "You review Python code."}
    system = [
        m
        for r in fake_llm.requests
        for m in r.body["messages"]
        if m["role"] == "system" and not _announces_recall(m)
    ]
    assert len(system) == len(fake_llm.requests)


async def test_the_plain_history_processor_form(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    history = SessionHistory.open(path, model="openai:gpt-4o", settings=settings())
    provider = OpenAIProvider(base_url=f"{fake_llm.url}/v1", api_key="sk-test")
    agent = Agent(
        OpenAIChatModel("gpt-4o", provider=provider),
        capabilities=[ProcessHistory(history.processor)],
    )
    fake_llm.enqueue_text("one")
    result = await agent.run("first")
    # A processor never sees the run's final response: record it after the run.
    assert [e["message"]["role"] for e in SessionTree.open(path).get_entries()] == ["user"]
    history.record(result.new_messages())
    fake_llm.enqueue_text("two")
    await agent.run("second")
    assert [m["role"] for m in fake_llm.requests[-1].body["messages"]] == [
        "user",
        "assistant",
        "user",
    ]


def test_messages_gives_the_context_as_pydantic_ai_messages(tmp_path: Path) -> None:
    history = SessionHistory.open(tmp_path / "chat.jsonl")
    request = ModelRequest(parts=[SystemPromptPart("Be brief."), UserPromptPart("hi")])
    assert len(history.record([request])) == 1
    assert history.record([request]) == []  # marked: never stored twice
    (back,) = history.messages()
    assert isinstance(back, ModelRequest)
    assert [type(p).__name__ for p in back.parts] == ["SystemPromptPart", "UserPromptPart"]
    assert history.is_stored(back)


@pytest.fixture
def pi() -> Install:
    """pi 0.73.1 (node); skips, or fails in CI, when it is not installed."""
    return require(find_pi(), "PI_UNAVAILABLE")


@pytest.mark.differential
async def test_pi_opens_the_session_file_with_the_same_context(
    fake_llm: FakeLLMServer, tmp_path: Path, pi: Install
) -> None:
    path = tmp_path / "chat.jsonl"
    await drive_long_conversation(fake_llm, path, system_prompt="You review Python code.")
    written = path.read_bytes()
    tree = SessionTree.open(path)
    assert len(compactions(path)) >= 2
    every = [str(e["id"]) for e in tree.get_entries()]
    (answer,) = pi.run(
        [{"file": str(path), "leaves": every, "serialize": True}], tmp_path / "pi-home"
    )
    assert path.read_bytes() == written  # pi changed nothing
    assert answer["leafId"] == tree.leaf_id
    assert answer["ids"] == every
    # The context of every entry as the leaf (after each compaction too) is pi's.
    assert check_contexts(tree, answer) == len(every)
