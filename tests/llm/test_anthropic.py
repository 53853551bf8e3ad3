"""The mapping between pi messages and the Anthropic Messages API (no network)."""

from __future__ import annotations

from typing import Any

import pytest

from contextree.errors import ContextOverflowError, ModelResponseError
from contextree.llm import CompletionRequest
from contextree.llm.anthropic import (
    AnthropicClient,
    MessageStreamAccumulator,
    build_messages_body,
    parse_message_response,
    thinking_budget,
    to_anthropic_messages,
)

IMAGE = {"type": "image", "data": "aGVsbG8=", "mimeType": "image/jpeg"}
ANTHROPIC_IMAGE = {
    "type": "image",
    "source": {"type": "base64", "media_type": "image/jpeg", "data": "aGVsbG8="},
}


def _result(call_id: str, text: str, *, error: bool = False) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "read",
        "content": [{"type": "text", "text": text}],
        "isError": error,
    }


def test_messages_map_exhaustively() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "plain"},
        {"role": "developer", "content": [{"type": "text", "text": "go"}, IMAGE]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "signed", "thinkingSignature": "sig"},
                {"type": "thinking", "thinking": "unsigned"},
                {
                    "type": "thinking",
                    "thinking": "",
                    "thinkingSignature": "opaque",
                    "redacted": True,
                },
                {"type": "redactedThinking", "data": "omp-opaque"},
                {"type": "text", "text": ""},
                {"type": "text", "text": "Reading two files."},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}},
                {"type": "toolCall", "id": "c2", "name": "read", "arguments": {"path": "b"}},
            ],
        },
        _result("c1", "A"),
        _result("c2", "no such file", error=True),
        {"role": "user", "content": "thanks"},
    ]
    # Consecutive user-role messages are merged (roles alternate), tool results first.
    assert to_anthropic_messages(messages) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "plain"},
                {"type": "text", "text": "go"},
                ANTHROPIC_IMAGE,
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "signed", "signature": "sig"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "redacted_thinking", "data": "omp-opaque"},
                {"type": "text", "text": "Reading two files."},
                {"type": "tool_use", "id": "c1", "name": "read", "input": {"path": "a"}},
                {"type": "tool_use", "id": "c2", "name": "read", "input": {"path": "b"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "c1",
                    "content": [{"type": "text", "text": "A"}],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "c2",
                    "content": [{"type": "text", "text": "no such file"}],
                    "is_error": True,
                },
                {"type": "text", "text": "thanks"},
            ],
        },
    ]


def test_assistant_with_only_unsigned_thinking_is_skipped() -> None:
    messages = [{"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}]}]
    assert to_anthropic_messages(messages) == []


def test_roles_alternate_after_mapping() -> None:
    # A dropped thinking-only reply leaves two user messages; an empty user message goes.
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}]},
        {"role": "user", "content": [{"type": "text", "text": ""}]},
        {"role": "user", "content": ""},
        {"role": "user", "content": "second"},
        {"role": "assistant", "content": [{"type": "text", "text": "a"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "b"}]},
    ]
    assert to_anthropic_messages(messages) == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        },
    ]


def test_tool_results_come_first_in_a_merged_user_message() -> None:
    messages: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {}}],
        },
        {"role": "user", "content": "wait"},
        _result("c1", "A"),
    ]
    mapped = to_anthropic_messages(messages)
    assert [block["type"] for block in mapped[1]["content"]] == ["tool_result", "text"]


@pytest.mark.parametrize(
    ("message", "match"),
    [
        ({"role": "custom", "content": "x"}, 'role "custom"'),
        ({"role": "user", "content": [{"type": "toolCall"}]}, 'type "toolCall"'),
        ({"role": "assistant", "content": [{"type": "video"}]}, 'type "video"'),
    ],
)
def test_unknown_roles_and_blocks_raise(message: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        to_anthropic_messages([message])


@pytest.mark.parametrize(
    ("level", "max_tokens", "budget"),
    [
        (None, 10_000, None),
        ("off", 10_000, None),
        ("minimal", 10_000, 1024),
        ("low", 10_000, 1024),
        ("medium", 10_000, 4096),
        ("high", 13_107, 8192),
        ("xhigh", 32_000, 16_384),
        ("high", 4096, 3072),  # capped: 1024 tokens stay for the answer
        ("high", 2048, 1024),
        ("high", 2047, None),  # no room for the minimum budget
    ],
)
def test_thinking_budget(level: str | None, max_tokens: int, budget: int | None) -> None:
    assert thinking_budget(level, max_tokens) == budget


def _request(**kwargs: Any) -> CompletionRequest:
    return CompletionRequest("sys", [{"role": "user", "content": "x"}], **kwargs)


def test_body() -> None:
    assert build_messages_body(_request(), "claude", stream=False) == {
        "model": "claude",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "x"}],
        "system": "sys",
    }
    body = build_messages_body(
        _request(max_tokens=13_107, reasoning="high", temperature=0.3), "claude", stream=True
    )
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert "temperature" not in body  # thinking requires the default temperature
    assert body["stream"] is True
    plain = build_messages_body(_request(temperature=0.3), "claude", stream=False)
    assert plain["temperature"] == 0.3
    assert "thinking" not in plain
    tools = build_messages_body(_request(tools=[{"name": "ls"}]), "claude", stream=False)["tools"]
    assert tools == [
        {"name": "ls", "description": "", "input_schema": {"type": "object", "properties": {}}}
    ]


