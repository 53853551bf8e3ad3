"""What the recall tool shows of a long hit: the lines and sentences that hold the search's
words, each with its neighbours, in the text's order, within a bound.

A long tool result is many similar lines (a table, a mail thread, a list of search results),
and the line that matters is the one where the words of the search meet; the value a model
looks for is often right after it (a label, then the number). One window of text around the
first match cut such a line in half or missed it; segments scored by how many of the search's
words they hold, each taken with the segment after and before it, keep it whole.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections import Counter
from typing import Final

from contextree.recall.forms import same_word, term_forms, whole_word
from contextree.text.tables import standout_rows

__all__ = ["excerpt"]

_ELLIPSIS: Final = "…"
_GAP: Final = " … "
_LONG_LINE: Final = 200
"""A line longer than this is split into its sentences."""
_SENTENCE_END: Final = re.compile(r"(?<=[.!?;])\s+")
_WORD: Final = re.compile(r"\w+")
_CLITIC: Final = re.compile(r"['\u2019](?:s|t|d|m|ll|re|ve)(?!\w)", re.IGNORECASE)
_WIDEN: Final = 8
"""The best segments whose neighbours fill the room that the matching ones leave."""
_WIDEN_LINES: Final = 200
"""How far from such a segment its neighbours are looked for."""
_MAX_SEGMENTS: Final = 20_000
"""Segments scored in one text (a longer text is read that far: a hit's excerpt, not a scan)."""


def excerpt(text: str, terms: list[str], room: int) -> str:
    """At most ``room`` characters of ``text`` (white space collapsed): the whole text when
    it fits; else its segments (lines, and the sentences of long lines) that hold the most of
    the words of ``terms`` (word starts, case and accents ignored, as the index matches them),
    the best first, each followed by the segment after it and the one before it while there is
    room, shown in the text's order and joined by ellipses; the start of the text when no
    segment holds a word."""
    room = max(room, 1)
    flat = " ".join(text.split())
    if len(flat) <= room:
        return flat
    lines = text.splitlines()[:_MAX_SEGMENTS]
    segments, first_segment = _segments(lines)
    words = _search_words(terms)
    # Twice the words a segment holds, a rarer word a little more (1 + 1 / the segments that
    # hold it: "dreams" and "chorus" in one line of a mail thread before "first dance" in
    # five); a table's row that stands out from its column gets two more, and four for each
    # search word its column's header starts (tables.py): as much as a rare word, so that it
    # keeps its lead over a line that only repeats the search's words.
    held = [_held(segment, words) for segment in segments]
    spread = Counter(word for found in held for word in found)
    scores = [2 * sum(1 + 1 / spread[word] for word in found) for found in held]
    headers: dict[int, int] = {}
    sameness: dict[int, float] = {}
    wanted = {w for term in terms for w in _term_words(term) if len(w) >= 3}
    for line, standout in standout_rows(lines).items():
        if line not in first_segment:
            continue  # past the segments read
        index = first_segment[line]
        scores[index] += 2 + 4 * _header_words(standout.columns, wanted)
        sameness[index] = standout.sameness
        if standout.header is not None and standout.header in first_segment:
            headers[index] = first_segment[standout.header]
    order = sorted(
        (i for i, score in enumerate(scores) if score),
        key=lambda i: (-scores[i], -sameness.get(i, 0.0), i),
    )
    if not order:
        return _cut(flat, 0, room)
    best = order[0]
    if len(segments[best]) + 2 * len(_ELLIPSIS) > room:
        return _window(segments[best], words, room)
    picked = _Picked(segments, room)
    for index in order:
        if picked.full:
            break
        if index in headers:
            # A row that stands out, under its table's header: the header names its cells.
            picked.take(headers[index])
            picked.take(index)
            continue
        # The segment, then the one after it (a label's value), then the one before it.
        for candidate in (index, index + 1, index - 1):
            picked.take(candidate)
    # Room left once every segment that holds a word is in: the lines further after and
    # before the best ones (a table's next rows, the rest of a mail), nearest first.
    best_first = order[:_WIDEN]
    for distance in range(2, _WIDEN_LINES):
        if picked.full:
            break
        for index in best_first:
            picked.take(index + distance)
            picked.take(index - distance)
    return picked.text()


class _Picked:
    """Segments chosen so far, with the length of their joined text kept as they come."""

    def __init__(self, segments: list[str], room: int) -> None:
        self.segments = segments
        self.room = room
        self.chosen: list[int] = []  # sorted
        self.size = 0  # of the joined text, both ends' ellipses counted
        self.full = False

    def take(self, index: int) -> None:
        if not 0 <= index < len(self.segments):
            return
        at = bisect.bisect_left(self.chosen, index)
        if at < len(self.chosen) and self.chosen[at] == index:
            return
        added = self._cost(index, at)
        if self.size + added > self.room:
            return
        self.chosen.insert(at, index)
        self.size += added
        # Nothing fits in less than a character and a space: stop looking.
        self.full = self.room - self.size < 2

    def _cost(self, index: int, at: int) -> int:
        """What adding segment ``index`` (at position ``at`` of the choice) adds to the joined
        length: the segment, and the separators and end marks it changes."""
        segments, chosen = self.segments, self.chosen
        if not chosen:
            ends = (len(_ELLIPSIS) if index else 0) + (
                len(_ELLIPSIS) if index < len(segments) - 1 else 0
            )
            return len(segments[index]) + ends
        before = chosen[at - 1] if at else None
        after = chosen[at] if at < len(chosen) else None
        cost = len(segments[index])
        cost += self._join(before, index) + self._join(index, after)
        cost -= self._join(before, after)
        return cost

    def _join(self, left: int | None, right: int | None) -> int:
        """The length between two chosen segments (``None``: the text's start or end)."""
        if left is None and right is None:
            return 0
        if left is None:
            return len(_ELLIPSIS) if right else 0
        if right is None:
            return len(_ELLIPSIS) if left < len(self.segments) - 1 else 0
        return 1 if right == left + 1 else len(_GAP)

    def text(self) -> str:
        ordered = self.chosen
        parts = [_ELLIPSIS if ordered[0] else ""]
        for position, index in enumerate(ordered):
            if position:
                parts.append(" " if index == ordered[position - 1] + 1 else _GAP)
            parts.append(self.segments[index])
        parts.append(_ELLIPSIS if ordered[-1] < len(self.segments) - 1 else "")
        return "".join(parts)


def _segments(lines: list[str]) -> tuple[list[str], dict[int, int]]:
    """The segments of ``lines``, and for each line that is not blank its first segment."""
    found: list[str] = []
    first: dict[int, int] = {}
    for number, raw in enumerate(lines):
        line = " ".join(raw.split())
        if not line:
            continue
        first[number] = len(found)
        if len(line) <= _LONG_LINE:
            found.append(line)
        else:
            found.extend(part for part in _SENTENCE_END.split(line) if part)
        if len(found) >= _MAX_SEGMENTS:
            break
    return found, first


def _header_words(columns: tuple[str, ...], wanted: set[str]) -> int:
    """How many of the search words ``wanted`` (folded, 3+ letters) start with a word of
    ``columns`` (a header of 3+ letters: "Cert" for "certificate", "Contact" for "contacted")
    or are the start of one."""
    names = {w for column in columns for w in _WORD.findall(_fold(column)) if len(w) >= 3}
    if not names:
        return 0
    return sum(1 for w in wanted if any(w.startswith(n) or n.startswith(w) for n in names))


def _fold(text: str) -> str:
    """``text`` lower-cased, without accents (the index's ``remove_diacritics``)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def _term_words(term: str) -> list[str]:
    """The words of ``term`` (folded), without the ending after an apostrophe ("'s", "n't",
    "'ll"): "transit's" is the word "transit", not also an "s" that starts every line's
    "service" or "seriously"."""
    return _WORD.findall(_fold(_CLITIC.sub(" ", term)))


def _search_words(terms: list[str]) -> re.Pattern[str] | None:
    """One pattern for the distinct words of ``terms`` (a quoted phrase's words one by one;
    the punctuation around a word dropped), matching a word's start in folded text; what it
    matches is the word itself. The other written forms of a term ("jul" for "july") match
    only as whole words: "fri" is no search for "fridge"."""
    words = dict.fromkeys(w for term in terms for w in _term_words(term))
    forms = dict.fromkeys(
        whole_word(form)
        for term in terms
        for form in term_forms(term)[1:]
        if _fold(form) not in words
    )
    if not words:
        return None
    longest_first = [re.escape(word) for word in sorted(words, key=len, reverse=True)]
    return re.compile(r"(?<!\w)(?:" + "|".join([*longest_first, *forms]) + ")")


def _held(segment: str, words: re.Pattern[str] | None) -> set[str]:
    """The distinct search words ``segment`` holds."""
    if words is None:
        return set()
    folded = segment.lower() if segment.isascii() else _fold(segment)
    return {same_word(word) for word in words.findall(folded)}


def _cut(text: str, start: int, room: int) -> str:
    """``room`` characters of ``text`` from ``start``, ellipses included where it is cut."""
    lead = _ELLIPSIS if start else ""
    if len(text) - start + len(lead) <= room:
        return lead + text[start:]
    keep = max(0, room - len(lead) - len(_ELLIPSIS))
    return (lead + text[start : start + keep] + _ELLIPSIS)[:room]


def _window(segment: str, words: re.Pattern[str] | None, room: int) -> str:
    """At most ``room`` characters of one long segment, around where most of the search's
    words meet (the earliest such stretch)."""
    chars = max(1, room - 2 * len(_ELLIPSIS))
    folded = _fold(segment)
    if len(folded) != len(segment):
        folded = segment.lower()  # folding changed the length: positions would not hold
    numbers: dict[str, int] = {}
    found = [
        (match.start(), match.end(), numbers.setdefault(same_word(match.group(0)), len(numbers)))
        for match in (words.finditer(folded) if words is not None else ())
    ]
    first, last = _densest(found, chars) if found else (0, 0)
    start = max(0, min(first - max(0, chars - (last - first)) // 2, len(segment) - chars))
    return _cut(segment, start, room)


def _densest(found: list[tuple[int, int, int]], chars: int) -> tuple[int, int]:
    """The first and last match of the stretch of at most ``chars`` that holds the most
    distinct words (``found``: sorted ``(start, end, word)``; a match longer than ``chars`` is
    a stretch of its own)."""
    best = (0, found[0][0], found[0][1])  # (-distinct, first, last)
    counts: dict[int, int] = {}
    low = 0
    for high, (_, end, which) in enumerate(found):
        counts[which] = counts.get(which, 0) + 1
        while low < high and end - found[low][0] > chars:
            dropped = found[low][2]
            counts[dropped] -= 1
            if not counts[dropped]:
                del counts[dropped]
            low += 1
        if -len(counts) < best[0]:
            best = (-len(counts), found[low][0], end)
    return best[1], best[2]
