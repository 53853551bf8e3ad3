"""collect_entries_for_branch_summary (pi-behaviour.md §9.1)."""

from __future__ import annotations

import json

import pytest
from branch_builders import assistant, linear, two_branches, user

from contextree.branching import BranchCollection, collect_entries_for_branch_summary
from contextree.errors import EntryNotFoundError
from contextree.session.tree import SessionTree


def _ids(collection: BranchCollection) -> list[str]:
    return [entry["id"] for entry in collection.entries]


def test_no_old_leaf_collects_nothing() -> None:
    tree = SessionTree.in_memory()
    (u1,) = linear(tree, user("hi"))
    assert collect_entries_for_branch_summary(tree, None, u1) == BranchCollection([], None)


def test_target_below_the_old_leaf_collects_nothing_and_the_old_leaf_is_the_ancestor() -> None:
    tree = SessionTree.in_memory()
    u1, a1, u2 = linear(tree, user("one"), assistant("two"), user("three"))
    collection = collect_entries_for_branch_summary(tree, a1, u2)
    assert collection.entries == []
    assert collection.common_ancestor_id == a1
    del u1


def test_target_above_the_old_leaf_collects_the_entries_after_it() -> None:
    tree = SessionTree.in_memory()
    u1, a1, u2, a2 = linear(tree, user("one"), assistant("two"), user("3"), assistant("4"))
    collection = collect_entries_for_branch_summary(tree, a2, a1)
    assert collection.common_ancestor_id == a1
    assert _ids(collection) == [u2, a2]
    del u1


def test_sibling_branch_collects_the_old_branch_down_from_the_common_ancestor() -> None:
    tree = SessionTree.in_memory()
    ids = two_branches(tree)
    collection = collect_entries_for_branch_summary(tree, ids["a2"], ids["a3"])
    assert collection.common_ancestor_id == ids["a1"]
    assert _ids(collection) == [ids["u2"], ids["a2"]]


def test_every_entry_type_is_collected_and_compactions_do_not_stop_the_walk() -> None:
    tree = SessionTree.in_memory()
    u1, a1 = linear(tree, user("one"), assistant("two"))
    u2 = tree.append_message(user("three"))
    compaction = tree.append_compaction("summary so far", u2, 500)
    label = tree.append_label(u2, "checkpoint")
    custom = tree.append_custom("ext.state", {"k": 1})
    model = tree.append_model_change("openai", "gpt-4o")
    a2 = tree.append_message(assistant("four"))
    collection = collect_entries_for_branch_summary(tree, a2, a1)
    assert _ids(collection) == [u2, compaction, label, custom, model, a2]
    del u1


def test_separate_roots_have_no_common_ancestor() -> None:
    tree = SessionTree.in_memory()
    u1, a1 = linear(tree, user("first root"), assistant("ok"))
    tree.reset_leaf()
    (u9,) = linear(tree, user("second root"))
    collection = collect_entries_for_branch_summary(tree, a1, u9)
    assert collection.common_ancestor_id is None
    assert _ids(collection) == [u1, a1]


def _line(entry_id: str, parent: str | None, text: str) -> bytes:
    entry = {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": user(text),
    }
    return json.dumps(entry).encode() + b"\n"


def test_a_parent_cycle_does_not_loop() -> None:
    header = {
        "type": "session",
        "version": 3,
        "id": "s",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/",
    }
    data = (
        json.dumps(header).encode()
        + b"\n"
        + _line("root0001", None, "root")
        + _line("aaaa0001", "bbbb0001", "a")
        + _line("bbbb0001", "aaaa0001", "b")
    )
    tree = SessionTree.in_memory(data)
    collection = collect_entries_for_branch_summary(tree, "bbbb0001", "root0001")
    assert collection.common_ancestor_id is None
    assert _ids(collection) == ["aaaa0001", "bbbb0001"]


def test_unknown_ids_raise() -> None:
    tree = SessionTree.in_memory()
    (u1,) = linear(tree, user("hi"))
    with pytest.raises(EntryNotFoundError):
        collect_entries_for_branch_summary(tree, u1, "deadbeef")
    with pytest.raises(EntryNotFoundError):
        collect_entries_for_branch_summary(tree, "deadbeef", u1)
