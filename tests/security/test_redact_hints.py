"""The hints that gate each rule are found in one automaton pass (``_HintFinder``): the set it
finds is exactly the hints a substring search finds, overlapping ones included, and the rules
after a replacement still run."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contextree.security.redact import _HINTS, Redactor, _HintFinder

_ALL = sorted({hint for hints in _HINTS.values() for hint in hints})
FINDER = _HintFinder(_HINTS.values())


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([*_ALL, "s", "h", "a", "x", "é", " "]), max_size=12))
def test_the_automaton_finds_what_substring_search_finds(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert FINDER.present(text) == {hint for hint in _ALL if hint in text}


def test_overlapping_hints_are_all_found() -> None:
    # "pass" is found first, and "sshpass" begins inside it: a leftmost, non-overlapping search
    # would miss it and leave an sshpass command unredacted.
    assert {"pass", "sshpass"} <= FINDER.present("passhpass")
    assert {"sk-ant-", "sk-", "sk"} <= FINDER.present("x sk-ant-y")


def test_non_ascii_text() -> None:
    assert FINDER.present("é… bearer ünïcode token") >= {"bearer", "token"}


def test_rules_after_a_replacement_still_run() -> None:
    # The literal rule runs first; the hints are found again in the text it leaves.
    redactor = Redactor(literals=["hunter2hunter2"])
    out = redactor.redact("run sshpass -p hunter2hunter2 ssh host; password=abcdefgh1")
    assert "hunter2hunter2" not in out
    assert "abcdefgh1" not in out


def test_no_hints_no_automaton() -> None:
    assert _HintFinder([]).present("password token") == frozenset()
