"""The scope a query searches is kept beside the index for the session's bytes as they are:
read back while they are unchanged, found again after an append, a rewrite or damage, per leaf,
with what loading the session reported; a looping path is refused either way."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from contextree.errors import ParentCycleError
from contextree.recall import folded_entry_ids, index_path, recall
from contextree.session.tree import SessionTree
from contextree.settings.load import Settings
from recall.recall_session import PORT, compacted_file, entry_id_holding


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(recall_index_dir=str(tmp_path / "cache"))


def _pi_line(entry_id: str, parent: str | None, text: str) -> bytes:
    entry = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": text, "timestamp": 0},
    }
    return (json.dumps(entry) + "\n").encode()


def test_unchanged_bytes_read_the_scope_back(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "s.jsonl"
    tree = compacted_file(path)
    first = recall(tree, PORT, settings=settings)
    assert not first.scope_cached and first.hits
    again = recall(SessionTree.open(path), PORT, settings=settings)
    assert again.scope_cached
    assert again.hits == first.hits and again.searched == first.searched
    assert again.searched == len(folded_entry_ids(SessionTree.open(path)))


def test_an_append_by_pi_finds_the_scope_again(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "s.jsonl"
    tree = compacted_file(path)
    recall(tree, PORT, settings=settings, all_branches=True)
    # pi appends a branch off the folded part (and knows nothing of the index).
    with path.open("ab") as file:
        file.write(_pi_line("abcd0001", tree.get_branch()[0]["id"], "pi wrote zyxwv_42"))
    after = recall(
        SessionTree.open(path),
        "zyxwv_42",
        leaf_id=tree.leaf_id,
        all_branches=True,
        settings=settings,
    )
    assert not after.scope_cached
    assert [hit.entry_id for hit in after.hits] == ["abcd0001"]
    cached = recall(
        SessionTree.open(path),
        "zyxwv_42",
        leaf_id=tree.leaf_id,
        all_branches=True,
        settings=settings,
    )
    assert cached.scope_cached and cached.hits == after.hits


def test_each_leaf_and_mode_has_its_own_scope(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "s.jsonl"
    tree = compacted_file(path)
    early = entry_id_holding(tree, PORT)
    runs = [
        {"leaf_id": None, "all_branches": False},
        {"leaf_id": None, "all_branches": True},
        {"leaf_id": early, "all_branches": False},
    ]
    found = [recall(SessionTree.open(path), PORT, settings=settings, **run) for run in runs]
    kept = [recall(SessionTree.open(path), PORT, settings=settings, **run) for run in runs]
    assert all(result.scope_cached for result in kept)
    assert [r.searched for r in kept] == [r.searched for r in found]
    assert found[2].searched == 0  # nothing is folded before the compaction at that leaf


def test_a_damaged_scope_is_found_again(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "s.jsonl"
    first = recall(compacted_file(path), PORT, settings=settings)
    cache = index_path(path, Path(str(settings.recall_index_dir)))
    with sqlite3.connect(cache) as conn:
        assert conn.execute("UPDATE ct_recall_scope SET scope = x'00ff'").rowcount == 1
    again = recall(SessionTree.open(path), PORT, settings=settings)
    assert not again.scope_cached and again.hits == first.hits
    assert recall(SessionTree.open(path), PORT, settings=settings).scope_cached


def test_load_warnings_are_kept_with_the_scope(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "s.jsonl"
    compacted_file(path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + b"{not json\n" + b"".join(lines[1:]))
    first = recall(SessionTree.open(path), PORT, settings=settings)
    again = recall(SessionTree.open(path), PORT, settings=settings)
    assert again.scope_cached
    assert first.load_warnings == again.load_warnings
    assert any(":2: skipped" in line for line in again.load_warnings)


def test_a_looping_path_is_refused(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "s.jsonl"
    tree = compacted_file(path)
    with path.open("ab") as file:
        file.write(_pi_line("a0000000", "b0000000", "in a loop"))
        file.write(_pi_line("b0000000", "a0000000", "also"))
    with pytest.raises(ParentCycleError):
        recall(SessionTree.open(path), PORT, settings=settings)
    # A leaf off the loop is searched, and its kept scope is no way around the check.
    assert recall(SessionTree.open(path), PORT, leaf_id=tree.leaf_id, settings=settings).hits
    with pytest.raises(ParentCycleError):
        recall(SessionTree.open(path), PORT, settings=settings)
