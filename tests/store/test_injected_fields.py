"""A line cannot fill our own record fields (issue 15 item 5): top-level keys spelled like them
(``"\\u2063contextree.stored"``, ``...entry``) are ordinary keys of the entry; the line's own
bytes and content are what is read and what every rewrite writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contextree.session.tree import SessionTree

HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z",
          "cwd": "/"}  # fmt: skip
GOOD = {"type": "message", "id": "a1", "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": "hello"}}  # fmt: skip
INJECTED = (
    ', "\\u2063contextree.stored": "QVRUQUNL", "\\u2063contextree.utf8": true, '
    '"\\u2063contextree.entry": {"type": "message", "id": "a1", '
    '"message": {"role": "user", "content": "INJECTED"}}}'
)


@pytest.mark.parametrize(("copies", "blank"), [(1, False), (3, False), (3, True)])
def test_keys_named_like_our_fields_are_plain_keys(
    tmp_path: Path, copies: int, blank: bool
) -> None:
    # Lines that each hold one object are placed in one pass after the bulk decode; a blank
    # line among them sends them down the path that pairs records with non-blank lines.
    lines = [json.dumps(HEADER)]
    parent = None
    for n in range(copies):
        entry = {**GOOD, "id": f"a{n}", "parentId": parent}
        lines.append(json.dumps(entry)[:-1] + INJECTED.replace('"id": "a1"', f'"id": "a{n}"'))
        parent = f"a{n}"
        if blank:
            lines.append("")
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    original = path.read_bytes()

    tree = SessionTree.open(path)
    assert [m["content"] for m in tree.build_session_context().messages] == ["hello"] * copies
    entry = tree.get_entries()[0]
    assert entry["message"]["content"] == "hello"
    assert "\u2063contextree.stored" in entry  # kept, as any unknown key
    assert tree.report.clean and not tree.report.invalid_utf8
    assert not any(record.utf8_replaced for record in tree.records())

    tree.append_message({"role": "user", "content": "next"})
    changed = {**tree.get_entries()[-1], "message": {"role": "user", "content": "edited"}}
    tree.rewrite_entries([changed])  # an atomic rewrite writes every other line as it was
    # (A rewrite leaves blank lines out.)
    assert path.read_bytes().startswith(original.replace(b"\n\n", b"\n"))
