"""The TypedDict shapes of entries and messages: lossless views that mypy checks.

The codec keeps plain dicts, so unknown keys and types round-trip; the ``is_*`` guards narrow
a dict by its tag, after which a misspelled field is a mypy error.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from mypy import api as mypy_api

from contextree.entries.codec import decode_object, encode_line
from contextree.entries.types import (
    is_assistant_message,
    is_compaction_entry,
    is_custom_message_entry,
    is_message_entry,
    is_text_content,
    is_tool_call_content,
    is_tool_result_message,
    is_user_message,
)
from pi_fixtures import pi_fixture


def test_guards_follow_the_tags_of_every_entry_in_a_pi_session() -> None:
    lines = pi_fixture("before-compaction.jsonl").read_bytes().splitlines()
    seen: set[str] = set()
    for raw in lines[1:]:
        entry = decode_object(raw)
        kind = entry.get("type")
        assert is_message_entry(entry) == (kind == "message")
        assert is_compaction_entry(entry) == (kind == "compaction")
        assert is_custom_message_entry(entry) == (kind == "custom_message")
        if is_message_entry(entry):
            message = entry["message"]
            role = message.get("role")
            seen.add(str(role))
            assert is_user_message(message) == (role == "user")
            assert is_assistant_message(message) == (role == "assistant")
            assert is_tool_result_message(message) == (role == "toolResult")
            if is_assistant_message(message) and isinstance(message["content"], list):
                for block in message["content"]:
                    assert is_tool_call_content(block) == (block.get("type") == "toolCall")
                    assert is_text_content(block) == (block.get("type") == "text")
        # a view, not a copy: the line encodes back to the same object
        assert json.loads(encode_line(entry)) == json.loads(raw)
    assert {"user", "assistant", "toolResult"} <= seen


def test_unknown_keys_and_types_survive_the_codec() -> None:
    raw = (
        b'{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z",'
        b'"message":{"role":"assistant","content":[{"type":"futureBlock","x":1}],"newField":2},'
        b'"extra":{"k":[1,2]}}'
    )
    entry = decode_object(raw)
    assert is_message_entry(entry)
    assert json.loads(encode_line(entry)) == json.loads(raw)
    unknown = decode_object(b'{"type":"future_entry","id":"b","parentId":"a1","z":true}')
    assert not is_message_entry(unknown) and not is_compaction_entry(unknown)
    assert json.loads(encode_line(unknown)) == {
        "type": "future_entry",
        "id": "b",
        "parentId": "a1",
        "z": True,
    }


def _mypy(tmp_path: Path, code: str) -> tuple[str, int]:
    source = tmp_path / "snippet.py"
    source.write_text(textwrap.dedent(code), encoding="utf-8")
    # mypy raises the recursion limit of the process it runs in (to 2**14) and leaves it
    # there; later tests that depend on the default limit (JSON nesting) would then differ.
    limit = sys.getrecursionlimit()
    try:
        out, err, status = mypy_api.run(
            [
                "--strict",
                "--follow-imports=silent",
                "--cache-dir",
                str(tmp_path / "cache"),
                str(source),
            ]
        )
    finally:
        sys.setrecursionlimit(limit)
    return out + err, status


def test_mypy_checks_field_names_after_a_guard(tmp_path: Path) -> None:
    good = """
        from typing import Any
        from contextree.entries.types import is_compaction_entry, is_tool_call_content

        def first_kept(entry: dict[str, Any]) -> str | None:
            if is_compaction_entry(entry):
                return entry["firstKeptEntryId"]
            return None

        def call_name(block: object) -> str | None:
            return block["name"] if is_tool_call_content(block) else None
        """
    output, status = _mypy(tmp_path, good)
    assert status == 0, output
    bad = """
        from typing import Any
        from contextree.entries.types import is_compaction_entry

        def first_kept(entry: dict[str, Any]) -> str | None:
            if is_compaction_entry(entry):
                return entry["firstKeptId"]
            return None
        """
    output, status = _mypy(tmp_path, bad)
    assert status == 1 and '"firstKeptId"' in output, output


def test_pi_s_optional_fields_are_optional_at_runtime_too() -> None:
    from contextree.entries.types import CompactionEntry, ToolResultMessage

    assert {"summary", "firstKeptEntryId", "tokensBefore", "type"} <= set(
        CompactionEntry.__required_keys__
    )
    assert {"shortSummary", "details", "fromHook", "timestamp"} <= set(
        CompactionEntry.__optional_keys__
    )
    assert "isError" in ToolResultMessage.__optional_keys__


def test_entry_message_and_the_block_guards() -> None:
    from contextree.entries.types import (
        entry_message,
        is_compaction_summary_message,
        is_image_content,
        is_thinking_content,
    )

    message = {"role": "user", "content": "hi"}
    assert entry_message({"type": "message", "id": "a", "message": message}) is message
    assert entry_message({"type": "message", "id": "a", "message": "damaged"}) is None
    assert entry_message({"type": "custom", "id": "a", "message": message}) is None
    assert is_compaction_summary_message({"role": "compactionSummary", "summary": "S"})
    assert not is_compaction_summary_message({"role": "branchSummary", "summary": "S"})
    assert is_image_content({"type": "image", "data": "", "mimeType": "image/png"})
    assert is_thinking_content({"type": "thinking", "thinking": "..."})
    assert not is_thinking_content("thinking") and not is_image_content(None)
