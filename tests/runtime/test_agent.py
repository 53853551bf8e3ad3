"""``AgentSession`` end to end against the fake OpenAI-compatible server (pi-behaviour §10).

Every model call is real HTTP on 127.0.0.1: the fake server scripts replies, usage figures and
faults. Retries never wait (an injected ``sleep`` records the delays), timestamps come from one
fake clock shared by the messages and the entries (so "older than the latest compaction" is
exact), and tests synchronise on the server's ``wait_for_requests`` and on asyncio events.

Numbers used throughout: a 10 000-token window with 2 000 reserved, so threshold compaction fires
above 8 000 context tokens; 40 recent tokens are kept, so a cut lands on the last user prompt
(prompts are ~60 tokens, replies a few).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import contextree.runtime.agent as agent_module
from contextree.compaction.prompt_templates import load_prompt
from contextree.compaction.prune import prune_placeholder
from contextree.compaction.summarize import CompactionResult
from contextree.context import MISSING_RESULT_TEXT
from contextree.entries.ids import ms_to_iso
from contextree.entries.types import AgentMessage, Entry
from contextree.errors import CompactionCancelledError, CompactionError, ModelError
from contextree.hooks.registry import BEFORE_COMPACT, HookRegistry
from contextree.llm.openai_compat import OpenAIClient
from contextree.runtime.agent import (
    OVERFLOW_RETRY_FAILED,
    AgentSession,
    TurnOutcome,
    request_messages,
)
from contextree.runtime.events import EVENT_TYPES, AgentEvent
from contextree.runtime.tools import ToolArguments, ToolContext, ToolResult, builtin_tools
from contextree.runtime.tools.base import Tool
from contextree.session.tree import SessionTree
from contextree.settings.load import Settings
from contextree.settings.schema import CompactionSettings, PruneSettings
from contextree.tokens.estimate import get_estimator
from core_helpers import tool_result
from fakes.fake_llm import OPENAI_OVERFLOW, FakeLLMServer

SYSTEM = "You are the contextree test agent."
MODEL = "gpt-x"
SPEC = f"openai:{MODEL}"
WINDOW = 10_000
RESERVE = 2_000
THRESHOLD = WINDOW - RESERVE
KEEP = 40
BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z

SUMMARY = "## Goal\nAnswer the user's numbered questions."
SHORT = "Answering numbered questions."

pytestmark = pytest.mark.anyio


# -- helpers ----------------------------------------------------------------------------------


def ask(n: int) -> str:
    """A user prompt of about 60 tokens: more than KEEP, so a cut lands on it."""
    return f"Question {n}: " + "please think it through carefully. " * 7


def usage(total: int) -> dict[str, int]:
    """Pi-shaped usage whose context tokens (input + output) are ``total``."""
    return {"input": total - 10, "output": 10}


def settings(**compaction: Any) -> Settings:
    options: dict[str, Any] = {
        "reserve_tokens": RESERVE,
        "keep_recent_tokens": KEEP,
        "adjust_keep_recent_by_usage": False,
        **compaction,
    }
    return Settings(compaction=CompactionSettings(**options))


class Clock:
    """One fake clock for message timestamps (ms) and entry timestamps (ISO): 1 s per reading."""

    def __init__(self) -> None:
        self._ticks = itertools.count(1)

    def ms(self) -> int:
        return BASE_MS + 1000 * next(self._ticks)

    def iso(self) -> str:
        return ms_to_iso(self.ms())


class GateTool:
    """A tool that signals when it starts and then waits until the test releases it."""

    name = "wait"
    description = "Wait for the test to release the call."
    parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def run(self, arguments: ToolArguments, ctx: ToolContext) -> ToolResult:
        self.entered.set()
        await self.release.wait()
        return ToolResult.text("waited")


class DumpTool:
    """Returns ``tokens`` tokens of output (pi's estimator: 4 characters per token)."""

    name = "dump"
    description = "Print a block of text."
    parameters: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {"tokens": {"type": "integer"}},
        "required": ["tokens"],
    }

    async def run(self, arguments: ToolArguments, ctx: ToolContext) -> ToolResult:
        return ToolResult.text("y" * (4 * int(arguments["tokens"])))


@dataclass
class Run:
    """A session on a file in tmp_path, talking to the fake server, with what it emitted."""

    fake: FakeLLMServer
    path: Path
    session: AgentSession
    events: list[AgentEvent] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)

    def kinds(self) -> list[str]:
        return [event.type for event in self.events]

    def of(self, *kinds: str) -> list[AgentEvent]:
        return [event for event in self.events if event.type in kinds]

    def compaction_events(self) -> list[AgentEvent]:
        return self.of(
            "auto_compaction_start", "auto_compaction_end", "compaction_start", "compaction_end"
        )

    def bodies(self) -> list[dict[str, Any]]:
        return [request.body for request in self.fake.requests]

    def agent_bodies(self) -> list[dict[str, Any]]:
        """Requests of the agent loop (our system prompt), not of the summarizer."""
        return [body for body in self.bodies() if body["messages"][0]["content"] == SYSTEM]

    def summary_bodies(self) -> list[dict[str, Any]]:
        return [body for body in self.bodies() if body["messages"][0]["content"] != SYSTEM]

    def reopen(self) -> SessionTree:
        return SessionTree.open(self.path, create=False)

    def file_messages(self) -> list[AgentMessage]:
        """Every message in the file, in file order (whatever the context shows)."""
        return [e["message"] for e in self.reopen().get_entries() if e["type"] == "message"]

    def compactions(self) -> list[Entry]:
        return [e for e in self.reopen().get_entries() if e["type"] == "compaction"]

    async def requests_arrive(self, count: int) -> None:
        assert await asyncio.to_thread(self.fake.wait_for_requests, count)

    def enqueue_summary(self) -> None:
        """The two replies one compaction takes: the summary, then the short summary."""
        self.fake.enqueue_text(SUMMARY)
        self.fake.enqueue_text(SHORT)


