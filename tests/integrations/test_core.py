"""ManagedSession: the session an outside framework drives (contextree.integrations.core)."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path
from typing import Any

import pytest

from contextree import SessionTree
from contextree.entries.types import AgentMessage
from contextree.errors import CompactionError
from contextree.integrations.core import ManagedSession
from contextree.runtime.events import AgentEvent
from contextree.runtime.triggers import OVERFLOW_RETRY_FAILED
from contextree.settings.load import Settings
from contextree.settings.schema import CompactionSettings, PruneSettings

WINDOW = 20_000
RESERVE = 4_000  # compaction above 16,000 tokens
KEEP = 2_000

pytestmark = pytest.mark.anyio

_ticks = itertools.count()


def settings(**compaction: Any) -> Settings:
    options: dict[str, Any] = {
        "reserve_tokens": RESERVE,
        "keep_recent_tokens": KEEP,
        "adjust_keep_recent_by_usage": False,
        **compaction,
    }
    return Settings(compaction=CompactionSettings(**options), prune=PruneSettings(enabled=False))


def user(text: str) -> AgentMessage:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": _now()}


def assistant(text: str, *, input_tokens: int, calls: tuple[str, ...] = ()) -> AgentMessage:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content += [
        {"type": "toolCall", "id": call, "name": "read", "arguments": {"path": f"{call}.py"}}
        for call in calls
    ]
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "openai",
        "model": "gpt-4o",
        "usage": {
            "input": input_tokens,
            "output": 50,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": input_tokens + 50,
        },
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": _now(),
    }


def tool_result(call: str, text: str) -> AgentMessage:
    return {
        "role": "toolResult",
        "toolCallId": call,
        "toolName": "read",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": _now(),
    }


def _now() -> int:
    # Wall-clock milliseconds, strictly increasing: a reply is newer than the compaction
    # entries (stamped with the real time) written before it.
    return int(time.time() * 1000) + next(_ticks)


def turn(number: int, input_tokens: int) -> list[AgentMessage]:
    """One user request, a tool call with a long result, and the answer (~1,500 tokens)."""
    call = f"call_{number}"
    return [
        user(f"Step {number}: look at module {number} and fix its bug."),
        assistant(f"Reading module {number}.", input_tokens=input_tokens - 100, calls=(call,)),
        tool_result(call, f"def f{number}(x):\n    return x + {number}\n" * 150),
        assistant(f"Fixed module {number}.", input_tokens=input_tokens),
    ]


def managed(tmp_path: Path, **options: Any) -> ManagedSession:
    options.setdefault("settings", settings())
    return ManagedSession.open(
        tmp_path / "s.jsonl", model="openai:gpt-4o", context_window=WINDOW, **options
    )


def compactions(session: ManagedSession) -> list[dict[str, Any]]:
    return [e for e in session.tree.get_entries() if e.get("type") == "compaction"]


async def test_below_the_threshold_nothing_happens(tmp_path: Path) -> None:
    session = managed(tmp_path)
    session.append(turn(1, 3_000))

    assert await session.maybe_compact() is None
    assert compactions(session) == []


async def test_measured_usage_over_the_threshold_compacts_and_the_context_shrinks(
    tmp_path: Path,
) -> None:
    events: list[AgentEvent] = []
    session = managed(tmp_path, listener=events.append)
    for number in range(1, 11):
        session.append(turn(number, 1_600 * number))
    before = len(session.context_messages())

    result = await session.maybe_compact()

    assert result is not None and result.summary
    assert len(compactions(session)) == 1
    messages = session.context_messages()
    assert messages[0]["role"] == "compactionSummary"
    assert len(messages) < before
    assert [e.type for e in events] == ["auto_compaction_start", "auto_compaction_end"]
    assert events[0].data["reason"] == "threshold"
    # The file is a pi session: opened again, the same context comes back.
    assert SessionTree.open(tmp_path / "s.jsonl").build_session_context().messages == messages


async def test_usage_from_before_a_compaction_does_not_compact_again(tmp_path: Path) -> None:
    session = managed(tmp_path)
    for number in range(1, 11):
        session.append(turn(number, 1_600 * number))
    assert await session.maybe_compact() is not None

    # The kept messages still carry usage measured on the old, long context.
    assert await session.maybe_compact() is None
    assert len(compactions(session)) == 1


async def test_a_long_conversation_compacts_again_and_again(tmp_path: Path) -> None:
    session = managed(tmp_path)
    number = 0
    for _ in range(3):
        grew = 0
        while await session.maybe_compact() is None:
            number += 1
            grew += 1
            # Usage as a provider measures it: the current context plus this turn.
            measured = sum(len(str(m)) // 4 for m in session.context_messages()) + 1_500
            session.append(turn(number, measured))
            assert grew < 40, "the threshold was never crossed"
    assert len(compactions(session)) == 3
    # Every compaction after the first builds on the one before it (iterative summaries).
    last = compactions(session)[-1]
    assert "Step 1" in last["summary"] or "module 1" in last["summary"]


async def test_overflow_compacts_once_until_a_good_reply(tmp_path: Path) -> None:
    events: list[AgentEvent] = []
    session = managed(tmp_path, listener=events.append)
    for number in range(1, 6):
        session.append(turn(number, 1_000))

    assert await session.maybe_compact(overflow=True) is not None
    assert events[0].data["reason"] == "overflow"
    events.clear()

    assert await session.maybe_compact(overflow=True) is None
    assert events[-1].data["errorMessage"] == OVERFLOW_RETRY_FAILED

    for number in range(6, 10):
        session.append(turn(number, 1_000))
    assert await session.maybe_compact(overflow=True) is not None
    assert len(compactions(session)) == 2


async def test_disabled_compaction_never_compacts(tmp_path: Path) -> None:
    session = managed(tmp_path, settings=settings(enabled=False))
    for number in range(1, 11):
        session.append(turn(number, 1_600 * number))

    assert await session.maybe_compact() is None
    assert await session.maybe_compact(overflow=True) is None
    assert compactions(session) == []
    # A manual compaction is the user's own request: it still runs (as in pi).
    assert (await session.compact()).summary
    assert len(compactions(session)) == 1


async def test_manual_compaction_with_nothing_to_compact_says_so(tmp_path: Path) -> None:
    session = managed(tmp_path)
    with pytest.raises(CompactionError):
        await session.compact()


def test_sync_calls_work_outside_and_inside_a_running_loop(tmp_path: Path) -> None:
    session = managed(tmp_path)
    for number in range(1, 11):
        session.append(turn(number, 1_600 * number))
    assert session.maybe_compact_sync() is not None

    for number in range(11, 21):
        session.append(turn(number, 1_600 * (number - 10) + 4_000))

    async def from_a_callback() -> object:
        return session.maybe_compact_sync()  # a framework's sync hook inside its loop

    assert asyncio.run(from_a_callback()) is not None
    assert len(compactions(session)) == 2


class LoopBoundSummarizer:
    """The offline summarizer behind a client bound to the loop it was first used on, as an
    ``httpx.AsyncClient``'s connection pool is: another loop breaks it."""

    name = "offline"

    def __init__(self) -> None:
        from contextree.compaction.offline import OfflineSummarizer

        self.inner = OfflineSummarizer()
        self.loops: list[asyncio.AbstractEventLoop] = []

    async def complete(self, request: Any) -> Any:
        loop = asyncio.get_running_loop()
        if self.loops and loop is not self.loops[0]:
            raise RuntimeError("bound to a different event loop")
        self.loops.append(loop)
        return await self.inner.complete(request)


