"""Where a compaction cuts: valid cut points, turn starts, and ``find_cut_point`` (§5.1-5.3).

The first kept entry is chosen exactly as pi 0.73.1 chooses it. Whether the cut splits a turn
differs on purpose (DESIGN decision 2): a cut whose first message entry starts a turn is not a
split turn, also when metadata entries were pulled in ahead of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, assert_never

from contextree.entries.types import (
    AgentMessage,
    StoredEntry,
    entry_message,
    known_entry,
    known_message,
)
from contextree.tokens.estimate import TokenEstimator, get_estimator

__all__ = ["CutPoint", "find_cut_point", "find_turn_start_index", "find_valid_cut_points"]


@dataclass(frozen=True, slots=True)
class CutPoint:
    """Result of :func:`find_cut_point`; indices are into the entries given."""

    first_kept_entry_index: int
    turn_start_index: int
    is_split_turn: bool


@dataclass(frozen=True, slots=True)
class _Place:
    """What an entry is to the cut (§5.1-5.3)."""

    cut: bool = False
    """Kept history may begin here."""
    turn_start: bool = False
    message_like: bool = False
    """A message entry, or an entry the context turns into a message."""
    message: bool = False
    """A ``message`` entry: its message counts toward the kept tokens."""
    stops_pull: bool = False
    """Metadata before the cut is pulled into the kept region up to such an entry."""


_METADATA: Final = _Place()
_SUMMARY_LIKE: Final = _Place(cut=True, turn_start=True, message_like=True)
_COMPACTION: Final = _Place(stops_pull=True)
_TURN_START_MESSAGE: Final = _Place(
    cut=True, turn_start=True, message_like=True, message=True, stops_pull=True
)
_CUT_MESSAGE: Final = _Place(cut=True, message_like=True, message=True, stops_pull=True)
_OTHER_MESSAGE: Final = _Place(message_like=True, message=True, stops_pull=True)


def _message_place(message: AgentMessage | None) -> _Place:
    if message is None:
        return _OTHER_MESSAGE  # no message object, or a role this format does not define
    match message["role"]:
        case "user" | "bashExecution":
            return _TURN_START_MESSAGE
        case "assistant" | "branchSummary" | "compactionSummary" | "custom":
            return _CUT_MESSAGE
        # toolResult is never a cut point; nor are the fork's roles, nor pre-v3 hookMessage
        case "toolResult" | "developer" | "pythonExecution" | "fileMention" | "hookMessage":
            return _OTHER_MESSAGE
        case _:
            assert_never(message)


def _place(entry: StoredEntry) -> _Place:
    known = known_entry(entry)
    if known is None:
        return _METADATA  # a type this format does not define: treated as metadata, as pi does
    match known["type"]:
        case "message":
            return _message_place(known_message(known.get("message")))
        case "branch_summary" | "custom_message":
            return _SUMMARY_LIKE
        case "compaction":
            return _COMPACTION
        case (
            "thinking_level_change"
            | "model_change"
            | "custom"
            | "label"
            | "session_info"
            | "service_tier_change"
            | "ttsr_injection"
            | "mcp_tool_selection"
            | "session_init"
            | "mode_change"
        ):
            return _METADATA
        case _:
            assert_never(known)


def _is_turn_start(entry: StoredEntry) -> bool:
    return _place(entry).turn_start


def find_valid_cut_points(entries: Sequence[StoredEntry], start: int, end: int) -> list[int]:
    """Indices in ``[start, end)`` where kept history may begin (never a toolResult)."""
    return [i for i in range(start, end) if _place(entries[i]).cut]


def _next_cut(entries: Sequence[StoredEntry], start: int, end: int) -> int | None:
    """The first index in ``[start, end)`` where kept history may begin, or ``None``."""
    return next((i for i in range(start, end) if _place(entries[i]).cut), None)


def find_turn_start_index(entries: Sequence[StoredEntry], index: int, start: int) -> int:
    """The nearest turn start at or before ``index`` (down to ``start``), or -1."""
    for i in range(index, start - 1, -1):
        if _is_turn_start(entries[i]):
            return i
    return -1


def find_cut_point(
    entries: Sequence[StoredEntry],
    start: int,
    end: int,
    *,
    keep_recent_tokens: int,
    estimator: TokenEstimator | None = None,
) -> CutPoint:
    """Choose the first kept entry so that about ``keep_recent_tokens`` stay verbatim."""
    # The valid cut points that matter are the first one and the first at or after where the
    # walk back stops: each is looked for from there (listing all of them placed every entry
    # of the context once more: a tenth of planning a compaction).
    first_cut = _next_cut(entries, start, end)
    if first_cut is None:
        return CutPoint(start, -1, False)
    estimate = (estimator or get_estimator("pi")).estimate
    cut_index = first_cut
    accumulated = 0
    for i in range(end - 1, start - 1, -1):
        entry = entries[i]
        if not _place(entry).message:  # metadata entries neither count nor stop the walk
            continue
        message = entry_message(entry)
        if message is not None:
            accumulated += estimate(message)
        if accumulated >= keep_recent_tokens:
            # The first cut point at or after i; none means everything is kept.
            found = _next_cut(entries, i, end)
            if found is not None:
                cut_index = found
            break
    # Pull metadata entries just before the cut into the kept region (§5.3 step 4).
    while cut_index > start and not _place(entries[cut_index - 1]).stops_pull:
        cut_index -= 1
    first_message = next(
        (i for i in range(cut_index, end) if _place(entries[i]).message_like),
        cut_index,
    )
    if first_message < end and _is_turn_start(entries[first_message]):
        return CutPoint(cut_index, -1, False)
    turn_start = find_turn_start_index(entries, cut_index, start)
    return CutPoint(cut_index, turn_start, turn_start != -1)