def texts(body: dict[str, Any]) -> list[str]:
    """The text of every message of a chat-completions request body, system prompt included."""
    out = []
    for message in body["messages"]:
        content = message.get("content")
        out.append(content if isinstance(content, str) else "")
    return out


def roles(body: dict[str, Any]) -> list[str]:
    return [message["role"] for message in body["messages"]]


TURN_WITH_AUTO_COMPACTION = [
    "agent_start",
    "message",
    "auto_compaction_start",
    "auto_compaction_end",
    "message",
    "agent_end",
]
"""The events of a turn whose reply triggers an automatic compaction that the session follows
with one more request (the auto-continue or the retry) and its reply."""


def enqueue_two_answers(run: Run, second_context: int | None = None) -> None:
    """The replies to ``ask(1)`` and ``ask(2)``; the second reports ``second_context`` context
    tokens (the fake's default usage when None)."""
    run.fake.enqueue_text("Answer 1.")
    second_usage = None if second_context is None else usage(second_context)
    run.fake.enqueue_text("Answer 2.", usage=second_usage)


async def ask_twice(run: Run) -> TurnOutcome:
    """Prompt ``ask(1)``, then ``ask(2)``; the outcome of the second prompt."""
    await run.session.prompt(ask(1))
    return await run.session.prompt(ask(2))


MakeRun = Callable[..., Run]


