"""A long line of the user's cut down to the sentences that carry it, for a tight budget.

A head cut ("38k. and that's a real ceiling, not a soft one, my partner will kill me. like
$38,000 inc […]") keeps the talk and loses the value said last. When a summary must shrink,
a line keeps instead the sentences that name a value, set a rule or say what the work is
for, in their order, with ``[…]`` where sentences were left out; the talk goes first.
"""

from __future__ import annotations

from typing import Final

from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.offline.preferences import PREFERENCE_LINE
from contextree.compaction.offline.prose import CONSTRAINT, GOAL_STATEMENT
from contextree.compaction.offline.specifics import PLAIN_WORDS, specific_count
from contextree.compaction.offline.text import LIST_MARKER, SENTENCE_SPLIT, clip

GAP: Final = "[…]"
"""Where sentences were left out (the marker a head cut ends with)."""
_MIN_HEAD: Final = 24
"""A piece cut shorter than this says too little to be worth its place."""
_CLAUSE: Final = LazyPattern(r"(?<=[,;:])\s+(?=\S)")
_FILLER: Final = LazyPattern(
    r"(?i)^(?:ok(?:ay)?|so|yeah|yes|yep|no|hm+|um+|uh+|ugh|lol|haha|thanks|thx|cool|great|"
    r"honestly|anyway|sure|right|well|oh|ah|fine|wow)\b[\s,.!]*"
)


def condensed(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: whole when it fits; else its weightiest
    sentences in their order (a rule or the goal, then those naming the most values; a
    plain statement after them; talk never; the first weighty one that does not fit cut at
    its head), each gap marked; a head cut when no sentence carries anything or one
    sentence is all there is."""
    if len(text) <= limit:
        return text
    # A sentence longer than the limit by its clauses ("... phones the superintendent, Anjali
    # Rao, on 07700 914 322, at any hour"), so that a value said last can stay.
    pieces = [
        clause.strip()
        for piece in SENTENCE_SPLIT.split(LIST_MARKER.sub("", text, count=1))
        for clause in (_CLAUSE.split(piece) if len(piece) > limit else [piece])
        if clause.strip()
    ]
    if len(pieces) < 2:
        return _head(text, limit)
    weights = [_weight(piece) for piece in pieces]
    if weights[0] > 1:
        weights[0] += 1  # an opening that carries something says what the line is about
    if max(weights) <= 0:
        return _head(text, limit)
    # Room for the pieces and a mark on each side of each: what the join costs at most.
    room = limit
    chosen: dict[int, str] = {}
    for index in sorted(range(len(pieces)), key=lambda i: (-weights[i], i)):
        if weights[index] <= 0:
            break
        cost = len(pieces[index]) + len(GAP) + 2
        if cost <= room:
            chosen[index] = pieces[index]
            room -= cost
        elif weights[index] > 1 and room - len(GAP) - 2 >= _MIN_HEAD:
            # A value or a rule is cut rather than passed over for a lighter piece; a
            # plain statement that does not fit is left out.
            chosen[index] = _head(pieces[index], room - len(GAP) - 2)
            break
        else:
            break
    if not chosen:
        return _head(text, limit)
    kept: list[str] = []
    for index in range(len(pieces)):
        if index in chosen:
            kept.append(chosen[index])
        elif not kept or not kept[-1].endswith(GAP):
            kept.append(GAP)
    joined = " ".join(kept)
    return joined if len(joined) <= limit else _head(text, limit)


def _head(text: str, limit: int) -> str:
    """``text`` cut at its head to at most ``limit`` characters, the mark included."""
    return clip(text, max(limit - len(GAP) - 1, 1))


def _weight(sentence: str) -> int:
    """What a sentence carries: a rule or the goal most, then its kinds of value; a plain
    statement a little; an interjection or a word of talk nothing."""
    weight = 2 * min(specific_count(sentence), 3)
    if CONSTRAINT.search(sentence) or GOAL_STATEMENT.search(sentence):
        # Above any count of values: the sentence that sets the rule is the rule ("Don't
        # change the public response schema." before the long reason full of names).
        weight += 7
    elif PREFERENCE_LINE.found(sentence):
        weight += 5
    if weight:
        return weight
    words = _FILLER.sub("", sentence).split()
    return 1 if len(words) >= PLAIN_WORDS else 0


def without_shortened_copies(lines: list[str], *others: list[str]) -> list[str]:
    """``lines`` less those that are a shortened copy of another of them or of ``others``
    (every piece between its ``[…]`` marks is in the other): an earlier summary read back
    keeps a line as it was cut, and the line may come again whole."""
    cut = [line for line in lines if GAP in line]
    if not cut:
        return lines
    every = [*lines, *(line for group in others for line in group)]
    copies = {line for line in cut if any(_pieces_in(line, other) for other in every)}
    return [line for line in lines if line not in copies]


def _pieces_in(short: str, full: str) -> bool:
    pieces = [piece.strip() for piece in short.split(GAP) if piece.strip()]
    return bool(pieces) and len(short) < len(full) and all(piece in full for piece in pieces)
