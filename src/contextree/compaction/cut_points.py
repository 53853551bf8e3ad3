"""Where a compaction cuts: valid cut points, turn starts, and ``find_cut_point`` (§5.1-5.3).

The first kept entry is chosen exactly as pi 0.73.1 chooses it. Whether the cut splits a turn
differs on purpose (DESIGN decision 2): a cut whose first message entry starts a turn is not a
split turn, also when metadata entries were pulled in ahead of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contextree.entries.types import Entry, entry_message
from contextree.tokens.estimate import TokenEstimator, get_estimator

__all__ = ["CutPoint", "find_cut_point", "find_turn_start_index", "find_valid_cut_points"]

_CUT_ROLES = frozenset(
    {"user", "assistant", "bashExecution", "branchSummary", "compactionSummary", "custom"}
)
_TURN_START_ROLES = frozenset({"user", "bashExecution"})
_TURN_START_TYPES = frozenset({"branch_summary", "custom_message"})
_MESSAGE_LIKE_TYPES = frozenset({"message", "branch_summary", "custom_message"})


@dataclass(frozen=True, slots=True)
class CutPoint:
    """Result of :func:`find_cut_point`; indices are into the entries given."""

    first_kept_entry_index: int
    turn_start_index: int
    is_split_turn: bool


def _role(entry: Entry) -> str | None:
    message = entry_message(entry)
    role = message.get("role") if message is not None else None
    return role if isinstance(role, str) else None


def _is_cut_point(entry: Entry) -> bool:
    kind = entry.get("type")
    if kind in _TURN_START_TYPES:
        return True
    return kind == "message" and _role(entry) in _CUT_ROLES


def _is_turn_start(entry: Entry) -> bool:
    return entry.get("type") in _TURN_START_TYPES or _role(entry) in _TURN_START_ROLES


def find_valid_cut_points(entries: Sequence[Entry], start: int, end: int) -> list[int]:
    """Indices in ``[start, end)`` where kept history may begin (never a toolResult)."""
    return [i for i in range(start, end) if _is_cut_point(entries[i])]


def find_turn_start_index(entries: Sequence[Entry], index: int, start: int) -> int:
    """The nearest turn start at or before ``index`` (down to ``start``), or -1."""
    for i in range(index, start - 1, -1):
        if _is_turn_start(entries[i]):
            return i
    return -1


def find_cut_point(
    entries: Sequence[Entry],
    start: int,
    end: int,
    *,
    keep_recent_tokens: int,
    estimator: TokenEstimator | None = None,
) -> CutPoint:
    """Choose the first kept entry so that about ``keep_recent_tokens`` stay verbatim."""
    cuts = find_valid_cut_points(entries, start, end)
    if not cuts:
        return CutPoint(start, -1, False)
    estimate = (estimator or get_estimator("pi")).estimate
    cut_index = cuts[0]
    accumulated = 0
    for i in range(end - 1, start - 1, -1):
        entry = entries[i]
        if entry.get("type") != "message":  # metadata entries neither count nor stop the walk
            continue
        message = entry_message(entry)
        if message is not None:
            accumulated += estimate(message)
        if accumulated >= keep_recent_tokens:
            # The first cut point at or after i; none means everything is kept.
            for cut in cuts:
                if cut >= i:
                    cut_index = cut
                    break
            break
    # Pull metadata entries just before the cut into the kept region (§5.3 step 4).
    while cut_index > start and entries[cut_index - 1].get("type") not in ("message", "compaction"):
        cut_index -= 1
    first_message = next(
        (i for i in range(cut_index, end) if entries[i].get("type") in _MESSAGE_LIKE_TYPES),
        cut_index,
    )
    if first_message < end and _is_turn_start(entries[first_message]):
        return CutPoint(cut_index, -1, False)
    turn_start = find_turn_start_index(entries, cut_index, start)
    return CutPoint(cut_index, turn_start, turn_start != -1)