@pytest.fixture
def make_run(fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MakeRun:
    clock = Clock()
    monkeypatch.setattr(agent_module, "now_ms", clock.ms)
    names = itertools.count(1)

    def make(
        *,
        config: Settings | None = None,
        tools: dict[str, Tool] | None = None,
        client: OpenAIClient | None = None,
        no_client: bool = False,
        **kwargs: Any,
    ) -> Run:
        path = tmp_path / f"session-{next(names)}.jsonl"
        tree = SessionTree.open(path, cwd=str(tmp_path), now=clock.iso)
        sleeps: list[float] = []

        async def sleep(seconds: float) -> None:
            sleeps.append(seconds)

        model = client or OpenAIClient(MODEL, base_url=fake_llm.url, api_key="")
        session = AgentSession(
            tree,
            None if no_client else model,
            model_spec=SPEC,
            settings=config or settings(),
            tools=tools or {},
            tool_context=ToolContext(tmp_path),
            system_prompt=SYSTEM,
            context_window=WINDOW,
            sleep=sleep,
            **kwargs,
        )
        run = Run(fake_llm, path, session, sleeps=sleeps)
        session.subscribe(run.events.append)
        return run

    return make


# -- a short session ------------------------------------------------------------------------


async def test_short_session_persists_every_message_and_emits_no_compaction_events(
    make_run: MakeRun,
) -> None:
    run = make_run()
    run.fake.enqueue_text("Answer 1.")
    run.fake.enqueue_text("Answer 2.")

    assert await run.session.prompt(ask(1)) == TurnOutcome()
    assert await run.session.prompt(ask(2)) == TurnOutcome()

    assert run.compaction_events() == []
    assert run.kinds() == ["agent_start", "message", "agent_end"] * 2
    assert all(event.type in EVENT_TYPES for event in run.events)
    first, second = run.agent_bodies()
    assert first["model"] == MODEL
    assert roles(second) == ["system", "user", "assistant", "user"]
    assert texts(second) == [SYSTEM, ask(1), "Answer 1.", ask(2)]
    messages = run.file_messages()
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    reply = messages[1]
    assert reply["provider"] == "openai" and reply["model"] == MODEL
    assert reply["api"] == "openai-completions"
    assert reply["stopReason"] == "stop"
    assert reply["usage"]["input"] == 10 and reply["usage"]["output"] == 5


async def test_message_events_carry_the_message_and_its_entry_id(make_run: MakeRun) -> None:
    run = make_run()
    run.fake.enqueue_text("Answer 1.")
    await run.session.prompt(ask(1))
    (event,) = run.of("message")
    assert event.data["message"]["content"] == [{"type": "text", "text": "Answer 1."}]
    entry = run.reopen().get_entry(event.data["entryId"])
    assert entry is not None and entry["message"] == event.data["message"]
    assert run.of("agent_end")[0].data == {"aborted": False, "error": None}


# -- threshold compaction ---------------------------------------------------------------------


async def test_usage_at_the_threshold_does_not_compact(make_run: MakeRun) -> None:
    run = make_run()
    enqueue_two_answers(run, THRESHOLD)
    await ask_twice(run)
    assert run.compaction_events() == []
    assert len(run.fake.requests) == 2
    assert run.compactions() == []


async def test_usage_over_the_threshold_compacts_and_auto_continues(make_run: MakeRun) -> None:
    run = make_run()
    enqueue_two_answers(run, THRESHOLD + 1)
    run.enqueue_summary()
    run.fake.enqueue_text("Nothing left to do.")

    outcome = await ask_twice(run)

    assert outcome == TurnOutcome()
    assert run.kinds()[3:] == TURN_WITH_AUTO_COMPACTION
    start, end = run.of("auto_compaction_start", "auto_compaction_end")
    assert start.data == {"reason": "threshold", "action": "context-full"}
    assert set(end.data) == {"result", "aborted", "willRetry"}
    assert end.data["aborted"] is False and end.data["willRetry"] is False
    result = end.data["result"]
    assert isinstance(result, CompactionResult)
    assert result.summary.startswith(SUMMARY)
    assert result.short_summary == SHORT

    (compaction,) = run.compactions()
    u2 = next(
        e["id"]
        for e in run.reopen().get_entries()
        if e.get("message", {}).get("content") == [{"type": "text", "text": ask(2)}]
    )
    assert compaction["firstKeptEntryId"] == u2
    assert compaction["summary"] == result.summary

    # The summarizer saw the first exchange; the auto-continue request starts from the summary.
    summary_request, _ = run.summary_bodies()
    assert ask(1) in summary_request["messages"][1]["content"]
    assert ask(2) not in summary_request["messages"][1]["content"]
    bodies = run.agent_bodies()
    assert len(bodies) == 3
    after = bodies[2]
    assert roles(after) == ["system", "user", "user", "assistant", "user"]
    assert SUMMARY in texts(after)[1]
    assert texts(after)[2:] == [ask(2), "Answer 2.", load_prompt("auto-continue")]
    assert run.file_messages()[-2]["synthetic"] is True


async def test_threshold_compaction_without_auto_continue_stops(make_run: MakeRun) -> None:
    run = make_run(config=settings(auto_continue=False))
    enqueue_two_answers(run, THRESHOLD + 1)
    run.enqueue_summary()

    assert await ask_twice(run) == TurnOutcome()

    assert len(run.compactions()) == 1
    assert len(run.agent_bodies()) == 2
    assert run.kinds()[-3:] == ["auto_compaction_start", "auto_compaction_end", "agent_end"]


async def test_threshold_is_also_checked_before_a_prompt(make_run: MakeRun) -> None:
    # The last reply crossed the threshold while compaction was off; once it is on, the check
    # before the next prompt compacts, and the prompt itself is the continuation.
    run = make_run(config=settings(enabled=False))
    enqueue_two_answers(run, THRESHOLD + 1)
    await ask_twice(run)
    run.session.settings = settings()
    run.events.clear()
    run.enqueue_summary()
    run.fake.enqueue_text("Answer 3.")

    assert await run.session.prompt(ask(3)) == TurnOutcome()

    assert run.kinds() == [
        "auto_compaction_start",
        "auto_compaction_end",
        "agent_start",
        "message",
        "agent_end",
    ]
    assert run.events[0].data["reason"] == "threshold"
    last = run.agent_bodies()[-1]
    assert SUMMARY in texts(last)[1]
    assert texts(last)[2:] == [ask(2), "Answer 2.", ask(3)]


async def test_compaction_disabled_never_compacts(make_run: MakeRun) -> None:
    run = make_run(config=settings(enabled=False))
    enqueue_two_answers(run, WINDOW - 1)
    await ask_twice(run)
    assert run.compaction_events() == []
    assert len(run.fake.requests) == 2


async def test_stale_usage_from_before_the_latest_compaction_triggers_nothing(
    make_run: MakeRun,
) -> None:
    # pi's "stale pre-compaction usage is ignored on the pre-prompt check": the kept reply still
    # carries the usage that caused the compaction, but it predates the compaction.
    run = make_run(config=settings(auto_continue=False))
    enqueue_two_answers(run, THRESHOLD + 500)
    run.enqueue_summary()
    run.fake.enqueue_text("Answer 3.")

    await ask_twice(run)
    kept = run.session.context_messages()
    assert kept[0]["role"] == "compactionSummary"
    assert kept[-1]["usage"]["input"] + kept[-1]["usage"]["output"] == THRESHOLD + 500

    assert await run.session.prompt(ask(3)) == TurnOutcome()

    assert len(run.of("auto_compaction_start")) == 1
    assert len(run.compactions()) == 1
    assert len(run.fake.requests) == 5
    assert texts(run.agent_bodies()[-1])[-1] == ask(3)


@pytest.mark.parametrize(("last_good", "compacts"), [(7_000, True), (100, False)])
async def test_threshold_for_an_error_reply_uses_the_last_successful_usage(
    make_run: MakeRun, last_good: int, compacts: bool
) -> None:
    # pi 0.73.1: a failed reply has no usage; the context is the last good usage plus the
    # estimate of what follows it (here a 1 100-token prompt).
    run = make_run()
    big = "Paste: " + "z" * 4400
    run.fake.enqueue_text("Answer 1.", usage=usage(last_good))
    run.fake.enqueue_error(400)
    if compacts:
        run.enqueue_summary()
        run.fake.enqueue_text("Continuing.")

    await run.session.prompt(ask(1))
    outcome = await run.session.prompt(big)

    # With a compaction the turn auto-continues, and the continuation succeeds.
    assert outcome.error == (None if compacts else "400 fake error 400")
    if not compacts:
        assert run.compaction_events() == []
        assert len(run.fake.requests) == 2
        return
    start, end = run.of("auto_compaction_start", "auto_compaction_end")
    assert start.data["reason"] == "threshold"
    assert end.data["result"] is not None
    # The auto-continue request leaves the failed reply out.
    after = run.agent_bodies()[-1]
    assert roles(after) == ["system", "user", "user", "user"]
    assert texts(after)[2:] == [big, load_prompt("auto-continue")]


async def test_error_reply_with_no_usage_at_all_triggers_nothing(make_run: MakeRun) -> None:
    run = make_run()
    run.fake.enqueue_error(400)
    outcome = await run.session.prompt("Paste: " + "z" * 4 * 9_000)
    assert outcome.error == "400 fake error 400"
    assert run.compaction_events() == []
    assert len(run.fake.requests) == 1


async def test_error_reply_with_only_pre_compaction_usage_triggers_nothing(
    make_run: MakeRun,
) -> None:
    run = make_run()
    enqueue_two_answers(run, 7_000)
    run.enqueue_summary()
    run.fake.enqueue_error(400)

    await ask_twice(run)
    await run.session.compact()
    run.events.clear()
    # Without the guard, 7 000 (kept, but measured before the compaction) + 1 100 > 8 000.
    outcome = await run.session.prompt("Paste: " + "z" * 4400)

    assert outcome.error == "400 fake error 400"
    assert run.compaction_events() == []
    assert len(run.fake.requests) == 5


async def test_queued_prompts_are_sent_after_a_threshold_compaction(make_run: MakeRun) -> None:
    gate = GateTool()
    run = make_run(tools={"wait": gate})
    run.fake.enqueue_text("Answer 0.")
    run.fake.enqueue_tool_call("wait", {})
    run.fake.enqueue_text("Waited.", usage=usage(THRESHOLD + 1))
    run.enqueue_summary()
    run.fake.enqueue_text("Answer to the queued question.")

    await run.session.prompt(ask(0))
    task = asyncio.create_task(run.session.prompt(ask(1)))
    await gate.entered.wait()
    assert run.session.is_streaming
    assert await run.session.prompt("A queued question.") == TurnOutcome()
    assert run.session.queued == ["A queued question."]
    gate.release.set()
    assert await task == TurnOutcome()

    assert run.session.queued == []
    start, end = run.of("auto_compaction_start", "auto_compaction_end")
    assert start.data["reason"] == "threshold"
    assert end.data["result"] is not None
    bodies = run.agent_bodies()
    # The queued prompt replaces the auto-continue prompt.
    assert len(bodies) == 4
    last = bodies[-1]
    assert SUMMARY in texts(last)[1]
    assert texts(last)[-1] == "A queued question."
    assert load_prompt("auto-continue") not in texts(last)
    assert run.file_messages()[-1]["content"] == [
        {"type": "text", "text": "Answer to the queued question."}
    ]


# -- overflow recovery ------------------------------------------------------------------------


async def test_overflow_compacts_and_retries_without_the_failed_reply(make_run: MakeRun) -> None:
    run = make_run()
    run.fake.enqueue_text("Answer 1.")
    run.fake.enqueue_overflow()
    run.enqueue_summary()
    run.fake.enqueue_text("Answer 2, after the retry.")

    outcome = await ask_twice(run)

    assert outcome == TurnOutcome()
    assert run.kinds()[3:] == TURN_WITH_AUTO_COMPACTION
    failed, retried = run.of("message")[1:]
    assert failed.data["message"]["stopReason"] == "error"
    assert retried.data["message"]["stopReason"] == "stop"
    start, end = run.of("auto_compaction_start", "auto_compaction_end")
    assert start.data == {"reason": "overflow", "action": "context-full"}
    assert end.data["willRetry"] is True and end.data["aborted"] is False
    assert isinstance(end.data["result"], CompactionResult)

    # The failed reply is in the file...
    messages = run.file_messages()
    errors = [m for m in messages if m.get("stopReason") == "error"]
    assert len(errors) == 1
    assert OPENAI_OVERFLOW in errors[0]["errorMessage"]
    assert errors[0]["provider"] == "openai" and errors[0]["model"] == MODEL
    # ...but not in the retried request, which is not the request that overflowed.
    overflowed, retry = run.agent_bodies()[1:]
    assert texts(overflowed) == [SYSTEM, ask(1), "Answer 1.", ask(2)]
    assert roles(retry) == ["system", "user", "user"]
    assert SUMMARY in texts(retry)[1]
    assert texts(retry)[2] == ask(2)
    assert len(run.fake.requests) == 5


def enqueue_a_failed_overflow_recovery(run: Run) -> None:
    """The replies for ``ask_twice``: ``ask(2)`` overflows, the session compacts, and the retry
    overflows again."""
    run.fake.enqueue_text("Answer 1.")
    run.fake.enqueue_overflow()
    run.enqueue_summary()
    run.fake.enqueue_overflow()


async def test_a_second_overflow_does_not_loop(make_run: MakeRun) -> None:
    run = make_run()
    enqueue_a_failed_overflow_recovery(run)

    outcome = await ask_twice(run)

    assert outcome.error is not None and OPENAI_OVERFLOW in outcome.error
    assert len(run.fake.requests) == 5  # no further request after the second overflow
    assert len(run.of("auto_compaction_start")) == 1
    first_end, second_end = run.of("auto_compaction_end")
    assert first_end.data["willRetry"] is True
    assert second_end.data == {
        "result": None,
        "aborted": False,
        "willRetry": False,
        "errorMessage": OVERFLOW_RETRY_FAILED,
    }
    assert second_end.data["errorMessage"].startswith("Context overflow recovery failed")
    assert run.kinds()[-1] == "agent_end"
    assert len([m for m in run.file_messages() if m.get("stopReason") == "error"]) == 2
    assert len(run.compactions()) == 1


async def test_the_overflow_latch_resets_on_the_next_prompt(make_run: MakeRun) -> None:
    run = make_run()
    enqueue_a_failed_overflow_recovery(run)
    await ask_twice(run)
    assert len(run.fake.requests) == 5
    run.events.clear()

    # The next prompt gets its own compact-and-retry; the failed recovery of the previous
    # prompt is not tried again (nor reported again) before it is sent.
    run.fake.enqueue_overflow()
    run.enqueue_summary()
    run.fake.enqueue_text("Answer 3.")
    outcome = await run.session.prompt(ask(3))

    assert outcome == TurnOutcome()
    assert run.kinds() == TURN_WITH_AUTO_COMPACTION
    start, end = run.of("auto_compaction_start", "auto_compaction_end")
    assert start.data["reason"] == "overflow"
    assert end.data["willRetry"] is True and end.data["result"] is not None
    assert len(run.compactions()) == 2
    retry = run.agent_bodies()[-1]
    assert texts(retry)[-1] == ask(3)
    assert roles(retry) == ["system", "user", "user"]


async def test_the_overflow_latch_resets_after_a_successful_reply(make_run: MakeRun) -> None:
    # §10.2: one compact-and-retry per overflow; a good reply in between re-arms it, so a long
    # tool loop can recover twice within one prompt.
    run = make_run(tools={"dump": DumpTool()})
    run.fake.enqueue_text("Answer 1.")
    run.fake.enqueue_overflow()
    run.enqueue_summary()
    run.fake.enqueue_tool_call("dump", {"tokens": 100})
    run.fake.enqueue_overflow()
    run.enqueue_summary()
    run.fake.enqueue_text("Done.")

    outcome = await ask_twice(run)

    assert outcome == TurnOutcome()
    starts = run.of("auto_compaction_start")
    assert [event.data["reason"] for event in starts] == ["overflow", "overflow"]
    ends = run.of("auto_compaction_end")
    assert all(event.data["result"] is not None for event in ends)
    assert len(run.compactions()) == 2
    assert run.file_messages()[-1]["content"] == [{"type": "text", "text": "Done."}]


async def test_silent_overflow_is_recovered_like_an_error(make_run: MakeRun) -> None:
    # A "successful" reply whose prompt alone exceeds the window (OMP's silent overflow).
    run = make_run()
    run.fake.enqueue_text("Answer 1.")
    run.fake.enqueue_text("Truncated?", usage={"input": WINDOW + 1, "output": 3})
    run.enqueue_summary()
    run.fake.enqueue_text("Answer 2.")

    assert await ask_twice(run) == TurnOutcome()

    (start,) = run.of("auto_compaction_start")
    assert start.data["reason"] == "overflow"
    assert len(run.agent_bodies()) == 3


async def test_overflow_with_compaction_disabled_does_nothing(make_run: MakeRun) -> None:
    run = make_run(config=settings(enabled=False))
    run.fake.enqueue_text("Answer 1.")
    run.fake.enqueue_overflow()
    outcome = await ask_twice(run)
    assert outcome.error is not None
    assert run.compaction_events() == []
    assert len(run.fake.requests) == 2


def test_request_messages_leave_out_failed_and_aborted_replies_and_their_results() -> None:
    def reply(stop: str, *calls: str) -> AgentMessage:
        content = [{"type": "toolCall", "id": c, "name": "read", "arguments": {}} for c in calls]
        return {"role": "assistant", "content": content, "stopReason": stop, "timestamp": 0}

    def result(call: str) -> AgentMessage:
        return tool_result(call, call, name="read")

    user: AgentMessage = {"role": "user", "content": "go", "timestamp": 0}
    messages = [
        user,
        reply("aborted", "a"),
        result("a"),
        reply("error"),
        reply("toolUse", "b"),
        result("b"),
    ]
    sent = request_messages(messages)
    assert [m["role"] for m in sent] == ["user", "assistant", "toolResult"]
    assert sent[2]["toolCallId"] == "b"


async def test_a_session_left_with_an_unanswered_call_sends_a_valid_request(
    make_run: MakeRun,
) -> None:
    # The process died between the call and its result (or another tool wrote the file).
    run = make_run()
    tree = run.session.tree
    tree.append_message({"role": "user", "content": ask(1), "timestamp": BASE_MS})
    call = {"type": "toolCall", "id": "call_x", "name": "read", "arguments": {"path": "a"}}
    tree.append_message(
        {"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": BASE_MS}
    )
    tree.append_message(tool_result("call_gone", "orphan", name="read"))

    run.fake.enqueue_text("Answer 2.")
    assert await run.session.prompt(ask(2)) == TurnOutcome()

    body = run.agent_bodies()[-1]
    assert roles(body) == ["system", "user", "assistant", "tool", "user"]
    assert body["messages"][3]["tool_call_id"] == "call_x"
    assert body["messages"][3]["content"] == MISSING_RESULT_TEXT
    # The file keeps what happened: no synthetic result is written.
    assert [m["role"] for m in run.file_messages()] == [
        "user",
        "assistant",
        "toolResult",
        "user",
        "assistant",
    ]


# -- retries ----------------------------------------------------------------------------------


async def test_429_is_retried_after_the_stated_delay(make_run: MakeRun) -> None:
    run = make_run()
    run.fake.enqueue_error(429, retry_after=3)
    run.fake.enqueue_text("Answer 1.")

    assert await run.session.prompt(ask(1)) == TurnOutcome()

    assert run.sleeps == [3.0]
    assert run.kinds() == ["agent_start", "retry", "message", "agent_end"]
    (retry,) = run.of("retry")
    assert retry.data == {"attempt": 1, "delayMs": 3000.0, "error": "429 fake error 429"}
    assert len(run.fake.requests) == 2
    assert run.bodies()[0] == run.bodies()[1]
    assert [m["role"] for m in run.file_messages()] == ["user", "assistant"]


async def test_5xx_is_retried_with_exponential_backoff_then_fails(make_run: MakeRun) -> None:
    run = make_run()
    for _ in range(4):
        run.fake.enqueue_error(503)

    outcome = await run.session.prompt(ask(1))

    assert outcome.error == "503 fake error 503"
    assert run.sleeps == [2.0, 4.0, 8.0]
    assert [event.data["attempt"] for event in run.of("retry")] == [1, 2, 3]
    assert len(run.fake.requests) == 4
    (failed,) = [m for m in run.file_messages() if m["role"] == "assistant"]
    assert failed["stopReason"] == "error"
    assert failed["errorMessage"] == "503 fake error 503"


async def test_summaries_fail_over_to_the_next_candidate(
    make_run: MakeRun, fake_llm: FakeLLMServer
) -> None:
    fallback = OpenAIClient("gpt-fallback", base_url=fake_llm.url, api_key="")
    run = make_run(fallback_clients=[fallback])
    enqueue_two_answers(run)
    for _ in range(4):
        run.fake.enqueue_error(502)
    run.enqueue_summary()

    await ask_twice(run)
    result = await run.session.compact()

    assert result.summary.startswith(SUMMARY)
    models = [body["model"] for body in run.summary_bodies()]
    # The summary: four tries on the current model, then the fallback; the short summary
    # starts again from the current model.
    assert models == [MODEL] * 4 + ["gpt-fallback", MODEL]
    assert run.sleeps == [2.0, 4.0, 8.0]
    assert run.of("retry") == []  # summary retries are not turn retries


# -- manual compaction ------------------------------------------------------------------------


async def two_exchanges(run: Run) -> None:
    enqueue_two_answers(run)
    await ask_twice(run)
    run.events.clear()


async def summary_request_hanging(run: Run) -> asyncio.Task[CompactionResult]:
    """Start a manual compaction whose summary request hangs, and wait until it is sent."""
    run.fake.enqueue_slow(60)
    task = asyncio.create_task(run.session.compact())
    await run.requests_arrive(3)
    return task


async def test_manual_compaction_writes_the_entry_and_emits_start_and_end(
    make_run: MakeRun,
) -> None:
    run = make_run()
    await two_exchanges(run)
    run.enqueue_summary()

    result = await run.session.compact("Focus on the questions.")

    assert run.kinds() == ["compaction_start", "compaction_end"]
    start, end = run.events
    assert start.data == {"reason": "manual"}
    assert end.data == {"reason": "manual", "result": result, "willRetry": False, "aborted": False}
    (compaction,) = run.compactions()
    assert compaction["summary"] == result.summary
    assert "Additional focus: Focus on the questions." in texts(run.summary_bodies()[0])[1]
    assert run.session.context_messages()[0]["role"] == "compactionSummary"


async def test_manual_compaction_errors(make_run: MakeRun) -> None:
    no_model = make_run(no_client=True)
    with pytest.raises(CompactionError, match=r"^No model selected$"):
        await no_model.session.compact()
    with pytest.raises(ModelError, match="No model selected"):
        await no_model.session.prompt("hi")

    small = make_run(config=settings(keep_recent_tokens=20_000))
    await two_exchanges(small)
    everything_kept = (
        "Nothing to compact: with a keep budget of 20,000 tokens every message in the context "
        "would be kept verbatim"
    )
    with pytest.raises(CompactionError, match=f"^{everything_kept}$"):
        await small.session.compact()
    assert small.events[-1].data["errorMessage"] == everything_kept

    done = make_run()
    await two_exchanges(done)
    done.enqueue_summary()
    await done.session.compact()
    before = done.path.read_bytes()
    with pytest.raises(CompactionError, match=r"^Already compacted$"):
        await done.session.compact()
    assert done.path.read_bytes() == before


async def test_a_hook_can_cancel_a_manual_compaction(make_run: MakeRun) -> None:
    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, lambda event: {"cancel": True})
    run = make_run(hooks=hooks)
    await two_exchanges(run)
    before = run.path.read_bytes()

    with pytest.raises(CompactionCancelledError, match=r"^Compaction cancelled$"):
        await run.session.compact()

    assert run.path.read_bytes() == before
    assert run.summary_bodies() == []
    end = run.events[-1]
    assert end.type == "compaction_end" and end.data["aborted"] is True


