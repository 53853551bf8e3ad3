"""Reference codes a conversation names: tickets, bookings, permits, invoices, parcels.

A code such as ``T-4471903``, ``QH7T2X`` or ``1Z8V47E20394417728`` is what a user needs back
word for word, and it costs a few tokens where the sentence around it costs fifty: the
summary lists the codes, each with the words that introduced it, so that a tight budget that
drops the sentence still keeps the code (the blind eval's facts were kept 8 times in 97 at a
fifth of the history, most of them a code said once).

A code is found by its shape: letters and digits in one word, with at least one capital and
two digits, not starting in lower case ("SUP-31744", "Q-HW-44190"); a word of a path, a host,
an e-mail address or a file name is not one, nor a number with its unit ("120GB"), a colour
("#2E3440"), a timestamp, a name in code ("base64Content") or a lowercase hash. A text that
names more than six codes is a listing (a table of contractors, a log) and adds none.
"""

from __future__ import annotations

import string
from collections.abc import Iterator
from typing import Final

import ahocorasick_rs

from contextree.compaction.offline.lazy_pattern import LazyPattern

REFERENCES_HEADING: Final = "## References"
_GATE: Final = ahocorasick_rs.AhoCorasick(
    [
        pair
        for capital in string.ascii_uppercase
        for digit in string.digits
        for pair in (capital + digit, capital + "-" + digit, digit + capital)
    ],
    implementation=ahocorasick_rs.Implementation.DFA,  # (the fastest form to search)
)
"""Where a code can be: a capital next to a digit (or a dash and a digit). Every code has one
("T-4", "H7", "1Z", "P-3"); one pass of an automaton finds them, where a regular expression
for words with a digit took 18 ns a character (0.07 s on the 4 MB a 100k session compacts)."""
_WORD: Final = frozenset(string.ascii_letters + string.digits + "_-")
_TOKEN: Final = LazyPattern(r"[A-Za-z0-9_-]+")
_UPPER: Final = LazyPattern(r"[A-Z]")
_WITH_UNIT: Final = LazyPattern(r"\d+(?:\.\d+)?[A-Za-z]{1,3}")
"""A number with its unit ("120GB", "300ms", "4K"): a quantity, not a code."""
_BEFORE_NOT: Final = frozenset("./@\\$€£")
"""A word right after one of these is part of a path, a host, an address or an amount."""
_COLOUR: Final = LazyPattern(r"[0-9A-Fa-f]{3}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8}")
"""After a ``#``, a colour ("#2E3440"); any other word there is a number ("ticket #T-4471")."""
_MIN_CHARS: Final = 5
_MIN_DIGITS: Final = 2
_LABEL_WORDS: Final = 3
_LABEL_CHARS: Final = 40
_CLAUSE_END: Final = LazyPattern(r"[.,!?;:()\[\]|>=\n\\]\s*|\s[-\u2013\u2014]\s")
_MARKUP: Final = LazyPattern(r"[*`\"'#]+|(?<!\w)_+|_+(?!\w)")
_LINKING: Final = frozenset(
    ("is", "was", "are", "were", "be", "of", "the", "a", "an", "to", "for", "as", "at", "with",
     "and", "on", "in", "under", "by")
)
_LINE: Final = LazyPattern(r"^(?P<code>\S+)(?: \((?P<label>[^()]*)\))?$")
_LISTING: Final = 6
"""A text that names more codes than this is a listing, not a reference to keep."""
_TIMESTAMP: Final = LazyPattern(r"\d{4}-\d\d-\d\dT\d")
MAX_REFERENCES: Final = 40
"""At most this many codes are carried (the latest named, a code named again counting as
named last): a session that names hundreds (a log) would spend its summary on them."""


def references_in(text: str) -> Iterator[tuple[str, str]]:
    """``(code, label)`` for each code ``text`` names, in order; the label is the few words
    before the code in its clause ("tech visit ticket"), or ``""``."""
    return _references_at(text, _GATE.find_matches_as_indexes(text))


