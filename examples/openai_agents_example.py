"""An OpenAI Agents SDK agent (Runner, a function tool) whose session is a contextree file.

    pip install "contextree[openai-agents]"
    python examples/openai_agents_example.py [SESSION.jsonl]

Offline by default: the model is the test suite's fake OpenAI-compatible server (tests/fakes,
started here on 127.0.0.1) with a scripted tool-using conversation; it reports each request's
size as its usage, as a provider does, so the conversation itself crosses the compaction
threshold. This runs from a source checkout without a key. Set OPENAI_BASE_URL (and
OPENAI_API_KEY) to use a real OpenAI-compatible server; the questions then go to that model
instead of the script (OPENAI_MODEL names it, default gpt-4o).

The SDK's tracing is switched off: it would otherwise upload every run's trace to
api.openai.com, whatever server answers the requests.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    RunConfig,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

from contextree.integrations.openai_agents import ContextreeSession
from contextree.runtime.events import AgentEvent
from contextree.settings.load import Settings
from contextree.settings.schema import CompactionSettings

if TYPE_CHECKING:
    from fakes.openai_agents_server import MeasuringFakeServer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

TURNS = 8
CALLS_PER_TURN = 3


@function_tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    return f"# {path}\n" + "".join(f"value_{n} = compute({n})\n" for n in range(80))


def report(event: AgentEvent) -> None:
    print(f"  [contextree] {event.type}")


async def converse(
    session: ContextreeSession, agent: Agent[None], server: MeasuringFakeServer | None
) -> None:
    # The SDK reads the session once per run and keeps the run's items in memory; the filter
    # lets a compaction made in the middle of a run shorten that run's later requests too.
    config = RunConfig(call_model_input_filter=session.model_input_filter, tracing_disabled=True)
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
        result = await Runner.run(
            agent, f"Review module {turn}.", session=session, run_config=config, max_turns=20
        )
        print(f"turn {turn}: {result.final_output}")


async def main() -> None:
    set_tracing_disabled(True)
    session_file = Path(sys.argv[1] if len(sys.argv) > 1 else "openai-agents-session.jsonl")
    # A small window so that this short demo compacts; real use: leave context_window out
    # and the model name ("openai:gpt-4o") gives it.
    settings = Settings(
        compaction=CompactionSettings(reserve_tokens=4_000, keep_recent_tokens=2_000)
    )
    session = ContextreeSession.open(
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
    client = AsyncOpenAI(base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY", "sk-offline"))
    model = OpenAIChatCompletionsModel(
        model=os.environ.get("OPENAI_MODEL", "gpt-4o"), openai_client=client
    )
    agent: Agent[None] = Agent(
        name="reviewer", instructions="Be brief.", tools=[read_file], model=model
    )
    try:
        await converse(session, agent, server)
    finally:
        if server is not None:
            server.close()
        await client.close()
    entries = session.managed.tree.get_entries()
    compactions = [entry for entry in entries if entry["type"] == "compaction"]
    context = await session.get_items()
    count = len(compactions)
    print(f"{TURNS} turns, {len(entries)} entries, {count} compaction{'' if count == 1 else 's'}")
    print(f"session file: {session_file.resolve()}; the model now sees {len(context)} items")
    print(f"see what the model sees: contextree context {session_file}")


if __name__ == "__main__":
    asyncio.run(main())
