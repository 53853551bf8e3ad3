"""The mapping between pi messages and OpenAI chat completions (no network)."""

from __future__ import annotations

from typing import Any

import pytest

from contextree.errors import ContextOverflowError, ModelResponseError
from contextree.llm import CompletionRequest
from contextree.llm.openai_compat import (
    ChatStreamAccumulator,
    OpenAIClient,
    build_chat_body,
    parse_chat_completion,
    to_openai_messages,
)

IMAGE = {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}


def test_messages_map_exhaustively() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "plain"},
        {"role": "user", "content": [{"type": "text", "text": "look"}, IMAGE]},
        {"role": "developer", "content": "Continue."},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm", "thinkingSignature": "s"},
                {"type": "text", "text": "Let me read it."},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}},
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "body"}, IMAGE],
            "isError": False,
        },
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "only thoughts"}]},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    ]
    assert to_openai_messages("sys", messages) == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "plain"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}},
            ],
        },
        {"role": "user", "content": "Continue."},
        {
            "role": "assistant",
            "content": "Let me read it.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"a"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "body"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Attached image(s) from tool result:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGVsbG8="}},
            ],
        },
        {"role": "user", "content": "a\nb"},
    ]


def test_empty_system_prompt_is_not_sent() -> None:
    assert to_openai_messages("", [{"role": "user", "content": "x"}]) == [
        {"role": "user", "content": "x"}
    ]


def test_tool_call_only_assistant_has_null_content() -> None:
    message = {
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "c", "name": "ls", "arguments": {}}],
    }
    (mapped,) = to_openai_messages("", [message])
    assert mapped["content"] is None
    assert mapped["tool_calls"][0]["function"]["arguments"] == "{}"


@pytest.mark.parametrize(
    ("message", "match"),
    [
        ({"role": "bashExecution", "command": "ls"}, 'role "bashExecution"'),
        ({"role": "user", "content": [{"type": "audio"}]}, 'type "audio"'),
        ({"role": "assistant", "content": [{"type": "image", "data": ""}]}, 'type "image"'),
        ({"role": "toolResult", "content": [{"type": "toolCall"}]}, 'type "toolCall"'),
        ({"role": "user", "content": [{"no": "type"}]}, "must be a dict with a type"),
    ],
)
def test_unknown_roles_and_blocks_raise(message: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        to_openai_messages("", [message])


def _request(**kwargs: Any) -> CompletionRequest:
    return CompletionRequest("s", [{"role": "user", "content": "x"}], **kwargs)


def test_body_options() -> None:
    assert build_chat_body(_request(), "m", stream=False) == {
        "model": "m",
        "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "x"}],
    }
    body = build_chat_body(
        _request(max_tokens=100, reasoning="high", temperature=0.2), "m", stream=True
    )
    assert body["max_tokens"] == 100
    assert body["reasoning_effort"] == "high"
    assert body["temperature"] == 0.2
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert "reasoning_effort" not in build_chat_body(_request(reasoning="off"), "m", stream=False)


def test_tools() -> None:
    body = build_chat_body(
        _request(tools=[{"name": "ls", "description": "List"}]), "m", stream=False
    )
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "ls",
                "description": "List",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    with pytest.raises(ValueError, match="non-empty name"):
        build_chat_body(_request(tools=[{"description": "nameless"}]), "m", stream=False)


def _answer(message: dict[str, Any], finish: str | None = "stop", **extra: Any) -> dict[str, Any]:
    return {"model": "m-1", "choices": [{"message": message, "finish_reason": finish}], **extra}


class TestParse:
    def test_usage_excludes_cached_tokens_from_input(self) -> None:
        usage = {
            "prompt_tokens": 1000,
            "completion_tokens": 50,
            "prompt_tokens_details": {"cached_tokens": 800},
        }
        completion = parse_chat_completion(
            _answer({"content": "hi"}, usage=usage), name="n", model="m"
        )
        assert completion.usage == {
            "input": 200,
            "output": 50,
            "cacheRead": 800,
            "cacheWrite": 0,
            "totalTokens": 1050,
        }
        assert completion.model == "m-1"
        assert completion.extra == {"providerStopReason": "stop"}

    @pytest.mark.parametrize(
        ("finish", "stop"),
        [("stop", "stop"), ("length", "length"), ("tool_calls", "toolUse"), (None, "stop")],
    )
    def test_finish_reasons(self, finish: str | None, stop: str) -> None:
        completion = parse_chat_completion(_answer({"content": "x"}, finish), name="n", model="m")
        assert completion.stop_reason == stop

    def test_content_filter_is_an_error(self) -> None:
        completion = parse_chat_completion(
            _answer({"content": "x"}, "content_filter"), name="n", model="m"
        )
        assert completion.stop_reason == "error"
        assert completion.error_message and "content_filter" in completion.error_message

    def test_tool_calls_with_stop_finish_are_tool_use(self) -> None:
        call = {"id": "c", "function": {"name": "ls", "arguments": ""}}
        completion = parse_chat_completion(
            _answer({"content": None, "tool_calls": [call]}), name="n", model="m"
        )
        assert completion.stop_reason == "toolUse"
        assert completion.tool_calls == [
            {"type": "toolCall", "id": "c", "name": "ls", "arguments": {}}
        ]

    def test_reasoning_content_becomes_thinking(self) -> None:
        completion = parse_chat_completion(
            _answer({"content": "a", "reasoning_content": "r"}), name="n", model="m"
        )
        assert completion.content == [
            {"type": "thinking", "thinking": "r"},
            {"type": "text", "text": "a"},
        ]

    @pytest.mark.parametrize(
        ("data", "match"),
        [
            ([], "not a JSON object"),
            ({"choices": []}, "no choices"),
            ({"choices": [{"finish_reason": "stop"}]}, "no message"),
            (_answer({"content": ""}), "empty completion"),
            (
                _answer({"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{"}}]}),
                'tool "f" are not valid JSON',
            ),
            (
                _answer(
                    {"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "[]"}}]}
                ),
                'tool "f" are not an object',
            ),
        ],
    )
    def test_unusable_answers(self, data: Any, match: str) -> None:
        with pytest.raises(ModelResponseError, match=match):
            parse_chat_completion(data, name="n", model="m")

    def test_error_in_a_200_answer(self) -> None:
        with pytest.raises(ContextOverflowError):
            parse_chat_completion(
                {"error": {"message": "maximum context length is 10 tokens"}}, name="n", model="m"
            )


