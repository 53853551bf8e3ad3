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
from recall.recall_session import PORT, build, compacted_file, entry_id_holding


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


def test_appends_on_the_leaf_extend_the_kept_scope(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "s.jsonl"
    tree = compacted_file(path)
    first = recall(tree, PORT, settings=settings)
    with path.open("ab") as file:
        file.write(_pi_line("c0000001", tree.leaf_id, "pi wrote more"))
        file.write(_pi_line("c0000002", "c0000001", "and more"))
    after = recall(SessionTree.open(path), PORT, settings=settings)
    # Only the two new lines were read: the tip's scope holds for the new leaf.
    assert after.scope_cached
    assert after.searched == first.searched == len(folded_entry_ids(SessionTree.open(path)))
    # (BM25 scores move a little: the index holds two more documents.)
    assert [h.entry_id for h in after.hits] == [h.entry_id for h in first.hits]
    assert after.load_warnings == first.load_warnings
    # And the extended tip is kept: the next append extends it again.
    with path.open("ab") as file:
        file.write(_pi_line("c0000003", "c0000002", "third"))
    assert recall(SessionTree.open(path), PORT, settings=settings).scope_cached


def _compaction_line(entry_id: str, parent: str, first_kept: str) -> bytes:
    entry = {
        "type": "compaction",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "summary": "a newer summary",
        "firstKeptEntryId": first_kept,
        "tokensBefore": 1000,
    }
    return (json.dumps(entry) + "\n").encode()


def _new_compaction(tree: SessionTree) -> bytes:
    assert tree.leaf_id is not None
    return _compaction_line("d0000001", tree.leaf_id, tree.leaf_id)


def _repeated_id(tree: SessionTree) -> bytes:
    first = _pi_line("c0000009", tree.leaf_id, "once")
    return first + _pi_line("c0000009", tree.leaf_id, "the same id again")


def _other_branch(tree: SessionTree) -> bytes:
    return _pi_line("e0000001", tree.get_branch()[0]["id"], "a new branch")


def _bad_line(tree: SessionTree) -> bytes:
    return b"{not json\n" + _pi_line("f0000001", tree.leaf_id, "after a bad line")


def _missing_parent(tree: SessionTree) -> bytes:
    return _pi_line("f0000002", tree.leaf_id, "fine") + _pi_line("f0000003", "nowhere1", "lost")


@pytest.mark.parametrize(
    "appended", [_new_compaction, _repeated_id, _other_branch, _bad_line, _missing_parent]
)
def test_appends_that_may_change_the_scope_find_it_again(
    tmp_path: Path, settings: Settings, appended: object
) -> None:
    path = tmp_path / "s.jsonl"
    tree = compacted_file(path)
    recall(tree, PORT, settings=settings)
    with path.open("ab") as file:
        file.write(appended(tree))  # type: ignore[operator]
    after = recall(SessionTree.open(path), PORT, settings=settings)
    assert not after.scope_cached
    fresh = SessionTree.open(path)
    assert after.searched == len(folded_entry_ids(fresh))
    assert after.load_warnings == fresh.report.messages()


def test_a_new_compaction_changes_what_is_searched(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "s.jsonl"
    tree = compacted_file(path)
    before = recall(tree, PORT, settings=settings)
    with path.open("ab") as file:
        file.write(_pi_line("c0000001", tree.leaf_id, "pi wrote more"))
        file.write(_new_compaction(SessionTree.open(path)))
    after = recall(SessionTree.open(path), PORT, settings=settings)
    assert not after.scope_cached and after.searched > before.searched


def test_an_id_the_tip_knew_is_not_taken_for_new(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "s.jsonl"
    tree = compacted_file(path)
    leaf = tree.leaf_id
    with path.open("ab") as file:
        file.write(_pi_line("c0000001", leaf, "pi wrote more"))
    assert recall(SessionTree.open(path), PORT, settings=settings).searched
    # The same id again under the old leaf: the last line wins, and loading warns.
    with path.open("ab") as file:
        file.write(_pi_line("c0000001", leaf, "written twice"))
    after = recall(SessionTree.open(path), PORT, settings=settings)
    assert not after.scope_cached
    assert any("duplicate id 'c0000001'" in line for line in after.load_warnings)


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_database_sessions_extend_the_tip_too(
    tmp_path: Path, request: pytest.FixtureRequest, store: str
) -> None:
    if store == "sqlite":
        url = f"sqlite://{tmp_path / 's.db'}#tip"
    else:
        url = f"{request.getfixturevalue('postgres').url}#tip-{tmp_path.name}"
    tree = build(SessionTree.open(url, cwd="/w"))
    first = recall(tree, PORT)
    other = SessionTree.open(url)  # another worker appends through the store
    other.append_message({"role": "user", "content": "row detail plugh_7", "timestamp": 0})
    after = recall(SessionTree.open(url), PORT)
    assert after.scope_cached and after.searched == first.searched
    # In one process: the model's recall tool after each of its own turns.
    tree = SessionTree.open(url)
    recall(tree, PORT)
    tree.append_message({"role": "user", "content": "one more", "timestamp": 0})
    assert recall(tree, PORT).scope_cached


def test_a_line_repeating_the_last_id_is_indexed(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "s.jsonl"
    tree = compacted_file(path)
    with path.open("ab") as file:
        file.write(_pi_line("c0000001", tree.leaf_id, "first words"))
    recall(SessionTree.open(path), "first", settings=settings)
    # pi writes the same id again (the last line wins): its words are searchable, not lost.
    with path.open("ab") as file:
        file.write(_pi_line("c0000001", tree.leaf_id, "second words qwzx_9"))
    found = recall(
        SessionTree.open(path), "qwzx_9", leaf_id=tree.leaf_id, all_branches=True, settings=settings
    )
    assert [hit.entry_id for hit in found.hits] == ["c0000001"]