async def test_abort_compaction_mid_summary_writes_nothing(make_run: MakeRun) -> None:
    run = make_run()
    await two_exchanges(run)
    before = run.path.read_bytes()

    task = await summary_request_hanging(run)
    with pytest.raises(CompactionError, match=r"^Compaction already in progress$"):
        await run.session.compact()
    run.session.abort_compaction()
    with pytest.raises(CompactionCancelledError, match=r"^Compaction cancelled$"):
        await task

    assert not run.session.is_compacting
    assert run.path.read_bytes() == before
    assert run.kinds() == ["compaction_start", "compaction_end"]
    assert run.events[-1].data["aborted"] is True


async def test_cancelling_the_caller_of_a_manual_compaction_writes_nothing(
    make_run: MakeRun,
) -> None:
    run = make_run()
    await two_exchanges(run)
    before = run.path.read_bytes()

    task = await summary_request_hanging(run)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert run.path.read_bytes() == before
    assert not run.session.is_compacting
    assert run.kinds() == ["compaction_start", "compaction_end"]
    assert run.events[-1].data["aborted"] is True


async def test_manual_compaction_aborts_the_running_turn_first(make_run: MakeRun) -> None:
    run = make_run()
    await two_exchanges(run)
    run.fake.enqueue_slow(60)
    run.enqueue_summary()

    turn = asyncio.create_task(run.session.prompt(ask(3)))
    await run.requests_arrive(3)
    await run.session.compact()

    assert await turn == TurnOutcome(aborted=True)
    messages = run.file_messages()
    assert messages[-1]["stopReason"] == "aborted"
    assert len(run.compactions()) == 1


