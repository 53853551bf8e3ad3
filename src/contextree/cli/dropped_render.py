"""Renderables of what a compaction takes out of the model's view (``compact --show-dropped``
and the lines under ``compact``'s table); nothing here reads files (the session's index at most)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from contextree.cli.dropped_counts import dropped_summary
from contextree.cli.preview import entry_kind, entry_preview, plural
from contextree.compaction.dropped import DroppedFromView, dropped_from_view
from contextree.compaction.prepare import NothingToCompact
from contextree.compaction.run import CompactionOutcome, CompactionPlan
from contextree.entries.types import StoredEntry
from contextree.session.tree import SessionTree

if TYPE_CHECKING:  # (a type only: the cost is reckoned for --dry-run alone)
    from contextree.compaction.cost import CostReport

__all__ = ["dropped_entries", "dropped_summary", "dry_run_view", "outcome_view"]


def dropped_entries(dropped: DroppedFromView, path: Sequence[StoredEntry]) -> RenderableType:
    """Each folded entry on its own line: id, kind and a preview; user messages the summary
    does not carry (when known) marked ``!``."""
    wanted = set(dropped.folded)
    missing = set(dropped.user_not_in_summary or ())
    lines: list[RenderableType] = [
        Text(f"{plural(len(dropped.folded), 'message')} leave the model's view:", "ct.heading")
    ]
    for entry in path:
        entry_id = entry.get("id")
        if entry_id not in wanted:
            continue
        line = Text("! " if entry_id in missing else "  ")
        line.append(str(entry_id), "ct.id")
        line.append(f"  {entry_kind(entry)}  ", "ct.meta")
        line.append(entry_preview(entry, 80))
        lines.append(line)
    return Group(*lines)


def dry_run_view(
    plan: CompactionPlan | NothingToCompact, *, show_dropped: bool, cost: CostReport | None = None
) -> tuple[RenderableType, DroppedFromView | None]:
    """``compact --dry-run``'s text: the plan, its ``cost`` report, and with ``--show-dropped``
    the messages that would leave the model's view (also returned, for the JSON)."""
    from contextree.cli import render

    parts = [render.dry_run(plan)]
    if cost is not None:
        parts.append(render.cost_report(cost))
    if not show_dropped or isinstance(plan, NothingToCompact):
        return Group(*parts), None
    dropped = dropped_from_view(plan.preparation, plan.path)
    return Group(*parts, dropped_entries(dropped, plan.path)), dropped


def outcome_view(
    outcome: CompactionOutcome | NothingToCompact,
    tree: SessionTree,
    *,
    show_summary: bool,
    show_dropped: bool,
) -> RenderableType:
    """``compact``'s text; with ``--show-dropped`` the messages that left the view listed."""
    from contextree.cli import render

    shown = render.compaction_outcome(outcome, show_summary=show_summary)
    if not show_dropped or isinstance(outcome, NothingToCompact) or not outcome.dropped:
        return shown
    folded = tree.get_branch(outcome.preparation.first_kept_entry_id)
    return Group(shown, dropped_entries(outcome.dropped, folded))
