"""The lines under ``compact``'s table that count what left the model's view.

Apart from :mod:`contextree.cli.dropped_render` (which lists the entries and draws on
:mod:`contextree.cli.render`) so that ``render`` can show them without an import cycle.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.text import Text

from contextree.cli.preview import plural
from contextree.compaction.dropped import DroppedFromView

__all__ = ["dropped_summary"]


def _ids(ids: Sequence[str], limit: int = 12) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def dropped_summary(dropped: DroppedFromView) -> RenderableType:
    """Counts of what left the view; the user messages the summary does not carry, by id."""
    lines = [
        Text(
            f"Out of the model's view: {plural(len(dropped.folded), 'message')} folded, "
            f"{plural(len(dropped.tool_outputs), 'tool output')}, "
            f"{plural(len(dropped.user_messages), 'user message')}.",
            "ct.meta",
        )
    ]
    missing = dropped.user_not_in_summary
    if missing:
        lines.append(
            Text(
                f"{plural(len(missing), 'user message')} not in the summary: {_ids(missing)} "
                "(contextree recall / expand get them back).",
                "ct.warning",
            )
        )
    elif missing is not None and dropped.user_messages:
        lines.append(Text("Every folded user message is in the summary.", "ct.meta"))
    return Group(*lines)