# -- aborting ---------------------------------------------------------------------------------


async def test_abort_during_a_slow_reply_persists_an_aborted_reply(make_run: MakeRun) -> None:
    run = make_run()
    run.fake.enqueue_slow(60)

    task = asyncio.create_task(run.session.prompt(ask(1)))
    await run.requests_arrive(1)
    run.session.abort()
    outcome = await task

    assert outcome == TurnOutcome(aborted=True)
    assert not run.session.is_streaming
    assert run.kinds() == ["agent_start", "message", "agent_end"]
    assert run.events[-1].data == {"aborted": True}
    reply = run.file_messages()[-1]
    assert reply["role"] == "assistant" and reply["stopReason"] == "aborted"
    assert reply["errorMessage"] == "Request was aborted"

    # The aborted reply stays in the file but is not sent again.
    run.fake.enqueue_text("Answer 2.")
    assert await run.session.prompt(ask(2)) == TurnOutcome()
    assert texts(run.agent_bodies()[-1]) == [SYSTEM, ask(1), ask(2)]


async def test_abort_during_tool_execution_answers_every_pending_call(
    make_run: MakeRun, tmp_path: Path
) -> None:
    gate = GateTool()
    tools: dict[str, Tool] = {"wait": gate, **builtin_tools()}
    run = make_run(tools=tools)
    calls = [("call_a", "wait", {}), ("call_b", "read", {"path": "notes.txt"})]
    run.fake.enqueue_raw(
        200,
        {
            "id": "chatcmpl-two",
            "object": "chat.completion",
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(args)},
                            }
                            for call_id, name, args in calls
                        ],
                    },
                }
            ],
            "usage": {"prompt_tokens": 50, "completion_tokens": 5},
        },
    )

    task = asyncio.create_task(run.session.prompt(ask(1)))
    await gate.entered.wait()
    run.session.abort()
    assert await task == TurnOutcome(aborted=True)

    messages = run.file_messages()
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "toolResult"]
    assert [m["toolCallId"] for m in messages[2:]] == ["call_a", "call_b"]
    for result in messages[2:]:
        assert result["isError"] is True
        assert result["content"] == [{"type": "text", "text": "Tool execution was aborted"}]
    assert run.of("tool_start")[0].data == {"toolCallId": "call_a", "name": "wait"}
    assert run.of("tool_end") == []

    # The pairing is valid, so the next request is accepted as it is.
    run.fake.enqueue_text("Answer 2.")
    assert await run.session.prompt(ask(2)) == TurnOutcome()
    assert roles(run.agent_bodies()[-1]) == ["system", "user", "assistant", "tool", "tool", "user"]