def _answer(content: list[dict[str, Any]], stop: str | None = "end_turn") -> dict[str, Any]:
    return {
        "model": "claude-x",
        "content": content,
        "stop_reason": stop,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 3,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 20,
        },
    }


class TestParse:
    def test_blocks_and_usage(self) -> None:
        completion = parse_message_response(
            _answer(
                [
                    {"type": "thinking", "thinking": "t", "signature": "s"},
                    {"type": "redacted_thinking", "data": "opaque"},
                    {"type": "text", "text": "one"},
                    {"type": "text", "text": "two"},
                ]
            ),
            name="n",
            model="m",
        )
        assert completion.content == [
            {"type": "thinking", "thinking": "t", "thinkingSignature": "s"},
            {"type": "thinking", "thinking": "", "thinkingSignature": "opaque", "redacted": True},
            {"type": "text", "text": "one"},
            {"type": "text", "text": "two"},
        ]
        assert completion.text == "one\ntwo"
        assert completion.usage == {
            "input": 10,
            "output": 3,
            "cacheRead": 100,
            "cacheWrite": 20,
            "totalTokens": 133,
        }
        assert completion.model == "claude-x"

    @pytest.mark.parametrize(
        ("raw", "stop"),
        [
            ("end_turn", "stop"),
            ("stop_sequence", "stop"),
            ("pause_turn", "stop"),
            ("max_tokens", "length"),
            ("model_context_window_exceeded", "length"),
            ("tool_use", "toolUse"),
            ("refusal", "error"),
            ("something_new", "stop"),
        ],
    )
    def test_stop_reasons(self, raw: str, stop: str) -> None:
        completion = parse_message_response(
            _answer([{"type": "text", "text": "x"}], raw), name="n", model="m"
        )
        assert completion.stop_reason == stop
        assert completion.extra["providerStopReason"] == raw

    @pytest.mark.parametrize(
        ("data", "match"),
        [
            ({"content": "text"}, "no content list"),
            (
                _answer([{"type": "web_search_tool_result"}]),
                'unknown type "web_search_tool_result"',
            ),
            (_answer([]), "empty completion"),
            (_answer([{"type": "tool_use", "name": "f", "input": "x"}]), "not an object"),
        ],
    )
    def test_unusable_answers(self, data: Any, match: str) -> None:
        with pytest.raises(ModelResponseError, match=match):
            parse_message_response(data, name="n", model="m")

    def test_error_object(self) -> None:
        error = {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "prompt is too long"},
        }
        with pytest.raises(ContextOverflowError):
            parse_message_response(error, name="n", model="m")


def test_stream_accumulator() -> None:
    acc = MessageStreamAccumulator("n", "m")
    acc.feed(
        "message_start",
        {"type": "message_start", "message": {"model": "c-1", "usage": {"input_tokens": 7}}},
    )
    acc.feed(
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    )
    acc.feed(
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
    )
    acc.feed(
        "content_block_start",
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "t", "name": "ls", "input": {}},
        },
    )
    acc.feed(
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": ""},
        },
    )
    acc.feed("ping", {"type": "ping"})
    acc.feed(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 9},
        },
    )
    acc.feed("message_stop", {"type": "message_stop"})
    completion = acc.finish()
    assert completion.text == "Hi"
    assert completion.tool_calls == [{"type": "toolCall", "id": "t", "name": "ls", "arguments": {}}]
    assert completion.usage["input"] == 7
    assert completion.usage["output"] == 9
    assert completion.model == "c-1"


def test_stream_without_message_start() -> None:
    with pytest.raises(ModelResponseError, match="before message_start"):
        MessageStreamAccumulator("n", "m").finish()


def test_client_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    client = AnthropicClient("c", headers={"anthropic-beta": "x"})
    headers = client._request_headers()
    assert headers["x-api-key"] == "sk-ant-from-env"
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["anthropic-beta"] == "x"
    assert "sk-ant-from-env" not in repr(client)


def test_thinking_from_another_provider_is_not_replayed() -> None:
    message = {
        "role": "assistant",
        "provider": "openai",
        "content": [
            {"type": "thinking", "thinking": "t", "thinkingSignature": '{"id": "rs_1"}'},
            {"type": "text", "text": "answer"},
        ],
    }
    assert to_anthropic_messages([message]) == [
        {"role": "assistant", "content": [{"type": "text", "text": "answer"}]}
    ]


def test_foreign_tool_ids_are_made_valid_on_call_and_result() -> None:
    call_id = "call_abc|fc_123.x"
    messages: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": call_id, "name": "ls", "arguments": {}}],
        },
        {"role": "toolResult", "toolCallId": call_id, "toolName": "ls", "content": "ok"},
    ]
    mapped = to_anthropic_messages(messages)
    assert mapped[0]["content"][0]["id"] == "call_abc_fc_123_x"
    assert mapped[1]["content"][0]["tool_use_id"] == "call_abc_fc_123_x"
