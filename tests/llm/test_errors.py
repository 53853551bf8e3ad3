"""Overflow, retryable and auth classification; retry-after parsing (pi-behaviour.md §10)."""

from __future__ import annotations

import re
from email.utils import formatdate
from typing import Any

import pytest

from contextree.errors import (
    ContextOverflowError,
    ModelError,
    ModelHTTPError,
    ModelResponseError,
    ModelTimeoutError,
)
from contextree.llm.errors import (
    OVERFLOW_PATTERNS,
    classify,
    is_auth_error,
    is_context_overflow,
    is_overflow_text,
    is_retryable_error,
    parse_retry_after,
)

# One real-world message per pattern, in the order of OVERFLOW_PATTERNS.
OVERFLOW_SAMPLES = [
    "prompt is too long: 213462 tokens > 200000 maximum",  # Anthropic
    "Input is too long for requested model.",  # Bedrock
    "The input token count exceeds the context window of the model",
    "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
    "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",  # xAI
    "Please reduce the length of the messages or completion.",  # Groq
    "This model's maximum context length is 128000 tokens. However, you requested 130000 tokens",
    "Requested token count exceeds the limit of 65536",
    "the request exceeds the available context size, try increasing it",  # llama.cpp
    "input length (9000) is greater than the context length (8192)",  # LM Studio
    "context window exceeds limit",  # MiniMax
    "Prompt exceeded model token limit",  # Kimi
    "Error code: context_length_exceeded",
    "Too many tokens in request",
    "token limit exceeded for this request",
    "request_too_large",
    "model_context_window_exceeded",  # z.ai / the overflow-utils test
    "Request exceeds the maximum size",  # Anthropic 413
    "413 Payload Too Large",
    "Request Entity Too Large",
    "413: the request body is too large",
    "requested tokens (9000) exceed context window of 8192",
    "context length exceeded: overflow by 1200 tokens",
    "input is too large for the n_ctx of this model",
    "requested tokens 9000 exceeds n_ctx 8192",
    "400 status code (no body)",  # Cerebras
    "Prompt contains 300000 tokens, too large for model with 131072 maximum context length",
    "prompt too long; exceeded max context length by 1200 tokens",  # Ollama
]


def test_one_sample_per_pattern() -> None:
    assert len(OVERFLOW_SAMPLES) == len(OVERFLOW_PATTERNS)
    for pattern, sample in zip(OVERFLOW_PATTERNS, OVERFLOW_SAMPLES, strict=True):
        assert re.search(pattern, sample, re.IGNORECASE), (pattern, sample)


@pytest.mark.parametrize("text", OVERFLOW_SAMPLES)
def test_overflow_text(text: str) -> None:
    assert is_overflow_text(text)
    assert is_overflow_text(text.upper())  # case-insensitive


@pytest.mark.parametrize(
    "text",
    [
        "Throttling error: Too many tokens, please wait before trying again.",
        "Service unavailable: token limit exceeded",
        "Rate limit reached for gpt-4o: too many tokens per minute",
        "429 Too Many Requests: prompt is too long for the current quota",
        "rate limit: context_length_exceeded",
    ],
)
def test_rate_limit_messages_are_not_overflow(text: str) -> None:
    assert not is_overflow_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Internal server error",
        "invalid api key",
        "413 image exceeds 5 MB maximum",  # an unrelated 413 (overflow-utils test)
        "413 status code: attachments must be smaller than 20 MB",
        "401 status code (no body)",
        "The context window of this model is 128k tokens",
    ],
)
def test_not_overflow(text: str) -> None:
    assert not is_overflow_text(text)


def test_overflow_utils_cases() -> None:
    # OMP packages/ai/test/overflow-utils.test.ts (§13.2)
    assert is_overflow_text("model_context_window_exceeded")
    assert is_overflow_text("413 Request Entity Too Large")
    assert is_overflow_text("413 status code (no body)")
    assert is_overflow_text('413 {"error":{"type":"request_too_large"}}')
    assert not is_overflow_text("413 Upload rejected: unsupported media type")


def _message(stop: str, error: str | None = None, **usage: int) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "stopReason": stop,
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, **usage},
    }
    if error is not None:
        message["errorMessage"] = error
    return message


class TestIsContextOverflow:
    def test_error_message(self) -> None:
        assert is_context_overflow(_message("error", "prompt is too long: 1 > 0"), None)
        assert is_context_overflow(_message("error", "prompt is too long"), 200_000)

    def test_error_message_needs_error_stop_reason(self) -> None:
        assert not is_context_overflow(_message("stop", "prompt is too long"), None)

    def test_rate_limit_error_is_not_overflow(self) -> None:
        assert not is_context_overflow(_message("error", "rate limit: too many tokens"), None)

    def test_silent_overflow_any_stop_reason(self) -> None:
        for stop in ("stop", "length", "toolUse", "error", "aborted"):
            assert is_context_overflow(_message(stop, input=900, cacheRead=80, cacheWrite=21), 1000)

    def test_fits(self) -> None:
        assert not is_context_overflow(
            _message("stop", input=900, cacheRead=80, cacheWrite=20), 1000
        )

    def test_no_window_no_silent_overflow(self) -> None:
        assert not is_context_overflow(_message("stop", input=10**9), None)
        assert not is_context_overflow(_message("stop", input=10**9), 0)

    def test_length_with_no_output_near_the_window(self) -> None:
        assert is_context_overflow(_message("length", input=980, cacheRead=10, output=0), 1000)
        assert not is_context_overflow(_message("length", input=980, cacheRead=9, output=0), 1000)
        assert not is_context_overflow(_message("length", input=995, output=3), 1000)
        assert not is_context_overflow(_message("stop", input=995, output=0), 1000)

    def test_missing_usage(self) -> None:
        assert not is_context_overflow({"role": "assistant", "stopReason": "stop"}, 1000)