async def auto_compaction_hanging(run: Run) -> asyncio.Task[TurnOutcome]:
    """Prompt ``ask(2)`` so that its reply crosses the threshold, and wait until the summary
    request of the automatic compaction that follows is sent (it hangs)."""
    enqueue_two_answers(run, THRESHOLD + 1)
    run.fake.enqueue_slow(60)
    await run.session.prompt(ask(1))
    task = asyncio.create_task(run.session.prompt(ask(2)))
    await run.requests_arrive(3)
    return task


async def test_abort_during_auto_compaction_writes_nothing(make_run: MakeRun) -> None:
    run = make_run()
    task = await auto_compaction_hanging(run)
    assert run.session.is_compacting
    before = run.path.read_bytes()
    run.session.abort_compaction()
    assert await task == TurnOutcome()

    assert run.path.read_bytes() == before
    assert len(run.fake.requests) == 3  # no auto-continue after a cancelled compaction
    start, end = run.of("auto_compaction_start", "auto_compaction_end")
    assert start.data["reason"] == "threshold"
    assert end.data == {"result": None, "aborted": True, "willRetry": False}


async def test_abort_of_the_turn_during_auto_compaction_writes_nothing(make_run: MakeRun) -> None:
    run = make_run()
    task = await auto_compaction_hanging(run)
    before = run.path.read_bytes()
    run.session.abort()
    assert await task == TurnOutcome(aborted=True)

    assert run.path.read_bytes() == before
    assert not run.session.is_compacting
    assert run.kinds()[-3:] == ["auto_compaction_start", "auto_compaction_end", "agent_end"]
    assert run.of("auto_compaction_end")[0].data["aborted"] is True