def _references_at(text: str, hits: list[tuple[int, int, int]]) -> Iterator[tuple[str, str]]:
    """:func:`references_in` of ``text``, where the gate found ``hits``."""
    end = 0
    for _, hit, _ in hits:
        if hit < end:
            continue  # within the word just read
        start = hit
        while start and text[start - 1] in _WORD:
            start -= 1
        token = _TOKEN.match(text, start)
        end = token.end() if token else hit + 1
        code = text[start:end].strip("-_")
        if not _is_code(code):
            continue
        before = text[start - 1] if start else " "
        after = text[end : end + 2]
        if before in _BEFORE_NOT or (before == "#" and _COLOUR.fullmatch(code)):
            continue
        if after[:1] in ("/", "@", "\\") or (after[:1] == "." and after[1:2].isalnum()):
            continue  # a path, an address or a file name ("hr_clean_v1.csv")
        yield code, _label(text[max(0, start - 120) : start])


def _is_code(word: str) -> bool:
    if len(word) < _MIN_CHARS or not _UPPER.search(word) or word[0].islower():
        return False  # (a name in code, "base64Content", starts in lower case)
    if sum(char.isdigit() for char in word) < _MIN_DIGITS:
        return False
    return not _WITH_UNIT.fullmatch(word) and not _TIMESTAMP.match(word)


def _label(before: str) -> str:
    """The last words of the clause before a code, without markup."""
    clause = _CLAUSE_END.split(before.rstrip(" :#=\t"))[-1]
    words = _MARKUP.sub("", clause).split()
    while words and words[-1].lower() in _LINKING:
        words.pop()  # "your permit number is" says "permit number"
    label = " ".join(words[-_LABEL_WORDS:]).strip(" ,")
    return label if len(label) <= _LABEL_CHARS else ""


def add_references(found: dict[str, str], text: str) -> None:
    """Add to ``found`` the codes of ``text``, last (a code seen before moves there and keeps
    its first label, or takes this one when it had none)."""
    hits = _GATE.find_matches_as_indexes(text)
    if not hits:
        return  # most texts (a generator and a dict for each: a tenth of this pass)
    named = dict(_references_at(text, hits))
    if len(named) > _LISTING:
        return  # a listing (a table of contractors, a log): asked again when needed
    _name(found, named)


def reference_line(code: str, label: str) -> str:
    return f"{code} ({label})" if label else code


def line_code(line: str) -> str:
    """The code of a line :func:`reference_line` wrote."""
    return line.split(" ", 1)[0]


def read_reference_line(text: str) -> tuple[str, str] | None:
    """``(code, label)`` of a line written by :func:`reference_line`, else ``None``."""
    match = _LINE.match(text.strip())
    if match is None or not _is_code(match.group("code")):
        return None
    return match.group("code"), match.group("label") or ""


def latest_references(found: dict[str, str]) -> dict[str, str]:
    """The last :data:`MAX_REFERENCES` codes of ``found``."""
    if len(found) <= MAX_REFERENCES:
        return found
    return dict(list(found.items())[-MAX_REFERENCES:])


def merged_references(old: dict[str, str], new: dict[str, str]) -> dict[str, str]:
    """``old``'s codes, then ``new``'s (a code ``new`` names again moves there and keeps the
    label it was first named with), the latest :data:`MAX_REFERENCES` of them."""
    merged = dict(old)
    _name(merged, new)
    return latest_references(merged)


def _name(found: dict[str, str], named: dict[str, str]) -> None:
    """Each code of ``named`` moved to the end of ``found`` (named last), with the label it
    had there, else ``named``'s."""
    for code, label in named.items():
        found[code] = found.pop(code, "") or label


def code_words(text: str) -> set[str]:
    """The words of ``text`` a code could be (letters, digits, ``-`` and ``_``): whether a
    code is shown is whether it is one of them, not part of a longer one ("INV-1001" is not
    shown by "INV-10012")."""
    return {word.strip("-_") for word in _TOKEN.findall(text)}
