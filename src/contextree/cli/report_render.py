"""Terminal and JSON renderings of a :class:`~contextree.report.SessionSeries`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contextree.report import EventMoney, SessionSeries

__all__ = ["series_json", "series_text"]


def series_json(
    series: SessionSeries,
    money: Sequence[EventMoney] = (),
    model: str | None = None,
    priced: bool = False,
    html: Path | None = None,
) -> dict[str, Any]:
    """The series as the JSON ``report --format json`` prints."""
    paid = list(money) or [EventMoney(None, None, None, 0)] * len(series.events)
    return {
        "turns": [
            {"turn": p.turn, "entryId": p.entry_id, "tokens": p.tokens, "source": p.source}
            for p in series.turns
        ],
        "events": [
            {
                "kind": e.kind,
                "entryId": e.entry_id,
                "turn": e.turn,
                "tokensSaved": e.tokens_saved,
                "tokensBefore": e.tokens_before,
                "tokensAfter": e.tokens_after,
                "laterTurns": m.later_turns,
                "usdPerRequest": m.per_request,
                "usdPerRequestCached": m.per_request_cached,
                "usdSoFar": m.so_far,
            }
            for e, m in zip(series.events, paid, strict=True)
        ],
        "eventCounts": dict(series.event_counts),
        "peakTokens": series.peak_tokens,
        "tokensSaved": series.tokens_saved,
        "model": model,
        "priced": priced,
        "usdSoFar": sum(m.so_far or 0.0 for m in paid) if priced else None,
        "html": str(html) if html is not None else None,
    }


def _usd(value: float | None) -> str:
    return "?" if value is None else f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def series_text(
    series: SessionSeries,
    *,
    width: int,
    rows: int = 40,
    money: Sequence[EventMoney] = (),
    model: str | None = None,
) -> str:
    """One bar per turn (buckets of turns, showing their peak, past ``rows``), events marked,
    then one line per event and the totals."""
    turns = series.turns
    size = max(1, -(-len(turns) // rows))
    marks = {e.turn: e.kind for e in series.events}
    peak = max(series.peak_tokens, 1)
    bar_width = max(10, width - 30)
    lines = []
    for start in range(0, len(turns), size):
        chunk = turns[start : start + size]
        tokens = max(p.tokens for p in chunk)
        first, last = chunk[0].turn, chunk[-1].turn
        mark = next((marks[t] for t in range(first, last + 1) if t in marks), "")
        label = f"{first}" if first == last else f"{first}-{last}"
        bar = "█" * round(bar_width * tokens / peak)
        lines.append(f"{label:>9} {tokens:>8} {bar} {mark}".rstrip())
    priced = bool(money) and money[0].per_request is not None
    for event, paid in zip(series.events, money, strict=False):
        line = f"{event.kind} {event.entry_id} before turn {event.turn}: saved {event.tokens_saved}"
        if priced:
            line += f" tokens, {_usd(paid.per_request)} per later request, {_usd(paid.so_far)}"
            line += f" over the {paid.later_turns} turns since"
        lines.append(line)
    counts = series.event_counts
    lines.append(
        f"turns {len(turns)}, peak {series.peak_tokens} tokens, {counts['compaction']} "
        f"compactions, {counts['prune']} prunes, {counts['branchSummary']} branch summaries "
        f"saved {series.tokens_saved} tokens"
    )
    if series.events and not priced:
        lines.append(f"no price known for {model or 'the session model'} (set prices, or --model)")
    return "\n".join(lines)