def test_sync_calls_outside_a_loop_run_on_one_loop_of_the_session(tmp_path: Path) -> None:
    # A framework's sync hook compacts again and again (LangChain's wrap_model_call, every
    # model call): one loop for all of them, not a new one each time (asyncio.run), so an
    # async client the summarizer keeps goes on working - and a turn is cheaper.
    summarizer = LoopBoundSummarizer()
    session = managed(tmp_path, summarizer=summarizer)
    for round_ in range(3):
        for number in range(10 * round_ + 1, 10 * round_ + 11):
            session.append(turn(number, 1_600 * (number - 10 * round_) + 4_000 * (round_ > 0)))
        assert session.maybe_compact_sync() is not None
    assert len(compactions(session)) == 3
    assert len(set(map(id, summarizer.loops))) == 1
    assert not summarizer.loops[0].is_running()


def test_replies_and_tool_results_are_redacted_before_they_are_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-proj-" + "a1B2c3D4" * 6
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    session = managed(tmp_path)
    said = user(f"my key is {secret}")
    session.append([said, assistant(f"Your key {secret} works.", input_tokens=10)])

    stored = (tmp_path / "s.jsonl").read_text()
    assert stored.count(secret) == 1  # the user's own words are theirs; the echo is not kept
    assert "[REDACTED" in stored


def test_llm_messages_never_start_with_an_unanswered_pairing(tmp_path: Path) -> None:
    session = managed(tmp_path)
    session.append([tool_result("orphan", "a result whose call is not in the context")])
    session.append(turn(1, 100))

    roles = [m["role"] for m in session.llm_messages()]
    assert roles[0] == "user"
    calls = {
        b["id"]
        for m in session.llm_messages()
        if m["role"] == "assistant"
        for b in m["content"]
        if b.get("type") == "toolCall"
    }
    answered = {m["toolCallId"] for m in session.llm_messages() if m["role"] == "toolResult"}
    assert calls == answered
