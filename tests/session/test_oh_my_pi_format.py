"""oh-my-pi 18's file format (issue 11 item 1): the fixed-width title slot before the header,
kept byte for byte on appends, rewrites and repairs; ``reset_boundary`` (``/clear``) starts the
context and the compaction region; the title is the session's name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from contextree.compaction.prepare import CompactionPreparation, prepare_compaction
from contextree.context.build import build_session_context
from contextree.session import SessionTree
from contextree.session.listing import summarize_session_file
from contextree.session.repair import repair_session
from contextree.settings.schema import CompactionSettings
from reliability.fuzzing import run_cli

SLOT_BYTES = 256  # oh-my-pi: exactly 256 UTF-8 bytes, newline included


def title_slot(title: str) -> bytes:
    """A slot line as oh-my-pi writes it: JSON padded with spaces to 256 bytes."""
    fields: dict[str, Any] = {
        "type": "title",
        "v": 1,
        "title": title,
        "source": "user",
        "updatedAt": "2026-12-01T10:00:00.000Z",
        "pad": "",
    }
    bare = len(json.dumps(fields, separators=(",", ":")).encode()) + 1
    fields["pad"] = " " * (SLOT_BYTES - bare)
    line = (json.dumps(fields, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
    assert len(line) == SLOT_BYTES
    return line


def _line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


def _message(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
    if role == "assistant":
        message |= {"stopReason": "stop", "provider": "openai", "model": "gpt-4o-mini"}
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-12-01T10:00:01.000Z",
        "message": message,
    }


HEADER = {
    "type": "session",
    "version": 3,
    "id": "01a23a85-1085-76de-9aae-d17251cd33db",
    "timestamp": "2026-12-01T10:00:00.000Z",
    "cwd": "/work",
}


def omp_session(tmp_path: Path, *, reset: bool = True, title: str = "Pagination work") -> Path:
    entries = [
        _message("a0000001", None, "user", "Before the clear: the old plan"),
        _message("a0000002", "a0000001", "assistant", "Noted the old plan."),
    ]
    parent = "a0000002"
    if reset:
        entries.append(
            {
                "type": "reset_boundary",
                "id": "a0000003",
                "parentId": parent,
                "timestamp": "2026-12-01T10:00:02.000Z",
            }
        )
        parent = "a0000003"
    entries += [
        _message("a0000004", parent, "user", "After the clear: the new task"),
        _message("a0000005", "a0000004", "assistant", "Working on the new task."),
    ]
    path = tmp_path / "omp.jsonl"
    path.write_bytes(title_slot(title) + _line(HEADER) + b"".join(_line(e) for e in entries))
    return path


def _texts(tree: SessionTree) -> list[str]:
    return [m["content"][0]["text"] for m in tree.build_session_context().messages]


# --- the title slot ---------------------------------------------------------------------------


def test_a_file_with_a_title_slot_opens_with_its_header_and_title(tmp_path: Path) -> None:
    tree = SessionTree.open(omp_session(tmp_path, reset=False))
    assert tree.header["id"] == HEADER["id"]
    assert tree.title == "Pagination work"
    assert len(tree.get_entries()) == 4
    assert tree.report.clean


def test_any_slot_content_is_accepted(tmp_path: Path) -> None:
    path = omp_session(tmp_path, reset=False)
    data = path.read_bytes()
    odd = b'{"type":"title","v":7,"something":"else"}' + b" " * 20 + b"\n"
    path.write_bytes(odd + data[SLOT_BYTES:])
    tree = SessionTree.open(path)
    assert tree.title is None and len(tree.get_entries()) == 4 and tree.report.clean


def test_appends_keep_the_slot_byte_for_byte(tmp_path: Path) -> None:
    path = omp_session(tmp_path)
    slot = path.read_bytes()[:SLOT_BYTES]
    tree = SessionTree.open(path)
    tree.append_message({"role": "user", "content": [{"type": "text", "text": "more"}]})
    assert path.read_bytes()[:SLOT_BYTES] == slot
    assert SessionTree.open(path).get_entries()[-1]["message"]["content"][0]["text"] == "more"


def test_an_atomic_rewrite_keeps_the_slot_and_line_numbers(tmp_path: Path) -> None:
    path = omp_session(tmp_path)
    slot = path.read_bytes()[:SLOT_BYTES]
    tree = SessionTree.open(path)
    changed = dict(tree.get_entry("a0000002") or {})
    changed["message"] = {**changed["message"], "content": [{"type": "text", "text": "edited"}]}
    tree.rewrite_entries([changed])
    data = path.read_bytes()
    assert data[:SLOT_BYTES] == slot
    assert data.splitlines()[1] == _line(HEADER).rstrip(b"\n")
    reopened = SessionTree.open(path)
    assert reopened.get_entry("a0000002")["message"]["content"][0]["text"] == "edited"  # type: ignore[index]
    # Lines are numbered as they are in the file: the slot is line 1, the header line 2.
    (bad_path := tmp_path / "bad.jsonl").write_bytes(data + b"{broken\n")
    (bad,) = SessionTree.open(bad_path).report.bad_lines
    assert bad.line == len(data.splitlines()) + 1


def test_repair_keeps_the_slot(tmp_path: Path) -> None:
    path = omp_session(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data + b"{broken\n")
    report = repair_session(path)
    assert report.changed
    repaired = path.read_bytes()
    assert repaired[:SLOT_BYTES] == data[:SLOT_BYTES] and repaired == data


def test_new_files_stay_in_pis_format(tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    SessionTree.open(path).append_message({"role": "user", "content": "hi"})
    assert json.loads(path.read_bytes().splitlines()[0])["type"] == "session"


def test_the_slot_title_names_the_session_in_listings_and_info(tmp_path: Path) -> None:
    path = omp_session(tmp_path)
    assert summarize_session_file(path).name == "Pagination work"
    info = run_cli(["info", str(path)])
    assert info.exit_code == 0, info.stderr
    assert "Pagination work" in info.stdout


# --- reset_boundary ---------------------------------------------------------------------------


def test_the_context_starts_after_the_latest_reset_boundary(tmp_path: Path) -> None:
    tree = SessionTree.open(omp_session(tmp_path))
    assert _texts(tree) == ["After the clear: the new task", "Working on the new task."]
    # The history before the clear stays in the file (and in pi's reading, which has no
    # reset_boundary: pi treats the entry as unknown and keeps everything).
    assert len(tree.get_entries()) == 5


def test_a_compaction_after_the_reset_wins_and_one_before_it_is_cleared(tmp_path: Path) -> None:
    path = omp_session(tmp_path)
    tree = SessionTree.open(path)
    entries = tree.get_entries()
    after = [
        *entries,
        {
            "type": "compaction",
            "id": "a0000006",
            "parentId": "a0000005",
            "timestamp": "2026-12-01T10:00:03.000Z",
            "summary": "S",
            "firstKeptEntryId": "a0000005",
            "tokensBefore": 10,
        },
    ]
    messages = build_session_context(after).messages
    assert [m["role"] for m in messages] == ["compactionSummary", "assistant"]
    before = [
        entries[0],
        entries[1],
        {
            "type": "compaction",
            "id": "c1",
            "parentId": "a0000002",
            "timestamp": "2026-12-01T10:00:01.500Z",
            "summary": "old",
            "firstKeptEntryId": "a0000002",
            "tokensBefore": 10,
        },
        {**entries[2], "parentId": "c1"},
        *entries[3:],
    ]
    roles = [m["role"] for m in build_session_context(before).messages]
    assert roles == ["user", "assistant"]


def test_compaction_after_a_reset_summarizes_only_what_follows_it(tmp_path: Path) -> None:
    tree = SessionTree.open(omp_session(tmp_path))
    for n in range(6):
        tree.append_message({"role": "user", "content": [{"type": "text", "text": "x" * 4000}]})
        tree.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"reply {n}"}],
                "stopReason": "stop",
            }
        )
    prep = prepare_compaction(tree.get_branch_view(), CompactionSettings(keep_recent_tokens=2000))
    assert isinstance(prep, CompactionPreparation)
    assert prep.previous_summary is None
    summarized = json.dumps(prep.messages_to_summarize + prep.turn_prefix_messages)
    assert "the old plan" not in summarized and "After the clear" in summarized


def test_tree_shows_the_reset(tmp_path: Path) -> None:
    shown = run_cli(["tree", str(omp_session(tmp_path))])
    assert shown.exit_code == 0, shown.stderr
    assert "[reset]" in shown.stdout and "context cleared" in shown.stdout