@pytest.mark.parametrize(
    "text",
    [
        "529 Overloaded",
        "Provider returned error",
        "Rate limit exceeded",
        "429 Too Many Requests",
        "500 Internal Server Error",
        "502 Bad Gateway",
        "503 Service Unavailable",
        "504 Gateway Timeout",
        "server_error",
        "network error talking to http://127.0.0.1:1",
        "connection error: cannot reach http://127.0.0.1:1 (connection refused)",
        "other side closed",
        "fetch failed",
        "upstream connect error or disconnect/reset before headers",
        "socket hang up",
        "request timed out after 5 s",
        "the stream terminated before the response was complete",
        "stream stall detected",
        "No error details in response",
        "the socket closed unexpectedly",
        "stream envelope error: the stream ended before message_start",
        # usage limits
        "usage limit reached",
        "usage_limit_reached",
        "usage_not_included",
        "limit_reached",
        "Quota exceeded for this project",
        "RESOURCE_EXHAUSTED",
    ],
)
def test_retryable(text: str) -> None:
    assert is_retryable_error(text, retry_after=None)


@pytest.mark.parametrize(
    "text", ["400 invalid model", "404 model not found", "unknown tool", "401 Unauthorized"]
)
def test_not_retryable(text: str) -> None:
    assert not is_retryable_error(text, retry_after=None)


def test_retry_after_makes_anything_retryable() -> None:
    assert is_retryable_error("400 please wait", retry_after=0.0)


def test_overflow_is_never_retryable() -> None:
    assert not is_retryable_error("500 prompt is too long", retry_after=3.0)


NOW = 1_700_000_000.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "12"}, 12.0),
        ({"Retry-After": "1.5"}, 1.5),
        ({"retry-after": formatdate(NOW + 30, usegmt=True)}, 30.0),
        ({"retry-after": formatdate(NOW - 30, usegmt=True)}, 0.0),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"x-ratelimit-reset-ms": "4000"}, 4.0),
        ({"x-ratelimit-reset-ms": str(int((NOW + 8) * 1000))}, 8.0),
        ({"x-ratelimit-reset": str(int(NOW + 20))}, 20.0),
        ({"x-ratelimit-reset": "20"}, 20.0),
        ({"x-ratelimit-reset": "6m0s"}, 360.0),
        ({"x-ratelimit-reset": "1h2m3.5s"}, 3723.5),
        ({"x-ratelimit-reset": "20ms"}, 0.02),
        ({}, None),
        ({"retry-after": "soon"}, None),
        ({"x-ratelimit-reset": "later"}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers, now=NOW) == (
        pytest.approx(expected) if expected is not None else None
    )


def test_auth() -> None:
    assert is_auth_error(401)
    assert is_auth_error(403)
    assert not is_auth_error(429)
    for text in (
        "auth_unavailable",
        "No auth available for provider",
        "Invalid API key",
        "401 Unauthorized",
        "invalid x-api-key",
        "Incorrect API key provided: sk-***",
    ):
        assert is_auth_error(text), text
    assert not is_auth_error("500 upstream failure")


class TestClassify:
    def test_overflow(self) -> None:
        assert classify(ContextOverflowError("m", "400 prompt is too long")) == "overflow"
        assert classify(ModelResponseError("m", "context_length_exceeded")) == "overflow"
        assert classify(RuntimeError("prompt is too long")) == "overflow"

    def test_auth(self) -> None:
        assert classify(ModelHTTPError("m", "401 nope", status=401)) == "auth"
        assert classify(ModelHTTPError("m", "403 Forbidden", status=403)) == "auth"

    def test_retryable(self) -> None:
        assert classify(ModelHTTPError("m", "429 slow down", status=429)) == "retryable"
        assert classify(ModelHTTPError("m", "418 teapot", status=418, retry_after=2)) == "retryable"
        assert classify(ModelHTTPError("m", "529 busy", status=529)) == "retryable"
        assert classify(ModelTimeoutError("m", "no answer")) == "retryable"
        assert classify(ModelError("m", "connection error: refused")) == "retryable"

    def test_fatal(self) -> None:
        assert classify(ModelHTTPError("m", "400 bad request", status=400)) == "fatal"
        assert classify(ModelResponseError("m", "the response has no choices")) == "fatal"
        assert classify(ValueError("unknown role")) == "fatal"
