"""The providers' own compaction as summarizers, against a fake of their endpoints (issue 30)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_env import ok
from contextree.compaction.provider_summary import replay_provider_compaction
from contextree.compaction.run import CompactionOutcome, compact_session
from contextree.context import convert_to_llm, provider_messages
from contextree.errors import ModelResponseError
from contextree.llm.anthropic import to_anthropic_messages
from contextree.llm.provider_compaction import (
    ANTHROPIC_COMPACTION_BETA,
    AnthropicCompactionClient,
    OpenAICompactionClient,
    to_responses_input,
)
from contextree.llm.registry import create_client, missing_api_key
from contextree.session import SessionTree
from contextree.settings import CompactionSettings
from core_helpers import assistant, tool_call, tool_result, user
from fakes.fake_compaction import FakeCompactionServer

KEEP = CompactionSettings(keep_recent_tokens=2_000)


@pytest.fixture
def server() -> Iterator[FakeCompactionServer]:
    fake = FakeCompactionServer().start()
    yield fake
    fake.close()


def _history(turns: int, chars: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for n in range(turns):
        messages.append(user(f"step {n}: never touch the migrations folder"))
        messages.append(assistant("", calls=[tool_call(f"c{n}", "read", {"path": f"f{n}.py"})]))
        messages.append(tool_result(f"c{n}", "x" * chars, name="read"))
        messages.append(assistant(f"read f{n}.py"))
    return messages


def _tree(turns: int, chars: int) -> SessionTree:
    tree = SessionTree.in_memory()
    for message in _history(turns, chars):
        tree.append_message(message)
    return tree


def test_responses_input_follows_the_responses_item_shapes() -> None:
    items = to_responses_input(_history(1, 10))
    assert items == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "step 0: never touch the migrations folder"}
            ],
        },
        {
            "type": "function_call",
            "call_id": "c0",
            "name": "read",
            "arguments": '{"path": "f0.py"}',
        },
        {"type": "function_call_output", "call_id": "c0", "output": "x" * 10},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "read f0.py"}],
        },
    ]


def test_openai_compaction_request_and_items(server: FakeCompactionServer) -> None:
    client = OpenAICompactionClient("gpt-5", base_url=server.url, api_key="sk-test-key-123")
    result = asyncio.run(client.compact_messages(_history(2, 40), instructions="keep tests"))
    path, headers, body = server.requests[0]
    assert path == "/v1/responses/compact"
    assert headers["authorization"] == "Bearer sk-test-key-123"
    assert body["model"] == "gpt-5" and body["instructions"] == "keep tests"
    assert body["input"][0]["content"][0]["type"] == "input_text"
    assert result.provider == "openai" and result.summary is None
    assert result.items[-1] == {
        "type": "compaction",
        "id": "cmp_1",
        "encrypted_content": "gAAAA-opaque",
    }
    assert result.usage["output"] == 120


def test_anthropic_compaction_request_and_block(server: FakeCompactionServer) -> None:
    client = AnthropicCompactionClient("claude-sonnet-4-6", base_url=server.url, api_key="k" * 10)
    result = asyncio.run(client.compact_messages(_history(60, 4_000)))
    path, headers, body = server.requests[0]
    assert path == "/v1/messages"
    assert headers["anthropic-beta"] == ANTHROPIC_COMPACTION_BETA
    assert headers["anthropic-version"] == "2023-06-01" and headers["x-api-key"] == "k" * 10
    (edit,) = body["context_management"]["edits"]
    assert edit == {
        "type": "compact_20260112",
        "trigger": {"type": "input_tokens", "value": 50_000},
        "pause_after_compaction": True,
    }
    assert body["messages"][-1]["role"] == "user"
    assert result.summary == server.summary
    assert result.items == [{"type": "compaction", "content": server.summary}]


def test_anthropic_does_not_compact_a_short_conversation(server: FakeCompactionServer) -> None:
    client = AnthropicCompactionClient("claude-sonnet-4-6", base_url=server.url, api_key="")
    with pytest.raises(ModelResponseError, match="over 50,000 input tokens"):
        asyncio.run(client.compact_messages(_history(2, 40)))


def test_the_specs_build_the_clients() -> None:
    openai = create_client("openai-compact:gpt-5", api_key="")
    anthropic = create_client("anthropic-compact:claude-sonnet-4-6", base_url="http://127.0.0.1:9")
    assert isinstance(openai, OpenAICompactionClient) and openai.name == "openai-compact:gpt-5"
    assert isinstance(anthropic, AnthropicCompactionClient)
    assert missing_api_key(openai) == "OPENAI_API_KEY"
    assert missing_api_key(anthropic) is None  # another server than Anthropic's


def test_an_openai_compaction_entry_keeps_the_item_and_an_offline_summary(
    server: FakeCompactionServer,
) -> None:
    tree = _tree(12, 2_000)
    client = create_client("openai-compact:gpt-5", base_url=server.url, api_key="sk-x")
    outcome = asyncio.run(compact_session(tree, client, settings=KEEP))
    assert isinstance(outcome, CompactionOutcome)
    entry = outcome.entry
    details = entry["details"]
    assert details["method"] == "provider"
    assert details["providerCompaction"]["provider"] == "openai"
    assert details["providerCompaction"]["items"][-1]["type"] == "compaction"
    # The readable summary for pi and other providers: the offline summarizer's.
    assert "## Goal" in entry["summary"] and "never touch the migrations folder" in entry["summary"]
    assert "gAAAA" not in entry["summary"]
    context = tree.build_session_context().messages
    assert context[0]["role"] == "compactionSummary"


def test_an_anthropic_compaction_entry_has_the_providers_summary(
    server: FakeCompactionServer,
) -> None:
    tree = _tree(60, 4_000)
    client = create_client("anthropic-compact:claude-sonnet-4-6", base_url=server.url)
    outcome = asyncio.run(compact_session(tree, client, settings=KEEP))
    assert isinstance(outcome, CompactionOutcome)
    entry = outcome.entry
    assert entry["summary"].startswith(server.summary)
    assert "Recorded Facts" in entry["summary"]  # our facts appended, as for any model
    assert entry["details"]["providerCompaction"]["items"] == [
        {"type": "compaction", "content": server.summary}
    ]
    assert entry["details"]["method"] == "provider"


def test_a_failing_provider_falls_back_to_the_offline_summarizer(
    server: FakeCompactionServer,
) -> None:
    server.replies.append((500, {"error": {"type": "api_error", "message": "overloaded"}}))
    tree = _tree(12, 2_000)
    client = create_client("openai-compact:gpt-5", base_url=server.url, api_key="sk-x")
    outcome = asyncio.run(compact_session(tree, client, settings=KEEP))
    assert isinstance(outcome, CompactionOutcome)
    entry = outcome.entry
    assert entry["details"]["method"] == "offline-fallback"
    assert "providerCompaction" not in entry["details"]


def test_compact_command_with_a_provider_compaction(
    server: FakeCompactionServer, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    tree = SessionTree.open(path)
    for message in _history(12, 2_000):
        tree.append_message(message)
    ok(
        "compact",
        path,
        "--model",
        "openai-compact:gpt-5",
        "--base-url",
        server.url,
        "-q",
        "--keep-recent",
        "2000",
    )
    last = json.loads(path.read_text().splitlines()[-1])
    assert last["type"] == "compaction"
    assert last["details"]["providerCompaction"]["items"][-1]["encrypted_content"]


def _anthropic_compacted(server: FakeCompactionServer) -> SessionTree:
    tree = _tree(60, 4_000)
    client = create_client("anthropic-compact:claude-sonnet-4-6", base_url=server.url)
    assert isinstance(asyncio.run(compact_session(tree, client, settings=KEEP)), CompactionOutcome)
    tree.append_message(user("go on"))
    return tree


def test_anthropic_gets_its_compaction_block_back(server: FakeCompactionServer) -> None:
    tree = _anthropic_compacted(server)
    sent = provider_messages(convert_to_llm(tree.build_session_context().messages))
    replayed = replay_provider_compaction(sent, tree.get_branch_view(), "anthropic")
    assert replayed[0] is sent[0]  # the summary (the API drops what precedes the block)
    assert replayed[1] == {
        "role": "assistant",
        "content": [{"type": "compaction", "content": server.summary}],
        "provider": "anthropic",
    }
    assert replayed[2:] == sent[1:]
    wire = to_anthropic_messages(replayed)
    assert {"type": "compaction", "content": server.summary} in wire[1]["content"]
    # Another provider, or a context without that compaction, gets the request unchanged.
    assert replay_provider_compaction(sent, tree.get_branch_view(), "openai") is sent
    plain = _tree(2, 10)
    assert replay_provider_compaction(sent, plain.get_branch_view(), "anthropic") is sent


def test_the_anthropic_client_sends_the_compaction_beta_with_a_block() -> None:
    from contextree.llm.anthropic import AnthropicClient

    client = AnthropicClient("claude-sonnet-4-6", base_url="http://127.0.0.1:9", api_key="")
    block = {"type": "compaction", "content": "s"}
    body = {"messages": [{"role": "assistant", "content": [block]}]}
    assert client._request_headers(body)["anthropic-beta"] == ANTHROPIC_COMPACTION_BETA
    assert "anthropic-beta" not in client._request_headers({"messages": []})
    other = AnthropicClient("m", base_url="http://127.0.0.1:9", headers={"anthropic-beta": "x-1"})
    assert other._request_headers(body)["anthropic-beta"] == f"x-1,{ANTHROPIC_COMPACTION_BETA}"


def test_the_agent_sends_anthropics_compaction_back_to_anthropic(
    server: FakeCompactionServer,
) -> None:
    from contextree.llm.scripted import ScriptedClient
    from contextree.runtime.agent import AgentSession

    tree = _anthropic_compacted(server)
    for spec, expected in (("anthropic:claude-sonnet-4-6", True), ("openai:gpt-5", False)):
        client = ScriptedClient(spec, default="ok")
        agent = AgentSession(tree, client, model_spec=spec, context_window=10**6)
        asyncio.run(agent.prompt("next step"))
        blocks = [
            block
            for message in client.requests[0].messages
            for block in message.get("content") or []
            if isinstance(block, dict)
        ]
        assert ({"type": "compaction", "content": server.summary} in blocks) is expected
