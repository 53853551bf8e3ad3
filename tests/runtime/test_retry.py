"""``FallbackClient``: candidates in order, retries with backoff (pi-behaviour §10.3 step 7).

Candidates are real OpenAI-compatible clients talking to the fake server on 127.0.0.1; the
injected ``sleep`` records each delay instead of waiting.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from contextree.errors import ContextOverflowError, ModelError, ModelHTTPError, ModelTimeoutError
from contextree.llm.base import CompletionRequest
from contextree.llm.openai_compat import OpenAIClient
from contextree.runtime.retry import Attempt, FallbackClient, retry_delay_ms
from contextree.settings.schema import RetrySettings
from fakes.fake_llm import FakeLLMServer

pytestmark = pytest.mark.anyio

REQUEST = CompletionRequest(
    system_prompt="You summarize.",
    messages=[{"role": "user", "content": [{"type": "text", "text": "Summarize this."}]}],
)


class Sleeps(list[float]):
    """An injected sleep that records the delay and returns at once."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client(fake: FakeLLMServer, model: str = "gpt-a", *, timeout: float = 30.0) -> OpenAIClient:
    return OpenAIClient(model, base_url=fake.url, api_key="", timeout=timeout)


def models(fake: FakeLLMServer) -> list[str]:
    return [request.body["model"] for request in fake.requests]


# -- retry_delay_ms ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attempt", "retry_after", "expected"),
    [
        (0, None, 2_000.0),
        (1, None, 4_000.0),
        (3, None, 16_000.0),
        (0, 3.0, 3_000.0),  # retry-after longer than the backoff wins
        (1, 1.0, 4_000.0),  # shorter: the backoff wins
        (0, 0.0, 2_000.0),
    ],
)
def test_retry_delay_is_the_longer_of_backoff_and_retry_after(
    attempt: int, retry_after: float | None, expected: float
) -> None:
    assert retry_delay_ms(attempt, RetrySettings(), retry_after) == expected


def test_retry_delay_follows_the_base_delay_setting() -> None:
    assert retry_delay_ms(2, RetrySettings(base_delay_ms=100), None) == 400.0


# -- retries ----------------------------------------------------------------------------------