def test_stream_accumulator_joins_deltas() -> None:
    acc = ChatStreamAccumulator("n", "m")
    acc.feed({"model": "m-2", "choices": [{"delta": {"role": "assistant", "content": "Hel"}}]})
    acc.feed({"choices": [{"delta": {"content": "lo"}}]})
    acc.feed(
        {
            "choices": [
                {
                    "delta": {
                        "tool_calls": [
                            {"index": 0, "id": "c", "function": {"name": "ls", "arguments": '{"p'}}
                        ]
                    }
                }
            ]
        }
    )
    acc.feed(
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": '":1}'}}]}}]}
    )
    acc.feed({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]})
    acc.feed({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}})
    completion = acc.finish(done=True)
    assert completion.text == "Hello"
    assert completion.tool_calls[0]["arguments"] == {"p": 1}
    assert completion.stop_reason == "toolUse"
    assert completion.model == "m-2"
    assert completion.usage["totalTokens"] == 7


def test_stream_without_finish_or_done_is_cut() -> None:
    acc = ChatStreamAccumulator("n", "m")
    acc.feed({"choices": [{"delta": {"content": "Hel"}}]})
    with pytest.raises(ModelResponseError, match="terminated"):
        acc.finish(done=False)


def test_client_reads_key_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-123")
    client = OpenAIClient("m", base_url="http://127.0.0.1:1")
    assert client._request_headers()["authorization"] == "Bearer sk-from-env-123"
    assert "sk-from-env-123" not in repr(client)
    assert "authorization" not in OpenAIClient("m", api_key="")._request_headers()


@pytest.mark.anyio
async def test_a_bad_base_url_is_a_value_error() -> None:
    request = CompletionRequest("", [{"role": "user", "content": "x"}])
    with pytest.raises(ValueError, match="not an http"):
        await OpenAIClient("m", base_url="ftp://127.0.0.1:1", api_key="").complete(request)