# -- pruning ----------------------------------------------------------------------------------

OLD_OUTPUT = 2_000
NEW_OUTPUT = 200


def prune_saving() -> int:
    message = tool_result("call_old", "y" * 4 * OLD_OUTPUT, name="dump")
    tokens = get_estimator("pi").estimate(message)
    return tokens - math.ceil(len(prune_placeholder(tokens)) / 4)


@pytest.mark.parametrize(("over", "compacts"), [(0, False), (1, True)])
async def test_pruning_runs_before_the_threshold_check(
    make_run: MakeRun, over: int, compacts: bool
) -> None:
    saved = prune_saving()
    config = Settings(
        compaction=settings().compaction,
        prune=PruneSettings(protect_tokens=100, minimum_savings=500),
    )
    run = make_run(config=config, tools={"dump": DumpTool()})
    run.fake.enqueue_tool_call("dump", {"tokens": OLD_OUTPUT}, call_id="call_old")
    run.fake.enqueue_tool_call("dump", {"tokens": NEW_OUTPUT}, call_id="call_new")
    # Measured context: over the threshold by `saved + over`; pruning saves `saved`.
    run.fake.enqueue_text("Done.", usage=usage(THRESHOLD + saved + over))
    if compacts:
        run.enqueue_summary()
        run.fake.enqueue_text("Nothing left.")

    assert await run.session.prompt(ask(1)) == TurnOutcome()

    (prune,) = run.of("prune")
    assert prune.data == {"prunedCount": 1, "tokensSaved": saved}
    kinds = run.kinds()
    assert kinds[kinds.index("prune") - 1] == "message"
    if compacts:
        assert kinds[kinds.index("prune") + 1] == "auto_compaction_start"
    else:
        assert run.compaction_events() == []
        assert len(run.fake.requests) == 3
    old = next(m for m in run.file_messages() if m.get("toolCallId") == "call_old")
    assert old["content"] == [{"type": "text", "text": prune_placeholder(OLD_OUTPUT)}]
    assert old["prunedContent"] == [{"type": "text", "text": "y" * 4 * OLD_OUTPUT}]
    assert "prunedAt" in old
    new = next(m for m in run.file_messages() if m.get("toolCallId") == "call_new")
    assert "prunedAt" not in new


# -- tools ------------------------------------------------------------------------------------


