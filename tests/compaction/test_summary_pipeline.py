"""The summary pipeline around the summarizers (issue 10 items 3-6): one budget that holds,
summaries in windows that fit the summarizer, the offline fallback, recorded facts appended to a
model's summary, the short summary made from the finished summary, and the entry fields."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from contextree.compaction.budget import (
    DEFAULT_SUMMARY_TOKENS_CAP,
    MIN_SUMMARY_TOKENS,
    summary_token_budget,
)
from contextree.compaction.offline import OfflineSummarizer
from contextree.compaction.prepare import CompactionPreparation, prepare_compaction
from contextree.compaction.run import CompactionOutcome, compact_session
from contextree.compaction.serialize import serialize_conversation
from contextree.compaction.summarize import compact, text_tokens
from contextree.compaction.windows import (
    MIN_WINDOW_CHARS,
    WindowPlan,
    conversation_pieces,
    summarize_in_windows,
)
from contextree.context.convert import convert_to_llm
from contextree.errors import CompactionError, ContextOverflowError, ModelHTTPError
from contextree.llm.base import Completion, CompletionRequest
from contextree.llm.scripted import ScriptedClient
from contextree.session.tree import SessionTree
from contextree.settings.load import load_settings
from contextree.settings.schema import CompactionSettings

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "todo-api-session.jsonl"


def _prompt(request: CompletionRequest) -> str:
    (message,) = request.messages
    (block,) = message["content"]
    return str(block["text"])


def _example_preparation(**changes: object) -> CompactionPreparation:
    tree = SessionTree.open(EXAMPLE)
    prep = prepare_compaction(tree.get_branch_view(), CompactionSettings(**changes))  # type: ignore[arg-type]
    assert isinstance(prep, CompactionPreparation)
    return prep


def _copy_example(tmp_path: Path) -> SessionTree:
    target = tmp_path / "session.jsonl"
    shutil.copyfile(EXAMPLE, target)
    return SessionTree.open(target)


def _numbered(request: CompletionRequest, counter: list[int]) -> Completion:
    counter.append(1)
    return Completion.from_text(f"## Goal\nsummary {len(counter)}")


# --- the budget -----------------------------------------------------------------------------------


def test_default_budget_is_pis_share_of_the_reserve_capped() -> None:
    assert summary_token_budget(CompactionSettings(reserve_tokens=4000)) == 3200
    assert summary_token_budget(CompactionSettings()) == DEFAULT_SUMMARY_TOKENS_CAP
    assert summary_token_budget(CompactionSettings(summary_tokens=20000)) == 20000


def test_known_window_caps_the_budget_at_a_quarter() -> None:
    assert summary_token_budget(CompactionSettings(), context_window=8192) == 2048
    assert summary_token_budget(CompactionSettings(summary_tokens=500), context_window=8192) == 500
    assert summary_token_budget(CompactionSettings(), context_window=100) == MIN_SUMMARY_TOKENS


def test_summary_settings_keys_load_from_overrides() -> None:
    loaded = load_settings(
        overrides={
            "compaction.summaryTokens": "900",
            "compaction.fallbackToOffline": "false",
            "compaction.recordFacts": "false",
        }
    ).settings.compaction
    assert (loaded.summary_tokens, loaded.fallback_to_offline, loaded.record_facts) == (
        900,
        False,
        False,
    )


@pytest.mark.parametrize("budget", [64, 150, 600, 2000])
def test_offline_summary_with_file_tags_stays_within_the_budget(budget: int) -> None:
    prep = _example_preparation()
    result = asyncio.run(compact(prep, OfflineSummarizer(), summary_tokens=budget))
    assert text_tokens(result.summary) <= budget
    assert result.method == "offline"
    # The lists are complete in details even when the text lists fewer names.
    assert "todo_api/main.py" in result.details["modifiedFiles"]  # type: ignore[index]


def test_max_tokens_sent_is_the_budget_less_what_we_append() -> None:
    prep = _example_preparation(summary_tokens=3000)
    client = ScriptedClient(default="## Goal\nA model summary.")
    result = asyncio.run(compact(prep, client, record_facts=False, short_summary=False))
    tags = result.summary.split("A model summary.", 1)[1]
    history = [r for r in client.requests if "<conversation>" in _prompt(r)]
    assert history
    for request in history:
        assert request.max_tokens is not None
        # The split turn's prefix gets a quarter; the history the rest, less the tags.
        assert request.max_tokens + text_tokens(tags) <= 3000


class _InFlight(ScriptedClient):
    """Counts how many calls run at once."""

    def __init__(self, *, parallel_requests: bool) -> None:
        super().__init__(default="## Goal\nA model summary.", delay=0.02)
        self.parallel_requests = parallel_requests
        self.running = 0
        self.most = 0

    async def complete(self, request: CompletionRequest) -> Completion:
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            return await super().complete(request)
        finally:
            self.running -= 1


@pytest.mark.parametrize(("parallel", "most"), [(True, 2), (False, 1)])
def test_split_turn_summaries_are_sent_together_only_where_the_server_takes_both(
    parallel: bool, most: int
) -> None:
    # pi asks for the history and the turn prefix at once; llama-cpp-python's server ends a
    # running stream when a second request arrives, so local servers get them in turn.
    prep = _example_preparation()
    assert prep.is_split_turn
    client = _InFlight(parallel_requests=parallel)
    asyncio.run(compact(prep, client, record_facts=False, short_summary=False))
    assert len(client.requests) == 2
    assert client.most == most


def test_local_single_slot_servers_are_asked_one_request_at_a_time() -> None:
    from contextree.llm.registry import create_client
    from contextree.runtime.retry import FallbackClient

    def parallel(spec: str) -> bool:
        return bool(getattr(create_client(spec, api_key="k"), "parallel_requests", True))

    assert parallel("openai:gpt-4o-mini") and parallel("vllm:qwen")
    assert not parallel("llamacpp:smollm2") and not parallel("ollama:llama3.1:8b")
    chain = FallbackClient([create_client("openai:gpt-4o", api_key="k"),
                            create_client("llamacpp:m")])  # fmt: skip
    assert not chain.parallel_requests


# --- windows --------------------------------------------------------------------------------------


def test_pieces_join_to_pis_serialization() -> None:
    prep = _example_preparation()
    llm = convert_to_llm(prep.messages_to_summarize)
    assert "\n\n".join(conversation_pieces(llm)) == serialize_conversation(llm)


def test_small_window_is_summarized_window_by_window_with_the_update_prompt() -> None:
    prep = _example_preparation()
    calls: list[int] = []
    client = ScriptedClient(name="small")
    for _ in range(60):
        client.enqueue_function(lambda request: _numbered(request, calls))
    result = asyncio.run(
        compact(prep, client, context_window=8192, record_facts=False, short_summary=False)
    )
    history = [r for r in client.requests if "The conversation above is only" not in _prompt(r)]
    assert result.windows == len(history) >= 3
    for index, request in enumerate(history):
        prompt = _prompt(request)
        assert request.max_tokens is not None
        assert text_tokens(request.system_prompt) + text_tokens(prompt) + request.max_tokens <= 8192
        if index:
            # Each later window updates the summary the earlier ones produced.
            assert "<previous-summary>\n## Goal\nsummary" in prompt
            assert "Write one updated summary" in prompt
    assert "<previous-summary>" not in _prompt(history[0])


def test_overflow_reply_halves_the_window_and_later_windows_keep_the_size() -> None:
    limit = 12_000

    def reply(request: CompletionRequest) -> Completion:
        if len(_prompt(request)) > limit:
            raise ModelHTTPError(
                "llamacpp:tiny",
                "400 This model's maximum context length is 8192 tokens. However, you "
                "requested 23665 tokens",
                status=400,
            )
        return Completion.from_text("## Goal\nrunning summary")

    client = ScriptedClient(name="tiny")
    for _ in range(200):
        client.enqueue_function(reply)
    prep = _example_preparation()
    result = asyncio.run(compact(prep, client, record_facts=False, short_summary=False))
    rejected = [r for r in client.requests if len(_prompt(r)) > limit]
    accepted = [r for r in client.requests if len(_prompt(r)) <= limit]
    history = [r for r in accepted if "only the opening part" not in _prompt(r)]
    assert result.windows == len(history) and result.method == "model"
    # Halving is remembered: far fewer rejected requests than accepted windows.
    assert len(rejected) <= 8
    assert len(accepted) >= 3


def test_a_window_too_small_for_any_conversation_is_a_clear_error() -> None:
    with pytest.raises(CompactionError, match="context window"):
        WindowPlan.for_window(1000, fixed_tokens=600, output_tokens=200)


def test_a_tiny_window_that_still_overflows_fails_instead_of_looping() -> None:
    async def always_overflow(text: str, running: str | None) -> str:
        raise ContextOverflowError("m", "prompt is too long")

    with pytest.raises(CompactionError, match="overflow"):
        asyncio.run(summarize_in_windows(["x" * 5000], always_overflow, plan=WindowPlan(None)))


def test_one_message_larger_than_a_window_is_cut_at_a_line_break() -> None:
    seen: list[str] = []

    async def record(text: str, running: str | None) -> str:
        seen.append(text)
        return "s"

    piece = "\n".join(f"line {i} " + "y" * 50 for i in range(200))
    summary, windows = asyncio.run(
        summarize_in_windows([piece], record, plan=WindowPlan(MIN_WINDOW_CHARS * 4))
    )
    assert summary == "s" and windows == len(seen) > 1
    assert all(len(text) <= MIN_WINDOW_CHARS * 4 + 20 for text in seen)
    assert seen[1].startswith("[... continued]: line")


# --- fallback, facts, short summary, entry fields ------------------------------------------------


def _down() -> ScriptedClient:
    client = ScriptedClient(name="openai:down")
    for _ in range(10):
        client.enqueue_error(ModelHTTPError("openai:down", "503 Service Unavailable", status=503))
    return client


def test_a_failing_model_falls_back_to_the_offline_summarizer(tmp_path: Path) -> None:
    tree = _copy_example(tmp_path)
    outcome = asyncio.run(compact_session(tree, _down()))
    assert isinstance(outcome, CompactionOutcome)
    entry = outcome.entry
    assert entry["details"]["method"] == "offline-fallback"
    assert "503" in entry["details"]["fallbackReason"]
    assert outcome.result.fallback_reason == entry["details"]["fallbackReason"]
    assert "## Goal" in entry["summary"]
    assert entry["shortSummary"]


def test_without_the_fallback_a_failing_model_writes_nothing(tmp_path: Path) -> None:
    tree = _copy_example(tmp_path)
    before = (tmp_path / "session.jsonl").read_bytes()
    with pytest.raises(ModelHTTPError):
        asyncio.run(
            compact_session(tree, _down(), settings=CompactionSettings(fallback_to_offline=False))
        )
    assert (tmp_path / "session.jsonl").read_bytes() == before


def test_entry_records_method_and_tokens_after_for_oh_my_pi(tmp_path: Path) -> None:
    tree = _copy_example(tmp_path)
    outcome = asyncio.run(compact_session(tree, OfflineSummarizer()))
    assert isinstance(outcome, CompactionOutcome)
    line = (tmp_path / "session.jsonl").read_text().splitlines()[-1]
    entry = json.loads(line)
    assert entry["method"] == "soft"
    assert entry["tokensAfter"] == outcome.result.tokens_after > 0
    assert entry["details"]["method"] == "offline"


def test_short_summary_is_made_from_the_finished_summary() -> None:
    prep = _example_preparation()
    client = ScriptedClient(default="## Goal\nThe history summary.")
    result = asyncio.run(compact(prep, client, record_facts=False))
    short_requests = [r for r in client.requests if "two or three sentences" in _prompt(r)]
    (request,) = short_requests
    prompt = _prompt(request)
    assert "<conversation>" not in prompt
    assert "<previous-summary>\n## Goal\nThe history summary." in prompt
    assert result.short_summary == "## Goal\nThe history summary."


def test_model_summary_gets_the_recorded_facts_appended() -> None:
    prep = _example_preparation()
    client = ScriptedClient(default="## Goal\nA model summary that forgot the constraints.")
    result = asyncio.run(compact(prep, client, short_summary=False))
    assert result.method == "hybrid"
    assert result.details is not None and result.details["method"] == "hybrid"
    # The user's constraint reaches the summary whatever the model recalled.
    assert "migrations/" in result.summary
    assert result.summary.startswith("## Goal\nA model summary")
