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
        r"\b(?i:(?=[adfjmnos])(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|"
        r"july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?))"
        r"\s+\d{1,2}\b"
    ),  # "March 14"
    re.compile(r"(?:~|\.{1,2})?/?(?:[\w.@-]+/)+[\w.@-]*"),  # paths
    re.compile(r"\b[A-Z]{2,}[-_]\d+\b|#\d{2,}\b"),  # ticket and issue ids
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


_DIGIT: Final = re.compile(r"\d")
_PATH_SLASH: Final = re.compile(r"[\w.@-]/")
"""Where the paths shape matches: its prefix is optional and its tail may be empty, so it
matches exactly where a name character precedes a slash. Its own search backtracks over every
word and was the slowest of the shapes."""
_NEEDS_DIGIT: Final = frozenset({2, 3, 4, 6, 7, 8, 13})
"""The shapes that match only where a digit is (the numbers shape matches at any digit)."""
_NEEDS: Final = {0: "://", 1: ".", 5: "/", 9: "`"}
"""A string a shape's every match contains: without it the shape is not searched."""
_SEARCHES: Final = tuple(_PATH_SLASH if i == 5 else shape for i, shape in enumerate(_SHAPES))


def specific_count(text: str) -> int:
    """How many kinds of specific value ``text`` holds (0 for a generic statement)."""
    digit = _DIGIT.search(text) is not None
    count = 0
    for index, search in enumerate(_SEARCHES):
        if index in _NEEDS_DIGIT and not digit:
            continue
        if index in _NEEDS and _NEEDS[index] not in text:
            continue
        if search.search(text):
            count += 1
    return count


_NO_DIGIT: Final = tuple(
    (_NEEDS.get(index, ""), search)
    for index, search in enumerate(_SEARCHES)
    if index not in _NEEDS_DIGIT
)


def has_specifics(text: str) -> bool:
    """Whether ``text`` names at least one specific value: any digit does (the numbers
    shape), else one of the other shapes, each searched only when what it needs is there
    (one pattern of all the shapes cost 50 us a sentence)."""
    if _DIGIT.search(text):
        return True
    return any(needed in text and search.search(text) for needed, search in _NO_DIGIT)


PLAIN_WORDS: Final = 4
"""A statement of this many words says something even without a specific value."""


_ACKNOWLEDGEMENT: Final = re.compile(
    r"(?i)^(?:[\s,.!:;)(-]|ok(?:ay)?|yes|yeah|yep|yup|sure|sounds|looks|good|great|perfect|"
    r"cool|awesome|nice|fine|thanks?|thank|you|thx|ty|that|that's|thats|this|it|is|works?|"
    r"for|to|me|us|got|makes|sense|all|lgtm|wonderful|excellent|exactly|right|alright|"
    r"agreed|much|so|very|really|a|lot|again|done|noted|understood|brilliant|amazing|"
    r"oh|go|on|then|ahead|please|pls|do|brill|ace|lovely|ta|cheers)+$"
)
"""A message made of nothing but thanks and agreement ("sounds good to me, thanks!")."""


def says_something(statement: str) -> bool:
    """Whether a user's statement is worth keeping as a fact: it names a specific value, or
    it is a plain statement of a few words ("he can't do stairs since the surgery", "no more
    beige"). People state facts, limits and tastes plainly, with no value and no keyword to
    find them by; only acknowledgements ("ok thanks", "sounds good to me") are left out."""
    if has_specifics(statement):
        return True
    return len(statement.split()) >= PLAIN_WORDS and not _ACKNOWLEDGEMENT.match(statement)
