"""The remote summarization endpoint client (pi-behaviour.md §7.6) against the fake server."""

from __future__ import annotations

from http import HTTPStatus

import pytest

from contextree.errors import ModelError, ModelHTTPError, ModelResponseError, ModelTimeoutError
from contextree.llm import CompletionRequest, RemoteSummaryClient, classify
from fakes.fake_llm import FakeLLMServer

pytestmark = pytest.mark.anyio

TOKEN = "remote-token-SECRET-42"


def prompt(text: str = "<conversation>...</conversation>") -> CompletionRequest:
    return CompletionRequest(
        system_prompt="You are a summarizer.",
        messages=[{"role": "user", "content": [{"type": "text", "text": text}]}],
        max_tokens=13_107,
        reasoning="high",
    )


async def test_summary_and_request_shape(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_text("## Goal\nShip it", short_summary="Shipping")
    client = RemoteSummaryClient(fake_llm.remote_url, token=TOKEN)
    completion = await client.complete(prompt())

    assert completion.text == "## Goal\nShip it"
    assert completion.extra == {"shortSummary": "Shipping"}
    request = fake_llm.last
    assert request.path == "/summarize"
    assert request.body == {
        "systemPrompt": "You are a summarizer.",
        "prompt": "<conversation>...</conversation>",
    }
    assert request.headers["content-type"] == "application/json"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"


async def test_no_token_no_authorization(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_text("s")
    completion = await RemoteSummaryClient(fake_llm.remote_url).complete(prompt())
    assert completion.extra == {}
    assert "authorization" not in fake_llm.last.headers


async def test_string_content_is_the_prompt(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_text("s")
    request = CompletionRequest("", [{"role": "user", "content": "just text"}])
    await RemoteSummaryClient(fake_llm.remote_url).complete(request)
    assert fake_llm.last.body == {"systemPrompt": "", "prompt": "just text"}


@pytest.mark.parametrize("status", [500, 503, 401])
async def test_non_2xx(fake_llm: FakeLLMServer, status: int) -> None:
    fake_llm.enqueue_error(status, body=f"secret echo {TOKEN}", retry_after=3)
    client = RemoteSummaryClient(fake_llm.remote_url, token=TOKEN)
    with pytest.raises(ModelHTTPError) as caught:
        await client.complete(prompt())
    phrase = HTTPStatus(status).phrase
    assert str(caught.value) == f"Remote compaction failed ({status} {phrase})"
    assert caught.value.status == status
    assert caught.value.retry_after == 3.0
    assert TOKEN not in (caught.value.body or "")


async def test_payload_too_large_classifies_as_overflow(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_overflow()
    with pytest.raises(ModelHTTPError) as caught:
        await RemoteSummaryClient(fake_llm.remote_url).complete(prompt())
    assert str(caught.value) == f"Remote compaction failed (413 {HTTPStatus(413).phrase})"
    assert classify(caught.value) == "overflow"


@pytest.mark.parametrize(
    "body", [{"nope": 1}, {"summary": 42}, {"summary": None}, ["summary"]], ids=repr
)
async def test_missing_summary(fake_llm: FakeLLMServer, body: object) -> None:
    fake_llm.enqueue_raw(200, body)
    with pytest.raises(ModelResponseError) as caught:
        await RemoteSummaryClient(fake_llm.remote_url).complete(prompt())
    assert str(caught.value) == "Remote compaction response missing summary"


async def test_not_json(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_malformed()
    with pytest.raises(ModelResponseError, match="not JSON"):
        await RemoteSummaryClient(fake_llm.remote_url).complete(prompt())


async def test_timeout(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_slow(30)
    try:
        with pytest.raises(ModelTimeoutError):
            await RemoteSummaryClient(fake_llm.remote_url, timeout=0.3).complete(prompt())
    finally:
        fake_llm.release()


async def test_connection_refused() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ModelError, match="connection error"):
        await RemoteSummaryClient(f"http://127.0.0.1:{port}/summarize").complete(prompt())


@pytest.mark.parametrize(
    "messages",
    [
        [],
        [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
        [{"role": "assistant", "content": [{"type": "text", "text": "a"}]}],
    ],
)
async def test_needs_exactly_one_user_message(messages: list[dict[str, object]]) -> None:
    client = RemoteSummaryClient("http://127.0.0.1:9/summarize")
    with pytest.raises(ValueError, match="exactly one user message"):
        await client.complete(CompletionRequest("", messages))


async def test_images_cannot_be_sent() -> None:
    image = {"type": "image", "data": "", "mimeType": "image/png"}
    request = CompletionRequest("", [{"role": "user", "content": [image]}])
    with pytest.raises(ValueError, match='type "image"'):
        await RemoteSummaryClient("http://127.0.0.1:9/summarize").complete(request)


def test_endpoint_must_be_http() -> None:
    with pytest.raises(ValueError, match="http"):
        RemoteSummaryClient("ftp://x")
    assert TOKEN not in repr(RemoteSummaryClient("http://127.0.0.1:9/s", token=TOKEN))
