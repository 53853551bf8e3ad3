"""The other written forms of a search word: "July" finds "29 Jul 2025", "Tue" finds "Tuesday".

A tool's result writes a month or a weekday short (a table's "Jul", a rota's "Tue 22nd") where
the model searching for it writes the word whole, or the other way round; the index matches
whole tokens, so a search for "july" missed "Jul". Every backend and the excerpt match any of
a term's forms. "sat" and "sun" are words of their own: only "saturday" and "sunday" find
them, not the other way round.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["same_word", "term_forms", "whole_word"]

_NAMES: Final = (
    ("january", "jan"),
    ("february", "feb"),
    ("march", "mar"),
    ("april", "apr"),
    ("june", "jun"),
    ("july", "jul"),
    ("august", "aug"),
    ("september", "sep", "sept"),
    ("october", "oct"),
    ("november", "nov"),
    ("december", "dec"),
    ("monday", "mon"),
    ("tuesday", "tue", "tues"),
    ("wednesday", "wed"),
    ("thursday", "thu", "thur", "thurs"),
    ("friday", "fri"),
    ("saturday", "sat"),
    ("sunday", "sun"),
)
_ONE_WAY: Final = frozenset({"sat", "sun"})
"""Short forms that are words of their own: they do not stand for the day."""

_FORMS: Final = {
    word: group
    for group in _NAMES
    for word in group
    if word not in _ONE_WAY
}

_SAME: Final = {word: group[0] for group in _NAMES for word in group}


def term_forms(term: str) -> tuple[str, ...]:
    """``term`` and the other forms it is written in (lower case), ``term`` first; a term
    that is not a month's or a weekday's name, or that has more than one word, is its only
    form."""
    word = term.strip().lower().rstrip(".")
    group = _FORMS.get(word)
    if group is None:
        return (term,)
    return (term, *(form for form in group if form != word))


def same_word(form: str) -> str:
    """The one form that stands for all of ``form``'s (lower case): "jul" and "july" are one
    search word when an excerpt counts the words a line holds."""
    return _SAME.get(form, form)


def whole_word(form: str) -> str:
    """A pattern for ``form`` (one of a term's other forms) standing as a word of its own:
    "oct" is no search for "doctor", nor "fri" for "fridge"."""
    return rf"(?<!\w){re.escape(form)}(?!\w)"
