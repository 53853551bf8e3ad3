"""Reads that answer from the index without decoding entries: tree nodes, leaves, path ids."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextree.errors import ParentCycleError
from contextree.session import SessionTree
from contextree.session.check import count_types
from contextree.store import Record
from core_helpers import Chain, assistant, header, jsonl, tool_result, user, user_entry


def _branched() -> tuple[Chain, SessionTree]:
    chain = Chain()
    chain.msg(user("root"))
    chain.msg(assistant("a"))
    fork = chain.leaf
    chain.msg(user("left"))
    chain.add("session_info", name="first name")
    chain.msg(user("right"), parent=fork)
    chain.msg(tool_result("c1", "out"))
    chain.add("session_info", name="second name")
    return chain, SessionTree.in_memory(jsonl(header(), *chain.entries))


def _decoded(tree: SessionTree) -> set[str]:
    return {r.id for r in tree.records() if r.is_decoded and r.id is not None}


def test_tree_nodes_know_id_and_type_and_decode_their_entry_on_first_read() -> None:
    chain, tree = _branched()
    roots = tree.get_tree()
    assert _decoded(tree) == set()
    root = roots[0]
    assert (root.id, root.type) == ("e001", "message")
    assert [child.id for child in root.children[0].children] == ["e003", "e005"]
    assert _decoded(tree) == set()
    assert root.entry == chain.entries[0]
    assert _decoded(tree) == {"e001"}
    assert repr(root) == "TreeNode('e001', 'message', 1 children)"


def test_leaves_are_the_tips_of_every_branch_in_file_order() -> None:
    _, tree = _branched()
    assert tree.leaves() == ["e004", "e007"]
    assert _decoded(tree) == set()
    tree.append_message(user("more"))
    assert tree.leaves()[0] == "e004"
    assert tree.leaves()[1] != "e007"
    assert SessionTree.in_memory().leaves() == []


def test_path_ids_come_from_the_index() -> None:
    _, tree = _branched()
    view = tree.get_branch_view()
    assert view.ids() == ["e001", "e002", "e005", "e006", "e007"]
    assert _decoded(tree) == set()


def test_counting_messages_by_role_decodes_no_entry() -> None:
    _, tree = _branched()
    counts = count_types(tree)
    assert counts == {"message:user": 3, "message:assistant": 1, "message:toolResult": 1,
                      "session_info": 2}
    assert _decoded(tree) == set()


def test_message_role_of_odd_shapes_matches_the_decoded_entry() -> None:
    lines = [
        {"type": "message", "id": "a1", "parentId": None, "message": "not an object"},
        {"type": "message", "id": "a2", "parentId": "a1", "message": {"content": "no role"}},
        {"type": "message", "id": "a3", "parentId": "a2", "message": None},
        {"type": "message", "id": "a4", "parentId": "a3"},
        {"type": "message", "id": "a5", "parentId": "a4", "message": {"role": ["odd"]}},
        {"type": "message", "id": "a6", "parentId": "a5", "message": {"role": "user"}},
    ]
    tree = SessionTree.in_memory(jsonl(header(), *lines))
    records = list(tree.records())
    lazy = [record.message_role() for record in records]
    assert not any(record.is_decoded for record in records[1:])
    for record in records:
        message = record.entry.get("message")
        assert record.message_role() == (
            message.get("role") if isinstance(message, dict) else None
        )
    assert lazy == [None, None, None, None, ["odd"], "user"]
    assert isinstance(records[0], Record)


def _torn_session(tmp_path: Path) -> Path:
    """One entry, then a torn last line (an interrupted append)."""
    chain = Chain()
    chain.msg(user("one"))
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(header(), *chain.entries) + b'{"type":"message","id":"tor')
    return path


def test_lines_another_writer_appends_after_a_torn_line_get_their_true_numbers(
    tmp_path: Path,
) -> None:
    path = _torn_session(tmp_path)
    mine = SessionTree.open(path)
    other = SessionTree.open(path)
    other.append_message(user("from the other writer"))
    mine.append_message(user("mine"))  # takes in the other writer's line first
    fresh = SessionTree.open(path)
    assert [(r.id, r.line) for r in mine.records()] == [(r.id, r.line) for r in fresh.records()]
    assert [bad.line for bad in mine.report.bad_lines] == [3]


_OPS = ["append", "append", "branch", "summary", "reset", "foreign", "reparent"]


@given(st.lists(st.tuples(st.sampled_from(_OPS), st.integers(0, 50)), max_size=30))
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_cached_paths_stay_true_through_appends_branching_rewrites_and_other_writers(
    tmp_path: Path, ops: list[tuple[str, int]]
) -> None:
    path = tmp_path / f"{uuid.uuid4().hex}.jsonl"
    mine = SessionTree.open(path, cwd="/w")
    mine.append_message(user("start"))
    other = SessionTree.open(path, cwd="/w")
    for op, n in ops:
        ids = [r.id for r in mine.records() if r.id is not None]
        target = ids[n % len(ids)]
        if op == "append":
            mine.append_message(user(f"m{n}"))
        elif op == "branch":
            mine.branch(target)
        elif op == "summary":
            mine.branch_with_summary(target, "what happened")
        elif op == "reset":
            mine.reset_leaf()
        elif op == "foreign":
            other.append_message(user(f"from another process {n}"))
            mine.append_message(user(f"m{n}"))  # takes the foreign line in
        elif op == "reparent":
            entry = dict(mine.get_entry(ids[-1]) or {})
            entry["parentId"] = target if target != ids[-1] else None
            mine.rewrite_entries([entry])
        if mine.leaf_id is not None:
            assert mine.get_branch() == SessionTree.open(path).get_branch(mine.leaf_id)


def test_the_child_map_follows_appends_that_heal_an_orphan_or_parent_themselves() -> None:
    orphan = {"type": "custom", "id": "orphan01", "parentId": "parent01", "timestamp": "t"}
    tree = SessionTree.in_memory(jsonl(header(), orphan))
    assert tree.leaves() == ["orphan01"]
    tree.append_entry({"type": "custom", "id": "parent01", "parentId": None, "timestamp": "t"})
    assert tree.leaves() == ["orphan01"]
    assert [(n.id, [c.id for c in n.children]) for n in tree.get_tree()] == [
        ("parent01", ["orphan01"])
    ]
    # An entry that is its own parent is not appended at all (pi would hang on the file, issue
    # 15 item 8); the child map stays as it was.
    own_parent = {"type": "custom", "id": "selfself", "parentId": "selfself", "timestamp": "t"}
    with pytest.raises(ParentCycleError, match="selfself"):
        tree.append_entry(own_parent)
    assert tree.leaves() == ["orphan01"]


def test_bytes_another_writer_glues_onto_a_torn_line_are_seen_as_a_fresh_open_sees_them(
    tmp_path: Path,
) -> None:
    path = _torn_session(tmp_path)
    mine = SessionTree.open(path)
    glued = {"type": "message", "id": "glued001", "parentId": "e001", "timestamp": "t"}
    with path.open("ab") as raw:  # as pi appends: no newline to end the torn line first
        raw.write(jsonl(glued))
    mine.append_message(user("mine"))
    fresh = SessionTree.open(path)
    assert not fresh.has_entry("glued001") and not mine.has_entry("glued001")
    assert [(r.id, r.line) for r in mine.records()] == [(r.id, r.line) for r in fresh.records()]
    assert [b.line for b in mine.report.bad_lines] == [b.line for b in fresh.report.bad_lines]


def test_a_rewrite_that_changes_a_parent_updates_the_orphans_it_reports() -> None:
    chain, tree = _branched()
    last = dict(chain.entries[-1])
    tree.rewrite_entries([dict(last, parentId="missing1")])
    assert tree.report.orphans == [("e007", 8, "missing1")]
    tree.rewrite_entries([dict(last, parentId="e006")])
    assert tree.report.orphans == []
    assert tree.get_branch(last["id"])[-2]["id"] == "e006"


def test_after_a_rewrite_the_report_names_the_lines_as_they_now_are() -> None:
    entries = [
        {"type": "custom", "id": "aaaaaaaa", "parentId": None, "timestamp": "t"},
        {"type": "custom", "id": "aaaaaaaa", "parentId": None, "timestamp": "t"},
        {"type": "custom", "id": "cccccccc", "parentId": "zz", "timestamp": "t"},
    ]
    lines = jsonl(header(), *entries).split(b"\n")
    # Blank lines and a bad line between the entries; a rewrite drops the blank ones.
    data = b"\n".join([lines[0], b"", lines[1], b"", b"{bad", lines[2], b"", lines[3]]) + b"\n"
    tree = SessionTree.in_memory(data)
    assert tree.report.duplicate_ids == {"aaaaaaaa": [3, 6]}
    assert tree.report.orphans == [("cccccccc", 8, "zz")]
    tree.rewrite_entries([dict(entries[2], note="edited")])
    fresh = SessionTree.in_memory(tree.store.getvalue())  # type: ignore[attr-defined]
    for report in (tree.report, fresh.report):
        assert report.duplicate_ids == {"aaaaaaaa": [2, 4]}
        assert report.orphans == [("cccccccc", 5, "zz")]
        assert [bad.line for bad in report.bad_lines] == [3]


@pytest.mark.parametrize(("entries", "paused"), [(20, False), (1_200, True)])
def test_a_large_tree_is_built_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch, entries: int, paused: bool
) -> None:
    import gc

    from contextree.session import tree_query

    chain = Chain()
    for n in range(entries):
        chain.msg(user(f"message {n}"))
    tree = SessionTree.in_memory(jsonl(header(), *chain.entries))
    seen: list[bool] = []
    real = tree_query.TreeNode

    def node(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(tree_query, "TreeNode", node)
    roots = tree.get_tree()
    assert len(roots) == 1 and len(seen) == entries
    assert set(seen) == {not paused}
    assert gc.isenabled()
    assert tree.leaves() == [chain.leaf]


def _compacted_file(tmp_path: Path) -> tuple[Chain, Path]:
    chain = Chain()
    for n in range(4):
        chain.msg(user(f"old {n}"))
    fork = chain.leaf
    chain.msg(user("abandoned"))
    chain.msg(user("kept"), parent=fork)
    kept = chain.leaf
    chain.add("compaction", summary="earlier work", firstKeptEntryId=kept, tokensBefore=100)
    chain.msg(user("after"))
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(header(), *chain.entries))
    return chain, path


def test_preload_decodes_the_leafs_context_on_open_and_nothing_else(tmp_path: Path) -> None:
    chain, path = _compacted_file(tmp_path)
    lazy = SessionTree.open(path)
    assert _decoded(lazy) == set()
    tree = SessionTree.open(path, preload=True)
    ids = chain.ids()
    # The first kept entry, the compaction and what follows; not the older path, not the
    # abandoned branch.
    assert _decoded(tree) == {ids[5], ids[6], ids[7]}
    assert list(tree.get_branch()) == list(lazy.get_branch())


def test_preload_of_an_empty_or_uncompacted_session(tmp_path: Path) -> None:
    SessionTree.open(tmp_path / "new.jsonl", preload=True)  # nothing to read
    _, tree = _branched()
    tree.preload()
    assert _decoded(tree) == {"e001", "e002", "e005", "e006", "e007"}


@pytest.mark.parametrize("preload", [True, False])
def test_a_missing_parent_another_writer_appends_lengthens_the_cached_path(
    tmp_path: Path, preload: bool
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(header(), user_entry("b", "a", "two"), user_entry("c", "b", "three")))
    tree = SessionTree.open(path, preload=preload)
    assert [e["id"] for e in tree.get_branch()] == ["b", "c"]
    with path.open("ab") as other_writer:
        other_writer.write(jsonl(user_entry("a", None, "one")))
    assert tree.refresh()
    assert [e["id"] for e in tree.get_branch("c")] == ["a", "b", "c"]
    assert len(tree.build_session_context("c").messages) == 3
