"""Terminal and JSON renderings of a :class:`~contextree.report.SessionSeries`."""

from __future__ import annotations

from typing import Any

from contextree.report import SessionSeries

__all__ = ["series_json", "series_text"]


def series_json(series: SessionSeries) -> dict[str, Any]:
    """The series as the JSON ``report --format json`` prints."""
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
            }
            for e in series.events
        ],
        "peakTokens": series.peak_tokens,
        "tokensSaved": series.tokens_saved,
    }


def series_text(series: SessionSeries, *, width: int, rows: int = 40) -> str:
    """One bar per turn (buckets of turns, showing their peak, past ``rows``), events marked."""
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
    lines.append(
        f"turns {len(turns)}, peak {series.peak_tokens} tokens, "
        f"{len(series.events)} events saved {series.tokens_saved} tokens"
    )
    return "\n".join(lines)
