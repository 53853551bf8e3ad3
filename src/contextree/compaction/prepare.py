"""``prepare_compaction``: what a compaction of a path would summarize and keep (§5.4).

Deliberate differences from pi (DESIGN.md): the boundary starts at the previous compaction's
``firstKeptEntryId`` (decision 1, as pi 0.73.1 does), split turns follow decision 2, and when
nothing would be summarized the result is :class:`NothingToCompact` (decision 4).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from contextree.compaction.cut_points import CutPoint, find_cut_point
from contextree.compaction.earlier import RECORDED_SUMMARIES, EarlierHistory, summary_method
from contextree.compaction.file_ops import FileOps, extract_file_ops_from_message, seed_from_details
from contextree.context.build import (
    RESET_BOUNDARY,
    compaction_summary_message,
    message_from_entry,
)
from contextree.entries.sequence import id_reader, type_at, type_reader
from contextree.entries.types import StoredEntry, StoredMessage, is_branch_summary_entry
from contextree.settings.schema import CompactionSettings
from contextree.tokens.estimate import TokenEstimator, get_estimator
from contextree.tokens.usage import (
    calculate_prompt_tokens,
    estimate_context_tokens,
    get_last_assistant_usage,
)

__all__ = ["CompactionPreparation", "NothingToCompact", "context_region", "prepare_compaction"]

SkipReason = Literal[
    "already_compacted", "nothing_to_compact", "needs_migration", "compacted_elsewhere"
]


@dataclass(frozen=True, slots=True)
class NothingToCompact:
    """``prepare_compaction`` found nothing to do; ``message`` says why in pi's words."""

    reason: SkipReason
    message: str


@dataclass(frozen=True, slots=True)
class CompactionPreparation:
    """Everything a summarizer needs to compact one path."""

    first_kept_entry_id: str
    first_kept_entry_index: int
    messages_to_summarize: list[StoredMessage]
    turn_prefix_messages: list[StoredMessage]
    recent_messages: list[StoredMessage]
    is_split_turn: bool
    turn_start_index: int
    tokens_before: int
    """Estimated context tokens of the path now (measured usage plus later messages)."""
    previous_summary: str | None
    previous_preserve_data: dict[str, Any] | None
    file_ops: FileOps
    settings: CompactionSettings
    boundary_start: int
    boundary_end: int
    keep_recent_tokens: int
    """The keep budget actually used, after the measured-usage adjustment."""
    cut: CutPoint = field(repr=False)
    earlier: EarlierHistory | None = field(default=None, repr=False, compare=False)
    """The messages before the context, when the previous compaction held the offline
    summarizer's lines: it reads them again (earlier.py)."""


def context_region(path: Sequence[StoredEntry]) -> tuple[int, int]:
    """``(index of the latest compaction or -1, index where the current context starts)``.

    The context starts at the latest compaction's ``firstKeptEntryId`` (decision 1), else
    right after the compaction, else at 0. An oh-my-pi ``reset_boundary`` (``/clear``) after
    the latest compaction starts it right after the boundary, with no previous summary (as
    oh-my-pi). Only the types and ids of entries are read.
    """
    previous_index = -1
    type_of = type_reader(path)
    for index in range(len(path) - 1, -1, -1):
        kind = type_of(index)
        if kind == "compaction":
            previous_index = index
            break
        if kind == RESET_BOUNDARY:
            return -1, index + 1
    if previous_index < 0:
        return -1, 0
    first_kept = path[previous_index].get("firstKeptEntryId")
    id_of = id_reader(path)
    for index in range(previous_index - 1, -1, -1):
        if id_of(index) == first_kept:
            return previous_index, index
    return previous_index, previous_index + 1


@dataclass(frozen=True, slots=True)
class _Region:
    """The messages of ``path[start:end]`` with their path indices, built once per plan."""

    indices: list[int]
    entries: list[StoredEntry]
    messages: list[StoredMessage]

    @classmethod
    def of(cls, path: Sequence[StoredEntry], start: int, end: int) -> _Region:
        indices, entries, messages = [], [], []
        for index, entry in enumerate(path[start:end], start):
            message = message_from_entry(entry, for_context=False)
            if message is not None:
                indices.append(index)
                entries.append(entry)
                messages.append(message)
        return cls(indices, entries, messages)

    def between(self, start: int, end: int) -> list[StoredMessage]:
        """Messages of the entries at path indices ``start <= index < end``."""
        return self.messages[bisect_left(self.indices, start) : bisect_left(self.indices, end)]

    def in_context(self) -> list[StoredMessage]:
        """The messages as the context shows them: empty branch summaries left out."""
        return [
            message
            for entry, message in zip(self.entries, self.messages, strict=True)
            if not is_branch_summary_entry(entry) or entry.get("summary")
        ]


