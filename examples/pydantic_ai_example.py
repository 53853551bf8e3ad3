"""A pydantic-ai agent with a tool whose history lives in a contextree session file.

    pip install "contextree[pydantic-ai]"
    python examples/pydantic_ai_example.py [SESSION.jsonl]

The agent gets ``SessionHistory`` as a capability and no ``message_history``: the session file
is the history, stored and compacted before each model request. Offline by default: the model
is the test suite's fake OpenAI-compatible server (tests/fakes, started here on 127.0.0.1)
with a scripted tool-using conversation; it reports each request's size as its usage, as a
provider does, so the conversation itself crosses the compaction threshold. This runs from a
source checkout without a key. Set OPENAI_BASE_URL (and OPENAI_API_KEY) to use a real
OpenAI-compatible server; the questions then go to that model instead of the script
(OPENAI_MODEL names it, default gpt-4o).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from contextree.integrations.pydantic_ai import SessionHistory
from contextree.runtime.events import AgentEvent
from contextree.settings.load import Settings
from contextree.settings.schema import CompactionSettings

if TYPE_CHECKING:
    from fakes.openai_agents_server import MeasuringFakeServer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

TURNS = 8
CALLS_PER_TURN = 3


def read_file(path: str) -> str:
    """Read a file of the project."""
    return f"# {path}\n" + "".join(f"value_{n} = compute({n})\n" for n in range(80))


def report(event: AgentEvent) -> None:
    print(f"  [contextree] {event.type}")


async def converse(agent: Agent[None, str], server: MeasuringFakeServer | None) -> None:
    for turn in range(TURNS):
        if server is not None:
            for call in range(CALLS_PER_TURN):
                server.enqueue_tool_call(
                    "read_file",
                    {"path": f"src/m{turn}_{call}.py"},
                    call_id=f"call_{turn}_{call}",
                    usage={"output": 20},
                )
            server.enqueue_text(f"Module {turn} reviewed.", usage={"output": 8})
        result = await agent.run(f"Review module {turn}.")
        print(f"turn {turn}: {result.output}")


async def main() -> None:
    session_file = Path(sys.argv[1] if len(sys.argv) > 1 else "pydantic-ai-session.jsonl")
    # A small window so that this short demo compacts; real use: leave context_window out
    # and the model name ("openai:gpt-4o") gives it.
    settings = Settings(
        compaction=CompactionSettings(reserve_tokens=4_000, keep_recent_tokens=2_000)
    )
    history = SessionHistory.open(
        session_file,
        model="openai:gpt-4o",
        context_window=12_000,
        settings=settings,
        listener=report,
    )
    server: MeasuringFakeServer | None = None
    base_url = os.environ.get("OPENAI_BASE_URL")
    if base_url is None:
        from fakes.openai_agents_server import MeasuringFakeServer

        server = MeasuringFakeServer()
        server.start()
        base_url = f"{server.url}/v1"
    provider = OpenAIProvider(
        base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY", "sk-offline")
    )
    model = OpenAIChatModel(os.environ.get("OPENAI_MODEL", "gpt-4o"), provider=provider)
    agent: Agent[None, str] = Agent(
        model, instructions="Be brief.", tools=[read_file], capabilities=[history]
    )
    try:
        await converse(agent, server)
    finally:
        if server is not None:
            server.close()
        await provider.client.close()
    entries = history.session.tree.get_entries()
    compactions = [entry for entry in entries if entry["type"] == "compaction"]
    count, context = len(compactions), history.messages()
    print(f"{TURNS} turns, {len(entries)} entries, {count} compaction{'' if count == 1 else 's'}")
    print(f"session file: {session_file.resolve()}; the model now sees {len(context)} messages")
    print(f"see what the model sees: contextree context {session_file}")


if __name__ == "__main__":
    asyncio.run(main())
