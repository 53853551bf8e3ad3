"""Format migrations v1 -> v2 -> v3 (§1.8), and when they reach the disk (DESIGN decision 6)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import contextree
from contextree.entries.ids import derived_entry_id
from contextree.session import SessionTree
from contextree.session.repair import repair_session
from contextree.store import Record, migrate, parse_session
from core_helpers import Chain, assistant, header, jsonl, read_json_lines, user
from pi_fixtures import pi_fixture_or_skip

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


# --- stable v1 ids (issue 11): the same file gives the same ids in every open and process ------


def _ids(data: bytes) -> list[str | None]:
    return [record.id for record in SessionTree.in_memory(data).records()]


_PRINT_IDS = (
    "import json, sys\n"
    "from contextree.session import SessionTree\n"
    "tree = SessionTree.open(sys.argv[1], create=False)\n"
    "print(json.dumps([record.id for record in tree.records()]))\n"
)


def _ids_in_a_new_process(path: Path, hash_seed: str) -> list[str | None]:
    """The ids another Python process gives ``path`` (its own hash seed, nothing shared)."""
    src = str(Path(contextree.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", _PRINT_IDS, str(path)],
        env=env,
        capture_output=True,
        check=True,
        timeout=120,
    )
    ids: list[str | None] = json.loads(done.stdout)
    return ids


def test_v1_ids_are_the_same_in_every_open() -> None:
    data = _v1_file()
    first = _ids(data)
    assert first == _ids(data)
    assert all(isinstance(i, str) and HEX8.match(i) for i in first)
    assert len(set(first)) == len(first)


def test_v1_ids_are_the_same_in_other_processes(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    path.write_bytes(_v1_file())
    here = [record.id for record in SessionTree.open(path).records()]
    assert _ids_in_a_new_process(path, "1") == here
    assert _ids_in_a_new_process(path, "2") == here
    assert path.read_bytes() == _v1_file()  # reading never writes the migration


def test_v1_ids_depend_on_the_session_and_the_line() -> None:
    other_session = _v1_file().replace(b'"id":"sess-1"', b'"id":"sess-2"', 1)
    assert set(_ids(other_session)).isdisjoint(_ids(_v1_file()))
    # Changing one line changes that line's id only.
    changed = _v1_file().replace(b'"three"', b'"three!"')
    before, after = _ids(_v1_file()), _ids(changed)
    differs = [n for n, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert differs == [3]


def test_identical_v1_lines_get_distinct_ids() -> None:
    same = {"type": "message", "timestamp": "t", "message": user("again")}
    data = jsonl(header(version=None), same, same, same)
    ids = _ids(data)
    assert len(set(ids)) == 3
    assert ids == _ids(data)


def test_a_derived_id_already_in_the_file_is_not_handed_out_again() -> None:
    # The id the migration gives line 2; then line 3 carries that very id (v1 lines have none,
    # but a file may hold anything). Line 2's id is derived afresh, and every id is unique.
    data = _v1_file()
    taken = _ids(data)[1]
    lines = data.splitlines(keepends=True)
    lines[3] = lines[3].replace(b'{"type":', b'{"id":"' + str(taken).encode() + b'","type":', 1)
    ids = _ids(b"".join(lines))
    assert taken not in ids
    assert len(set(ids)) == len(ids)
    assert ids == _ids(b"".join(lines))


def test_derived_entry_id_is_a_function_of_its_seed() -> None:
    first = derived_entry_id(b"seed")
    assert HEX8.match(first) and derived_entry_id(b"seed") == first
    assert derived_entry_id(b"other seed") != first
    second = derived_entry_id(b"seed", lambda candidate: candidate == first)
    assert HEX8.match(second) and second != first
    assert derived_entry_id(b"seed", lambda candidate: candidate == first) == second
    # Every 8-hex candidate taken: a 128-bit id in UUID form, still derived from the seed.
    fallback = derived_entry_id(b"seed", lambda candidate: len(candidate) == 8)
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", fallback)
    assert fallback == derived_entry_id(b"seed", lambda candidate: len(candidate) == 8)


def test_the_rewrite_stores_the_ids_every_open_showed(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    path.write_bytes(_v1_file())
    shown = [record.id for record in SessionTree.open(path).records()]
    compaction = SessionTree.open(path).get_entries()[4]
    assert compaction["firstKeptEntryId"] == shown[1]
    tree = SessionTree.open(path)
    new_id = tree.append_message(user("after"))  # the migration's atomic rewrite
    stored = read_json_lines(path)[1:]
    assert [line["id"] for line in stored] == [*shown, new_id]
    assert stored[4]["firstKeptEntryId"] == shown[1]
    assert [r.id for r in SessionTree.open(path).records()] == [*shown, new_id]


def test_flush_stores_the_same_ids(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    path.write_bytes(_v1_file())
    shown = _ids_in_a_new_process(path, "3")
    SessionTree.open(path).flush()
    assert [line["id"] for line in read_json_lines(path)[1:]] == shown


def test_repairing_a_v1_file_keeps_the_ids_of_the_other_entries(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    lines = _v1_file().splitlines(keepends=True)
    broken = [*lines[:3], b"not json at all\n", b"\n", *lines[3:]]
    path.write_bytes(b"".join(broken))
    before = [record.id for record in SessionTree.open(path).records()]
    report = repair_session(path)
    assert report.changed and [r.line for r in report.rejected] == [4]
    assert path.read_bytes() == _v1_file()  # still v1: the repair only removes lines
    assert [record.id for record in SessionTree.open(path).records()] == before


@pytest.mark.parametrize("name", ["large-session.jsonl", "before-compaction.jsonl"])
def test_pi_fixture_v1_ids_are_stable(name: str) -> None:
    path = pi_fixture_or_skip(name)
    data = path.read_bytes()
    assert "version" not in json.loads(data.split(b"\n", 1)[0])  # both fixtures are v1
    tree = SessionTree.open(path)
    assert tree.report.migrated_from == 1
    ids = [record.id for record in tree.records()]
    assert all(isinstance(i, str) and HEX8.match(i) for i in ids)
    assert len(set(ids)) == len(ids) == len(data.splitlines()) - 1
    assert _ids_in_a_new_process(path, "4") == ids
    entries = tree.get_entries()
    position = {entry["id"]: n for n, entry in enumerate(entries)}
    kept = [
        (n, position[entry["firstKeptEntryId"]])
        for n, entry in enumerate(entries)
        if entry["type"] == "compaction"
    ]
    # §13.1: before-compaction's compactions at 358 and 627 keep from 292 and 550.
    assert kept == ([(358, 292), (627, 550)] if name == "before-compaction.jsonl" else [])
    assert path.read_bytes() == data
