"""The OpenAI Agents SDK's own runner drives a ContextreeSession against the fake server.

``Runner.run`` with an ``OpenAIChatCompletionsModel`` on an ``AsyncOpenAI`` client pointed at
127.0.0.1: scripted tool calls, usage measured from each request's size, so the threshold is
crossed by the conversation itself. The file it leaves is then opened in pi 0.73.1.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    RunConfig,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI, BadRequestError

from contextree.integrations.core import ManagedSession
from contextree.integrations.openai_agents import ContextreeSession
from contextree.session import SessionTree
from contextree.settings.load import Settings
from contextree.settings.schema import CompactionSettings, PruneSettings
from differential.installs import Install, find_pi, require
from differential.pi_checks import check_contexts
from fakes.openai_agents_server import MeasuringFakeServer
from provider_rules import openai_problems

pytestmark = pytest.mark.anyio

WINDOW = 6_000
RESERVE = 1_500  # compaction above 4,500 prompt tokens
KEEP = 1_200


@pytest.fixture(autouse=True, scope="module")
def _no_tracing() -> None:
    set_tracing_disabled(True)  # the SDK would otherwise export traces to api.openai.com


@pytest.fixture(scope="module")
def server() -> Iterator[MeasuringFakeServer]:
    with MeasuringFakeServer() as fake:
        yield fake


@pytest.fixture
def fake(server: MeasuringFakeServer) -> Iterator[MeasuringFakeServer]:
    server.reset()
    yield server
    server.reset()


@pytest.fixture(scope="module")
def pi() -> Install:
    """pi 0.73.1 (node); skips, or fails in CI, when it is not installed (as tests/differential)."""
    return require(find_pi(), "PI_UNAVAILABLE")


@function_tool
def read_module(number: int) -> str:
    """Read the source of module ``number``."""
    return f"def f{number}(x):\n    return x + {number}  # module {number}\n" * 20


def make_agent(fake: MeasuringFakeServer) -> Agent[Any]:
    client = AsyncOpenAI(base_url=f"{fake.url}/v1", api_key="sk-test", max_retries=0)
    model = OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client)
    return Agent(name="fixer", instructions="Fix bugs.", tools=[read_module], model=model)


def make_session(path: Path) -> ContextreeSession:
    settings = Settings(
        compaction=CompactionSettings(
            reserve_tokens=RESERVE, keep_recent_tokens=KEEP, adjust_keep_recent_by_usage=False
        ),
        prune=PruneSettings(enabled=False),
    )
    managed = ManagedSession.open(
        path, model="openai:gpt-4o", settings=settings, context_window=WINDOW
    )
    return ContextreeSession(managed)


_calls = itertools.count(1)


def script_run(fake: MeasuringFakeServer, modules: list[int], answer: str) -> list[str]:
    """One run: a call per module (unique ids), then the answer. Returns the call ids."""
    ids = []
    for number in modules:
        call_id = f"call_{next(_calls)}"
        ids.append(call_id)
        fake.enqueue_tool_call("read_module", {"number": number}, call_id=call_id)
    fake.enqueue_text(answer, usage={"output": 20})
    return ids


def all_problems(fake: MeasuringFakeServer) -> list[str]:
    return [
        f"request {index}: {problem}"
        for index, request in enumerate(fake.requests)
        for problem in openai_problems(request.body["messages"])
    ]


def compaction_entries(session: ContextreeSession) -> list[dict[str, Any]]:
    return [e for e in session.managed.tree.get_entries() if e["type"] == "compaction"]


async def converse(
    fake: MeasuringFakeServer, session: ContextreeSession, runs: int, *, tools_per_run: int = 2
) -> None:
    agent = make_agent(fake)
    config = RunConfig(call_model_input_filter=session.model_input_filter)
    for run in range(runs):
        modules = [run * tools_per_run + k for k in range(tools_per_run)]
        script_run(fake, modules, f"Fixed modules {modules}.")
        result = await Runner.run(
            agent, f"Fix modules {modules}.", session=session, run_config=config, max_turns=40
        )
        assert result.final_output == f"Fixed modules {modules}."


async def test_a_long_tool_using_conversation_is_compacted_twice_and_every_request_is_valid(
    fake: MeasuringFakeServer, tmp_path: Path
) -> None:
    session = make_session(tmp_path / "chat.jsonl")

    await converse(fake, session, runs=14)

    assert len(compaction_entries(session)) >= 2
    assert len(session.compactions) == len(compaction_entries(session))
    assert all_problems(fake) == []
    # After a compaction the requests carry the summary and shrink back under the threshold.
    sizes = [request.body for request in fake.requests]
    summarized = [body for body in sizes if "<summary>" in json.dumps(body["messages"])]
    assert summarized
    assert max(len(json.dumps(b["messages"])) // 4 for b in sizes[-3:]) < WINDOW - RESERVE
    # The measured usage went on the assistant messages.
    assistants = [
        e["message"]
        for e in session.managed.tree.get_entries()
        if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    assert all(m["usage"]["input"] > 0 and m["usage"]["output"] > 0 for m in assistants)
    assert all(m["model"] == "gpt-4o" and m["provider"] == "openai" for m in assistants)


async def test_a_compaction_during_one_run_shortens_the_rest_of_that_run(
    fake: MeasuringFakeServer, tmp_path: Path
) -> None:
    session = make_session(tmp_path / "chat.jsonl")
    await converse(fake, session, runs=2)
    fake.reset()

    # One run with many tool calls: the SDK keeps the history in memory between calls.
    await converse(fake, session, runs=1, tools_per_run=20)

    assert compaction_entries(session)
    bodies = [json.dumps(request.body["messages"]) for request in fake.requests]
    first = next(i for i, body in enumerate(bodies) if "<summary>" in body)
    assert 0 < first < len(bodies)  # compacted mid-run, and the next requests carry it
    assert len(bodies[first]) < len(bodies[first - 1])
    assert all("<summary>" in body for body in bodies[first:])
    assert all_problems(fake) == []
    assert fake.requests[-1].body["messages"][-1]["role"] == "tool"


async def test_an_overflow_compacts_and_the_next_run_fits(
    fake: MeasuringFakeServer, tmp_path: Path
) -> None:
    session = make_session(tmp_path / "chat.jsonl")
    await converse(fake, session, runs=3)
    before = len(compaction_entries(session))
    agent = make_agent(fake)
    fake.enqueue_overflow()

    with pytest.raises(BadRequestError):
        await Runner.run(agent, "One more fix.", session=session)
    result = await session.compact_after_overflow()

    assert result is not None
    assert len(compaction_entries(session)) == before + 1
    fake.enqueue_text("Done.")
    retried = await Runner.run(agent, [], session=session)
    assert retried.final_output == "Done."
    sent = fake.last.body["messages"]
    assert "<summary>" in json.dumps(sent)
    assert sent[-1] == {"role": "user", "content": "One more fix."} or any(
        m.get("content") == "One more fix." for m in sent
    )
    assert all_problems(fake) == []


@pytest.mark.differential
async def test_the_file_opens_in_pi_with_the_same_context(
    fake: MeasuringFakeServer, tmp_path: Path, pi: Install
) -> None:
    path = tmp_path / "chat.jsonl"
    session = make_session(path)
    await converse(fake, session, runs=14)
    assert len(compaction_entries(session)) >= 2

    written = path.read_bytes()
    tree = SessionTree.open(path)
    # Every entry as the leaf: before, between and after the compactions.
    every = [str(entry["id"]) for entry in tree.get_entries()]
    [answer] = pi.run(
        [{"file": str(path), "leaves": every, "serialize": True}], tmp_path / "pi-home"
    )

    assert path.read_bytes() == written  # pi changed nothing
    assert answer["leafId"] == tree.leaf_id
    assert answer["ids"] == every
    assert check_contexts(tree, answer) == len(every)
    assert tree.build_session_context().messages == session.managed.context_messages()
