"""Specific values in prose: what makes a statement worth more than a generic one.

Names, versions, dates, hosts, URLs, paths, numbers, ids and people are found by their shape,
never by a list of words, so a statement of any topic ranks by how much it pins down.
"""

from __future__ import annotations

import re
from typing import Final

_SHAPES: Final = (
    re.compile(r"https?://\S+"),  # URLs
    re.compile(r"\b[\w-]+(?:\.[\w-]+)+\.(?:[a-z]{2,10})\b(?::\d+)?"),  # hosts, dotted names
    re.compile(r"\b\d+(?:\.\d+){1,3}\b"),  # versions, IPs
    re.compile(r"\b\d{4}-\d\d-\d\d\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"),  # dates
    re.compile(
        r"\b(?i:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
        r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\s+\d{1,2}\b"
    ),  # "March 14"
    re.compile(r"(?:~|\.{1,2})?/?(?:[\w.@-]+/)+[\w.@-]*"),  # paths
    re.compile(r"\b[A-Z]{2,}[-_]\d+\b|#\d{2,}\b"),  # ticket and issue ids
    re.compile(r"\b[A-Za-z]+[-_][A-Za-z0-9]*\d[A-Za-z0-9-]*\b"),  # ids such as us-west-2
    re.compile(r"\d[\d,]*(?:\.\d+)?\s*(?:%|ms|s|GB|MB|KB|TB|k|rows|days|hours|minutes)?"),
    re.compile(r"`[^`\n]+`"),  # code
    re.compile(r"\"[^\"\n]{2,80}\"|'[^'\n]{2,80}'"),  # quoted text
    re.compile(r"(?<=[a-z,;:] )[A-Z][a-zA-Z0-9]+(?:\s+[A-Z][a-zA-Z0-9]+)*"),  # names mid-sentence
    re.compile(r"\b[A-Z][a-z]*[A-Z0-9][A-Za-z0-9]*\b"),  # OAuth, PostgreSQL, GPT4
)


def specific_count(text: str) -> int:
    """How many kinds of specific value ``text`` holds (0 for a generic statement)."""
    return sum(1 for shape in _SHAPES if shape.search(text))


_ANY: Final = re.compile("|".join(f"(?:{shape.pattern})" for shape in _SHAPES))
"""All shapes in one pattern: one scan of a sentence instead of thirteen."""


def has_specifics(text: str) -> bool:
    """Whether ``text`` names at least one specific value."""
    return _ANY.search(text) is not None
