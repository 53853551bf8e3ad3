"""``SessionTree``: appends, leaf moves, paths, the tree view, round trips, concurrent writers."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from contextree.errors import EntryNotFoundError, TreeError
from contextree.session import SessionTree
from contextree.store import JsonlFileStore, MemoryStore
from core_helpers import (
    BEFORE_COMPACTION,
    LARGE_SESSION,
    Chain,
    assistant,
    counter_clock,
    counter_ids,
    header,
    iso,
    jsonl,
    read_json_lines,
    user,
    walk,
)

HEX8 = re.compile(r"^[0-9a-f]{8}$")
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
BASE = ["type", "id", "parentId", "timestamp"]


def _file_tree(path: Path) -> SessionTree:
    """A file-backed tree with counter ids and timestamps."""
    return SessionTree(JsonlFileStore(path), cwd="/work", now=counter_clock(), new_id=counter_ids())


def _write(path: Path, *entries: dict[str, Any], version: int = 3) -> None:
    path.write_bytes(jsonl(header(version=version), *entries))


# --- appends ------------------------------------------------------------------------------------


def test_every_append_chains_parent_id_and_advances_the_leaf(tmp_path: Path) -> None:
    tree = SessionTree.open(tmp_path / "s.jsonl", cwd="/work")
    assert tree.get_leaf_entry() is None
    appends: list[Callable[[], str]] = [
        lambda: tree.append_message(user("hi")),
        lambda: tree.append_thinking_level_change("high"),
        lambda: tree.append_model_change("openai", "gpt-4o"),
        lambda: tree.append_message(assistant("yo")),
        lambda: tree.append_custom("ext.state", {"n": 1}),
        lambda: tree.append_custom_message("ext.note", "note", True),
        lambda: tree.append_label(tree.get_entries()[0]["id"], "start"),
        lambda: tree.append_session_info("my session"),
        lambda: tree.append_compaction("sum", tree.get_entries()[3]["id"], 123),
        lambda: tree.branch_with_summary(tree.leaf_id, "branch summary"),
    ]
    previous: str | None = None
    for append in appends:
        new_id = append()
        assert HEX8.match(new_id)
        assert tree.leaf_id == new_id
        entry = tree.get_entry(new_id)
        assert entry is not None
        assert entry["parentId"] == previous
        assert ISO.match(entry["timestamp"])
        previous = new_id
    on_disk = read_json_lines(tmp_path / "s.jsonl")
    assert on_disk[0]["type"] == "session"
    assert on_disk[1:] == tree.get_entries()
    assert len({e["id"] for e in on_disk[1:]}) == len(appends)


def _keys_on_disk(tmp_path: Path, build: Any) -> list[list[str]]:
    path = tmp_path / "keys.jsonl"
    tree = _file_tree(path)
    build(tree)
    return [list(line) for line in read_json_lines(path)[1:]]


def test_written_key_orders_follow_pi(tmp_path: Path) -> None:
    def build(tree: SessionTree) -> None:
        first = tree.append_message(user())
        tree.append_thinking_level_change("low")
        tree.append_model_change("openai", "gpt")
        tree.append_compaction("s", first, 10, {"readFiles": [], "modifiedFiles": []})
        tree.append_compaction("s", first, 10, None, True, short_summary="short", preserve_data={})
        tree.append_custom("kind", {"x": 1})
        tree.append_custom("kind")
        tree.append_custom_message("kind", [{"type": "text", "text": "t"}], False, {"d": 1})
        tree.append_custom_message("kind", "t")
        tree.append_label(first, "set")
        tree.append_label(first, None)
        tree.append_session_info("  name  ")
        tree.append_session_info("   ")
        tree.branch_with_summary(first, "bs", {"readFiles": []}, False)

    assert _keys_on_disk(tmp_path, build) == [
        [*BASE, "message"],
        [*BASE, "thinkingLevel"],
        [*BASE, "provider", "modelId"],
        [
            *BASE,
            "summary",
            "firstKeptEntryId",
            "tokensBefore",
            "details",
            "fromHook",
            "fromExtension",
        ],
        [
            *BASE,
            "summary",
            "shortSummary",
            "firstKeptEntryId",
            "tokensBefore",
            "fromHook",
            "fromExtension",
            "preserveData",
        ],
        ["type", "customType", "data", "id", "parentId", "timestamp"],
        ["type", "customType", "id", "parentId", "timestamp"],
        ["type", "customType", "content", "display", "details", "id", "parentId", "timestamp"],
        ["type", "customType", "content", "display", "id", "parentId", "timestamp"],
        [*BASE, "targetId", "label"],
        [*BASE, "targetId"],  # clearing a label omits the key
        [*BASE, "name"],
        [*BASE],  # an empty name clears: no key
        [*BASE, "fromId", "summary", "details", "fromHook", "fromExtension"],
    ]


def test_flags_values_are_written_explicitly(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    tree = _file_tree(path)
    first = tree.append_message(user())
    tree.append_compaction("pi", first, 1)
    tree.append_compaction("hook", first, 1, None, True)
    tree.append_session_info("  trimmed ")
    lines = read_json_lines(path)
    assert (lines[2]["fromHook"], lines[2]["fromExtension"]) == (False, False)
    assert (lines[3]["fromHook"], lines[3]["fromExtension"]) == (True, True)
    assert lines[4]["name"] == "trimmed"


def test_label_of_an_unknown_entry_raises_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    tree = _file_tree(path)
    tree.append_message(user())
    before = path.read_bytes()
    with pytest.raises(EntryNotFoundError, match="Entry nope not found"):
        tree.append_label("nope", "x")
    assert path.read_bytes() == before


def test_append_entry_rejects_duplicates_and_missing_ids() -> None:
    tree = SessionTree.in_memory(cwd="/w")
    entry_id = tree.append_message(user())
    with pytest.raises(TreeError):
        tree.append_entry({"type": "custom", "id": entry_id, "parentId": None})
    with pytest.raises(TreeError):
        tree.append_entry({"type": "custom", "parentId": None})
    with pytest.raises(TypeError):
        tree.append_message({"content": "no role"})


# --- moving the leaf ----------------------------------------------------------------------------


def test_branch_moves_the_leaf_writes_nothing_and_new_appends_become_siblings(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    tree = _file_tree(path)
    a = tree.append_message(user("a"))
    b = tree.append_message(assistant("b"))
    before = path.read_bytes()
    tree.branch(a)
    assert tree.leaf_id == a
    assert path.read_bytes() == before
    c = tree.append_message(assistant("c"))
    assert tree.get_entry(c)["parentId"] == a  # type: ignore[index]
    assert [e["id"] for e in tree.get_children(a)] == [b, c]
    with pytest.raises(EntryNotFoundError):
        tree.branch("missing")
    assert tree.leaf_id == c


def test_reset_leaf_makes_the_next_append_a_new_root() -> None:
    tree = SessionTree.in_memory(cwd="/w")
    tree.append_message(user("a"))
    tree.reset_leaf()
    assert tree.leaf_id is None
    assert tree.get_branch() == []
    assert tree.build_session_context().messages == []
    root = tree.append_message(user("b"))
    assert tree.get_entry(root)["parentId"] is None  # type: ignore[index]
    assert len(tree.get_children(None)) == 2


def test_branch_with_summary_at_the_root_and_at_an_entry() -> None:
    tree = SessionTree.in_memory(cwd="/w")
    a = tree.append_message(user("a"))
    tree.append_message(assistant("b"))
    at_root = tree.branch_with_summary(None, "from root")
    entry = tree.get_entry(at_root)
    assert entry is not None
    assert (entry["parentId"], entry["fromId"], tree.leaf_id) == (None, "root", at_root)
    assert entry["summary"] == "from root"
    at_a = tree.branch_with_summary(a, "from a", {"readFiles": ["x"]}, True)
    entry = tree.get_entry(at_a)
    assert entry is not None
    assert (entry["parentId"], entry["fromId"], tree.leaf_id) == (a, a, at_a)
    assert entry["details"] == {"readFiles": ["x"]}
    assert entry["fromExtension"] is True


def test_branch_with_summary_to_an_unknown_entry_raises_and_changes_nothing() -> None:
    tree = SessionTree.in_memory(cwd="/w")
    tree.append_message(user("a"))
    leaf, count = tree.leaf_id, len(tree)
    with pytest.raises(EntryNotFoundError):
        tree.branch_with_summary("missing", "s")
    assert (tree.leaf_id, len(tree)) == (leaf, count)


# --- paths, cycles and the tree view ------------------------------------------------------------


def test_get_branch_is_root_first_and_follows_from_id() -> None:
    tree = SessionTree.in_memory(cwd="/w")
    a = tree.append_message(user("a"))
    b = tree.append_message(assistant("b"))
    c = tree.append_message(user("c"))
    tree.branch(a)
    d = tree.append_message(assistant("d"))
    assert [e["id"] for e in tree.get_branch()] == [a, d]
    assert [e["id"] for e in tree.get_branch(c)] == [a, b, c]
    with pytest.raises(EntryNotFoundError):
        tree.get_branch("missing")


def _cyclic_session() -> bytes:
    return jsonl(
        header(),
        {
            "type": "message",
            "id": "r",
            "parentId": None,
            "timestamp": iso(1),
            "message": user("root"),
        },
        {
            "type": "message",
            "id": "c",
            "parentId": "r",
            "timestamp": iso(2),
            "message": assistant("child"),
        },
        {
            "type": "message",
            "id": "s",
            "parentId": "s",
            "timestamp": iso(3),
            "message": user("self"),
        },
        {
            "type": "message",
            "id": "b",
            "parentId": "a",
            "timestamp": iso(4),
            "message": assistant("b"),
        },
        {"type": "message", "id": "a", "parentId": "b", "timestamp": iso(5), "message": user("a")},
    )


def test_get_branch_terminates_on_cycles_and_self_parents() -> None:
    tree = SessionTree.in_memory(_cyclic_session())
    assert tree.leaf_id == "a"  # the last line, even inside a cycle
    assert [e["id"] for e in tree.get_branch("a")] == ["b", "a"]
    assert [e["id"] for e in tree.get_branch("b")] == ["a", "b"]
    assert [e["id"] for e in tree.get_branch("s")] == ["s"]
    assert [e["id"] for e in tree.get_branch("c")] == ["r", "c"]
    context = tree.build_session_context()
    assert [m["content"][0]["text"] for m in context.messages] == ["b", "a"]


def test_get_tree_shows_every_entry_once_even_with_cycles() -> None:
    tree = SessionTree.in_memory(_cyclic_session())
    nodes = tree.get_tree()
    ids = [node.entry["id"] for node in walk(nodes)]
    assert sorted(ids) == ["a", "b", "c", "r", "s"]
    roots = [node.entry["id"] for node in nodes]
    assert roots[:2] == ["r", "s"]  # parentId null and parentId == own id are roots
    assert [child.entry["id"] for child in nodes[0].children] == ["c"]


def test_get_tree_orders_children_by_timestamp_and_resolves_labels() -> None:
    stamps = iter([iso(n) for n in (0, 10, 20, 30, 15, 40, 41, 42, 43, 44, 45)])  # 0: header
    tree = SessionTree(MemoryStore(), cwd="/w", now=lambda: next(stamps))
    root = tree.append_message(user("root"))  # t10
    late = tree.append_message(assistant("late"))  # t20
    tree.append_message(user("deep"))  # t30
    tree.branch(root)
    early = tree.append_message(assistant("early"))  # t15: older than "late"
    tree.append_label(late, "first")  # t40
    tree.append_label(late, "second")  # t41: the last label wins
    tree.append_label(early, "gone")  # t42
    tree.append_label(early, None)  # t43: cleared by omission
    tree.append_label(root, "r")  # t44
    tree.append_label(root, "")  # t45: cleared by an empty label
    nodes = tree.get_tree()
    assert len(nodes) == 1
    top = nodes[0]
    assert top.entry["id"] == root
    assert top.label is None
    assert [child.entry["id"] for child in top.children] == [early, late]
    assert [child.label for child in top.children] == [None, "second"]
    assert tree.labels() == {late: "second"}
    assert tree.get_label(late) == "second"
    assert tree.get_label(early) is None
    # Labels are not part of the LLM context.
    assert all(m["role"] != "label" for m in tree.build_session_context().messages)


def test_orphans_become_roots_and_are_reported() -> None:
    chain = Chain()
    chain.msg(user("a"))
    chain.msg(assistant("b"))
    orphan = chain.msg(user("orphan"), parent="gone")
    tree = SessionTree.in_memory(jsonl(header(), *chain.entries))
    assert [n.entry["id"] for n in tree.get_tree()] == ["e001", "e003"]
    assert tree.get_branch(orphan["id"]) == [orphan]
    assert tree.report.orphans == [("e003", 4, "gone")]
    assert not tree.report.clean
    assert any("missing parent 'gone'" in m for m in tree.report.messages())


def test_duplicate_ids_are_reported_and_the_last_wins() -> None:
    first = {
        "type": "message",
        "id": "d",
        "parentId": None,
        "timestamp": iso(1),
        "message": user("first"),
    }
    other = {
        "type": "message",
        "id": "o",
        "parentId": "d",
        "timestamp": iso(2),
        "message": assistant("o"),
    }
    second = {
        "type": "message",
        "id": "d",
        "parentId": "o",
        "timestamp": iso(3),
        "message": user("second"),
    }
    tree = SessionTree.in_memory(jsonl(header(), first, other, second))
    assert tree.report.duplicate_ids == {"d": [2, 4]}
    assert tree.get_entry("d") == second
    assert "duplicate id 'd' on lines 2, 4" in " ".join(tree.report.messages())
    assert len(tree) == 3  # both lines are kept


def test_leaf_on_load_is_the_last_entry_in_file_order(tmp_path: Path) -> None:
    # The deepest and the newest entries lose to the last line (pi §1.6).
    chain = Chain()
    root = chain.msg(user("root"))
    chain.msg(assistant("deep 1"))
    chain.msg(user("deep 2"))
    chain.msg(assistant("deep 3"))
    last = chain.msg(assistant("shallow, oldest"), parent=root["id"])
    last["timestamp"] = iso(0)
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(header(), *chain.entries) + b"{torn")
    tree = SessionTree.open(path)
    assert tree.leaf_id == last["id"]
    assert [e["id"] for e in tree.get_branch()] == [root["id"], last["id"]]


# --- round trips ------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", [LARGE_SESSION, BEFORE_COMPACTION], ids=lambda p: p.stem)
def test_fixtures_round_trip_through_a_flush(tmp_path: Path, fixture: Path) -> None:
    path = tmp_path / fixture.name
    shutil.copyfile(fixture, path)
    tree = SessionTree.open(path)
    assert tree.needs_rewrite
    migrated = copy.deepcopy(tree.get_entries())
    head = copy.deepcopy(tree.header)
    tree.flush()
    lines = read_json_lines(path)
    assert len(lines) == len(migrated) + 1
    assert lines[0] == head
    for written, expected in zip(lines[1:], migrated, strict=True):
        assert written == expected
    reopened = SessionTree.open(path)
    assert not reopened.needs_rewrite
    assert reopened.get_entries() == migrated
    assert reopened.leaf_id == migrated[-1]["id"]


def _mixed_v3_file(tmp_path: Path) -> Path:
    path = tmp_path / "ours.jsonl"
    tree = SessionTree.open(path, cwd="/work")
    first = tree.append_message(user("héllo ✓"))
    tree.append_thinking_level_change("high")
    tree.append_message(assistant("x", usage={"input": 1, "output": 2, "cacheRead": 0.5}))
    tree.append_compaction("s", first, 5, {"readFiles": ["a"], "modifiedFiles": []})
    tree.append_custom("k", {"nested": [1, {"z": None}]})
    tree.append_label(first, "L")
    return path


def test_a_v3_file_we_wrote_round_trips_byte_for_byte(tmp_path: Path) -> None:
    path = _mixed_v3_file(tmp_path)
    data = path.read_bytes()
    tree = SessionTree.open(path)
    assert not tree.needs_rewrite
    tree.flush()
    assert path.read_bytes() == data
    tree.rewrite_entries([])  # a full rewrite of unchanged entries
    assert path.read_bytes() == data


def test_unchanged_lines_keep_their_exact_bytes_through_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "pi.jsonl"
    # Spacing and key order pi would never write: still kept verbatim when unchanged.
    odd = (
        b'{"parentId": "e001", "type": "message", "id": "e002", "timestamp": "t",  '
        b'"message": {"role": "assistant", "content": [], "extra": 1.50}}'
    )
    chain = Chain()
    first = chain.msg(user("a"))
    third = {
        "type": "message",
        "id": "e003",
        "parentId": "e002",
        "timestamp": "t",
        "message": user("c"),
    }
    path.write_bytes(jsonl(header(), first) + odd + b"\n" + jsonl(third))
    tree = SessionTree.open(path)
    tree.rewrite_entries([dict(third, message=user("changed"))])
    lines = path.read_bytes().splitlines()
    assert lines[2] == odd
    assert json.loads(lines[3])["message"] == user("changed")


def test_unparseable_lines_stay_verbatim_in_place_after_a_rewrite(tmp_path: Path) -> None:
    chain = Chain()
    a = chain.msg(user("a"))
    b = chain.msg(assistant("b"))
    c = chain.msg(user("c"))
    path = tmp_path / "s.jsonl"
    lines = [
        jsonl(header()),
        jsonl(a),
        b"{this is not json\n",
        jsonl(b),
        b'{"type":"message"}\n',  # no id in a v3 file
        jsonl(c),
        b'{"type":"message","id":"torn"',  # an interrupted write, no newline
    ]
    path.write_bytes(b"".join(lines))
    tree = SessionTree.open(path)
    assert [bad.line for bad in tree.report.bad_lines] == [3, 5, 7]
    changed = dict(b, message=assistant("B!"))
    tree.rewrite_entries([changed])
    written = path.read_bytes().split(b"\n")
    assert written[2] == b"{this is not json"
    assert written[4] == b'{"type":"message"}'
    # Still unfinished: a writer that takes no lock may have been writing it (issue 15 item 1).
    assert written[6] == b'{"type":"message","id":"torn"' and len(written) == 7
    assert json.loads(written[3]) == changed
    assert written[5] == lines[5].rstrip(b"\n")
    # And an append after that keeps them too, each on its own line.
    new_id = tree.append_message(user("d"))
    final = path.read_bytes().split(b"\n")
    assert final[2] == b"{this is not json"
    assert final[6] == b'{"type":"message","id":"torn"'
    assert json.loads(final[7])["id"] == new_id


def test_an_append_after_a_torn_line_starts_a_new_line(tmp_path: Path) -> None:
    chain = Chain()
    chain.msg(user("a"))
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(header(), *chain.entries) + b'{"type":"mess')
    tree = SessionTree.open(path)
    assert tree.report.partial_last_line
    new_id = tree.append_message(user("b"))
    lines = path.read_bytes().split(b"\n")
    assert lines[2] == b'{"type":"mess'
    assert json.loads(lines[3])["id"] == new_id
    assert json.loads(lines[3])["parentId"] == "e001"


# --- concurrent writers -------------------------------------------------------------------------


def _ids_on_disk(path: Path) -> list[str]:
    return [line["id"] for line in read_json_lines(path)[1:]]


@pytest.mark.parametrize("exists", [True, False], ids=["existing-file", "new-file"])
def test_two_trees_appending_alternately_lose_nothing(tmp_path: Path, exists: bool) -> None:
    path = tmp_path / "s.jsonl"
    if exists:
        seed = SessionTree.open(path, cwd="/work")
        seed.append_message(user("seed"))
    one = SessionTree.open(path, cwd="/work")
    two = SessionTree.open(path, cwd="/work")
    written: list[str] = []
    for i in range(6):
        a = one.append_message(user(f"one {i}"))
        written.append(a)
        if i:
            # What the other tree wrote in between is known after our write.
            assert one.get_entry(written[-2]) is not None
        b = two.append_message(assistant(f"two {i}"))
        written.append(b)
        assert two.get_entry(a) is not None
        assert two.get_entry(b)["parentId"] == (  # type: ignore[index]
            written[-3] if i else (one.get_entries()[0]["id"] if exists else None)
        )
        assert one.leaf_id == a and two.leaf_id == b  # each keeps its own leaf
    on_disk = _ids_on_disk(path)
    assert on_disk[-12:] == written
    assert len(on_disk) == 12 + int(exists)
    assert read_json_lines(path)[0]["type"] == "session"
    assert sum(1 for line in read_json_lines(path) if line["type"] == "session") == 1
    assert two.session_id == one.session_id == read_json_lines(path)[0]["id"]
    assert [e["id"] for e in two.get_entries()] == on_disk
    reopened = SessionTree.open(path)
    assert reopened.report.clean


def _first_and_second(path: Path) -> str:
    """Start a session file at ``path`` with user "first" and assistant "second"; the id of
    "first"."""
    base = SessionTree.open(path, cwd="/work")
    first = base.append_message(user("first"))
    base.append_message(assistant("second"))
    return first


def test_a_rewrite_by_one_tree_keeps_lines_the_other_appended(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    first = _first_and_second(path)
    appender = SessionTree.open(path)
    rewriter = SessionTree.open(path)
    x = appender.append_message(user("x"))
    changed = dict(rewriter.get_entry(first) or {}, message=user("FIRST"))
    rewriter.rewrite_entries([changed])  # takes in x before rewriting
    lines = read_json_lines(path)
    assert [line.get("id") for line in lines[1:]] == [first, lines[2]["id"], x]
    assert lines[1] == changed
    y = appender.append_message(user("y"))  # sees the replacement and reloads first
    lines = read_json_lines(path)
    assert [line["id"] for line in lines[1:]][-2:] == [x, y]
    assert lines[1] == changed
    assert appender.get_entry(first) == changed
    assert appender.report.clean
    assert rewriter.append_message(user("z"))
    assert len(read_json_lines(path)) == 1 + 5


def test_a_rewrite_before_the_other_trees_first_write_is_noticed(tmp_path: Path) -> None:
    # The other tree has only read the file; the rewrite makes it larger (pruning keeps the
    # original output), so a size comparison alone would read garbage as "new lines".
    path = tmp_path / "s.jsonl"
    first = _first_and_second(path)
    stale = SessionTree.open(path)
    rewriter = SessionTree.open(path)
    grown = dict(rewriter.get_entry(first) or {}, message=user("F" * 500))
    rewriter.rewrite_entries([grown])
    new_id = stale.append_message(user("third"))
    assert stale.report.bad_lines == []
    assert stale.get_entry(first) == grown
    stale.rewrite_entries([dict(stale.get_entry(new_id) or {}, message=user("THIRD"))])
    lines = read_json_lines(path)
    assert lines[1] == grown
    assert [line["message"]["content"][0]["text"] for line in lines[1:]] == [
        "F" * 500,
        "second",
        "THIRD",
    ]
    assert SessionTree.open(path).report.clean


def test_four_processes_appending_lose_no_line(tmp_path: Path) -> None:
    path = tmp_path / "shared" / "s.jsonl"
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(repo / "src"), str(repo / "tests")]))
    script = (
        "import sys, core_helpers; core_helpers.append_many(sys.argv[1], int(sys.argv[2]), 200)"
    )
    workers = [
        subprocess.Popen([sys.executable, "-c", script, str(path), str(k)], env=env)
        for k in range(4)
    ]
    for worker in workers:
        assert worker.wait(timeout=120) == 0
    raw_lines = path.read_bytes().split(b"\n")
    assert raw_lines[-1] == b""
    objects = [json.loads(line) for line in raw_lines[:-1]]  # every line parses: none torn
    assert [o["type"] for o in objects].count("session") == 1
    assert objects[0]["type"] == "session"
    entries = objects[1:]
    assert len(entries) == 800
    texts = [e["message"]["content"][0]["text"] for e in entries]
    for k in range(4):
        assert [t for t in texts if t.startswith(f"w{k}-")] == [f"w{k}-{i}" for i in range(200)]
    tree = SessionTree.open(path)
    assert tree.report.clean
    assert len(tree) == 800


def test_check_reports_an_entry_whose_body_cannot_be_decoded(tmp_path: Path) -> None:
    from contextree.session.check import check_session

    path = tmp_path / "s.jsonl"
    path.write_bytes(
        b'{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/"}\n'
        b'{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z",'
        b'"message":{"role":"user","content":"too big","n":1e400}}\n'
    )
    report = check_session(SessionTree.open(path))
    assert report.damaged
    assert [f.entry_id for f in report.errors] == ["aaaaaaaa"]
    assert "cannot be decoded" in report.errors[0].message


def test_check_takes_a_last_line_still_being_appended_for_no_damage(tmp_path: Path) -> None:
    from contextree.session.check import check_session

    path = tmp_path / "s.jsonl"
    head = (
        b'{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/"}\n'
        b'{"type":"message","id":"aaaaaaaa","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z",'
        b'"message":{"role":"user","content":"hi","timestamp":1}}\n'
    )
    torn = b'{"type":"message","id":"bbbbbbbb","parentId":"aaaaaaaa"'
    path.write_bytes(head + torn)
    # Read while another process's append is half written: the rest lands after the read.
    tree = SessionTree.open(path)
    with path.open("ab") as out:
        out.write(b',"timestamp":"t","message":{"role":"user","content":"x","timestamp":2}}\n')
    report = check_session(tree)
    assert not report.damaged and not report.warnings
    assert any("being appended" in f.message for f in report.findings)
    # Left like that, with nothing growing, it is the damage it always was.
    path.write_bytes(head + torn)
    stopped = check_session(SessionTree.open(path))
    assert stopped.damaged and "partial last line" in stopped.errors[0].message
