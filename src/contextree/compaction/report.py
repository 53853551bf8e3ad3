"""``compact --format json`` and ``prune --format json``: plain dicts built from the library's
results, so a field added to a result is one line here (docs/cli-json.md has the schemas)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from contextree.compaction.dropped import DroppedFromView, dropped_json
from contextree.compaction.prepare import CompactionPreparation, NothingToCompact
from contextree.compaction.run import CompactionOutcome, CompactionPlan
from contextree.entries.types import StoredMessage
from contextree.tokens.estimate import estimate_tokens

if TYPE_CHECKING:  # (types only: `compact` without --dry-run needs neither module)
    from contextree.compaction.cost import CostReport
    from contextree.compaction.prune import PruneDecision

__all__ = ["compaction_json", "plan_json", "prune_json"]


def _part(entries: int, messages: Sequence[StoredMessage]) -> dict[str, int]:
    tokens = sum(estimate_tokens(m) for m in messages)
    return {"entries": entries, "messages": len(messages), "tokens": tokens}


def _nothing(skipped: NothingToCompact, *, dry_run: bool) -> dict[str, Any]:
    return {
        "dryRun": dry_run,
        "compacted": False,
        "reason": skipped.reason,
        "message": skipped.message,
    }


def _preparation(prep: CompactionPreparation) -> dict[str, Any]:
    history_end = prep.turn_start_index if prep.is_split_turn else prep.first_kept_entry_index
    prefix = prep.first_kept_entry_index - prep.turn_start_index if prep.is_split_turn else 0
    return {
        "firstKeptEntryId": prep.first_kept_entry_id,
        "firstKeptIndex": prep.first_kept_entry_index,
        "splitTurn": prep.is_split_turn,
        "turnStartIndex": prep.turn_start_index,
        "boundaryIndex": prep.boundary_start,
        "previousSummary": prep.previous_summary is not None,
        "keepBudget": prep.keep_recent_tokens,
        "tokensBefore": prep.tokens_before,
        "summarized": _part(history_end - prep.boundary_start, prep.messages_to_summarize),
        "turnPrefix": _part(prefix, prep.turn_prefix_messages),
        "kept": _part(prep.boundary_end - prep.first_kept_entry_index, prep.recent_messages),
    }


def plan_json(
    plan: CompactionPlan | NothingToCompact,
    dropped: DroppedFromView | None = None,
    cost: CostReport | None = None,
) -> dict[str, Any]:
    """``compact --dry-run --format json`` (``dropped``: with ``--show-dropped``; ``cost``:
    the next requests with and without the compaction)."""
    if isinstance(plan, NothingToCompact):
        return _nothing(plan, dry_run=True)
    body = {"dryRun": True, "compacted": False, **_preparation(plan.preparation)}
    body["summaryBudget"] = plan.summary_budget
    body["estimatedAfter"] = body["kept"]["tokens"] + plan.summary_budget
    if dropped is not None:
        body["dropped"] = dropped_json(dropped)
    if cost is not None:
        body["cost"] = cost.to_json()
    return body


def compaction_json(outcome: CompactionOutcome | NothingToCompact) -> dict[str, Any]:
    """``compact --format json``: the entry written and how its summary was made."""
    if isinstance(outcome, NothingToCompact):
        return _nothing(outcome, dry_run=False)
    result = outcome.result
    return {
        "dryRun": False,
        "compacted": True,
        "entryId": outcome.entry.get("id"),
        **_preparation(outcome.preparation),
        "tokensAfter": result.tokens_after,
        "method": result.method,
        "fallbackReason": result.fallback_reason,
        "windows": result.windows,
        "summary": result.summary,
        "shortSummary": result.short_summary,
        "dropped": dropped_json(outcome.dropped) if outcome.dropped is not None else None,
    }


def prune_json(
    decision: PruneDecision, *, dry_run: bool, cost: CostReport | None = None
) -> dict[str, Any]:
    """``prune --format json``: the tool results pruned (or that would be), or why none; a dry
    run adds what the next requests cost with and without it."""
    body = {"dryRun": dry_run, **decision.to_json()}
    if cost is not None:
        body["cost"] = cost.to_json()
    return body
