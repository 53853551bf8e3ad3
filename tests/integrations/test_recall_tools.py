"""Each framework adapter's ``recall`` tool round-trips through the framework's own tool
machinery against the fake OpenAI-compatible server: listed once the session has a
compaction (with the one-line hint in the summary's wrapper), called by the model, answered
with the folded detail."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from contextree.context.convert import RECALL_HINT
from fakes.fake_llm import FakeLLMServer
from recall.recall_session import PORT, TOOL_DETAIL, add_turns, compacted_file

pytestmark = pytest.mark.anyio


@pytest.fixture
def compacted(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    compacted_file(path)  # asyncio.run: outside the test's loop
    return path


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    from contextree.session.tree import SessionTree

    path = tmp_path / "plain.jsonl"
    add_turns(SessionTree.open(path, cwd=str(tmp_path)), 1)
    return path


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools", [])]


def _text(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


def _script(server: FakeLLMServer) -> None:
    server.enqueue_tool_call("recall", {"query": PORT}, call_id="call_r")
    server.enqueue_text("The flaky port was 8472.")


def _check_round_trip(server: FakeLLMServer) -> None:
    first, second = (request.body for request in server.requests)
    assert "recall" in _tool_names(first) and RECALL_HINT in _text(first)
    results = [m for m in second["messages"] if m["role"] == "tool"]
    assert results and f"The flaky port is {PORT}" in json.dumps(results[-1])


async def test_pydantic_ai(fake_llm: FakeLLMServer, compacted: Path, plain: Path) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from contextree.integrations.pydantic_ai import SessionHistory

    def agent(path: Path) -> Agent[None, str]:
        provider = OpenAIProvider(base_url=f"{fake_llm.url}/v1", api_key="sk-test")
        history = SessionHistory.open(path, model="openai:gpt-4o")
        return Agent(OpenAIChatModel("gpt-4o", provider=provider), capabilities=[history])

    _script(fake_llm)
    result = await agent(compacted).run("Which port was flaky?")
    assert result.output == "The flaky port was 8472."
    _check_round_trip(fake_llm)
    fake_llm.reset()
    fake_llm.enqueue_text("hi")
    await agent(plain).run("hello")
    body = fake_llm.requests[0].body
    assert "recall" not in _tool_names(body) and RECALL_HINT not in _text(body)


async def test_openai_agents(fake_llm: FakeLLMServer, compacted: Path, plain: Path) -> None:
    pytest.importorskip("agents")
    from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
    from openai import AsyncOpenAI

    from contextree.integrations.openai_agents import ContextreeSession

    set_tracing_disabled(True)  # the SDK would otherwise export traces to api.openai.com

    async def run(path: Path, prompt: str) -> str:
        client = AsyncOpenAI(base_url=f"{fake_llm.url}/v1", api_key="sk-test", max_retries=0)
        model = OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client)
        session = ContextreeSession.open(path, model="openai:gpt-4o")
        agent = Agent(name="a", instructions="Help.", tools=[session.recall_tool()], model=model)
        result = await Runner.run(agent, prompt, session=session)
        return str(result.final_output)

    _script(fake_llm)
    assert await run(compacted, "Which port was flaky?") == "The flaky port was 8472."
    _check_round_trip(fake_llm)
    fake_llm.reset()
    fake_llm.enqueue_text("hi")
    await run(plain, "hello")
    body = fake_llm.requests[0].body
    assert "recall" not in _tool_names(body) and RECALL_HINT not in _text(body)


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_langchain(
    fake_llm: FakeLLMServer, compacted: Path, plain: Path, asynchronous: bool
) -> None:
    pytest.importorskip("langchain")
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    from contextree.integrations.langchain import ContextreeMiddleware

    async def run(path: Path, prompt: str) -> str:
        model = ChatOpenAI(model="gpt-4o", base_url=f"{fake_llm.url}/v1", api_key="sk-test")  # type: ignore[arg-type]
        middleware = ContextreeMiddleware(path, model="openai:gpt-4o")
        agent = create_agent(model, tools=[], middleware=[middleware])
        state = {"messages": [{"role": "user", "content": prompt}]}
        result = await agent.ainvoke(state) if asynchronous else agent.invoke(state)
        return str(result["messages"][-1].content)

    _script(fake_llm)
    assert await run(compacted, "Which port was flaky?") == "The flaky port was 8472."
    _check_round_trip(fake_llm)
    fake_llm.reset()
    fake_llm.enqueue_text("hi")
    await run(plain, "hello")
    body = fake_llm.requests[0].body
    assert "recall" not in _tool_names(body) and RECALL_HINT not in _text(body)


_LEAD = "[From the condensed part of this conversation"


def _last_user_text(body: dict[str, Any]) -> str:
    return json.dumps([m for m in body["messages"] if m["role"] == "user"][-1])


async def test_recall_auto_in_pydantic_ai(fake_llm: FakeLLMServer, compacted: Path) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from contextree.integrations.pydantic_ai import SessionHistory

    provider = OpenAIProvider(base_url=f"{fake_llm.url}/v1", api_key="sk-test")
    history = SessionHistory.open(compacted, model="openai:gpt-4o")
    history.session.recall.warm_up()  # (as a compaction made here or a search leaves it)
    agent = Agent(OpenAIChatModel("gpt-4o", provider=provider), capabilities=[history])
    fake_llm.enqueue_text("7")
    await agent.run(f"What was {TOOL_DETAIL} set to?")
    text = _last_user_text(fake_llm.requests[0].body)
    assert _LEAD in text and f"retries = 7 # {TOOL_DETAIL}" in text


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_recall_auto_in_langchain(
    fake_llm: FakeLLMServer, compacted: Path, asynchronous: bool
) -> None:
    pytest.importorskip("langchain")
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    from contextree.integrations.langchain import ContextreeMiddleware

    model = ChatOpenAI(model="gpt-4o", base_url=f"{fake_llm.url}/v1", api_key="sk-test")  # type: ignore[arg-type]
    middleware = ContextreeMiddleware(compacted)
    middleware.session.recall.warm_up()  # (as a compaction made here or a search leaves it)
    agent = create_agent(model, tools=[], middleware=[middleware])
    fake_llm.enqueue_text("7")
    state = {"messages": [{"role": "user", "content": f"What was {TOOL_DETAIL} set to?"}]}
    if asynchronous:
        await agent.ainvoke(state)
    else:
        agent.invoke(state)
    text = _last_user_text(fake_llm.requests[0].body)
    assert _LEAD in text and f"retries = 7 # {TOOL_DETAIL}" in text
