"""What the recall tool shows of a long hit: the lines and sentences that hold the search's
words, with their neighbours, in the text's order, within a bound.

A long tool result is many similar lines (a table, a mail thread, a list of search results),
and the line that matters is the one where the words of the search meet; the value a model
looks for is often right after it (a label, then the number). One window of text around the
first match cut such a line in half or missed it; segments scored by how many of the search's
words they hold, then grown by their neighbours, keep it whole.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["excerpt"]

_ELLIPSIS: Final = "…"
_GAP: Final = " … "
_LONG_LINE: Final = 200
"""A line longer than this is split into its sentences."""
_SENTENCE_END: Final = re.compile(r"(?<=[.!?;])\s+")


def excerpt(text: str, terms: list[str], room: int) -> str:
    """At most ``room`` characters of ``text`` (white space collapsed): the whole text when
    it fits; else its segments (lines, and the sentences of long lines) that hold the most of
    ``terms`` (word starts, case ignored, as the index matches them), each grown by the
    segments after and before it while there is room, in the text's order and joined by
    ellipses; the start of the text when no segment holds a term."""
    flat = " ".join(text.split())
    if len(flat) <= room:
        return flat
    segments = _segments(text)
    patterns = [
        re.compile(r"(?<!\w)" + re.escape(term), re.IGNORECASE)
        for term in dict.fromkeys(t.lower() for t in terms if t.strip())
    ]
    scores = [sum(1 for p in patterns if p.search(segment)) for segment in segments]
    best = max(range(len(segments)), key=lambda i: (scores[i], -i), default=None)
    if best is None or not scores[best]:
        return flat[: max(1, room - len(_ELLIPSIS))] + _ELLIPSIS
    if len(segments[best]) + 2 * len(_ELLIPSIS) > room:
        return _window(segments[best], patterns, room - 2 * len(_ELLIPSIS))
    chosen: set[int] = set()
    # The best segments first (the more words the better, then the earlier), then the
    # neighbours of those chosen, after before before (a label, then its value).
    order = sorted((i for i in range(len(segments)) if scores[i]), key=lambda i: (-scores[i], i))
    for index in order:
        _take(index, segments, chosen, room)
    grown = True
    while grown:
        grown = False
        for index in sorted(chosen):
            for neighbour in (index + 1, index - 1):
                if 0 <= neighbour < len(segments) and neighbour not in chosen:
                    grown = _take(neighbour, segments, chosen, room) or grown
    return _joined(segments, chosen)


def _segments(text: str) -> list[str]:
    found: list[str] = []
    for line in text.splitlines():
        line = " ".join(line.split())
        if not line:
            continue
        if len(line) <= _LONG_LINE:
            found.append(line)
        else:
            found.extend(part for part in _SENTENCE_END.split(line) if part)
    return found


def _take(index: int, segments: list[str], chosen: set[int], room: int) -> bool:
    """Add segment ``index`` when the joined result still fits in ``room``."""
    if len(_joined(segments, chosen | {index})) > room:
        return False
    chosen.add(index)
    return True


def _joined(segments: list[str], chosen: set[int]) -> str:
    if not chosen:
        return ""
    ordered = sorted(chosen)
    parts = [_ELLIPSIS if ordered[0] else ""]
    for position, index in enumerate(ordered):
        if position:
            parts.append(" " if index == ordered[position - 1] + 1 else _GAP)
        parts.append(segments[index])
    parts.append(_ELLIPSIS if ordered[-1] < len(segments) - 1 else "")
    return "".join(parts)


def _window(segment: str, patterns: list[re.Pattern[str]], chars: int) -> str:
    """The ``chars`` of one long segment around where most of the patterns match (the
    earliest such stretch), with ellipses where it is cut."""
    found = sorted(
        (match.start(), match.end(), number)
        for number, pattern in enumerate(patterns)
        for match in pattern.finditer(segment)
    )
    first, last = _densest(found, chars) if found else (0, 0)
    start = max(0, min(first - (chars - (last - first)) // 2, len(segment) - chars))
    end = min(len(segment), start + chars)
    return (
        (_ELLIPSIS if start else "")
        + segment[start:end]
        + (_ELLIPSIS if end < len(segment) else "")
    )


def _densest(found: list[tuple[int, int, int]], chars: int) -> tuple[int, int]:
    """The first and last match of the stretch of at most ``chars`` that holds the most
    distinct patterns (``found``: sorted ``(start, end, pattern)``)."""
    best = (0, found[0][0], found[0][1])  # (-distinct, first, last)
    counts: dict[int, int] = {}
    low = 0
    for _, end, which in found:
        counts[which] = counts.get(which, 0) + 1
        while end - found[low][0] > chars:
            dropped = found[low][2]
            counts[dropped] -= 1
            if not counts[dropped]:
                del counts[dropped]
            low += 1
        if -len(counts) < best[0]:
            best = (-len(counts), found[low][0], end)
    return best[1], best[2]
