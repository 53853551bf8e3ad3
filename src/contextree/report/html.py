"""A session's report as one self-contained HTML page: an inline SVG chart of the context per
turn, the events marked on it, and a table of what each saved.

No script, stylesheet link, font or image is fetched: the page opens the same offline, in a
mail attachment or from a CI artifact. Every text that comes from the session (its name, entry
ids) is HTML-escaped; numbers are formatted here.
"""

from __future__ import annotations

from html import escape

from contextree.report.series import EventKind, ReportEvent, SessionSeries

__all__ = ["series_html"]

_WIDTH, _HEIGHT = 960, 320
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 16, 16, 40
_COLOURS: dict[EventKind, str] = {
    "compaction": "#c0392b",
    "prune": "#d68910",
    "branchSummary": "#2874a6",
}
_NAMES: dict[EventKind, str] = {
    "compaction": "compaction",
    "prune": "prune",
    "branchSummary": "branch summary",
}


def _x(turn: float, turns: int) -> float:
    span = max(turns - 1, 1)
    return _LEFT + (turn - 1) * (_WIDTH - _LEFT - _RIGHT) / span


def _y(tokens: float, peak: int) -> float:
    return _TOP + (_HEIGHT - _TOP - _BOTTOM) * (1 - tokens / max(peak, 1))


def _chart(series: SessionSeries) -> str:
    turns, peak = len(series.turns), series.peak_tokens
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" '
        f'viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img" aria-label="context tokens per turn">',
        f'<line x1="{_LEFT}" y1="{_HEIGHT - _BOTTOM}" x2="{_WIDTH - _RIGHT}" '
        f'y2="{_HEIGHT - _BOTTOM}" stroke="#888"/>',
        f'<line x1="{_LEFT}" y1="{_TOP}" x2="{_LEFT}" y2="{_HEIGHT - _BOTTOM}" stroke="#888"/>',
        f'<text x="{_LEFT - 6}" y="{_TOP + 4}" text-anchor="end" font-size="11">{peak:,}</text>',
        f'<text x="{_LEFT - 6}" y="{_HEIGHT - _BOTTOM}" text-anchor="end" font-size="11">0</text>',
        f'<text x="{(_WIDTH + _LEFT) / 2:.0f}" y="{_HEIGHT - 8}" text-anchor="middle" '
        f'font-size="12">turn (1 to {turns:,})</text>',
    ]
    for event in series.events:
        x = _x(min(event.turn, max(turns, 1)), turns)
        colour = _COLOURS[event.kind]
        label = escape(f"{_NAMES[event.kind]} {event.entry_id}: saved {event.tokens_saved:,}")
        parts.append(
            f'<line x1="{x:.1f}" y1="{_TOP}" x2="{x:.1f}" y2="{_HEIGHT - _BOTTOM}" '
            f'stroke="{colour}" stroke-dasharray="4 3"><title>{label}</title></line>'
        )
    if series.turns:
        points = " ".join(f"{_x(p.turn, turns):.1f},{_y(p.tokens, peak):.1f}" for p in series.turns)
        parts.append(
            f'<polyline fill="none" stroke="#1e8449" stroke-width="1.5" points="{points}"/>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


def _event_row(event: ReportEvent) -> str:
    def cell(value: int | None) -> str:
        return "" if value is None else f"{value:,}"

    return (
        f'<tr><td style="color:{_COLOURS[event.kind]}">{_NAMES[event.kind]}</td>'
        f"<td><code>{escape(event.entry_id)}</code></td><td>{event.turn:,}</td>"
        f"<td>{cell(event.tokens_before)}</td><td>{cell(event.tokens_after)}</td>"
        f"<td>{event.tokens_saved:,}</td></tr>"
    )


def series_html(series: SessionSeries, *, title: str) -> str:
    """The page for ``series``; ``title`` (the session's name) is escaped."""
    counts = series.event_counts
    summary = (
        f"{len(series.turns):,} turns, peak {series.peak_tokens:,} tokens; "
        f"{counts['compaction']} compactions, {counts['prune']} prunes, "
        f"{counts['branchSummary']} branch summaries saved {series.tokens_saved:,} tokens"
    )
    rows = "\n".join(_event_row(event) for event in series.events)
    heading = escape(title)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>contextree report: {heading}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; }}
td, th {{ border: 1px solid #ccc; padding: 2px 8px; text-align: right; }}
td:first-child, th:first-child, td:nth-child(2) {{ text-align: left; }}
</style>
</head>
<body>
<h1>Context per turn: {heading}</h1>
<p>{escape(summary)}</p>
{_chart(series)}
<p>Green: the context sent with each assistant reply (recorded usage where the reply has it,
else an estimate). Dashed lines: compactions (red), prunes (orange), branch summaries (blue).</p>
<table>
<tr><th>event</th><th>entry</th><th>before turn</th><th>tokens before</th><th>tokens after</th>
<th>tokens saved</th></tr>
{rows}
</table>
</body>
</html>
"""
