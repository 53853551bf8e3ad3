"""The offline summarizer reads again the messages its own earlier summaries summarized, so
what one compaction's small budget left out can come back in a later, larger one (a
deliberate difference from pi, which updates the previous summary; docs/summaries.md)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import contextree.compaction.earlier as earlier_module
from contextree.compaction import OfflineSummarizer
from contextree.compaction.earlier import (
    OFFLINE_SUMMARIES,
    RECORDED_SUMMARIES,
    EarlierHistory,
    summary_method,
)
from contextree.compaction.options import SummaryOptions
from contextree.compaction.prepare import CompactionPreparation, prepare_compaction
from contextree.compaction.run import compact_session
from contextree.entries.types import is_compaction_entry
from contextree.session.tree import SessionTree
from contextree.settings.schema import CompactionSettings
from summary_messages import _say, _user

_EARLY_FACT = "the storage unit is number 4417 at Harbourside, the gate code is 8812"


def _talk(n: int) -> list[Any]:
    return [
        _user(
            f"day {n}: we packed the kitchen boxes and labelled them by room, the movers "
            "come at eight and the lift is booked for the morning slot"
        ),
        _say("Noted."),
    ]


def _compact(tree: SessionTree, summary_tokens: int, keep: int = 40) -> str:
    settings = CompactionSettings(keep_recent_tokens=keep, reserve_tokens=16384)
    options = SummaryOptions(summary_tokens=summary_tokens)
    asyncio.run(compact_session(tree, OfflineSummarizer(), settings=settings, options=options))
    latest = [entry for entry in tree.get_branch() if is_compaction_entry(entry)][-1]
    summary = latest["summary"]
    assert isinstance(summary, str)
    return summary


def _session() -> SessionTree:
    tree = SessionTree.in_memory()
    for message in [_user("Help me organise the move."), _say("Sure."), *_talk(0)]:
        tree.append_message(message)
    for message in [_user(_EARLY_FACT), _say("Noted.")]:
        tree.append_message(message)
    for n in range(1, 6):
        for message in _talk(n):
            tree.append_message(message)
    return tree


def test_a_statement_a_small_first_summary_left_out_comes_back_in_a_larger_one() -> None:
    tree = _session()
    first = _compact(tree, summary_tokens=40)
    assert "4417" not in first  # the first budget holds the goal only
    for n in range(6, 10):
        for message in _talk(n):
            tree.append_message(message)
    second = _compact(tree, summary_tokens=600)
    # Read again from the session's messages, not from the first summary.
    assert _EARLY_FACT in second
    assert second.count("Help me organise the move.") == 1


class _Budgets(OfflineSummarizer):
    """Records the budget of each summary it writes."""

    def __init__(self) -> None:
        super().__init__()
        self.budgets: list[int] = []

    def _budget(self, *args: Any, **kwargs: Any) -> int:
        budget = super()._budget(*args, **kwargs)
        self.budgets.append(budget)
        return budget


def test_the_budget_is_the_updates_whatever_is_read_again() -> None:
    summarizer = _Budgets()
    earlier = [_user("Help me organise the move."), _say("Sure."), *_talk(0), *_talk(1)]
    previous = summarizer.summarize_messages(earlier)
    new = [*_talk(2), *_talk(3)]
    summarizer.budgets.clear()
    updated = summarizer.summarize_messages(new, previous_summary=previous)
    reread = summarizer.summarize_messages(new, previous_summary=previous, earlier=earlier)
    # The previous summary's size and the new messages' share: not the share of all of them.
    assert summarizer.budgets[0] == summarizer.budgets[1]
    assert len(reread) // 4 <= summarizer.budgets[1] and updated


def _prepared(tree: SessionTree) -> CompactionPreparation:
    prep = prepare_compaction(tree.get_branch(), CompactionSettings(keep_recent_tokens=40))
    assert isinstance(prep, CompactionPreparation)
    return prep


def test_after_a_model_or_a_hook_summary_the_previous_summary_is_updated() -> None:
    tree = _session()
    path = tree.get_branch()
    first_kept = path[6]["id"]
    tree.append_compaction("A model's summary.", first_kept, 1000, details={"method": "model"})
    for message in _talk(7):
        tree.append_message(message)
    assert _prepared(tree).earlier is None
    # A model's summary with the recorded facts: those are read again, the model's text not.
    tree.append_compaction("A model's summary.", first_kept, 1000, details={"method": "hybrid"})
    for message in _talk(8):
        tree.append_message(message)
    earlier = _prepared(tree).earlier
    assert earlier is not None
    assert earlier.messages(OFFLINE_SUMMARIES) is None
    assert earlier.messages(RECORDED_SUMMARIES) is None  # the "model" one before it
    tree.append_compaction(
        "A hook's summary.", first_kept, 1000, details={"method": "offline"}, from_extension=True
    )
    for message in _talk(9):
        tree.append_message(message)
    assert _prepared(tree).earlier is None


def test_the_earlier_messages_start_after_a_clear_and_stop_at_a_model_summary() -> None:
    tree = _session()
    path = tree.get_branch()
    tree.append_compaction("ours", path[6]["id"], 1000, details={"method": "offline"})
    for message in _talk(7):
        tree.append_message(message)
    prep = _prepared(tree)
    assert prep.earlier is not None
    earlier = prep.earlier.messages(OFFLINE_SUMMARIES)
    assert earlier is not None
    texts = [str(message.get("content")) for message in earlier]
    assert any(_EARLY_FACT in text for text in texts)
    assert all(message.get("role") != "compactionSummary" for message in earlier)
    # Past the token limit, or with a model's compaction among them: none.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(earlier_module, "MAX_EARLIER_TOKENS", 50)
        assert EarlierHistory(prep.earlier.path, 6, prep.earlier.previous).messages(
            OFFLINE_SUMMARIES
        ) is None
        patch.setattr(earlier_module, "MAX_EARLIER_TOKENS", 10**6)
        patch.setattr(earlier_module, "MAX_EARLIER_MESSAGES", 3)
        assert EarlierHistory(prep.earlier.path, 6, prep.earlier.previous).messages(
            OFFLINE_SUMMARIES
        ) is None
    entries = list(tree.get_branch())
    latest = len(entries) - 3  # the compaction, then two messages
    model = {**entries[-4], "type": "compaction", "details": {"method": "model"}}
    with_model = EarlierHistory([*entries[:3], model, *entries[3:]], 8, latest + 1)
    assert with_model.messages(RECORDED_SUMMARIES) is None
    # A /clear (oh-my-pi's reset boundary) starts them after it.
    reset = {"type": "reset_boundary", "id": "r1", "parentId": None}
    after = EarlierHistory([*entries[:4], reset, *entries[4:]], 7, latest + 1)
    assert after.messages(OFFLINE_SUMMARIES) == earlier[4:6]


def test_a_compactions_summary_is_known_by_who_wrote_it() -> None:
    assert summary_method({"details": {"method": "offline"}}) == "offline"
    assert summary_method({"details": {"method": "hybrid"}}) == "hybrid"
    assert summary_method({"details": {"method": "offline"}, "fromHook": True}) is None
    assert summary_method({"details": {"method": "offline"}, "fromExtension": True}) is None
    assert summary_method({}) is None


def test_a_hooks_context_in_the_previous_summary_stays() -> None:
    summarizer = OfflineSummarizer()
    previous = summarizer.summarize_messages(
        [_user("Help me organise the move."), _say("Sure.")],
        extra_context=["The landlord must get 48 hours' notice of the lift booking."],
    )
    assert "48 hours' notice" in previous
    summary = summarizer.summarize_messages(
        [_user("the movers confirmed eight o'clock"), _say("Noted.")],
        previous_summary=previous,
        earlier=[_user("Help me organise the move."), _say("Sure.")],
    )
    assert "48 hours' notice" in summary
    assert summary.count("Help me organise the move.") == 1


def test_secrets_in_the_messages_read_again_are_redacted() -> None:
    tree = SessionTree.in_memory()
    secret = "password=hunter2hunter2"
    for message in [
        _user("Help me organise the move."),
        _say("Sure."),
        _user(f"the storage portal login is {secret}, unit 4417"),
        _say("Noted."),
        *_talk(0),
        *_talk(1),
        *_talk(2),
    ]:
        tree.append_message(message)
    first = _compact(tree, summary_tokens=40)
    assert "4417" not in first
    for n in range(3, 6):
        for message in _talk(n):
            tree.append_message(message)
    prep = _prepared(tree)
    assert prep.earlier is not None
    earlier = prep.earlier.messages(OFFLINE_SUMMARIES) or []
    assert any(secret in str(message.get("content")) for message in earlier)  # read again ...
    second = _compact(tree, summary_tokens=600)
    assert "unit 4417" in second
    assert "hunter2" not in second  # ... and redacted as the new messages are
