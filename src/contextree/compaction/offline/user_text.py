"""Which lines of a user's message are their own words (not a pasted log, JSON or a stack
trace), and the items of a short list they typed."""

from __future__ import annotations

import functools
from typing import Final

from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.offline.text import FENCE, LIST_MARKER

__all__ = ["PASTED", "prose_lines", "typed_items"]

PASTED = LazyPattern(
    r"^\s*(?:[{\[\]}\"<]|at\s|E\s|>>>|\$\s|#\s|File \"|Traceback|\d{4}-\d\d-\d\d[T ]\d|\d+:\d\d|"
    r"(?:INFO|DEBUG|WARN(?:ING)?|ERROR|TRACE)\b)"
)
"""What a pasted line starts with: JSON, a log line, a prompt, a stack trace."""

_NOT_LETTERS: Final = dict.fromkeys(
    code for code in range(128) if chr(code).isalpha() or chr(code).isspace()
)
"""str.translate's table that deletes the ASCII letters and spaces (as isalpha and isspace
say)."""


def _letters(line: str) -> int:
    """How many of ``line``'s characters are letters or spaces: for ASCII, what deleting them
    leaves tells (a quarter of the time of testing each character)."""
    if line.isascii():
        return len(line) - len(line.translate(_NOT_LETTERS))
    return sum(c.isalpha() or c.isspace() for c in line)


@functools.lru_cache(maxsize=16)
def prose_lines(text: str) -> tuple[str, ...]:
    """The lines of a user's message that are their own words: not code blocks, pasted logs,
    JSON, stack traces or quoted output. (Cached: three readers of a message ask.)"""
    lines = []
    for line in FENCE.sub("\n", text).splitlines():
        stripped = LIST_MARKER.sub("", line).strip()
        if len(stripped) < 8 or PASTED.match(stripped):
            continue
        letters = _letters(stripped)
        if letters < 0.6 * len(stripped):
            continue  # mostly symbols and numbers: data, not prose
        lines.append(stripped)
    return tuple(lines)


_ITEM_WORDS: Final = 3
_ITEMS_PER_LIST: Final = 12


def typed_items(text: str) -> frozenset[str]:
    """The items of a short list in a user's message (``- ...``, ``1. ...``) of three words
    or more, without their markers; none when the list is long (a paste, not a list the
    user typed)."""
    items = [
        LIST_MARKER.sub("", line).strip()
        for line in FENCE.sub("\n", text).splitlines()
        if LIST_MARKER.match(line)
    ]
    if len(items) > _ITEMS_PER_LIST:
        return frozenset()
    return frozenset(item for item in items if len(item.split()) >= _ITEM_WORDS)
