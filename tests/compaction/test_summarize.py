"""``compact()``: prompt assembly, call parameters, split turns, file tags (pi-behaviour §7.2-7.6,
§8; DESIGN decisions 3-5), and compaction of the real pi fixtures with the offline summarizer and
with models behind a fake OpenAI-compatible / Anthropic server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import re
import shutil
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from contextree.compaction.offline import OfflineSummarizer
from contextree.compaction.prepare import CompactionPreparation, prepare_compaction
from contextree.compaction.prompt_templates import load_prompt
from contextree.compaction.run import CompactionOutcome, compact_session
from contextree.compaction.serialize import serialize_conversation
from contextree.compaction.summarize import (
    SPLIT_TURN_SEPARATOR,
    CompactionResult,
    build_summary_prompt,
    compact,
    text_tokens,
)
from contextree.compaction.summary_request import SummaryReply, SummaryRequest
from contextree.context.convert import convert_to_llm
from contextree.errors import CompactionError, ModelHTTPError, ModelResponseError
from contextree.llm.anthropic import AnthropicClient
from contextree.llm.base import Completion, CompletionRequest, ModelClient
from contextree.llm.openai_compat import OpenAIClient
from contextree.llm.remote import RemoteSummaryClient
from contextree.session.check import check_session
from contextree.session.tree import SessionTree
from contextree.tokens.estimate import estimate_tokens
from core_helpers import assistant, user
from fakes.fake_llm import FakeLLMServer
from pi_fixtures import pi_fixture
from sample_session import (
    CONSTRAINT,
    FAILING_COMMAND,
    KEEP_CLEAN,
    KEEP_PREFIX_ONLY,
    KEEP_SPLIT,
    add_third_turn,
    build_session,
    open_session,
    settings,
)

TAGS = "<modified-files>\nsrc/parser.py\n</modified-files>"
HEX8 = re.compile(r"^[0-9a-f]{8}$")
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
COMPACTION_KEYS = [
    "type",
    "id",
    "parentId",
    "timestamp",
    "summary",
    "shortSummary",
    "firstKeptEntryId",
    "tokensBefore",
    "tokensAfter",
    "method",
    "details",
    "fromHook",
    "fromExtension",
]
FIXTURES = ["before-compaction.jsonl", "large-session.jsonl"]


# --- helpers -------------------------------------------------------------------------------------


def prompt_of(request: CompletionRequest) -> str:
    """The one text block of the one user message a summarization request holds."""
    (message,) = request.messages
    assert message["role"] == "user"
    (block,) = message["content"]
    assert block["type"] == "text"
    return str(block["text"])


def kind_of(prompt: str) -> str:
    if load_prompt("turn-prefix") in prompt:
        return "prefix"
    if load_prompt("short-summary") in prompt:
        return "short"
    return "history"


class ByKind:
    """A model that answers by the kind of summary asked for, so that concurrent history and
    turn-prefix calls need no ordering; every request is recorded under its kind."""

    name = "by-kind"

    def __init__(self, **replies: str | Completion | BaseException) -> None:
        self.replies: dict[str, str | Completion | BaseException] = {
            "history": "HISTORY SUMMARY",
            "prefix": "PREFIX SUMMARY",
            "short": "Short summary.",
            **replies,
        }
        self.requests: dict[str, list[CompletionRequest]] = defaultdict(list)

    def prompt(self, kind: str, index: int = -1) -> str:
        return prompt_of(self.requests[kind][index])

    async def complete(self, request: CompletionRequest) -> Completion:
        kind = kind_of(prompt_of(request))
        self.requests[kind].append(request)
        reply = self.replies[kind]
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, Completion):
            return reply
        return Completion.from_text(reply, model=self.name)


def failed(message: str | None) -> Completion:
    return Completion(content=[], stop_reason="error", error_message=message)


def prepared(tree: SessionTree, keep: int, **changes: Any) -> CompactionPreparation:
    prep = prepare_compaction(tree.get_branch(), settings(keep, **changes))
    assert isinstance(prep, CompactionPreparation)
    return prep


@pytest.fixture
def tree(tmp_path: Path) -> SessionTree:
    session = open_session(tmp_path / "session.jsonl")
    build_session(session)
    return session


def run_compact(prep: CompactionPreparation, client: ModelClient, **kw: Any) -> CompactionResult:
    """compact() on the plain model path pi has: no recorded facts appended, no offline
    fallback (tests/compaction/test_summary_pipeline.py covers both)."""
    kw.setdefault("record_facts", False)
    kw.setdefault("fallback_to_offline", False)
    return asyncio.run(compact(prep, client, **kw))


def file_lists(details: dict[str, Any]) -> dict[str, Any]:
    return {key: details[key] for key in ("readFiles", "modifiedFiles")}


def conversation(messages: list[Any]) -> str:
    return serialize_conversation(convert_to_llm(messages))


# --- prompt assembly (§7.2) ----------------------------------------------------------------------


def test_the_prompt_is_conversation_previous_context_instructions_then_focus(
    tree: SessionTree,
) -> None:
    messages = prepared(tree, KEEP_CLEAN).messages_to_summarize
    text = build_summary_prompt(
        messages,
        "BASE PROMPT",
        previous_summary="old summary",
        extra_context=["first line", "second line"],
        custom_instructions="the parser",
    )
    assert text == (
        f"<conversation>\n{conversation(messages)}\n</conversation>\n\n"
        "<previous-summary>\nold summary\n</previous-summary>\n\n"
        "<additional-context>\n- first line\n- second line\n</additional-context>\n\n"
        "BASE PROMPT\n\nAdditional focus: the parser"
    )


def test_empty_parts_are_left_out_of_the_prompt(tree: SessionTree) -> None:
    messages = prepared(tree, KEEP_CLEAN).messages_to_summarize
    text = build_summary_prompt(
        messages, "BASE", previous_summary="", extra_context=(), custom_instructions=""
    )
    assert text == f"<conversation>\n{conversation(messages)}\n</conversation>\n\nBASE"


# --- one history call ----------------------------------------------------------------------------


def test_initial_summary_request_and_result(tree: SessionTree) -> None:
    prep = prepared(tree, KEEP_CLEAN)
    assert not prep.is_split_turn and prep.previous_summary is None
    client = ByKind()
    result = run_compact(prep, client)

    assert [len(client.requests[k]) for k in ("history", "prefix", "short")] == [1, 0, 1]
    history = client.requests["history"][0]
    assert history.system_prompt == load_prompt("system")
    assert history.tools == []
    assert prompt_of(history) == build_summary_prompt(
        prep.messages_to_summarize, load_prompt("initial-summary")
    )
    # pi asks for floor(0.8 x 16384) = 13107; our one budget caps that at 8192 and leaves
    # room for the file tags appended to the text (docs/summaries.md).
    assert math.floor(0.8 * 16384) == 13107
    assert history.max_tokens == 8192 - text_tokens(TAGS) - 1
    assert history.reasoning is None

    assert result.summary == f"HISTORY SUMMARY\n\n{TAGS}"
    assert result.details == {
        "readFiles": [],
        "modifiedFiles": ["src/parser.py"],
        "method": "model",
    }
    assert result.short_summary == "Short summary."
    assert result.first_kept_entry_id == prep.first_kept_entry_id
    assert result.tokens_before == prep.tokens_before
    assert result.from_extension is False
    assert result.preserve_data is None
    assert len(result.usage) == 2
    expected_after = estimate_tokens({"role": "compactionSummary", "summary": result.summary})
    expected_after += sum(estimate_tokens(m) for m in prep.recent_messages)
    assert result.tokens_after == expected_after


def test_short_summary_is_made_from_the_summary_before_its_file_tags(
    tree: SessionTree,
) -> None:
    prep = prepared(tree, KEEP_CLEAN)
    client = ByKind()
    run_compact(prep, client, extra_context=["hook line"], custom_instructions="focus")
    short = client.requests["short"][0]
    # Not the conversation (pi sends the kept messages): the finished summary covers it all.
    assert prompt_of(short) == (
        "<previous-summary>\nHISTORY SUMMARY\n</previous-summary>\n\n"
        "<additional-context>\n- hook line\n</additional-context>\n\n"
        + load_prompt("short-summary")
    )
    assert "Additional focus" not in prompt_of(short)
    assert short.max_tokens == 512
    assert short.reasoning is None


def test_call_sizes_follow_the_reserve_and_reasoning_reaches_history_and_prefix(
    tree: SessionTree,
) -> None:
    prep = prepared(tree, KEEP_SPLIT, reserve_tokens=1000)
    client = ByKind()
    run_compact(prep, client, reasoning="high")
    history, prefix, short = (client.requests[k][0] for k in ("history", "prefix", "short"))
    # One budget, 0.8 x reserve = 800, for the whole summary: the prefix gets a quarter of what
    # the file tags leave, the history the rest less the separator.
    text_budget = 800 - text_tokens(TAGS) - 1
    assert prefix.max_tokens == text_budget // 4
    assert (
        history.max_tokens
        == text_budget - prefix.max_tokens - text_tokens(SPLIT_TURN_SEPARATOR) - 1
    )
    assert short.max_tokens == 200
    assert (history.reasoning, prefix.reasoning, short.reasoning) == ("high", "high", None)


def _prefix_part(summary: str) -> str:
    """The turn-prefix summary of a split turn's summary, without the file tags."""
    return summary.split(SPLIT_TURN_SEPARATOR, 1)[1].split("\n\n<modified-files>", 1)[0]


