"""Format migrations v1 -> v2 -> v3 (§1.8), and when they reach the disk (DESIGN decision 6)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from contextree.session import SessionTree
from contextree.store import Record, migrate, parse_session
from core_helpers import Chain, assistant, header, jsonl, read_json_lines, user

HEX8 = re.compile(r"^[0-9a-f]{8}$")


def _v1_file() -> bytes:
    return jsonl(
        header(version=None, provider="anthropic", modelId="claude", thinkingLevel="off"),
        {"type": "message", "timestamp": "t1", "message": user("one")},  # file index 1
        {"type": "message", "timestamp": "t2", "message": assistant("two")},  # 2
        {"type": "model_change", "timestamp": "t3", "provider": "openai", "modelId": "gpt"},  # 3
        {"type": "message", "timestamp": "t4", "message": user("three")},  # 4
        {
            "type": "compaction",
            "timestamp": "t5",
            "summary": "s1",
            "firstKeptEntryIndex": 2,
            "tokensBefore": 10,
        },  # 5
        {
            "type": "compaction",
            "timestamp": "t6",
            "summary": "s2",
            "firstKeptEntryIndex": 0,
            "tokensBefore": 20,
        },  # 6: points at the header
        {
            "type": "compaction",
            "timestamp": "t7",
            "summary": "s3",
            "firstKeptEntryIndex": 99,
            "tokensBefore": 30,
        },  # 7: out of range
    )


def _entries(data: bytes) -> list[dict[str, Any]]:
    parsed = parse_session(data, "v1.jsonl")
    assert migrate(parsed)
    return [item.entry for item in parsed.items if isinstance(item, Record)]


def test_v1_gets_fresh_hex_ids_and_a_linear_chain() -> None:
    parsed = parse_session(_v1_file(), "v1.jsonl")
    assert migrate(parsed)
    assert parsed.version == 3
    assert parsed.header["version"] == 3
    assert parsed.report.migrated_from == 1
    entries = [item.entry for item in parsed.items if isinstance(item, Record)]
    ids = [e["id"] for e in entries]
    assert all(HEX8.match(i) for i in ids)
    assert len(set(ids)) == len(ids)
    assert [e["parentId"] for e in entries] == [None, *ids[:-1]]
    # The records' envelopes follow the entries.
    records = [item for item in parsed.items if isinstance(item, Record)]
    assert [(r.id, r.parent_id) for r in records] == [(e["id"], e["parentId"]) for e in entries]
    # Legacy keys are not migrated.
    assert parsed.header["provider"] == "anthropic"
    assert entries[2] == {
        "type": "model_change",
        "timestamp": "t3",
        "provider": "openai",
        "modelId": "gpt",
        "id": ids[2],
        "parentId": ids[1],
    }


def test_v1_first_kept_index_counts_the_header_as_zero() -> None:
    entries = _entries(_v1_file())
    compactions = [e for e in entries if e["type"] == "compaction"]
    # Index 2 in the file array (header at 0) is the second entry, the assistant.
    assert compactions[0]["firstKeptEntryId"] == entries[1]["id"]
    assert entries[1]["message"]["role"] == "assistant"
    # The header and out-of-range targets get no id; the index key is dropped in every case.
    assert "firstKeptEntryId" not in compactions[1]
    assert "firstKeptEntryId" not in compactions[2]
    assert all("firstKeptEntryIndex" not in c for c in compactions)


def test_v2_hook_message_becomes_custom_and_nothing_else_changes() -> None:
    chain = Chain()
    chain.msg(user("a"))
    chain.msg({"role": "hookMessage", "customType": "x", "content": "hi", "display": True})
    chain.msg(assistant("b"))
    data = jsonl(header(version=2), *chain.entries)
    parsed = parse_session(data, "v2.jsonl")
    assert migrate(parsed)
    records = [item for item in parsed.items if isinstance(item, Record)]
    assert records[1].entry["message"]["role"] == "custom"
    assert records[1].entry["message"]["content"] == "hi"
    # Entries that already carry ids keep them, and untouched lines keep their bytes.
    assert [r.id for r in records] == chain.ids()
    assert [r.entry["parentId"] for r in records] == [None, "e001", "e002"]
    lines = data.splitlines()
    assert records[0].to_line() == lines[1]
    assert records[2].to_line() == lines[3]
    assert records[1].raw is None  # changed: will be encoded again
    assert parsed.header["version"] == 3


def test_migrating_a_v3_session_changes_nothing() -> None:
    chain = Chain()
    chain.msg({"role": "hookMessage", "content": "stays: v3 files are not migrated"})
    parsed = parse_session(jsonl(header(), *chain.entries), "v3.jsonl")
    assert not migrate(parsed)
    assert parsed.report.migrated_from is None
    assert parsed.items[0].entry == chain.entries[0]  # type: ignore[union-attr]


def test_migration_is_idempotent() -> None:
    parsed = parse_session(_v1_file(), "v1.jsonl")
    assert migrate(parsed)
    before = [dict(item.entry) for item in parsed.items if isinstance(item, Record)]
    assert not migrate(parsed)
    after = [item.entry for item in parsed.items if isinstance(item, Record)]
    assert after == before


def test_a_migrated_session_reparsed_from_our_output_is_stable() -> None:
    tree = SessionTree.in_memory(_v1_file())
    tree.flush()
    data = tree.store.getvalue()  # type: ignore[attr-defined]
    again = SessionTree.in_memory(data)
    assert not again.needs_rewrite
    assert again.get_entries() == tree.get_entries()


# --- writing migrations: only by an atomic rewrite on the next write ---------------------------


def test_open_does_not_write_the_migration(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    data = _v1_file()
    path.write_bytes(data)
    tree = SessionTree.open(path)
    assert tree.needs_rewrite
    assert tree.report.migrated_from == 1
    assert [e["type"] for e in tree.get_entries()][:2] == ["message", "message"]
    tree.build_session_context()
    tree.get_tree()
    assert path.read_bytes() == data


def test_the_next_append_rewrites_the_whole_file_as_v3(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    path.write_bytes(_v1_file())
    inode = path.stat().st_ino
    tree = SessionTree.open(path)
    migrated = [dict(e) for e in tree.get_entries()]
    new_id = tree.append_message(user("after"))
    assert path.stat().st_ino != inode  # a rename over the file, not an in-place edit
    lines = read_json_lines(path)
    assert lines[0]["version"] == 3
    assert lines[0]["id"] == "sess-1"
    assert lines[1:-1] == migrated
    assert lines[-1]["id"] == new_id
    assert lines[-1]["parentId"] == migrated[-1]["id"]
    assert all("firstKeptEntryIndex" not in line for line in lines)
    assert not tree.needs_rewrite
    reopened = SessionTree.open(path)
    assert not reopened.needs_rewrite
    assert reopened.report.migrated_from is None
    assert reopened.get_entries() == lines[1:]


def test_a_second_append_after_the_migration_is_a_plain_append(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    path.write_bytes(_v1_file())
    tree = SessionTree.open(path)
    tree.append_message(user("first"))
    inode, before = path.stat().st_ino, path.read_bytes()
    tree.append_message(user("second"))
    assert path.stat().st_ino == inode
    after = path.read_bytes()
    assert after.startswith(before)
    assert json.loads(after[len(before) :])["message"] == user("second")


def test_flush_writes_a_pending_migration_and_is_a_no_op_otherwise(tmp_path: Path) -> None:
    path = tmp_path / "v2.jsonl"
    chain = Chain()
    chain.msg({"role": "hookMessage", "customType": "x", "content": "c", "display": False})
    path.write_bytes(jsonl(header(version=2), *chain.entries))
    tree = SessionTree.open(path)
    tree.flush()
    lines = read_json_lines(path)
    assert lines[0]["version"] == 3
    assert lines[1]["message"]["role"] == "custom"
    inode, data = path.stat().st_ino, path.read_bytes()
    tree.flush()
    assert (path.stat().st_ino, path.read_bytes()) == (inode, data)
