"""``list_session_folders``: the listing ``contextree sessions`` prints, built in the library
(issue 12 point 9: the command stays thin)."""

from __future__ import annotations

import os
from pathlib import Path

from contextree.session.listing import list_session_folders
from contextree.session.tree import SessionTree
from core_helpers import user


def _session(path: Path, text: str, mtime: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    SessionTree.open(path, cwd="/work").append_message(user(text))
    os.utime(path, (mtime, mtime))
    return path


def test_the_newest_of_several_folders_and_the_total(tmp_path: Path) -> None:
    ours, pis, missing = tmp_path / "ours", tmp_path / "pi", tmp_path / "missing"
    _session(ours / "a.jsonl", "first", 1_000)
    _session(pis / "b.jsonl", "second", 3_000)
    _session(ours / "c.jsonl", "third", 2_000)

    listing = list_session_folders([ours, pis, missing], limit=2)

    assert listing.folders == [ours, pis, missing]
    assert listing.total == 3
    assert [s.first_message for s in listing.sessions] == ["second", "third"]
    assert not listing.nested
    assert len(list_session_folders([ours, pis], limit=0).sessions) == 3


def test_nested_looks_one_level_down(tmp_path: Path) -> None:
    _session(tmp_path / "--work--" / "a.jsonl", "inside", 1_000)
    assert list_session_folders([tmp_path]).total == 0
    nested = list_session_folders([tmp_path], nested=True)
    assert (nested.total, nested.nested) == (1, True)
    assert nested.sessions[0].first_message == "inside"
