"""The lines of a tool result that the assistant's reply retells.

An assistant reads a long result and tells the user what matters in its own words, leaving
the exact value behind: "his next sedation afternoon is the following Tuesday" for a line
that says "Tue 25 Nov, 12:00 to 16:00", "phone provider services (option 3)" for one that
gives the number. The reply picks the lines out; the lines hold what the reply rounded off.
A line is retold when the reply shares its rarer words (a word found in few of the result's
lines weighs more than one found in many: "Hollis" picks one row of twelve, "crown" four).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Final

from contextree.compaction.offline.condense import condensed
from contextree.compaction.offline.specifics import has_specifics
from contextree.compaction.offline.text import one_line, split_sentences, words_of

__all__ = ["retold_lines"]

_RETOLD_PER_RESULT: Final = 3
_MIN_WEIGHT: Final = 1.5
"""One word found in this line alone weighs 1; a line is retold from more than that (two
such words, or one and words it shares with a few other lines)."""
_LONG_LINE: Final = 300
"""A line longer than this (a mail's paragraph) is weighed sentence by sentence."""
_TOKEN: Final = re.compile(r"[a-z0-9]+")
_KEY_CHARS: Final = 5
"""Words compare by their first letters: "paused" meets "PAUSED", "verify" "verification"."""
_FUNCTION_WORDS: Final = words_of(
    "that this with from have will they your their would there what when which about been "
    "were also only just into then than some more here very each other these those them "
    "does could should being after before over under while where because still"
)


def _keys(text: str) -> set[str]:
    """The words of ``text`` that can tie a line to the reply: words of four letters or more
    (their first letters), and numbers of two digits or more (whole)."""
    keys = set()
    for token in _TOKEN.findall(text.lower()):
        if any(ch.isdigit() for ch in token):
            if sum(ch.isdigit() for ch in token) >= 2:
                keys.add(token)
        elif len(token) >= 4 and token not in _FUNCTION_WORDS:
            keys.add(token[:_KEY_CHARS])
    return keys


def _pieces(lines: list[str]) -> list[tuple[str, int]]:
    """The pieces weighed: each line, or each sentence of a long line, with its line's index."""
    pieces: list[tuple[str, int]] = []
    for index, line in enumerate(lines):
        if len(line) > _LONG_LINE:
            pieces.extend((sentence, index) for sentence in split_sentences(line))
        else:
            pieces.append((line, index))
    return pieces


def retold_lines(result: str, reply: str, limit: int) -> list[str]:
    """The lines of ``result`` that name a specific value and that ``reply`` retells (a long
    line by any of its sentences); at most three, the clearest first chosen, in the result's
    order, each cut to its weightiest sentences or clauses within ``limit`` characters (a
    value said last stays)."""
    lines = [one_line(line) for line in result.splitlines() if line.strip()]
    pieces = _pieces(lines)
    if len(pieces) < 2:
        return []
    piece_keys = [_keys(piece) for piece, _ in pieces]
    spread = Counter(key for keys in piece_keys for key in keys)
    told = _keys(reply)
    best: dict[int, float] = {}
    for (_, line), keys in zip(pieces, piece_keys, strict=True):
        weight = sum(1 / spread[key] for key in keys & told)
        if weight >= _MIN_WEIGHT and weight > best.get(line, 0.0):
            best[line] = weight
    clearest = sorted(
        (line for line in best if has_specifics(lines[line])), key=lambda i: (-best[i], i)
    )
    return [condensed(lines[line], limit) for line in sorted(clearest[:_RETOLD_PER_RESULT])]
