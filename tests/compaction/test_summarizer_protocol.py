"""The summarizer protocol: one :class:`SummaryRequest` for every summarizer, capabilities as
attributes (``method``, ``fallible``, ``summarizes_turn_prefix``, ``parallel_requests``), and
the offline summarizer reading the request's messages instead of a prompt."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from contextree.branching import generate_branch_summary
from contextree.compaction import Summarizer, SummaryReply, SummaryRequest
from contextree.compaction.offline import OfflineSummarizer
from contextree.compaction.prepare import CompactionPreparation, prepare_compaction
from contextree.compaction.summarize import as_summarizer, compact, local_turn_prefix_summarizer
from contextree.compaction.summary_prompt import ModelSummarizer
from contextree.compaction.summary_request import SummaryMethod
from contextree.errors import CompactionError
from contextree.llm.base import Completion, CompletionRequest
from contextree.llm.remote import RemoteSummaryClient
from contextree.llm.scripted import ScriptedClient
from contextree.session.tree import SessionTree
from sample_session import KEEP_CLEAN, KEEP_SPLIT, build_session, open_session, settings


@pytest.fixture
def tree(tmp_path: Path) -> SessionTree:
    session = open_session(tmp_path / "session.jsonl")
    build_session(session)
    return session


def _prepared(tree: SessionTree, keep: int) -> CompactionPreparation:
    prep = prepare_compaction(tree.get_branch(), settings(keep))
    assert isinstance(prep, CompactionPreparation)
    return prep


class _NoPrompts(OfflineSummarizer):
    """The offline summarizer, refusing the prompt path: it must be handed requests."""

    async def complete(self, request: CompletionRequest) -> Completion:
        raise AssertionError("the offline summarizer was sent a prompt")


class _Recording:
    """A summarizer of our own: records the requests, answers by kind, cannot fail."""

    name = "recording"
    method: SummaryMethod = "offline"
    fallible = False
    summarizes_turn_prefix = True
    parallel_requests = True

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []

    async def write_summary(self, request: SummaryRequest) -> SummaryReply:
        self.requests.append(request)
        return SummaryReply(f"{request.kind.upper()} TEXT")


def test_clients_are_put_behind_the_protocol_by_what_they_speak() -> None:
    offline = OfflineSummarizer()
    assert as_summarizer(offline) is offline
    model = as_summarizer(ScriptedClient())
    assert isinstance(model, ModelSummarizer) and isinstance(model, Summarizer)
    assert (model.method, model.fallible, model.summarizes_turn_prefix) == ("model", True, True)
    assert (offline.method, offline.fallible) == ("offline", False)
    remote = as_summarizer(RemoteSummaryClient("http://127.0.0.1:9/s"))
    assert remote.summarizes_turn_prefix is False
    assert isinstance(local_turn_prefix_summarizer(RemoteSummaryClient("http://x/s")), Summarizer)


def test_compaction_and_branch_summaries_hand_the_offline_summarizer_requests(
    tree: SessionTree,
) -> None:
    result = asyncio.run(compact(_prepared(tree, KEEP_SPLIT), _NoPrompts()))
    assert result.method == "offline" and result.summary
    branch = asyncio.run(
        generate_branch_summary(tree.get_branch(), _NoPrompts(), context_window=128_000)
    )
    assert branch.error is None and branch.summary


def test_a_summarizer_of_our_own_gets_one_request_per_summary(tree: SessionTree) -> None:
    prep = _prepared(tree, KEEP_SPLIT)
    assert prep.is_split_turn
    summarizer = _Recording()
    result = asyncio.run(
        compact(prep, summarizer, custom_instructions="the parser", extra_context=["hook line"])
    )
    kinds = [request.kind for request in summarizer.requests]
    assert sorted(kinds) == ["initial", "short", "turn_prefix"]
    by_kind = {request.kind: request for request in summarizer.requests}
    history, prefix = by_kind["initial"], by_kind["turn_prefix"]
    assert history.messages == tuple(prep.messages_to_summarize)
    assert history.continued_by == prep.turn_prefix_messages[0]
    assert history.extra_context == ("hook line",)
    assert history.custom_instructions == prefix.custom_instructions == "the parser"
    assert prefix.messages == tuple(prep.turn_prefix_messages) and prefix.extra_context == ()
    assert by_kind["short"].previous_summary is not None
    # "offline" and not fallible: no facts appended, no fallback.
    assert result.method == "offline"
    assert result.summary.startswith("INITIAL TEXT")


def test_a_model_that_answers_nothing_fails_but_a_summarizer_that_cannot_fail_does_not(
    tree: SessionTree,
) -> None:
    prep = _prepared(tree, KEEP_CLEAN)
    request = SummaryRequest(tuple(prep.messages_to_summarize), "initial", 500)
    empty = ScriptedClient()
    empty.enqueue(Completion(content=[]))
    reply = asyncio.run(ModelSummarizer(empty).write_summary(request))
    assert reply == SummaryReply("", windows=0)
    empty.enqueue(Completion(content=[]))
    with pytest.raises(CompactionError, match="returned an empty summary"):
        asyncio.run(
            compact(prep, empty, fallback_to_offline=False, record_facts=False, short_summary=False)
        )


def test_a_model_reports_errors_and_aborts_in_the_reply() -> None:
    request = SummaryRequest((), "branch", 100)
    client = ScriptedClient()
    client.enqueue(Completion(content=[], stop_reason="error", error_message="boom"))
    client.enqueue(Completion(content=[], stop_reason="aborted"))
    summarizer = ModelSummarizer(client)
    failed = asyncio.run(summarizer.write_summary(request))
    aborted = asyncio.run(summarizer.write_summary(request))
    assert (failed.stop_reason, failed.error_message) == ("error", "boom")
    assert aborted.stop_reason == "aborted"