async def test_429_is_retried_after_the_stated_delay(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_error(429, retry_after=3)
    fake_llm.enqueue_text("summary")
    sleeps = Sleeps()
    caller = FallbackClient([client(fake_llm)], sleep=sleeps)

    completion = await caller.complete(REQUEST)

    assert completion.text == "summary"
    assert sleeps == [3.0]
    failed = Attempt("openai:gpt-a", 0, "retryable", "429 fake error 429", 3000.0)
    assert caller.attempts == [failed]
    assert len(fake_llm.requests) == 2
    assert fake_llm.requests[0].body == fake_llm.requests[1].body


async def test_429_retry_after_ms_header_is_honoured(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_error(429, retry_after_ms=2500)
    fake_llm.enqueue_text("summary")
    sleeps = Sleeps()
    await FallbackClient([client(fake_llm)], sleep=sleeps).complete(REQUEST)
    assert sleeps == [2.5]


async def test_5xx_backs_off_exponentially_then_fails_over(fake_llm: FakeLLMServer) -> None:
    for _ in range(4):
        fake_llm.enqueue_error(503)
    fake_llm.enqueue_text("from the fallback")
    sleeps = Sleeps()
    caller = FallbackClient([client(fake_llm), client(fake_llm, "gpt-b")], sleep=sleeps)

    completion = await caller.complete(REQUEST)

    assert completion.text == "from the fallback"
    assert sleeps == [2.0, 4.0, 8.0]  # maxRetries = 3: four tries on the first candidate
    assert models(fake_llm) == ["gpt-a"] * 4 + ["gpt-b"]
    assert [a.delay_ms for a in caller.attempts] == [2000.0, 4000.0, 8000.0, None]
    assert {a.kind for a in caller.attempts} == {"retryable"}


async def test_timeouts_are_retried_then_fail_over(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_slow(60)
    fake_llm.enqueue_slow(60)
    fake_llm.enqueue_text("from the fallback")
    sleeps = Sleeps()
    # Long enough for a request to reach the server on a loaded machine (else the slow
    # replies queued for gpt-a are left for gpt-b), far below the 60 s they take.
    impatient = client(fake_llm, timeout=1.0)
    caller = FallbackClient(
        [impatient, client(fake_llm, "gpt-b")],
        RetrySettings(max_retries=1),
        sleep=sleeps,
    )

    completion = await caller.complete(REQUEST)

    assert completion.text == "from the fallback"
    assert sleeps == [2.0]
    assert models(fake_llm) == ["gpt-a", "gpt-a", "gpt-b"]
    assert [a.kind for a in caller.attempts] == ["retryable", "retryable"]


async def test_the_last_error_is_raised_when_every_candidate_fails(
    fake_llm: FakeLLMServer,
) -> None:
    for status in (500, 500, 502, 502):
        fake_llm.enqueue_error(status)
    sleeps = Sleeps()
    caller = FallbackClient(
        [client(fake_llm), client(fake_llm, "gpt-b")], RetrySettings(max_retries=1), sleep=sleeps
    )

    with pytest.raises(ModelHTTPError) as failure:
        await caller.complete(REQUEST)

    assert failure.value.status == 502
    assert failure.value.model == "openai:gpt-b"
    assert sleeps == [2.0, 2.0]  # each candidate starts its backoff afresh


async def test_a_long_retry_after_moves_on_to_the_next_candidate(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_error(429, retry_after=60)
    fake_llm.enqueue_text("from the fallback")
    sleeps = Sleeps()
    caller = FallbackClient([client(fake_llm), client(fake_llm, "gpt-b")], sleep=sleeps)

    assert (await caller.complete(REQUEST)).text == "from the fallback"
    assert sleeps == []  # 60 s > maxDelayMs (30 s) and another candidate is left
    assert models(fake_llm) == ["gpt-a", "gpt-b"]


async def test_a_long_retry_after_is_waited_out_by_the_last_candidate(
    fake_llm: FakeLLMServer,
) -> None:
    fake_llm.enqueue_error(429, retry_after=60)
    fake_llm.enqueue_text("eventually")
    sleeps = Sleeps()
    caller = FallbackClient([client(fake_llm)], sleep=sleeps)

    assert (await caller.complete(REQUEST)).text == "eventually"
    assert sleeps == [60.0]


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_failures_move_on_at_once(fake_llm: FakeLLMServer, status: int) -> None:
    fake_llm.enqueue_error(status)
    fake_llm.enqueue_text("from the fallback")
    sleeps = Sleeps()
    caller = FallbackClient([client(fake_llm), client(fake_llm, "gpt-b")], sleep=sleeps)

    assert (await caller.complete(REQUEST)).text == "from the fallback"
    assert sleeps == []
    assert [a.kind for a in caller.attempts] == ["auth"]


async def test_fatal_errors_are_not_retried(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_error(400)
    sleeps = Sleeps()
    with pytest.raises(ModelHTTPError, match=r"^400 fake error 400$"):
        await FallbackClient([client(fake_llm)], sleep=sleeps).complete(REQUEST)
    assert sleeps == []
    assert len(fake_llm.requests) == 1


async def test_overflow_is_never_retried_with_the_same_model(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_overflow()
    sleeps = Sleeps()
    with pytest.raises(ContextOverflowError):
        await FallbackClient([client(fake_llm)], sleep=sleeps).complete(REQUEST)
    assert sleeps == []
    assert len(fake_llm.requests) == 1


async def test_overflow_moves_on_to_the_next_candidate(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_overflow()
    fake_llm.enqueue_text("from the bigger model")
    sleeps = Sleeps()
    caller = FallbackClient([client(fake_llm), client(fake_llm, "gpt-big")], sleep=sleeps)
    assert (await caller.complete(REQUEST)).text == "from the bigger model"
    assert sleeps == []
    assert [a.kind for a in caller.attempts] == ["overflow"]


async def test_retries_disabled(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_error(503)
    sleeps = Sleeps()
    caller = FallbackClient([client(fake_llm)], RetrySettings(enabled=False), sleep=sleeps)
    with pytest.raises(ModelHTTPError):
        await caller.complete(REQUEST)
    assert sleeps == []
    assert len(fake_llm.requests) == 1


async def test_no_candidates() -> None:
    with pytest.raises(ModelError, match=r"^Compaction failed: no available model$"):
        await FallbackClient([]).complete(REQUEST)


async def test_the_name_is_the_first_candidates(fake_llm: FakeLLMServer) -> None:
    assert FallbackClient([client(fake_llm), client(fake_llm, "gpt-b")]).name == "openai:gpt-a"
    assert FallbackClient([]).name == "none"


async def test_cancellation_is_not_retried(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_slow(60)
    sleeps = Sleeps()
    caller = FallbackClient([client(fake_llm), client(fake_llm, "gpt-b")], sleep=sleeps)
    task = asyncio.create_task(caller.complete(REQUEST))
    assert await asyncio.to_thread(fake_llm.wait_for_requests, 1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sleeps == []
    assert caller.attempts == []
    assert len(fake_llm.requests) == 1


async def test_a_timeout_is_a_model_timeout_error(fake_llm: FakeLLMServer) -> None:
    fake_llm.enqueue_slow(60)
    caller = FallbackClient([client(fake_llm, timeout=0.2)], RetrySettings(max_retries=0))
    with pytest.raises(ModelTimeoutError):
        await caller.complete(REQUEST)


def test_summary_candidates_end_with_the_largest_window_available_model(tmp_path: Path) -> None:
    from contextree.llm.scripted import ScriptedClient
    from contextree.runtime.agent import AgentSession
    from contextree.session.tree import SessionTree

    current = ScriptedClient(name="openai:gpt-4o")
    fallback = ScriptedClient(name="anthropic:claude-haiku-4-5")
    small = ScriptedClient(name="ollama:qwen2.5")
    large = ScriptedClient(name="openai:gpt-4.1")
    agent = AgentSession(
        SessionTree.open(tmp_path / "s.jsonl"),
        current,
        fallback_clients=[fallback, current],
        available_clients=[small, large, fallback],
    )
    assert [c.name for c in agent.summary_candidates()] == [
        "openai:gpt-4o",
        "anthropic:claude-haiku-4-5",
        "openai:gpt-4.1",
    ]
