"""``compact_session`` with hooks: cases modelled on pi's ``compaction-hooks.test.ts`` and
``agent-session-compaction.test.ts`` (pi-behaviour §11, §13.2), on a session file in tmp_path."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from contextree.compaction.offline import OfflineSummarizer
from contextree.compaction.prepare import CompactionPreparation, NothingToCompact
from contextree.compaction.prompt_templates import load_prompt
from contextree.compaction.run import CompactionOutcome, compact_session
from contextree.compaction.summarize import SPLIT_TURN_SEPARATOR, CompactionResult
from contextree.errors import CompactionCancelledError, CompactionError
from contextree.hooks.events import (
    BeforeCompactEvent,
    BeforeCompactResult,
    CompactingEvent,
    CompactingResult,
    SessionCompactEvent,
)
from contextree.hooks.registry import (
    BEFORE_COMPACT,
    COMPACT,
    COMPACTING,
    HookFailure,
    HookRegistry,
)
from contextree.llm.base import Completion, CompletionRequest
from contextree.llm.scripted import ScriptedClient
from contextree.session.tree import SessionTree
from sample_session import KEEP_CLEAN, KEEP_SPLIT, build_session, open_session, settings

MODES = ["sync", "async"]


def handler(mode: str, function: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``function`` as a plain handler or wrapped in a coroutine function."""
    if mode == "sync":
        return function

    async def wrapped(event: Any) -> Any:
        return function(event)

    return wrapped


