"""Text helpers the offline summarizer shares: sentences, clipping, ordered lists, token counts."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from typing import Final

from contextree.tokens.estimate import utf16_len


def words_of(text: str) -> frozenset[str]:
    return frozenset(text.split())


FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=\S)|\n+")
LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_FOCUS_WORD = re.compile(r"[a-z0-9_./-]{4,}")
_STOPWORDS: Final = words_of(
    "the and for with that this from into about keep focus more less only also please "
    "should must what when where which their there them they have been were will would "
    "could make sure summary summarize context details important especially"
)


def split_sentences(text: str) -> list[str]:
    found: list[str] = []
    for raw in _SENTENCE_SPLIT.split(FENCE.sub("\n", text)):
        sentence = LIST_MARKER.sub("", raw.strip()).strip()
        if len(sentence) >= 8:
            found.append(sentence)
    return found


def focus_words_of(focus: str | None) -> tuple[str, ...]:
    if not focus:
        return ()
    words: dict[str, None] = {}
    for word in _FOCUS_WORD.findall(focus.lower()):
        if word not in _STOPWORDS:
            words.setdefault(word, None)
    return tuple(words)


def mentions(text: str, words: tuple[str, ...]) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in words)


def one_line(text: str) -> str:
    return " ".join(text.split())


def clip(text: str, limit: int) -> str:
    """``text`` cut at a word boundary before ``limit`` with a ``[…]`` marker, never inside a
    backtick span (which is where paths and commands are)."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    if cut < limit // 2:
        cut = limit
    if text.count("`", 0, cut) % 2 == 1:
        opening = text.rfind("`", 0, cut)
        if opening > 0:
            cut = opening
    return text[:cut].rstrip() + " […]"


def add_once(items: list[str], item: str) -> None:
    if item and item not in items:
        items.append(item)


def union(*lists: Iterable[str]) -> list[str]:
    merged: list[str] = []
    for items in lists:
        for item in items:
            add_once(merged, item)
    return merged


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def estimate_tokens(text: str) -> int:
    return math.ceil(utf16_len(text) / 4)


def fit_text(text: str, budget_tokens: int) -> str:
    """``text`` within ``budget_tokens`` (chars/4): whole lines from the top while they fit,
    then as much of the next line as fits, marked as cut."""
    limit = max(budget_tokens, 0) * 4
    if utf16_len(text) <= limit:
        return text
    kept: list[str] = []
    used = 0
    marker = " […]"
    for line in text.splitlines():
        size = utf16_len(line) + (1 if kept else 0)
        if used + size > limit:
            room = limit - used - (1 if kept else 0) - len(marker)
            if room > 20:
                kept.append(line[:room].rstrip() + marker)
            break
        kept.append(line)
        used += size
    result = "\n".join(kept).rstrip()
    # A line of astral characters counts two units each: trim until it fits.
    while utf16_len(result) > limit:
        result = result[:-1]
    return result


_SIMILAR_WORD = re.compile(r"[a-z0-9_./`-]{3,}")


@functools.lru_cache(maxsize=8192)
def _word_set(text: str) -> frozenset[str]:
    # Cached: grouping compares each new request with every earlier one.
    return frozenset(_SIMILAR_WORD.findall(text.lower()))


def similar(a: str, b: str, threshold: float = 0.85) -> bool:
    """Whether two lines say nearly the same (word sets overlap by ``threshold``, Jaccard)."""
    left, right = _word_set(a), _word_set(b)
    if not left or not right:
        return a.strip().lower() == b.strip().lower()
    small, large = sorted((len(left), len(right)))
    if small < threshold * large:
        return False  # the overlap cannot reach the threshold
    return len(left & right) / len(left | right) >= threshold


def add_grouped(items: list[str], counts: dict[str, int], item: str, times: int = 1) -> None:
    """Add ``item``, or count it against an earlier near-duplicate (kept in its first words)."""
    if not item:
        return
    earlier = _near_duplicate(items, item)
    if earlier is not None:
        counts[earlier] = counts.get(earlier, 1) + times
        return
    items.append(item)
    if times > 1:
        counts[item] = times


def _near_duplicate(items: list[str], item: str) -> str | None:
    """The first of ``items`` that is ``item`` or :func:`similar` to it. The same test,
    inlined with ``item``'s words found once: grouping compares each item with every earlier
    one, and the calls were 1.9 s of compacting a 100k-entry session."""
    mine = _word_set(item)
    size = len(mine)
    plain = item.strip().lower()
    for existing in items:
        if existing == item:
            return existing
        theirs = _word_set(existing)
        if not mine or not theirs:
            if existing.strip().lower() == plain:
                return existing
            continue
        small, large = sorted((size, len(theirs)))
        if small >= 0.85 * large and len(mine & theirs) / len(mine | theirs) >= 0.85:
            return existing
    return None
