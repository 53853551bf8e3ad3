"""``prepare_compaction``: what a compaction of a path would summarize and keep (§5.4).

Deliberate differences from pi (DESIGN.md): the boundary starts at the previous compaction's
``firstKeptEntryId`` (decision 1, as pi 0.73.1 does), split turns follow decision 2, and when
nothing would be summarized the result is :class:`NothingToCompact` (decision 4).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from contextree.compaction.cut_points import CutPoint, find_cut_point
from contextree.compaction.file_ops import FileOps, extract_file_ops_from_message, seed_from_details
from contextree.context.build import build_context_from_path, message_from_entry
from contextree.entries.types import AgentMessage, Entry
from contextree.settings.schema import CompactionSettings
from contextree.tokens.estimate import TokenEstimator, get_estimator
from contextree.tokens.usage import (
    calculate_prompt_tokens,
    estimate_context_tokens,
    get_last_assistant_usage,
)

__all__ = ["CompactionPreparation", "NothingToCompact", "prepare_compaction"]

SkipReason = Literal["already_compacted", "nothing_to_compact", "needs_migration"]


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
    messages_to_summarize: list[AgentMessage]
    turn_prefix_messages: list[AgentMessage]
    recent_messages: list[AgentMessage]
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


def _messages(entries: Sequence[Entry]) -> list[AgentMessage]:
    out = []
    for entry in entries:
        if entry.get("type") == "compaction":
            continue
        message = message_from_entry(entry, for_context=False)
        if message is not None:
            out.append(message)
    return out


def _adjusted_keep(path: Sequence[Entry], start: int, keep: int, estimator: TokenEstimator) -> int:
    """§4.4: shrink the keep budget by how much the provider's count exceeds our estimate."""
    usage = get_last_assistant_usage(path)
    if usage is None:
        return keep
    estimated = 0
    for entry in path[start:]:
        if entry.get("type") in ("message", "custom_message", "branch_summary"):
            message = message_from_entry(entry, for_context=False)
            if message is not None:
                estimated += estimator.estimate(message)
    prompt = calculate_prompt_tokens(usage)
    ratio = prompt / estimated if estimated else 0.0
    if math.isfinite(ratio) and ratio > 1:
        return max(1, math.floor(keep / ratio))
    return keep


def prepare_compaction(
    path_entries: Sequence[Entry],
    settings: CompactionSettings | None = None,
    *,
    estimator: TokenEstimator | None = None,
) -> CompactionPreparation | NothingToCompact:
    """Plan the compaction of a root-to-leaf path (``tree.get_branch()``)."""
    settings = settings or CompactionSettings()
    estimator = estimator or get_estimator("pi")
    path = list(path_entries)
    if not path or path[-1].get("type") == "compaction":
        if path:
            return NothingToCompact("already_compacted", "Already compacted")
        return NothingToCompact("nothing_to_compact", "Nothing to compact (session too small)")

    previous_index = -1
    for index in range(len(path) - 1, -1, -1):
        if path[index].get("type") == "compaction":
            previous_index = index
            break
    previous = path[previous_index] if previous_index >= 0 else None

    boundary_start = 0
    if previous is not None:
        # Decision 1: start at the entry the previous compaction kept, so it is not dropped.
        boundary_start = previous_index + 1
        first_kept = previous.get("firstKeptEntryId")
        for index in range(previous_index):
            if path[index].get("id") == first_kept:
                boundary_start = index
                break
    boundary_end = len(path)

    keep = settings.keep_recent_tokens
    if settings.adjust_keep_recent_by_usage:
        keep = _adjusted_keep(path, boundary_start, keep, estimator)
    tokens_before = estimate_context_tokens(
        build_context_from_path(path).messages, estimator=estimator
    ).tokens

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
    to_summarize = _messages(path[boundary_start:history_end])
    prefix = (
        _messages(path[cut.turn_start_index : cut.first_kept_entry_index])
        if cut.is_split_turn
        else []
    )
    if not to_summarize and not prefix:
        return NothingToCompact("nothing_to_compact", "Nothing to compact (session too small)")

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
    for message in (*to_summarize, *prefix):
        extract_file_ops_from_message(message, file_ops)

    return CompactionPreparation(
        first_kept_entry_id=first_kept_id,
        first_kept_entry_index=cut.first_kept_entry_index,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        recent_messages=_messages(path[cut.first_kept_entry_index : boundary_end]),
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
    )
