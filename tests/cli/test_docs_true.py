"""Issue 24 point 10: what the README promises holds.

"Memory stays near the file's size" - also for ``check``, which decodes every entry: it lets
each one go once checked, so no entry it decoded stays decoded. "Errors are one line": bad
input of each kind ends in one ``error:`` line and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_env import invoke
from contextree.session.check import check_session
from contextree.session.tree import SessionTree

pytestmark = pytest.mark.usefixtures("clean_cli")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "todo-api-session.jsonl"


def _decoded(tree: SessionTree) -> set[int]:
    return {id(r) for r in tree.records() if r.is_decoded}


def test_check_keeps_no_entry_it_decoded(tmp_path: Path) -> None:
    path = Path(shutil.copyfile(EXAMPLE, tmp_path / "s.jsonl"))
    tree = SessionTree.open(path, create=False)
    before = _decoded(tree)
    report = check_session(tree)
    assert not report.damaged
    assert _decoded(tree) <= before  # what was decoded before (the context) may stay
    assert len(before) < len(list(tree.records()))  # so the check above means something


def test_check_still_pairs_tool_calls_without_the_entries(tmp_path: Path) -> None:
    lines = EXAMPLE.read_bytes().splitlines()
    entries = [json.loads(line) for line in lines]
    result = next(e for e in entries if e.get("message", {}).get("role") == "toolResult")
    result["message"]["toolCallId"] = "nobody-called-this"
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n", encoding="utf-8")
    report = check_session(SessionTree.open(path, create=False))
    messages = [f.message for f in report.findings]
    assert "tool result for call 'nobody-called-this' has no matching tool call before it" in (
        messages
    )
    assert any(m.endswith("has no result") for m in messages)  # its call, now unanswered


def _bad_inputs(tmp_path: Path) -> list[list[str | Path]]:
    session = Path(shutil.copyfile(EXAMPLE, tmp_path / "s.jsonl"))
    folder = tmp_path / "d"
    folder.mkdir()
    return [
        ["compact", "-m", "openai:x", "--base-url", "ftp://x", session],
        ["compact", "-m", "openai:x", "--base-url", "http://[bad", session],
        ["compact", "-m", "ollama:x", "--base-url", "localhost:11434", session],
        ["chat", "-m", "openai:x", "--base-url", "ftp://x", "-p", "hi", "-s", tmp_path / "c"],
        ["info", tmp_path / "none.jsonl"],
        ["info", folder],
        ["import", folder, f"sqlite://{tmp_path}/x.db"],
        ["info", f"sqlite://{tmp_path}/none.db#x"],
        ["compact", "--keep-recent=-5", session],
        ["prune", "--minimum-savings=-1", session],
        ["context", "--leaf", "zzzz", session],
        ["navigate", session, "zzzz"],
    ]


def test_errors_are_one_line(tmp_path: Path) -> None:
    for args in _bad_inputs(tmp_path):
        result = invoke(*args)
        assert result.exit_code in (1, 2), (args, result.output)
        assert "Traceback" not in result.output, args
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, result.output)