async def test_tool_call_round_trip_with_the_read_tool(make_run: MakeRun, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    run = make_run(tools=builtin_tools())
    run.fake.enqueue_tool_call("read", {"path": "notes.txt"}, call_id="call_r", text="Reading.")
    run.fake.enqueue_text("The notes say alpha and beta.")

    assert await run.session.prompt("What do my notes say?") == TurnOutcome()

    first, second = run.agent_bodies()
    assert [tool["function"]["name"] for tool in first["tools"]] == list(builtin_tools())
    assert roles(second) == ["system", "user", "assistant", "tool"]
    call = second["messages"][2]["tool_calls"][0]
    assert call["id"] == "call_r" and call["function"]["name"] == "read"
    tool_message = second["messages"][3]
    assert tool_message["tool_call_id"] == "call_r"
    assert "alpha" in tool_message["content"] and "beta" in tool_message["content"]
    assert run.kinds() == [
        "agent_start",
        "message",
        "tool_start",
        "message",
        "tool_end",
        "message",
        "agent_end",
    ]
    assert run.of("tool_end")[0].data == {"toolCallId": "call_r", "name": "read", "isError": False}
    messages = run.file_messages()
    assert [m["role"] for m in messages] == ["user", "assistant", "toolResult", "assistant"]
    assert messages[1]["stopReason"] == "toolUse"
    assert messages[2]["toolName"] == "read" and messages[2]["isError"] is False


# -- secrets stay out of the session (issue 15 item 4) ----------------------------------------

PLANTED_KEY = "sk-ant-api03-plantedKEYplantedKEY0123456789"


async def test_the_providers_key_is_not_in_the_bash_tools_environment(
    make_run: MakeRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED_KEY)
    monkeypatch.setenv("HARMLESS_SETTING", "kept")
    run = make_run(tools=builtin_tools())
    run.fake.enqueue_tool_call("bash", {"command": "env"})
    run.fake.enqueue_text("Done.")
    await run.session.prompt("Show the environment.")
    (result,) = [m for m in run.file_messages() if m["role"] == "toolResult"]
    output = result["content"][0]["text"]
    assert "HARMLESS_SETTING=kept" in output
    assert "ANTHROPIC_API_KEY" not in output and PLANTED_KEY not in run.path.read_text()


async def test_a_reply_or_tool_output_holding_a_secret_is_redacted_before_it_is_stored(
    make_run: MakeRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", "deploy-token-value-0042")
    run = make_run(tools=builtin_tools())
    run.fake.enqueue_tool_call("bash", {"command": "echo db.password=hunter2!xyz"})
    run.fake.enqueue_text(f"Your key is {PLANTED_KEY} and the token deploy-token-value-0042.")
    prompt = f"My own note keeps {PLANTED_KEY} as I typed it."
    await run.session.prompt(prompt)
    stored = run.path.read_text()
    messages = run.file_messages()
    assert messages[0]["content"][0]["text"] == prompt  # the user's words are never changed
    reply = messages[-1]["content"][0]["text"]
    assert PLANTED_KEY not in reply and "deploy-token-value-0042" not in reply
    assert "[REDACTED:" in reply
    (result,) = [m for m in messages if m["role"] == "toolResult"]
    assert result["content"][0]["text"] == "db.password=[REDACTED:assigned_secret]"
    assert PLANTED_KEY in stored  # only in the user's own message
    assert stored.count(PLANTED_KEY) == 1


async def test_the_agents_compaction_redacts_the_environments_secret_values(
    make_run: MakeRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", "deploy-token-value-0042")
    run = make_run()
    run.fake.enqueue_text("Answer 1.")
    run.fake.enqueue_text("Answer 2.")
    run.enqueue_summary()
    await run.session.prompt("The deploy token is deploy-token-value-0042, keep it in mind.")
    await run.session.prompt(ask(2))
    await run.session.compact()
    sent = json.dumps(run.summary_bodies())
    assert run.summary_bodies() and "deploy-token-value-0042" not in sent
    assert "[REDACTED:secret]" in sent


# --- compaction.remoteEndpoint and coding_agent: what `contextree chat` used to set up itself ---


def test_the_remote_endpoint_setting_is_the_agents_summarizer(tmp_path: Path) -> None:
    from contextree.llm.remote import RemoteSummaryClient

    endpoint = "http://127.0.0.1:9/summarize"
    tree = SessionTree.open(tmp_path / "s.jsonl")
    client = OpenAIClient("gpt-4o-mini", base_url="http://127.0.0.1:9", api_key="k")
    agent = AgentSession(tree, client, settings=settings(remote_endpoint=endpoint))
    assert isinstance(agent.summarizer, RemoteSummaryClient)
    assert agent.summary_candidates()[0] is agent.summarizer
    assert AgentSession(tree, client, settings=settings()).summarizer is None
    given = OpenAIClient("other", base_url="http://127.0.0.1:9", api_key="k")
    with_remote = settings(remote_endpoint=endpoint)
    chosen = AgentSession(tree, client, settings=with_remote, summarizer=given)
    assert chosen.summarizer is given  # an explicit summarizer wins


def test_coding_agent_has_the_builtin_tools_in_its_directory(tmp_path: Path) -> None:
    from contextree.runtime import coding_agent

    tree = SessionTree.open(tmp_path / "s.jsonl")
    client = OpenAIClient("gpt-4o-mini", base_url="http://127.0.0.1:9", api_key="k")
    loaded = Settings(allow_outside_cwd=True)
    agent = coding_agent(tree, client, cwd=tmp_path, settings=loaded, model_spec="openai:x")
    assert sorted(agent.tools) == sorted(builtin_tools())
    assert agent.tool_context == ToolContext(cwd=tmp_path, allow_outside_cwd=True)
    assert str(tmp_path) in agent.system_prompt and agent.model_spec == "openai:x"
    own = coding_agent(tree, client, cwd=tmp_path, settings=loaded, system_prompt="Be brief.")
    assert own.system_prompt == "Be brief."


async def test_the_agents_remote_endpoint_never_gets_a_split_turns_prefix(
    tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    # §7.6: "the turn prefix is always summarized locally"; the CLI's compact did this, the
    # agent (whose summarizer `chat` set to the endpoint) sent the prefix there too.
    from contextree.compaction.prompt_templates import load_prompt
    from sample_session import FAILING_COMMAND, KEEP_SPLIT, build_session, open_session

    tree = open_session(tmp_path / "s.jsonl")
    build_session(tree)
    client = OpenAIClient(MODEL, base_url=fake_llm.url, api_key="")
    config = settings(keep_recent_tokens=KEEP_SPLIT, remote_endpoint=fake_llm.remote_url)
    agent = AgentSession(tree, client, settings=config, context_window=WINDOW)
    fake_llm.enqueue_text("REMOTE HISTORY")
    fake_llm.enqueue_text("Remote short summary.")

    result = await agent.compact()

    assert [r.path for r in fake_llm.requests] == ["/summarize", "/summarize"]
    assert not any(load_prompt("turn-prefix") in r.body["prompt"] for r in fake_llm.requests)
    assert result.summary.startswith("REMOTE HISTORY")
    assert FAILING_COMMAND in result.summary  # the prefix, summarized here (offline)
