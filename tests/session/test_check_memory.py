"""``check`` decodes every entry once and lets it go (issue 27 item 5: it kept them all, four
times the file's size in memory on a 141 MB session). The figure is a bench row
(``check: peak memory / file size``); this pins the mechanism."""

from __future__ import annotations

from pathlib import Path

from contextree.session.check import check_session
from contextree.session.tree import SessionTree
from core_helpers import assistant, tool_call, tool_result, user


def test_check_keeps_no_entry_decoded(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    tree = SessionTree.open(path)
    for n in range(50):
        tree.append_message(user(f"read file {n}"))
        tree.append_message(assistant("", calls=[tool_call(f"c{n}", "read", {"path": f"f{n}.py"})]))
        tree.append_message(tool_result(f"c{n}", f"contents {n}", name="read"))
    tree.append_message(assistant("", calls=[tool_call("lost", "bash", {"command": "ls"})]))
    fresh = SessionTree.open(path, create=False)
    report = check_session(fresh)
    assert [f.message for f in report.findings] == ["tool call 'lost' (bash) has no result"]
    assert not any(record.is_decoded for record in fresh.records())
