"""Shared pieces of the LangChain tests: a fake server that measures, the agent, the script."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.graph.state import CompiledStateGraph

from contextree.integrations.core import ManagedSession
from contextree.integrations.langchain import ContextreeMiddleware
from contextree.session import SessionTree
from contextree.settings.load import Settings
from contextree.settings.schema import CompactionSettings, PruneSettings
from fakes.langchain_server import MeasuringFakeServer
from provider_rules import openai_problems

WINDOW = 20_000
RESERVE = 4_000  # compaction above 16,000 tokens
KEEP = 3_000
CALLS_PER_TURN = 3
SYSTEM_PROMPT = "You are a careful coding agent. Be brief."


def settings(keep: int = KEEP) -> Settings:
    compaction = CompactionSettings(
        reserve_tokens=RESERVE, keep_recent_tokens=keep, adjust_keep_recent_by_usage=False
    )
    return Settings(compaction=compaction, prune=PruneSettings(enabled=False))


@tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    body = "".join(f"    value_{n} = compute({n!r}, path={path!r})\n" for n in range(60))
    return f"# {path}\ndef handler():\n{body}"


@tool(return_direct=True)
def publish(summary: str) -> str:
    """Publish the result; the agent stops right after."""
    return f"published: {summary}"


def model(server: MeasuringFakeServer) -> ChatOpenAI:
    return ChatOpenAI(model="gpt-4o", base_url=f"{server.url}/v1", api_key="sk-test")  # type: ignore[arg-type]


def middleware(path: Path, **options: Any) -> ContextreeMiddleware:
    options.setdefault("settings", settings())
    return ContextreeMiddleware(path, model="openai:gpt-4o", context_window=WINDOW, **options)


def agent(
    server: MeasuringFakeServer, mw: ContextreeMiddleware, **options: Any
) -> CompiledStateGraph[Any, Any, Any, Any]:
    return create_agent(
        model(server),
        tools=[read_file, publish],
        system_prompt=SYSTEM_PROMPT,
        middleware=[mw],
        **options,
    )


def script_turn(server: MeasuringFakeServer, turn: int) -> None:
    """One user turn: three file reads, then an answer; usage measured on each request."""
    for call in range(CALLS_PER_TURN):
        server.enqueue_tool_call(
            "read_file",
            {"path": f"src/module_{turn}_{call}.py"},
            call_id=f"call_{turn}_{call}",
            text=f"Reading part {call} of module {turn}." if call == 0 else "",
            usage={"measured": 1, "output": 30},
        )
    server.enqueue_text(f"Module {turn} is fixed.", usage={"measured": 1, "output": 12})


def ask(turn: int) -> dict[str, Any]:
    return {
        "messages": [{"role": "user", "content": f"Step {turn}: fix the bug in module {turn}."}]
    }


def compactions(tree: SessionTree) -> list[dict[str, Any]]:
    return [entry for entry in tree.get_entries() if entry["type"] == "compaction"]


def assert_requests_valid(server: MeasuringFakeServer) -> None:
    """Every request the agent sent: OpenAI pairing holds, the system prompt comes first."""
    assert server.requests
    for number, request in enumerate(server.requests):
        messages = request.body["messages"]
        assert openai_problems(messages) == [], f"request {number}"
        assert messages[0] == {"role": "system", "content": SYSTEM_PROMPT}, f"request {number}"


def assert_stored_once(session: ManagedSession) -> None:
    """Every LangChain message is in the file exactly once."""
    ids = [
        entry["message"]["langchain"]["id"]
        for entry in session.tree.get_entries()
        if entry["type"] == "message"
    ]
    assert [ident for ident, n in Counter(ids).items() if n > 1] == []