class Session:
    """A session file with the sample conversation, and what is needed to compact it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tree = open_session(path)
        self.ids = build_session(self.tree)
        self.client = ScriptedClient(default="## Goal\nScripted summary")

    def bytes(self) -> bytes:
        return self.path.read_bytes()

    def compact(
        self, hooks: HookRegistry | None = None, *, keep: int = KEEP_CLEAN, **kw: Any
    ) -> CompactionOutcome:
        kw.setdefault("settings", settings(keep))
        outcome = asyncio.run(compact_session(self.tree, self.client, hooks=hooks, **kw))
        assert isinstance(outcome, CompactionOutcome)
        return outcome

    def history_prompt(self) -> str:
        (block,) = self.client.requests[0].messages[0]["content"]
        return str(block["text"])


@pytest.fixture
def session(tmp_path: Path) -> Session:
    return Session(tmp_path / "session.jsonl")


def last_line(path: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(path.read_bytes().splitlines()[-1])
    return result


# --- the default path ----------------------------------------------------------------------------


def test_a_manual_compaction_persists_one_entry_and_the_context_starts_with_it(
    session: Session,
) -> None:
    before = session.bytes()
    outcome = session.compact()
    after = session.bytes()
    assert after.startswith(before)
    assert after[len(before) :].count(b"\n") == 1
    entry = last_line(session.path)
    assert entry == outcome.entry
    assert entry["type"] == "compaction"
    assert entry["firstKeptEntryId"] == session.ids["u2"]
    assert entry["fromExtension"] is False and entry["fromHook"] is False
    assert entry["summary"].startswith("## Goal\nScripted summary")
    context = SessionTree.open(session.path).build_session_context().messages
    assert context == outcome.context.messages
    assert context[0]["role"] == "compactionSummary"
    assert context[1]["content"][0]["text"].startswith("Now run the test suite")


def test_nothing_to_compact_runs_no_hook_and_writes_nothing(session: Session) -> None:
    session.compact()
    before = session.bytes()
    calls: list[Any] = []
    hooks = HookRegistry()
    for event in (BEFORE_COMPACT, COMPACTING, COMPACT):
        hooks.on(event, calls.append)
    again = asyncio.run(
        compact_session(session.tree, session.client, settings=settings(KEEP_CLEAN), hooks=hooks)
    )
    assert again == NothingToCompact("already_compacted", "Already compacted")
    assert calls == []
    assert session.bytes() == before


def test_a_summarizer_failure_writes_nothing(session: Session) -> None:
    session.client.enqueue(Completion(content=[], stop_reason="error", error_message="boom"))
    before = session.bytes()
    with pytest.raises(CompactionError, match=r"^Summarization failed: boom$"):
        session.compact(settings=settings(KEEP_CLEAN, fallback_to_offline=False))
    assert session.bytes() == before


def test_cancelling_the_task_during_the_summary_writes_nothing(session: Session) -> None:
    class Stuck:
        name = "stuck"

        def __init__(self) -> None:
            self.called = asyncio.Event()

        async def complete(self, request: CompletionRequest) -> Completion:
            self.called.set()
            await asyncio.Event().wait()  # never answers
            raise AssertionError("unreachable")

    async def scenario() -> None:
        client = Stuck()
        task = asyncio.create_task(
            compact_session(session.tree, client, settings=settings(KEEP_CLEAN))
        )
        await client.called.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    before = session.bytes()
    asyncio.run(scenario())
    assert session.bytes() == before


# --- session_before_compact / session_compact ----------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_before_compact_and_compact_fire_once_each_with_their_data(
    session: Session, mode: str
) -> None:
    before: list[BeforeCompactEvent] = []
    after: list[SessionCompactEvent] = []
    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, handler(mode, before.append))
    hooks.on(COMPACT, handler(mode, after.append))
    path = session.tree.get_branch()

    outcome = session.compact(hooks, custom_instructions="Focus on tests", reason="threshold")

    (event,) = before
    prep = event.preparation
    assert isinstance(prep, CompactionPreparation)
    assert prep.first_kept_entry_id == session.ids["u2"]
    assert len(prep.messages_to_summarize) == 6
    assert prep.recent_messages and prep.turn_prefix_messages == []
    assert prep.file_ops is not None and prep.settings.keep_recent_tokens == KEEP_CLEAN
    assert event.branch_entries == path  # root to leaf
    assert event.custom_instructions == "Focus on tests"
    assert event.reason == "threshold"
    (done,) = after
    assert done.from_extension is False
    assert done.compaction_entry == outcome.entry
    assert "Additional focus: Focus on tests" in session.history_prompt()


def test_the_compact_event_comes_after_the_entry_is_saved(session: Session) -> None:
    seen: list[tuple[dict[str, Any], str | None]] = []

    def on_compact(event: SessionCompactEvent) -> None:
        # Read the file from scratch: the entry must already be on disk.
        reopened = SessionTree.open(session.path)
        seen.append((last_line(session.path), reopened.leaf_id))
        assert reopened.get_entry(event.compaction_entry["id"]) == event.compaction_entry

    hooks = HookRegistry()
    hooks.on(COMPACT, on_compact)
    outcome = session.compact(hooks)
    assert seen == [(outcome.entry, outcome.entry["id"])]
    assert hooks.failures == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("cancel", [{"cancel": True}, BeforeCompactResult(cancel=True)])
def test_cancel_rejects_with_compaction_cancelled_and_writes_nothing(
    session: Session, mode: str, cancel: Any
) -> None:
    fired: list[Any] = []
    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, handler(mode, lambda event: cancel))
    hooks.on(COMPACTING, fired.append)
    hooks.on(COMPACT, fired.append)
    before = session.bytes()
    with pytest.raises(CompactionCancelledError) as caught:
        session.compact(hooks)
    assert str(caught.value) == "Compaction cancelled"
    assert session.bytes() == before
    assert fired == []
    assert session.client.requests == []


def test_cancel_short_circuits_the_remaining_handlers(session: Session) -> None:
    calls: list[str] = []

    def first(event: Any) -> Any:
        calls.append("first")
        return {"cancel": True}

    def second(event: Any) -> Any:
        calls.append("second")
        return {"compaction": {"summary": "never used"}}

    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, first)
    hooks.on(BEFORE_COMPACT, second)
    with pytest.raises(CompactionCancelledError):
        session.compact(hooks)
    assert calls == ["first"]


@pytest.mark.parametrize("mode", MODES)
def test_a_hook_compaction_is_used_verbatim_even_when_it_looks_wrong(
    session: Session, mode: str
) -> None:
    compacted: list[SessionCompactEvent] = []
    steered: list[Any] = []
    custom = {
        "summary": "Hook summary, no file tags added",
        "shortSummary": "hook short",
        "firstKeptEntryId": session.ids["a4"],
        "tokensBefore": 999,
        "details": {"anything": ["the hook likes"]},
        "preserveData": {"hook": 1},
    }
    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, handler(mode, lambda event: {"compaction": custom}))
    hooks.on(COMPACTING, steered.append)
    hooks.on(COMPACT, compacted.append)

    outcome = session.compact(hooks)

    entry = last_line(session.path)
    assert entry == outcome.entry
    assert {k: entry[k] for k in custom} == custom
    assert entry["fromExtension"] is True and entry["fromHook"] is True
    assert outcome.result.from_extension is True
    assert session.client.requests == []  # no model call
    assert steered == []  # session.compacting only runs for our own summary
    (event,) = compacted
    assert event.from_extension is True and event.compaction_entry == entry
    context = outcome.context.messages
    assert context[0]["summary"] == "Hook summary, no file tags added"
    assert context[1]["role"] == "assistant"  # kept from the hook's firstKeptEntryId (a4)


def test_a_hook_compaction_may_be_a_result_object_and_leave_fields_to_the_preparation(
    session: Session,
) -> None:
    seen: list[CompactionPreparation] = []

    def supply(event: BeforeCompactEvent) -> BeforeCompactResult:
        seen.append(event.preparation)
        return BeforeCompactResult(
            compaction=CompactionResult(
                summary="object summary",
                first_kept_entry_id=event.preparation.first_kept_entry_id,
                tokens_before=12,
                details=None,
            )
        )

    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, supply)
    entry = session.compact(hooks).entry
    assert entry["summary"] == "object summary"
    assert entry["tokensBefore"] == 12
    assert "details" not in entry and "shortSummary" not in entry
    assert entry["fromExtension"] is True

    # A dict with only a summary: the preparation supplies the cut and the token count.
    other = Session(session.path.with_name("other.jsonl"))
    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, lambda event: {"compaction": {"summary": "only a summary"}})
    entry = other.compact(hooks).entry
    assert entry["firstKeptEntryId"] == other.ids["u2"]
    assert entry["tokensBefore"] == seen[0].tokens_before


def test_a_hook_compaction_without_a_summary_is_an_error_and_writes_nothing(
    session: Session,
) -> None:
    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, lambda event: {"compaction": {"tokensBefore": 5}})
    before = session.bytes()
    with pytest.raises(TypeError, match="string summary"):
        session.compact(hooks)
    assert session.bytes() == before


@pytest.mark.parametrize("mode", MODES)
def test_a_throwing_hook_is_reported_and_the_default_compaction_runs(
    session: Session, mode: str
) -> None:
    reported: list[HookFailure] = []

    def boom(event: Any) -> Any:
        raise RuntimeError("hook bug")

    hooks = HookRegistry(on_error=reported.append)
    hooks.on(BEFORE_COMPACT, handler(mode, boom))
    hooks.on(COMPACTING, handler(mode, boom))
    hooks.on(COMPACT, handler(mode, boom))

    outcome = session.compact(hooks)

    assert outcome.entry["fromExtension"] is False
    assert outcome.entry["summary"].startswith("## Goal\nScripted summary")
    assert last_line(session.path) == outcome.entry
    assert [f.event for f in reported] == [BEFORE_COMPACT, COMPACTING, COMPACT]
    assert all(isinstance(f.error, RuntimeError) and not f.timed_out for f in reported)
    assert hooks.failures == reported


def test_hooks_run_in_registration_order_and_the_last_non_empty_result_wins(
    session: Session,
) -> None:
    calls: list[str] = []

    def make(name: str, result: Any) -> Callable[[Any], Any]:
        def run(event: Any) -> Any:
            calls.append(name)
            return result

        return run

    async def async_none(event: Any) -> None:
        calls.append("async-none")

    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, make("first", {"compaction": {"summary": "from first"}}))
    hooks.on(BEFORE_COMPACT, make("second", {"compaction": {"summary": "from second"}}))
    hooks.on(BEFORE_COMPACT, async_none)
    hooks.on(BEFORE_COMPACT, make("empty", {}))
    hooks.on(BEFORE_COMPACT, make("last-none", None))

    entry = session.compact(hooks).entry

    assert calls == ["first", "second", "async-none", "empty", "last-none"]
    assert entry["summary"] == "from second"


def test_a_hook_that_times_out_counts_as_no_result(session: Session) -> None:
    reported: list[HookFailure] = []
    entered: list[str] = []

    async def never_answers(event: Any) -> Any:
        entered.append("stuck")
        await asyncio.Event().wait()  # never set: only the registry's timeout ends this
        return {"cancel": True}

    hooks = HookRegistry(timeout=0.05, on_error=reported.append)
    hooks.on(BEFORE_COMPACT, never_answers)

    outcome = session.compact(hooks)

    assert entered == ["stuck"]
    assert outcome.entry["fromExtension"] is False
    (failure,) = reported
    assert failure.timed_out and failure.event == BEFORE_COMPACT and failure.error is None
    assert "timed out" in str(failure)


def test_cancelling_the_task_inside_a_hook_writes_nothing(session: Session) -> None:
    async def scenario() -> None:
        entered = asyncio.Event()

        async def waits(event: Any) -> None:
            entered.set()
            await asyncio.Event().wait()

        hooks = HookRegistry()
        hooks.on(BEFORE_COMPACT, waits)
        task = asyncio.create_task(
            compact_session(
                session.tree, session.client, settings=settings(KEEP_CLEAN), hooks=hooks
            )
        )
        await entered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert hooks.failures == []

    before = session.bytes()
    asyncio.run(scenario())
    assert session.bytes() == before


# --- session.compacting --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "steer",
    [
        {"context": ["Ticket ABC-123", "Keep the API"], "prompt": "HOOK PROMPT",
         "preserveData": {"hook": {"n": 1}}},
        CompactingResult(
            context=["Ticket ABC-123", "Keep the API"],
            prompt="HOOK PROMPT",
            preserve_data={"hook": {"n": 1}},
        ),
    ],
    ids=["dict", "object"],
)  # fmt: skip
def test_compacting_steers_the_prompt_and_preserve_data(
    session: Session, mode: str, steer: Any
) -> None:
    events: list[CompactingEvent] = []

    def steer_it(event: CompactingEvent) -> Any:
        events.append(event)
        return steer

    hooks = HookRegistry()
    hooks.on(COMPACTING, handler(mode, steer_it))
    outcome = session.compact(hooks, keep=KEEP_SPLIT, extra_context=["From the caller"])

    (event,) = events
    prep = outcome.preparation
    assert event.session_id == session.tree.session_id
    assert event.messages == [*prep.messages_to_summarize, *prep.turn_prefix_messages]
    history = session.history_prompt()
    assert history.endswith(
        "<additional-context>\n- From the caller\n- Ticket ABC-123\n- Keep the API\n"
        "</additional-context>\n\nHOOK PROMPT"
    )
    assert load_prompt("initial-summary") not in history
    # The hook's prompt replaces the history prompt only, not the turn prefix's.
    prefix_prompts = [
        r.messages[0]["content"][0]["text"]
        for r in session.client.requests
        if load_prompt("turn-prefix") in r.messages[0]["content"][0]["text"]
    ]
    assert len(prefix_prompts) == 1
    assert "<additional-context>" not in prefix_prompts[0]
    assert SPLIT_TURN_SEPARATOR in outcome.entry["summary"]
    assert outcome.entry["preserveData"] == {"hook": {"n": 1}}
    assert last_line(session.path)["preserveData"] == {"hook": {"n": 1}}
    assert outcome.entry["fromExtension"] is False


def test_compacting_last_truthy_result_wins_and_results_are_not_merged(
    session: Session,
) -> None:
    hooks = HookRegistry()
    hooks.on(COMPACTING, lambda event: {"context": ["first"], "preserveData": {"a": 1}})
    hooks.on(COMPACTING, lambda event: {"prompt": "SECOND PROMPT"})
    hooks.on(COMPACTING, lambda event: None)
    hooks.on(COMPACTING, lambda event: {})
    outcome = session.compact(hooks)
    history = session.history_prompt()
    assert history.endswith("</conversation>\n\nSECOND PROMPT")
    assert "<additional-context>" not in history
    assert "preserveData" not in outcome.entry


def test_without_hooks_no_preserve_data_is_written(session: Session) -> None:
    entry = session.compact().entry
    assert "preserveData" not in entry


def test_the_offline_summarizer_with_a_compacting_hook(session: Session) -> None:
    hooks = HookRegistry()
    hooks.on(COMPACTING, lambda event: CompactingResult(context=["Release on Friday"]))
    outcome = asyncio.run(
        compact_session(
            session.tree, OfflineSummarizer(), settings=settings(KEEP_CLEAN), hooks=hooks
        )
    )
    assert isinstance(outcome, CompactionOutcome)
    assert "Release on Friday" in outcome.entry["summary"]
