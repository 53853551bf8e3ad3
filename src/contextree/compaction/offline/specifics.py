"""Specific values in prose: what makes a statement worth more than a generic one.

Names, versions, dates, hosts, URLs, paths, numbers, ids and people are found by their shape,
never by a list of words, so a statement of any topic ranks by how much it pins down.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Final

from contextree.compaction.offline.lazy_pattern import LazyPattern

_SHAPES: Final = (
    re.compile(r"https?://\S+"),  # URLs
    re.compile(r"\b[\w-]+(?:\.[\w-]+)+\.(?:[a-z]{2,10})\b(?::\d+)?"),  # hosts, dotted names
    # (A word boundary before a digit looked back at after the digit: the same matches.)
    re.compile(r"\d(?<!\w\d)\d*(?:\.\d+){1,3}\b"),  # versions, IPs
    re.compile(r"\d(?<!\w\d)(?:\d{3}-\d\d-\d\d\b|\d?/\d{1,2}/\d{2,4}\b)"),  # dates
    re.compile(
        r"\b(?i:(?=[adfjmnos])(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|"
        r"july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?))"
        r"\s+\d{1,2}\b"
    ),  # "March 14"
    re.compile(r"(?:~|\.{1,2})?/?(?:[\w.@-]+/)+[\w.@-]*"),  # paths
    # ticket and issue ids: "JIRA-123" (a capital after no word character), "#42"
    re.compile(r"[#A-Z](?:(?<=#)\d{2,}|(?<=[A-Z])(?<!\w[A-Z])[A-Z]+[-_]\d+)\b"),
    re.compile(r"\b[A-Za-z]+[-_][A-Za-z0-9]*\d[A-Za-z0-9-]*\b"),  # ids such as us-west-2
    re.compile(r"\d[\d,]*(?:\.\d+)?\s*(?:%|ms|s|GB|MB|KB|TB|k|rows|days|hours|minutes)?"),
    re.compile(r"`[^`\n]+`"),  # code
    re.compile(r"\"[^\"\n]{2,80}\"|'[^'\n]{2,80}'"),  # quoted text
    # names mid-sentence
    re.compile(r"[A-Z](?<=[a-z,;:] [A-Z])[a-zA-Z0-9]+(?:\s+[A-Z][a-zA-Z0-9]+)*"),
    re.compile(r"[A-Z](?<!\w[A-Z])[a-z]*[A-Z0-9][A-Za-z0-9]*\b"),  # OAuth, PostgreSQL, GPT4
    # a number named by what it opens or finds: "code 4417", "Pitch 17", "account no. 0177"
    re.compile(
        r"\b(?i:(?=[abceglinprsu])(?:code|pin|passcode|password|ref(?:erence)?|number|no\.?|"
        r"account|acc|id|pitch|room|gate|seat|bay|unit|plot|locker|stand|platform|extension|"
        r"ext))\s*(?:[:#]\s*)?\d{2,}\b"
    ),
)
"""Each shape is searched as fast as the regex engine allows: a (?i) list of words behind a
look-ahead of their first letters (matched as (?i) matches them), a capital's word boundary
or the text before a name looked back at after the capital (a pattern that starts with a
set of characters is scanned for them in C): the same matches, a third to a half of the
time."""


_DIGIT: Final = LazyPattern(r"\d")
_PATH_SLASH: Final = LazyPattern(r"[\w.@-]/")
"""Where the paths shape matches: its prefix is optional and its tail may be empty, so it
matches exactly where a name character precedes a slash. Its own search backtracks over every
word and was the slowest of the shapes."""
_HOST_TAIL: Final = LazyPattern(r"\.[\w-]+\.[a-z]")
"""What every match of the hosts shape holds: its last dotted part and the dot before its
top-level name. Searched from each dot (a literal start the engine skips to), where the shape
itself tries every word of a sentence that holds a dot, nearly all of them."""
_TWO_DIGITS: Final = LazyPattern(r"\d\d")

# What a text holds that a shape needs, as bits: each is looked for once per text, and a shape
# is searched only in a text that holds all of its bits (every match of it holds them), so a
# sentence is no longer searched for a date without a separator or for a named number
# without two digits in a row.
_HAS_DIGIT: Final = 1
_HAS_TWO_DIGITS: Final = 2
_HAS_SCHEME: Final = 4
_HAS_HOST_TAIL: Final = 8
_HAS_SLASH: Final = 16
_HAS_BACKTICK: Final = 32
_HAS_QUOTE: Final = 64
_HAS_DASH_OR_UNDERSCORE: Final = 128
_HAS_DASH_OR_SLASH: Final = 256
_HAS_TICKET_MARK: Final = 512
_HAS_DOT: Final = 1024

_NEEDED: Final = (
    _HAS_SCHEME,  # "://"
    _HAS_HOST_TAIL,
    _HAS_DIGIT | _HAS_DOT,  # versions: a digit, a dot and a digit
    _HAS_TWO_DIGITS | _HAS_DASH_OR_SLASH,  # dates: four or two digits, "-" or "/"
    _HAS_DIGIT,  # "March 14"
    _HAS_SLASH,  # paths: a name character before a slash
    _HAS_DIGIT | _HAS_TICKET_MARK,  # "JIRA-123", "#42"
    _HAS_DIGIT | _HAS_DASH_OR_UNDERSCORE,  # "us-west-2"
    _HAS_DIGIT,  # numbers
    _HAS_BACKTICK,  # code
    _HAS_QUOTE,  # quoted text
    0,  # names mid-sentence
    0,  # OAuth, PostgreSQL
    _HAS_TWO_DIGITS,  # "code 4417": at least two digits in a row
)
"""Per shape, the bits a text must have for the shape to match it."""
_NUMBERS: Final = 8
"""The numbers shape: it matches at any digit, so a digit is its match."""
_SEARCHES: Final = tuple(
    (needed, _PATH_SLASH if index == 5 else shape)
    for index, (needed, shape) in enumerate(zip(_NEEDED, _SHAPES, strict=True))
    if index != _NUMBERS
)
_Search = Callable[[str], re.Match[str] | None]
_DUE: Final[dict[int, tuple[_Search, ...]]] = {}
"""Per set of bits a text holds, the searches of the shapes it can match (a text holds one of
a few dozen sets). Looked up once per text instead of testing each shape's bits: the loop over
the 13 shapes, not their searches, was half the time of :func:`specific_count`."""


def _due(held: int) -> tuple[_Search, ...]:
    due = _DUE.get(held)
    if due is None:
        # The path shape's pattern is compiled here, when a text first holds a slash.
        due = _DUE[held] = tuple(
            (shape.compiled() if isinstance(shape, LazyPattern) else shape).search
            for needed, shape in _SEARCHES
            if needed & held == needed
        )
    return due


def _holds(text: str) -> int:
    """The bits of :data:`_NEEDED` that ``text`` has."""
    held = 0
    if _DIGIT.search(text):
        held |= _HAS_DIGIT | (_HAS_TWO_DIGITS if _TWO_DIGITS.search(text) else 0)
    if "." in text:
        held |= _HAS_DOT | (_HAS_HOST_TAIL if _HOST_TAIL.search(text) else 0)
    if "/" in text:
        held |= _HAS_SLASH | _HAS_DASH_OR_SLASH | (_HAS_SCHEME if "://" in text else 0)
    if "-" in text:
        held |= _HAS_DASH_OR_UNDERSCORE | _HAS_DASH_OR_SLASH | _HAS_TICKET_MARK
    if "_" in text:
        held |= _HAS_DASH_OR_UNDERSCORE | _HAS_TICKET_MARK
    if "#" in text:
        held |= _HAS_TICKET_MARK
    if "`" in text:
        held |= _HAS_BACKTICK
    if '"' in text or "'" in text:
        held |= _HAS_QUOTE
    return held


@functools.lru_cache(maxsize=4096)
def specific_count(text: str) -> int:
    """How many kinds of specific value ``text`` holds (0 for a generic statement). (Kept for
    a few thousand texts: a summary's facts are ranked, then cut to their weightiest
    sentences, which are mostly the facts themselves.)"""
    held = _holds(text)
    count = 1 if held & _HAS_DIGIT else 0  # the numbers shape
    for search in _DUE.get(held) or _due(held):
        if search(text):
            count += 1
    return count


def has_specifics(text: str) -> bool:
    """Whether ``text`` names at least one specific value: any digit does (the numbers
    shape), else one of the other shapes, each searched only when what it needs is there
    (one pattern of all the shapes cost 50 us a sentence)."""
    if _DIGIT.search(text):
        return True
    held = _holds(text)  # (no digit: the shapes due need none)
    return any(search(text) for search in _DUE.get(held) or _due(held))


PLAIN_WORDS: Final = 4
"""A statement of this many words says something even without a specific value."""


_ACKNOWLEDGEMENT: Final = LazyPattern(
    r"(?i)^(?:[\s,.!:;)(-]|ok(?:ay)?|yes|yeah|yep|yup|sure|sounds|looks|good|great|perfect|"
    r"cool|awesome|nice|fine|thanks?|thank|you|thx|ty|that|that's|thats|this|it|is|works?|"
    r"for|to|me|us|got|makes|sense|all|lgtm|wonderful|excellent|exactly|right|alright|"
    r"agreed|much|so|very|really|a|lot|again|done|noted|understood|brilliant|amazing|"
    r"oh|go|on|then|ahead|please|pls|do|brill|ace|lovely|ta|cheers|anyway|looking|helping|"
    r"checking|your|help|time)+$"
)
"""A message made of nothing but thanks and agreement ("sounds good to me, thanks!", "anyway,
thanks for looking")."""


def says_something(statement: str) -> bool:
    """Whether a user's statement is worth keeping as a fact: it names a specific value, or
    it is a plain statement of a few words ("he can't do stairs since the surgery", "no more
    beige"). People state facts, limits and tastes plainly, with no value and no keyword to
    find them by; only acknowledgements ("ok thanks", "sounds good to me") are left out."""
    if has_specifics(statement):
        return True
    return len(statement.split()) >= PLAIN_WORDS and not _ACKNOWLEDGEMENT.match(statement)