def _adjusted_keep(
    path: Sequence[StoredEntry], region: _Region, keep: int, estimator: TokenEstimator
) -> int:
    """§4.4: shrink the keep budget by how much the provider's count exceeds our estimate."""
    usage = get_last_assistant_usage(path)
    if usage is None:
        return keep
    estimate = estimator.estimate
    prompt = calculate_prompt_tokens(usage)
    estimated = 0
    for message in region.messages:
        estimated += estimate(message)
        if estimated >= prompt:
            # The ratio can only be <= 1 from here on: keep as asked, without estimating
            # the rest (all messages since the latest compaction: half of a plan at 100k).
            return keep
    ratio = prompt / estimated if estimated else 0.0
    if math.isfinite(ratio) and ratio > 1:
        return max(1, math.floor(keep / ratio))
    return keep


def _nothing_to_summarize(cut: CutPoint, boundary_start: int, keep: int, asked: int) -> str:
    """Why a cut leaves nothing to summarize, as it is (pi says "session too small" even when
    a keep budget larger than the context is the reason)."""
    if cut.first_kept_entry_index > boundary_start:
        return "Nothing to compact: no message before the first kept entry to summarize"
    budget = f"{keep:,} tokens"
    if keep != asked:
        budget += f" ({asked:,} scaled by the measured usage)"
    return (
        f"Nothing to compact: with a keep budget of {budget} every message in the context "
        "would be kept verbatim"
    )


def prepare_compaction(
    path_entries: Sequence[StoredEntry],
    settings: CompactionSettings | None = None,
    *,
    estimator: TokenEstimator | None = None,
) -> CompactionPreparation | NothingToCompact:
    """Plan the compaction of a root-to-leaf path (``tree.get_branch()``)."""
    settings = settings or CompactionSettings()
    estimator = estimator or get_estimator("pi")
    path = path_entries
    if not path or type_at(path, len(path) - 1) == "compaction":
        if path:
            return NothingToCompact("already_compacted", "Already compacted")
        return NothingToCompact("nothing_to_compact", "Nothing to compact: the session is empty")

    previous_index, boundary_start = context_region(path)
    previous = path[previous_index] if previous_index >= 0 else None
    boundary_end = len(path)

    region = _Region.of(path, boundary_start, boundary_end)
    keep = settings.keep_recent_tokens
    if settings.adjust_keep_recent_by_usage:
        keep = _adjusted_keep(path, region, keep, estimator)
    tokens_before = _tokens_now(region, previous, estimator)

    cut = find_cut_point(
        path, boundary_start, boundary_end, keep_recent_tokens=keep, estimator=estimator
    )
    first_kept_id = (
        path[cut.first_kept_entry_index].get("id")
        if cut.first_kept_entry_index < len(path)
        else None
    )
    if not isinstance(first_kept_id, str):
        return NothingToCompact(
            "needs_migration", "First kept entry has no ID - session may need migration"
        )

    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = region.between(boundary_start, history_end)
    prefix = (
        region.between(cut.turn_start_index, cut.first_kept_entry_index)
        if cut.is_split_turn
        else []
    )
    if not to_summarize and not prefix:
        reason = _nothing_to_summarize(cut, boundary_start, keep, settings.keep_recent_tokens)
        return NothingToCompact("nothing_to_compact", reason)

    previous_summary, previous_preserve, file_ops = _carried_over(
        previous, (*to_summarize, *prefix)
    )

    return CompactionPreparation(
        first_kept_entry_id=first_kept_id,
        first_kept_entry_index=cut.first_kept_entry_index,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        recent_messages=region.between(cut.first_kept_entry_index, boundary_end),
        is_split_turn=cut.is_split_turn,
        turn_start_index=cut.turn_start_index,
        tokens_before=tokens_before,
        previous_summary=previous_summary,
        previous_preserve_data=previous_preserve,
        file_ops=file_ops,
        settings=settings,
        boundary_start=boundary_start,
        boundary_end=boundary_end,
        keep_recent_tokens=keep,
        cut=cut,
        earlier=(
            EarlierHistory(path, boundary_start, previous_index)
            if previous is not None and summary_method(previous) in RECORDED_SUMMARIES
            else None
        ),
    )


def _tokens_now(region: _Region, previous: StoredEntry | None, estimator: TokenEstimator) -> int:
    """pi 0.73.1: the estimate of the context as it is now (usage plus what follows it). The
    context is the previous summary plus every message from the boundary on."""
    context_messages = region.in_context()
    if previous is not None:
        context_messages.insert(0, compaction_summary_message(previous))
    return estimate_context_tokens(context_messages, estimator=estimator).tokens


def _carried_over(
    previous: StoredEntry | None, summarized: Sequence[StoredMessage]
) -> tuple[str | None, dict[str, Any] | None, FileOps]:
    """What the new compaction takes over: the previous summary and preserved data, and the
    files read and changed (the previous compaction's, unless a hook or extension wrote it,
    plus those of the messages summarized now)."""
    file_ops = FileOps()
    previous_summary: str | None = None
    previous_preserve: dict[str, Any] | None = None
    if previous is not None:
        summary = previous.get("summary")
        previous_summary = summary if isinstance(summary, str) else None
        preserve = previous.get("preserveData")
        previous_preserve = preserve if isinstance(preserve, dict) else None
        if not previous.get("fromExtension") and not previous.get("fromHook"):
            seed_from_details(file_ops, previous.get("details"))
    for message in summarized:
        extract_file_ops_from_message(message, file_ops)
    return previous_summary, previous_preserve, file_ops
