"""ScriptedClient: a queue of replies that records requests."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from contextree.errors import ModelHTTPError
from contextree.llm import Completion, CompletionRequest, ModelClient, ScriptedClient, make_usage

pytestmark = pytest.mark.anyio

REQUEST = CompletionRequest("sys", [{"role": "user", "content": "hi"}])


async def test_replies_in_order_and_records_requests() -> None:
    client = ScriptedClient()
    assert isinstance(client, ModelClient)
    client.enqueue_text("one", usage=make_usage(input=3, output=1))
    completion = Completion(content=[{"type": "text", "text": "two"}], stop_reason="length")
    client.enqueue(completion)
    client.enqueue_error(ModelHTTPError("scripted", "429 slow down", status=429, retry_after=1))
    client.enqueue_function(lambda request: Completion.from_text(request.system_prompt))
    assert client.pending == 4

    first = await client.complete(REQUEST)
    assert first.text == "one"
    assert first.usage["totalTokens"] == 4
    assert await client.complete(REQUEST) is completion
    with pytest.raises(ModelHTTPError, match="429"):
        await client.complete(REQUEST)
    assert (await client.complete(REQUEST)).text == "sys"
    assert client.requests == [REQUEST] * 4
    assert client.pending == 0


async def test_empty_script_raises_a_clear_error() -> None:
    client = ScriptedClient("my-model")
    with pytest.raises(RuntimeError, match="no reply left for call 1; enqueue one"):
        await client.complete(REQUEST)


async def test_default_reply() -> None:
    client = ScriptedClient(default="always this")
    assert (await client.complete(REQUEST)).text == "always this"
    assert (await client.complete(REQUEST)).text == "always this"


async def test_gate_lets_a_test_cancel_mid_call() -> None:
    gate = asyncio.Event()
    client = ScriptedClient(gate=gate)
    client.enqueue_text("never delivered")
    task = asyncio.ensure_future(client.complete(REQUEST))
    while not client.requests:
        await asyncio.sleep(0)
    task.cancel()
    with anyio.fail_after(5), pytest.raises(asyncio.CancelledError):
        await task
    assert client.pending == 1  # the reply is still there for the next call
    gate.set()
    assert (await client.complete(REQUEST)).text == "never delivered"
