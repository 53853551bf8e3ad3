"""The request and completion values."""

from __future__ import annotations

import dataclasses

import pytest

from contextree.llm import Completion, CompletionRequest, make_usage


def test_request_defaults() -> None:
    request = CompletionRequest("s", [])
    assert request.max_tokens is None
    assert request.reasoning is None
    assert request.tools == []
    assert request.temperature is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.max_tokens = 3  # type: ignore[misc]


def test_text_joins_text_blocks_with_newline() -> None:
    completion = Completion(
        content=[
            {"type": "thinking", "thinking": "ignored"},
            {"type": "text", "text": "first"},
            {"type": "toolCall", "id": "c", "name": "ls", "arguments": {}},
            {"type": "text", "text": "second"},
        ]
    )
    assert completion.text == "first\nsecond"
    assert completion.tool_calls == [{"type": "toolCall", "id": "c", "name": "ls", "arguments": {}}]


def test_usage_total() -> None:
    assert make_usage(1, 2, 3, 4) == {
        "input": 1,
        "output": 2,
        "cacheRead": 3,
        "cacheWrite": 4,
        "totalTokens": 10,
    }


def test_to_message() -> None:
    completion = Completion(
        content=[{"type": "text", "text": "x"}],
        stop_reason="error",
        error_message="boom",
        model="m",
    )
    assert completion.to_message(timestamp=5) == {
        "role": "assistant",
        "content": [{"type": "text", "text": "x"}],
        "model": "m",
        "usage": make_usage(),
        "stopReason": "error",
        "errorMessage": "boom",
        "timestamp": 5,
    }
