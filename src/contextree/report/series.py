"""Context tokens per assistant turn along a path, with compaction, prune and branch-summary events.

A turn's context is the recorded prompt usage (``input + cacheRead + cacheWrite``) of its assistant
reply when there is one, else the estimate of the messages sent so far (``source`` says which).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from contextree.entries.types import (
    entry_message,
    is_assistant_message,
    is_branch_summary_entry,
    is_compaction_entry,
    is_tool_result_message,
)
from contextree.tokens.estimate import estimate_tokens
from contextree.tokens.usage import calculate_prompt_tokens

__all__ = ["EventKind", "ReportEvent", "SessionSeries", "TurnPoint", "build_series"]

EventKind = Literal["compaction", "prune", "branchSummary"]


@dataclass(frozen=True, slots=True)
class TurnPoint:
    """One assistant reply on the path and the context it was sent."""

    turn: int
    entry_id: str
    tokens: int
    source: Literal["usage", "estimate"]


@dataclass(frozen=True, slots=True)
class ReportEvent:
    """A compaction, prune or branch summary, placed before turn ``turn`` (1-based)."""

    kind: EventKind
    entry_id: str
    turn: int
    tokens_saved: int
    tokens_before: int | None = None
    tokens_after: int | None = None


@dataclass(frozen=True, slots=True)
class SessionSeries:
    """The per-turn series and the events of one path."""

    turns: list[TurnPoint] = field(default_factory=list)
    events: list[ReportEvent] = field(default_factory=list)

    @property
    def peak_tokens(self) -> int:
        """Largest context of any turn (0 without turns)."""
        return max((point.tokens for point in self.turns), default=0)

    @property
    def tokens_saved(self) -> int:
        """Sum of what every event saved."""
        return sum(event.tokens_saved for event in self.events)

    @property
    def event_counts(self) -> dict[EventKind, int]:
        """How many events of each kind (every kind present, 0 when none)."""
        counts: dict[EventKind, int] = {"compaction": 0, "prune": 0, "branchSummary": 0}
        for event in self.events:
            counts[event.kind] += 1
        return counts


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _prune_saving(message: Mapping[str, Any]) -> int:
    original = dict(message)
    original["content"] = message.get("prunedContent") or []
    return max(0, estimate_tokens(original) - estimate_tokens(message))  # type: ignore[arg-type]


def build_series(path: Sequence[Mapping[str, Any]]) -> SessionSeries:
    """Build the series for ``path`` (entries root -> leaf)."""
    series = SessionSeries()
    sent = 0  # estimated tokens of messages sent so far; reset by a compaction
    for entry in path:
        next_turn = len(series.turns) + 1
        entry_id = str(entry.get("id", ""))
        if is_compaction_entry(entry):
            before = _int(entry.get("tokensBefore"))
            after = _int(entry.get("tokensAfter"))
            if after is None:
                after = estimate_tokens({"role": "user", "content": str(entry.get("summary", ""))})
            saved = max(0, (before or sent) - after)
            series.events.append(
                ReportEvent("compaction", entry_id, next_turn, saved, before, after)
            )
            sent = after
            continue
        if is_branch_summary_entry(entry):
            cost = estimate_tokens({"role": "user", "content": str(entry.get("summary", ""))})
            series.events.append(ReportEvent("branchSummary", entry_id, next_turn, 0, None, cost))
            sent += cost
            continue
        message = entry_message(entry)
        if message is None:
            continue
        if is_tool_result_message(message) and message.get("prunedContent") is not None:
            saved = _prune_saving(message)
            series.events.append(ReportEvent("prune", entry_id, next_turn, saved))
        if is_assistant_message(message):
            usage = message.get("usage")
            prompt = calculate_prompt_tokens(usage) if isinstance(usage, dict) else 0
            if prompt > 0:
                series.turns.append(TurnPoint(next_turn, entry_id, prompt, "usage"))
            else:
                series.turns.append(TurnPoint(next_turn, entry_id, sent, "estimate"))
        sent += estimate_tokens(message)
    return series
