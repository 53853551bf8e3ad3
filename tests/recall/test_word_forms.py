"""A month's or a weekday's name finds the other way it is written ("July" finds "29 Jul 2025",
"Tue" finds "Tuesday") on every backend, and an excerpt counts the short form as the same
search word only when it stands whole ("fri" is no search for "fridge")."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from contextree.recall import index as index_module
from contextree.recall import recall
from contextree.recall.excerpt import excerpt
from contextree.recall.forms import same_word, term_forms
from contextree.session.tree import SessionTree
from recall.recall_session import fold_away

_MOT = "MOT history for WK17 HFD: MOT valid until 29 Jul 2025, tax due 1 Nov 2025."
_DROP = "Van drop-off booked for Tuesday the 22nd at Gary's garage, ready by 5pm."


def _session(tree: SessionTree) -> SessionTree:
    tree.append_message({"role": "user", "content": _MOT, "timestamp": 1})
    tree.append_message({"role": "user", "content": _DROP, "timestamp": 2})
    return fold_away(tree, "## Goal\nSort the van out.")


def _found(tree: SessionTree, query: str) -> list[str]:
    """The snippets of the hits that hold every term."""
    result = recall(tree, query)
    return [hit.snippet for hit in result.hits[: result.complete]]


def test_forms_of_a_term() -> None:
    assert term_forms("July") == ("July", "jul")
    assert term_forms("sept.") == ("sept.", "september", "sep")
    assert term_forms("tue") == ("tue", "tuesday", "tues")
    assert term_forms("Saturday") == ("Saturday", "sat")
    assert term_forms("sat") == ("sat",)  # a word of its own
    assert term_forms("may") == ("may",)
    assert term_forms("van") == ("van",)
    assert same_word("jul") == "july" and same_word("sat") == "saturday"


def test_a_month_or_a_day_is_found_in_its_other_form(tmp_path: Path) -> None:
    tree = _session(SessionTree.open(tmp_path / "s.jsonl", cwd="/w"))
    assert any("29 [Jul] 2025" in s for s in _found(tree, "MOT July"))
    assert any("[Tuesday]" in s for s in _found(tree, "van tue"))
    assert not _found(tree, "MOT August")


def test_a_plain_scan_finds_the_other_form_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "fts5_available", lambda: False)
    tree = _session(SessionTree.open(tmp_path / "s.jsonl", cwd="/w"))
    result = recall(tree, "MOT July")
    assert result.index == "scan" and result.complete == 1


def test_postgres_finds_the_other_form(postgres: object) -> None:
    url = f"{postgres.url}#{uuid.uuid4().hex}"  # type: ignore[attr-defined]
    tree = _session(SessionTree.open(url, cwd="/w"))
    result = recall(tree, "MOT July")
    assert result.index == "postgres" and result.complete == 1
    assert recall(tree, "MOT August").complete == 0


def test_an_excerpt_counts_a_short_form_only_when_it_stands_whole() -> None:
    lines = [f"Fridge {n} checked, friend of the shop called about it." for n in range(30)]
    lines.insert(17, "Fri 25th: collection from the depot.")
    text = "\n".join(lines)
    shown = excerpt(text, ["Friday", "collection"], 120)
    assert shown.startswith("…Fri 25th: collection from the depot.")
    # Without a whole-word form nothing of the day is in front: the fridges are not it.
    assert "Fridge 0" not in excerpt(text, ["Friday"], 120)


def test_a_plain_scan_takes_a_short_form_only_as_a_whole_word(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "fts5_available", lambda: False)
    tree = SessionTree.open(tmp_path / "s.jsonl", cwd="/w")
    tree.append_message({"role": "user", "content": "MOT booked at the doctor's", "timestamp": 1})
    tree = fold_away(tree, "## Goal\nSort the van out.")
    assert recall(tree, "MOT October").complete == 0  # "oct" in "doctor" is no October
