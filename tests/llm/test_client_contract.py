"""One contract, every HTTP-backed client: httpx OpenAI / Anthropic (JSON and SSE) and the
SDK adapters, all against the fake server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from contextree.errors import (
    ContextOverflowError,
    ModelError,
    ModelHTTPError,
    ModelResponseError,
    ModelTimeoutError,
    ModelUnreachableError,
)
from contextree.llm import (
    AnthropicClient,
    AnthropicSDKClient,
    Completion,
    CompletionRequest,
    ModelClient,
    OpenAIClient,
    OpenAISDKClient,
    classify,
)
from fakes.fake_llm import FakeLLMServer

pytestmark = pytest.mark.anyio

KEY = "sk-test-SECRET-0123456789"
TOOLS = [
    {
        "name": "read",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]


@dataclass(frozen=True)
class Flavor:
    id: str
    protocol: str  # "openai" | "anthropic"
    stream: bool = False
    sdk: bool = False

    @property
    def model(self) -> str:
        return "gpt-4o" if self.protocol == "openai" else "claude-sonnet-4-5"


FLAVORS = [
    Flavor("openai-json", "openai"),
    Flavor("openai-sse", "openai", stream=True),
    Flavor("anthropic-json", "anthropic"),
    Flavor("anthropic-sse", "anthropic", stream=True),
    Flavor("openai-sdk", "openai", sdk=True),
    Flavor("anthropic-sdk", "anthropic", sdk=True),
]


STREAMING = [f for f in FLAVORS if f.stream]


@pytest.fixture(params=FLAVORS, ids=[f.id for f in FLAVORS])
def flavor(request: pytest.FixtureRequest) -> Flavor:
    chosen: Flavor = request.param
    if chosen.sdk:
        pytest.importorskip(chosen.protocol)
    return chosen


@pytest.fixture(params=STREAMING, ids=[f.id for f in STREAMING])
def streaming(request: pytest.FixtureRequest) -> Flavor:
    chosen: Flavor = request.param
    return chosen


@asynccontextmanager
async def open_client(
    flavor: Flavor, url: str, *, api_key: str = KEY, timeout: float = 10.0
) -> AsyncIterator[ModelClient]:
    if not flavor.sdk:
        cls: Callable[..., ModelClient] = (
            OpenAIClient if flavor.protocol == "openai" else AnthropicClient
        )
        yield cls(
            flavor.model, base_url=url, api_key=api_key, timeout=timeout, stream=flavor.stream
        )
        return
    if flavor.protocol == "openai":
        import openai

        sdk_openai = openai.AsyncOpenAI(
            base_url=f"{url}/v1", api_key=api_key, timeout=timeout, max_retries=0
        )
        try:
            yield OpenAISDKClient(sdk_openai, flavor.model)
        finally:
            await sdk_openai.close()
    else:
        import anthropic

        sdk_anthropic = anthropic.AsyncAnthropic(
            base_url=url, api_key=api_key, timeout=timeout, max_retries=0
        )
        try:
            yield AnthropicSDKClient(sdk_anthropic, flavor.model)
        finally:
            await sdk_anthropic.close()


def ask(text: str = "Summarize this.", **kwargs: Any) -> CompletionRequest:
    return CompletionRequest(
        system_prompt="You summarize.",
        messages=[{"role": "user", "content": [{"type": "text", "text": text}]}],
        max_tokens=kwargs.pop("max_tokens", 512),
        **kwargs,
    )


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def assert_no_key(exc: BaseException) -> None:
    assert KEY not in str(exc)
    assert KEY not in repr(exc)
    assert KEY not in str(getattr(exc, "body", "") or "")


# -- successful calls ---------------------------------------------------------------------


async def test_text_reply_and_usage(flavor: Flavor, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_text(
        "The goal is X.", usage={"input": 100, "output": 20, "cacheRead": 30, "cacheWrite": 7}
    )
    async with open_client(flavor, fake_llm.url) as client:
        completion = await client.complete(ask())

    assert completion.text == "The goal is X."
    assert completion.content == [{"type": "text", "text": "The goal is X."}]
    assert completion.stop_reason == "stop"
    assert completion.model == flavor.model
    cache_write = 7 if flavor.protocol == "anthropic" else 0  # OpenAI reports no cache writes
    assert completion.usage == {
        "input": 100,
        "output": 20,
        "cacheRead": 30,
        "cacheWrite": cache_write,
        "totalTokens": 150 + cache_write,
    }

    request = fake_llm.last
    assert request.body["model"] == flavor.model
    assert request.body["max_tokens"] == 512
    if flavor.protocol == "openai":
        assert request.path == "/v1/chat/completions"
        assert request.headers["authorization"] == f"Bearer {KEY}"
        assert request.body["messages"] == [
            {"role": "system", "content": "You summarize."},
            {"role": "user", "content": "Summarize this."},
        ]
    else:
        assert request.path == "/v1/messages"
        if flavor.sdk:  # the SDK picks its own auth header and API version
            auth = (request.headers.get("x-api-key"), request.headers.get("authorization"))
            assert KEY in auth or f"Bearer {KEY}" in auth
        else:
            assert request.headers["x-api-key"] == KEY
            assert request.headers["anthropic-version"] == "2023-06-01"
        assert request.body["system"] == "You summarize."
        assert request.body["messages"] == [
            {"role": "user", "content": [{"type": "text", "text": "Summarize this."}]}
        ]
    assert bool(request.body.get("stream")) == flavor.stream


async def test_thinking_is_kept_apart_from_text(flavor: Flavor, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_text("answer", thinking="let me think")
    async with open_client(flavor, fake_llm.url) as client:
        completion = await client.complete(ask())
    assert completion.text == "answer"
    assert completion.content[0]["type"] == "thinking"
    assert completion.content[0]["thinking"] == "let me think"
    if flavor.protocol == "anthropic":
        assert completion.content[0]["thinkingSignature"] == "sig-1"


async def test_tool_call_round_trip(flavor: Flavor, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_tool_call("read", {"path": "src/a.py"}, call_id="call_7", text="Reading.")
    fake_llm.enqueue_text("It defines main().")
    async with open_client(flavor, fake_llm.url) as client:
        first = await client.complete(ask("What is in a.py?", tools=TOOLS))
        assert first.stop_reason == "toolUse"
        assert first.tool_calls == [
            {"type": "toolCall", "id": "call_7", "name": "read", "arguments": {"path": "src/a.py"}}
        ]
        assert first.text == "Reading."
        history = [
            {"role": "user", "content": "What is in a.py?"},
            first.to_message(),
            {
                "role": "toolResult",
                "toolCallId": "call_7",
                "toolName": "read",
                "content": [{"type": "text", "text": "def main(): ..."}],
                "isError": False,
            },
        ]
        second = await client.complete(
            CompletionRequest(system_prompt="", messages=history, max_tokens=256, tools=TOOLS)
        )
    assert second.text == "It defines main()."

    sent_tools = fake_llm.requests[0].body["tools"]
    messages = fake_llm.requests[1].body["messages"]
    if flavor.protocol == "openai":
        assert sent_tools[0]["function"]["name"] == "read"
        assert sent_tools[0]["function"]["parameters"] == TOOLS[0]["parameters"]
        assert messages[1]["role"] == "assistant"
        assert messages[1]["content"] == "Reading."
        call = messages[1]["tool_calls"][0]
        assert call["id"] == "call_7"
        assert call["function"]["name"] == "read"
        assert call["function"]["arguments"] == '{"path":"src/a.py"}'
        assert messages[2] == {
            "role": "tool",
            "tool_call_id": "call_7",
            "content": "def main(): ...",
        }
    else:
        assert sent_tools[0]["input_schema"] == TOOLS[0]["parameters"]
        assert messages[1] == {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "call_7", "name": "read", "input": {"path": "src/a.py"}},
            ],
        }
        assert messages[2] == {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_7",
                    "content": [{"type": "text", "text": "def main(): ..."}],
                }
            ],
        }


async def test_length_stop_with_empty_answer_is_returned(
    flavor: Flavor, fake_llm: FakeLLMServer
) -> None:
    fake_llm.enqueue_text("", stop_reason="length", usage={"input": 5000, "output": 0})
    async with open_client(flavor, fake_llm.url) as client:
        completion = await client.complete(ask())
    assert completion.stop_reason == "length"
    assert completion.text == ""


# -- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "expected"),
    [({"retry-after": "7"}, 7.0), ({"retry-after-ms": "1500"}, 1.5)],
    ids=["seconds", "ms"],
)
async def test_429_with_retry_after(
    flavor: Flavor, fake_llm: FakeLLMServer, headers: dict[str, str], expected: float
) -> None:
    body = {"error": {"message": "Rate limit reached for requests", "type": "rate_limit_error"}}
    fake_llm.enqueue_error(429, body=body, headers=headers)
    async with open_client(flavor, fake_llm.url) as client:
        with pytest.raises(ModelHTTPError) as caught:
            await client.complete(ask())
    assert caught.value.status == 429
    assert caught.value.retry_after == expected
    assert str(caught.value) == "429 Rate limit reached for requests"
    assert caught.value.model.endswith(flavor.model)
    assert classify(caught.value) == "retryable"


async def test_500(flavor: Flavor, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_error(500)
    async with open_client(flavor, fake_llm.url) as client:
        with pytest.raises(ModelHTTPError) as caught:
            await client.complete(ask())
    assert caught.value.status == 500
    assert caught.value.retry_after is None
    assert str(caught.value) == "500 fake error 500"
    assert classify(caught.value) == "retryable"


async def test_error_without_body(flavor: Flavor, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_raw(400, b"")
    async with open_client(flavor, fake_llm.url) as client:
        with pytest.raises(ContextOverflowError) as caught:  # pi: Cerebras/Mistral overflow
            await client.complete(ask())
    assert str(caught.value) == "400 status code (no body)"


async def test_overflow_error(flavor: Flavor, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_overflow()
    async with open_client(flavor, fake_llm.url) as client:
        with pytest.raises(ContextOverflowError) as caught:
            await client.complete(ask())
    assert str(caught.value).startswith("400 ")
    assert classify(caught.value) == "overflow"


async def test_malformed_json(flavor: Flavor, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_malformed()
    async with open_client(flavor, fake_llm.url) as client:
        with pytest.raises(ModelError) as caught:
            await client.complete(ask())
    if not flavor.sdk:
        assert isinstance(caught.value, ModelResponseError)
    assert classify(caught.value) != "overflow"


async def test_empty_completion(flavor: Flavor, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_text("")
    async with open_client(flavor, fake_llm.url) as client:
        with pytest.raises(ModelResponseError, match="empty completion"):
            await client.complete(ask())


async def test_missing_choices_or_content(flavor: Flavor, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_raw(200, {"id": "x", "object": "chat.completion", "model": "m"})
    async with open_client(flavor, fake_llm.url) as client:
        with pytest.raises(ModelError):
            await client.complete(ask())


async def test_timeout(flavor: Flavor, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_slow(30)
    try:
        async with open_client(flavor, fake_llm.url, timeout=0.3) as client:
            with pytest.raises(ModelTimeoutError) as caught:
                await client.complete(ask())
    finally:
        fake_llm.release()
    assert "timed out" in str(caught.value)
    assert classify(caught.value) == "retryable"


async def test_connection_refused(flavor: Flavor) -> None:
    url = closed_port_url()
    async with open_client(flavor, url) as client:
        with pytest.raises(ModelError) as caught:
            await client.complete(ask())
    # Issue 24 point 7: nothing listens there, which a retry does not change.
    assert type(caught.value) is ModelUnreachableError
    assert "connection error" in str(caught.value)
    if not flavor.sdk:
        assert url in str(caught.value)
    assert_no_key(caught.value)
    assert classify(caught.value) == "fatal"


async def test_cancellation_closes_the_request(flavor: Flavor, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_slow(30)
    try:
        async with open_client(flavor, fake_llm.url) as client:
            task = asyncio.ensure_future(client.complete(ask()))
            saw = await anyio.to_thread.run_sync(fake_llm.wait_for_requests, 1, 10.0)
            assert saw, "the server never saw the request"
            task.cancel()
            with anyio.fail_after(5), pytest.raises(asyncio.CancelledError):
                await task
    finally:
        fake_llm.release()
    assert len(fake_llm.requests) == 1


async def test_api_key_never_in_errors(flavor: Flavor, fake_llm: FakeLLMServer) -> None:
    body = {
        "error": {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error"}
    }
    fake_llm.enqueue_error(401, body=body)
    async with open_client(flavor, fake_llm.url) as client:
        assert KEY not in repr(client)
        with pytest.raises(ModelHTTPError) as caught:
            await client.complete(ask())
    assert caught.value.status == 401
    assert "Incorrect API key provided: ***" in str(caught.value)
    assert_no_key(caught.value)
    assert classify(caught.value) == "auth"


# -- streaming only -----------------------------------------------------------------------


async def test_error_event_mid_stream(streaming: Flavor, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_stream_error("Overloaded")
    async with open_client(streaming, fake_llm.url) as client:
        with pytest.raises(ModelResponseError) as caught:
            await client.complete(ask())
    assert "Overloaded" in str(caught.value)
    assert classify(caught.value) == "retryable"


async def test_stream_cut_short(streaming: Flavor, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_cut_stream("half an ans")
    async with open_client(streaming, fake_llm.url) as client:
        with pytest.raises(ModelResponseError, match="terminated") as caught:
            await client.complete(ask())
    assert classify(caught.value) == "retryable"


async def test_read_timeout_mid_stream(streaming: Flavor, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_stalled_stream(30)
    try:
        async with open_client(streaming, fake_llm.url, timeout=0.3) as client:
            with pytest.raises(ModelTimeoutError, match="timed out"):
                await client.complete(ask())
    finally:
        fake_llm.release()


async def test_completion_is_a_value(flavor: Flavor, fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_text("one")
    async with open_client(flavor, fake_llm.url) as client:
        completion = await client.complete(ask())
    assert isinstance(completion, Completion)
    assert completion.to_message()["role"] == "assistant"
    assert completion.to_message()["stopReason"] == "stop"