def test_an_offline_prefix_summary_leaves_what_it_does_not_use_to_the_history(
    tree: SessionTree,
) -> None:
    prep = prepared(tree, KEEP_SPLIT, reserve_tokens=1000)
    client = ByKind()
    result = run_compact(prep, client, turn_prefix_summarizer=OfflineSummarizer())
    prefix_text = _prefix_part(result.summary)
    text_budget = 800 - text_tokens(TAGS) - 1
    joint = text_tokens(SPLIT_TURN_SEPARATOR) + 1
    # The prefix is summarized first (the offline summarizer answers at once, nothing is
    # gained by asking both at once): the history gets the budget less what it took.
    assert text_tokens(prefix_text) < text_budget // 4
    (history,) = client.requests["history"]
    assert history.max_tokens == text_budget - text_tokens(prefix_text) - joint
    assert text_tokens(result.summary) <= 800


class _RecordingOffline(OfflineSummarizer):
    """The offline summarizer, recording the budget of each request it answers."""

    def __init__(self) -> None:
        super().__init__()
        self.budgets: dict[str, int] = {}

    async def write_summary(self, request: SummaryRequest) -> SummaryReply:
        self.budgets[request.kind] = request.budget_tokens
        return await super().write_summary(request)


@pytest.mark.parametrize("earlier_turns", [0, 12])
def test_an_offline_prefix_gets_at_most_its_share_of_what_is_summarized(
    tmp_path: Path, earlier_turns: int
) -> None:
    tree = open_session(tmp_path / "session.jsonl")
    for n in range(earlier_turns):
        tree.append_message(user(f"Earlier question {n}: " + "what about the lexer? " * 40))
        tree.append_message(assistant(f"Earlier answer {n}: " + "the lexer is fine. " * 40))
    build_session(tree)
    prep = prepared(tree, KEEP_SPLIT, reserve_tokens=1000)
    assert prep.is_split_turn
    offline = _RecordingOffline()
    result = run_compact(prep, ByKind(), turn_prefix_summarizer=offline)
    text_budget = 800 - text_tokens(TAGS) - 1
    prefix = sum(map(estimate_tokens, prep.turn_prefix_messages))
    history = sum(map(estimate_tokens, prep.messages_to_summarize))
    share = text_budget * prefix // (prefix + history)
    # A quarter at most; less when the prefix (the split turn's request and first calls) is
    # a small part of what is summarized.
    assert (share < text_budget // 4) == bool(earlier_turns)
    assert offline.budgets["turn_prefix"] == max(min(share, text_budget // 4), 16)
    assert _prefix_part(result.summary)
    # A model's prefix keeps its quarter (a model writes what it sees fit below it).
    client = ByKind()
    run_compact(prep, client)
    assert client.requests["prefix"][0].max_tokens == text_budget // 4


def test_a_server_that_takes_one_request_at_a_time_gets_the_prefix_first(
    tree: SessionTree,
) -> None:
    prep = prepared(tree, KEEP_SPLIT, reserve_tokens=1000)
    client = ByKind(prefix="Short prefix summary.")
    client.parallel_requests = False  # type: ignore[attr-defined]
    run_compact(prep, client)
    text_budget = 800 - text_tokens(TAGS) - 1
    joint = text_tokens(SPLIT_TURN_SEPARATOR) + 1
    (history,) = client.requests["history"]
    assert history.max_tokens == text_budget - text_tokens("Short prefix summary.") - joint


def test_no_short_summary_when_turned_off(tree: SessionTree) -> None:
    client = ByKind()
    result = run_compact(prepared(tree, KEEP_CLEAN), client, short_summary=False)
    assert result.short_summary is None
    assert "short" not in client.requests


def test_a_blank_short_summary_is_stored_as_none(tree: SessionTree) -> None:
    result = run_compact(prepared(tree, KEEP_CLEAN), ByKind(short="  \n"))
    assert result.short_summary is None


def test_the_summary_is_the_text_blocks_joined_by_newlines(tree: SessionTree) -> None:
    reply = Completion(
        content=[
            {"type": "thinking", "thinking": "hidden"},
            {"type": "text", "text": "part one"},
            {"type": "text", "text": "part two"},
        ]
    )
    result = run_compact(prepared(tree, KEEP_CLEAN), ByKind(history=reply))
    assert result.summary.startswith("part one\npart two\n\n<modified-files>")
    assert "hidden" not in result.summary


# --- split turns (§7.5, decision 3) --------------------------------------------------------------


def test_a_split_turn_summarizes_history_and_prefix_and_merges_them(tree: SessionTree) -> None:
    prep = prepared(tree, KEEP_SPLIT)
    assert prep.is_split_turn and prep.messages_to_summarize and prep.turn_prefix_messages
    client = ByKind()
    result = run_compact(prep, client)

    assert prompt_of(client.requests["prefix"][0]) == build_summary_prompt(
        prep.turn_prefix_messages, load_prompt("turn-prefix")
    )
    assert client.requests["prefix"][0].max_tokens == (8192 - text_tokens(TAGS) - 1) // 4
    assert client.requests["prefix"][0].system_prompt == load_prompt("system")
    assert result.summary == (
        "HISTORY SUMMARY" + SPLIT_TURN_SEPARATOR + "PREFIX SUMMARY"
        "\n\n<modified-files>\nsrc/parser.py\n</modified-files>"
    )
    assert SPLIT_TURN_SEPARATOR == "\n\n---\n\n**Turn Context (split turn):**\n\n"


def test_the_two_calls_of_a_split_turn_run_concurrently(tree: SessionTree) -> None:
    prep = prepared(tree, KEEP_SPLIT)

    class Both:
        """Each call waits until both have started: this only finishes if they overlap."""

        name = "both"

        def __init__(self) -> None:
            self.started: list[str] = []
            self.both = asyncio.Event()

        async def complete(self, request: CompletionRequest) -> Completion:
            kind = kind_of(prompt_of(request))
            if kind != "short":
                self.started.append(kind)
                if len(self.started) == 2:
                    self.both.set()
                await asyncio.wait_for(self.both.wait(), 5)
            return Completion.from_text(kind.upper())

    client = Both()
    result = run_compact(prep, client)
    assert sorted(client.started) == ["history", "prefix"]
    assert result.summary.startswith("HISTORY" + SPLIT_TURN_SEPARATOR + "PREFIX")


def test_a_split_turn_with_no_history_and_no_previous_summary_says_so(
    tree: SessionTree,
) -> None:
    prep = prepared(tree, KEEP_PREFIX_ONLY)
    assert prep.is_split_turn and not prep.messages_to_summarize and prep.previous_summary is None
    client = ByKind()
    result = run_compact(prep, client)
    assert "history" not in client.requests
    assert result.summary.startswith("No prior history." + SPLIT_TURN_SEPARATOR + "PREFIX SUMMARY")


def test_a_split_turn_with_no_new_history_keeps_the_previous_summary(tree: SessionTree) -> None:
    # Decision 3: pi writes "No prior history." here and loses the previous summary.
    prep = dataclasses.replace(prepared(tree, KEEP_PREFIX_ONLY), previous_summary="OLD SUMMARY")
    client = ByKind()
    result = run_compact(prep, client)
    assert "history" not in client.requests
    assert result.summary.startswith("OLD SUMMARY" + SPLIT_TURN_SEPARATOR + "PREFIX SUMMARY")
    assert "<previous-summary>" not in client.prompt("prefix")


def test_custom_instructions_reach_the_history_and_the_turn_prefix_prompts(
    tree: SessionTree,
) -> None:
    # Decision 3: pi leaves them out of the turn-prefix prompt (PI issue #9348).
    client = ByKind()
    run_compact(prepared(tree, KEEP_SPLIT), client, custom_instructions="Keep error messages")
    assert client.prompt("history").endswith(
        load_prompt("initial-summary") + "\n\nAdditional focus: Keep error messages"
    )
    assert client.prompt("prefix").endswith(
        load_prompt("turn-prefix") + "\n\nAdditional focus: Keep error messages"
    )


# --- previous summary, hooks' prompt and context -------------------------------------------------


def _compact_twice(tree: SessionTree, client: ModelClient) -> tuple[CompactionOutcome, Any]:
    first = asyncio.run(compact_session(tree, client, settings=settings(KEEP_SPLIT)))
    assert isinstance(first, CompactionOutcome)
    add_third_turn(tree)
    second = asyncio.run(compact_session(tree, client, settings=settings(100)))
    assert isinstance(second, CompactionOutcome)
    return first, second


def test_the_update_prompt_is_used_when_a_previous_summary_exists(tree: SessionTree) -> None:
    client = ByKind()
    first, second = _compact_twice(tree, client)
    prep = second.preparation
    assert prep.previous_summary == first.result.summary
    expected = build_summary_prompt(
        prep.messages_to_summarize,
        load_prompt("update-summary"),
        previous_summary=first.result.summary,
    )
    assert client.prompt("history", 1) == expected
    assert load_prompt("initial-summary") not in client.prompt("history", 1)
    # The turn prefix never sees the previous summary (§7.2).
    assert "<previous-summary>" not in client.prompt("prefix", 1)


def test_a_prompt_override_replaces_the_initial_and_the_update_prompt(tree: SessionTree) -> None:
    prep = prepared(tree, KEEP_CLEAN)
    for previous in (None, "old summary"):
        client = ByKind()
        run_compact(
            dataclasses.replace(prep, previous_summary=previous),
            client,
            prompt_override="HOOK PROMPT",
            extra_context=["keep the public API stable"],
            custom_instructions="focus",
        )
        text = client.prompt("history")
        assert text.endswith(
            "<additional-context>\n- keep the public API stable\n</additional-context>\n\n"
            "HOOK PROMPT\n\nAdditional focus: focus"
        )
        assert load_prompt("initial-summary") not in text
        assert load_prompt("update-summary") not in text


def test_a_prompts_dir_overrides_our_templates(tree: SessionTree, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "initial-summary.md").write_text("MY INITIAL PROMPT\n", encoding="utf-8")
    (prompts / "system.md").write_text("MY SYSTEM PROMPT\n", encoding="utf-8")
    client = ByKind()
    run_compact(prepared(tree, KEEP_CLEAN), client, prompts_dir=prompts)
    request = client.requests["history"][0]
    assert prompt_of(request).endswith("</conversation>\n\nMY INITIAL PROMPT")
    assert request.system_prompt == "MY SYSTEM PROMPT"


# --- failures (§7.4) -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replies", "message"),
    [
        ({"history": failed("rate limited")}, "Summarization failed: rate limited"),
        ({"history": failed(None)}, "Summarization failed: Unknown error"),
        ({"prefix": failed("too long")}, "Turn prefix summarization failed: too long"),
    ],
)
def test_a_failed_summary_call_fails_the_compaction(
    tree: SessionTree, replies: dict[str, Completion], message: str
) -> None:
    with pytest.raises(CompactionError) as caught:
        run_compact(prepared(tree, KEEP_SPLIT), ByKind(**replies))
    assert str(caught.value) == message


def test_a_client_exception_propagates(tree: SessionTree) -> None:
    error = ModelHTTPError("by-kind", "503 busy", status=503)
    with pytest.raises(ModelHTTPError) as caught:
        run_compact(prepared(tree, KEEP_CLEAN), ByKind(history=error))
    assert caught.value is error


def test_an_aborted_call_cancels(tree: SessionTree) -> None:
    aborted = Completion(content=[], stop_reason="aborted")
    with pytest.raises(asyncio.CancelledError):
        run_compact(prepared(tree, KEEP_CLEAN), ByKind(history=aborted))


@pytest.mark.parametrize(
    "short", [failed("quota"), ModelHTTPError("by-kind", "500 oops", status=500)]
)
def test_a_failed_short_summary_is_logged_and_left_out(
    tree: SessionTree, short: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # Unlike the fork, the display summary failing does not fail the compaction.
    with caplog.at_level(logging.WARNING, logger="contextree.compaction"):
        result = run_compact(prepared(tree, KEEP_CLEAN), ByKind(short=short))
    assert result.summary.startswith("HISTORY SUMMARY")
    assert result.short_summary is None
    assert "short summary failed" in caplog.text


# --- file tags (§8, decision 5) ------------------------------------------------------------------


def _tags(summary: str) -> tuple[list[str], list[str]]:
    def block(tag: str) -> list[str]:
        found = re.findall(rf"<{tag}>\n(.*?)\n</{tag}>", summary, flags=re.S)
        assert len(found) <= 1, f"{tag} appears {len(found)} times"
        return found[0].split("\n") if found else []

    return block("read-files"), block("modified-files")


@pytest.mark.parametrize("echo", [False, True], ids=["fresh-text", "model-echoes-old-tags"])
def test_file_tags_accumulate_over_two_compactions_and_are_never_duplicated(
    tree: SessionTree, echo: bool
) -> None:
    client: ModelClient
    if echo:
        # A model that repeats the previous summary, tags included (pi then duplicates them).
        class Echo(ByKind):
            async def complete(self, request: CompletionRequest) -> Completion:
                text = prompt_of(request)
                found = re.search(r"<previous-summary>\n(.*)\n</previous-summary>", text, re.S)
                if found and kind_of(text) == "history":
                    self.requests["history"].append(request)
                    return Completion.from_text(found.group(1))
                return await super().complete(request)

        client = Echo()
    else:
        client = OfflineSummarizer()
    first, second = _compact_twice(tree, client)

    assert first.result.details is not None
    assert file_lists(first.result.details) == {"readFiles": [], "modifiedFiles": ["src/parser.py"]}
    assert _tags(first.result.summary) == ([], ["src/parser.py"])
    # Seeded from the first compaction's details, plus the files of the newly summarized part.
    details = {
        "readFiles": ["docs/guide.md", "tests/test_parser.py"],
        "modifiedFiles": ["docs/parser.md", "src/parser.py"],
    }
    assert second.result.details is not None
    assert file_lists(second.result.details) == details
    assert file_lists(second.entry["details"]) == details
    summary = second.result.summary
    assert _tags(summary) == (details["readFiles"], details["modifiedFiles"])
    assert summary.endswith(
        "\n\n<read-files>\ndocs/guide.md\ntests/test_parser.py\n</read-files>\n\n"
        "<modified-files>\ndocs/parser.md\nsrc/parser.py\n</modified-files>"
    )


def test_the_offline_summary_keeps_the_paths_the_constraint_and_the_failing_command(
    tree: SessionTree,
) -> None:
    result = run_compact(prepared(tree, KEEP_CLEAN), OfflineSummarizer())
    assert "src/parser.py" in result.summary
    assert CONSTRAINT in result.summary
    prefix_result = run_compact(prepared(tree, KEEP_SPLIT), OfflineSummarizer())
    assert FAILING_COMMAND in prefix_result.summary


# --- the real pi fixtures, offline and through a fake model server -------------------------------


@pytest.fixture(scope="module")
def llm_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def fake_llm(llm_server: FakeLLMServer) -> Iterator[FakeLLMServer]:
    llm_server.reset()
    yield llm_server
    llm_server.reset()


def _client(kind: str, server: FakeLLMServer) -> ModelClient:
    if kind == "offline":
        return OfflineSummarizer()
    if kind == "openai":
        return OpenAIClient("gpt-4o-mini", base_url=server.url, api_key="sk-test")
    return AnthropicClient("claude-sonnet-4-5", base_url=server.url, api_key="sk-ant-test")


def _check_format(path: Path) -> list[dict[str, Any]]:
    """pi's format rules (§1): v3 header first, 8-hex ids, ISO timestamps, parents exist."""
    lines = [json.loads(line) for line in path.read_bytes().split(b"\n")[:-1]]
    assert path.read_bytes().endswith(b"\n")
    header, entries = lines[0], lines[1:]
    assert header["type"] == "session" and header["version"] == 3
    assert isinstance(header["id"], str)
    seen: set[str] = set()
    for entry in entries:
        assert HEX8.match(entry["id"]), entry["id"]
        assert ISO.match(entry["timestamp"]), entry["timestamp"]
        assert entry["parentId"] is None or entry["parentId"] in seen
        seen.add(entry["id"])
    return entries


@pytest.mark.parametrize("kind", ["offline", "openai", "anthropic"])
@pytest.mark.parametrize("name", FIXTURES)
def test_compacting_a_pi_fixture(
    tmp_path: Path, fake_llm: FakeLLMServer, name: str, kind: str
) -> None:
    path = tmp_path / name
    shutil.copyfile(pi_fixture(name), path)
    tree = SessionTree.open(path)
    tree.flush()  # the v1 -> v3 migration, so that the compaction itself is a pure append
    before_bytes = path.read_bytes()
    before = tree.build_session_context().messages
    old_leaf = tree.leaf_id
    for text in ("## Goal\nSummary A", "## Goal\nSummary B", "Short summary of the work."):
        fake_llm.enqueue_text(text)

    outcome = asyncio.run(compact_session(tree, _client(kind, fake_llm)))
    assert isinstance(outcome, CompactionOutcome)
    prep, result, entry = outcome.preparation, outcome.result, outcome.entry

    # Exactly one line appended: the compaction entry, in pi's key order.
    after_bytes = path.read_bytes()
    assert after_bytes.startswith(before_bytes)
    (line,) = after_bytes[len(before_bytes) :].splitlines()
    written = json.loads(line)
    assert written == entry
    assert list(written) == COMPACTION_KEYS
    assert written["type"] == "compaction"
    assert written["parentId"] == old_leaf
    assert written["fromHook"] is False and written["fromExtension"] is False
    assert written["tokensBefore"] == prep.tokens_before > 0
    assert written["summary"] == result.summary and result.summary.strip()
    assert set(written["details"]) == {"readFiles", "modifiedFiles", "method"}
    assert written["method"] == "soft" and written["tokensAfter"] == result.tokens_after

    # It still opens in contextree, undamaged, and follows pi's format rules.
    entries = _check_format(path)
    reopened = SessionTree.open(path)
    assert reopened.report.bad_lines == []
    assert not check_session(reopened).damaged
    assert reopened.leaf_id == written["id"]
    assert written["firstKeptEntryId"] in {e["id"] for e in reopened.get_branch()}
    assert len(entries) == len(reopened)

    # The context starts with the summary and is smaller.
    after = reopened.build_session_context().messages
    assert after[0]["role"] == "compactionSummary"
    assert after[0]["summary"] == result.summary
    assert after == outcome.context.messages
    assert len(after) < len(before)
    assert sum(estimate_tokens(m) for m in after) < sum(estimate_tokens(m) for m in before)
    assert result.tokens_after < result.tokens_before

    # Both fixtures cut inside a turn; before-compaction has a previous summary.
    assert prep.is_split_turn
    assert SPLIT_TURN_SEPARATOR in result.summary
    assert (prep.previous_summary is not None) == (name == "before-compaction.jsonl")

    if kind == "offline":
        assert fake_llm.requests == []
        return
    # History and turn prefix run concurrently (either order), then the short summary.
    assert len(fake_llm.requests) == 3
    history_part, prefix_part = result.summary.split(SPLIT_TURN_SEPARATOR)
    # The recorded facts follow the model's text in a section of their own.
    parts = {part.split("\n\n##")[0].split("\n\n<")[0] for part in (history_part, prefix_part)}
    assert parts == {
        "## Goal\nSummary A",
        "## Goal\nSummary B",
    }
    assert result.short_summary == "Short summary of the work."
    prompts = [_sent_prompt(r.body, kind) for r in fake_llm.requests]
    systems = {_sent_system(r.body, kind) for r in fake_llm.requests}
    assert systems == {load_prompt("system")}
    history_prompts = [p for p in prompts if kind_of(p) == "history"]
    assert len(history_prompts) == 1
    base = "update-summary" if prep.previous_summary else "initial-summary"
    assert history_prompts[0] == build_summary_prompt(
        prep.messages_to_summarize, load_prompt(base), previous_summary=prep.previous_summary
    )
    assert sum(kind_of(p) == "prefix" for p in prompts) == 1
    assert kind_of(prompts[2]) == "short"


def _sent_prompt(body: Any, kind: str) -> str:
    messages = body["messages"]
    user = [m for m in messages if m["role"] == "user"]
    assert len(user) == 1
    content = user[0]["content"]
    if isinstance(content, str):
        return content
    return "".join(block["text"] for block in content)


def _sent_system(body: Any, kind: str) -> str:
    if kind == "anthropic":
        system = body["system"]
        return system if isinstance(system, str) else "".join(b["text"] for b in system)
    (message,) = [m for m in body["messages"] if m["role"] in ("system", "developer")]
    content = message["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content)


# --- the remote summarization endpoint (§7.6), against the fake server ---------------------------


def test_remote_endpoint_summarizes_history_and_short_summary_prefix_stays_local(
    tree: SessionTree, fake_llm: FakeLLMServer
) -> None:
    prep = prepared(tree, KEEP_SPLIT)
    fake_llm.enqueue_text("REMOTE HISTORY")
    fake_llm.enqueue_text("Remote short summary.")
    local = OfflineSummarizer()
    result = asyncio.run(
        compact(prep, RemoteSummaryClient(fake_llm.remote_url), turn_prefix_summarizer=local)
    )
    history, short = fake_llm.requests
    assert history.path == "/summarize"
    assert history.body == {
        "systemPrompt": load_prompt("system"),
        "prompt": build_summary_prompt(prep.messages_to_summarize, load_prompt("initial-summary")),
    }
    assert kind_of(short.body["prompt"]) == "short"
    assert result.summary.startswith(
        "REMOTE HISTORY" + SPLIT_TURN_SEPARATOR + "## Original Request"
    )
    assert FAILING_COMMAND in result.summary  # the prefix, summarized by the offline summarizer
    assert result.short_summary == "Remote short summary."


def test_a_remote_endpoint_never_gets_the_prefix_even_when_no_local_summarizer_is_given(
    tree: SessionTree, fake_llm: FakeLLMServer
) -> None:
    # Issue 12 point 9: the rule lived in the CLI (turn_prefix_client); the library applies it.
    prep = prepared(tree, KEEP_SPLIT)
    fake_llm.enqueue_text("REMOTE HISTORY")
    fake_llm.enqueue_text("Remote short summary.")
    result = asyncio.run(compact(prep, RemoteSummaryClient(fake_llm.remote_url)))
    _history, short = fake_llm.requests  # no third request: the prefix stayed here
    assert kind_of(short.body["prompt"]) == "short"
    assert "REMOTE HISTORY" + SPLIT_TURN_SEPARATOR + "## Original Request" in result.summary
    assert FAILING_COMMAND in result.summary


@pytest.mark.parametrize(
    ("script", "error", "message"),
    [
        (
            lambda fake: fake.enqueue_error(500),
            ModelHTTPError,
            "Remote compaction failed (500 Internal Server Error)",
        ),
        (
            lambda fake: fake.enqueue_raw(200, {"text": "no summary key"}),
            ModelResponseError,
            "Remote compaction response missing summary",
        ),
    ],
    ids=["non-2xx", "missing-summary"],
)
def test_remote_endpoint_failures_fail_the_compaction_and_write_nothing(
    tree: SessionTree, fake_llm: FakeLLMServer, script: Any, error: type[Exception], message: str
) -> None:
    script(fake_llm)
    assert tree.path is not None
    before = tree.path.read_bytes()
    with pytest.raises(error) as caught:
        asyncio.run(
            compact_session(
                tree,
                RemoteSummaryClient(fake_llm.remote_url),
                settings=settings(KEEP_CLEAN, fallback_to_offline=False),
            )
        )
    assert str(caught.value) == message
    assert tree.path.read_bytes() == before
