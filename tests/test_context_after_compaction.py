"""Issue 2, "done when": ``contextree context ../shared/pi-fixtures/before-compaction.jsonl``
shows the compaction summary followed by the kept and the later messages.

The command runs on a byte-identical copy in tmp_path (it only reads, but the shared fixture is
never put at risk).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from contextree.cli.app import app, state
from contextree.context.convert import compaction_summary_text, convert_to_llm
from contextree.session.tree import SessionTree
from pi_fixtures import pi_fixture


@pytest.fixture(autouse=True)
def clean_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("CONTEXTREE_") or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CONTEXTREE_HOME", str(tmp_path / "home" / "contextree"))
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    state.__dict__.pop("console", None)
    state.__dict__.pop("errors", None)
    yield
    state.__dict__.pop("console", None)
    state.__dict__.pop("errors", None)


@pytest.fixture
def fixture_copy(tmp_path: Path) -> Path:
    path = tmp_path / "before-compaction.jsonl"
    shutil.copyfile(pi_fixture("before-compaction.jsonl"), path)
    return path


def _first_kept(path: Path) -> tuple[str, str]:
    """The latest compaction's summary and the text of its first kept entry."""
    tree = SessionTree.open(path)
    compaction = next(e for e in reversed(tree.get_branch()) if e["type"] == "compaction")
    kept = tree.get_entry(compaction["firstKeptEntryId"])
    assert kept is not None and kept["type"] == "message"
    (block,) = kept["message"]["content"]
    return compaction["summary"], block["text"]


def test_context_shows_the_summary_then_the_kept_and_later_messages(fixture_copy: Path) -> None:
    result = CliRunner().invoke(app, ["context", str(fixture_copy)])
    assert result.exit_code == 0, result.output
    summary, kept_text = _first_kept(fixture_copy)
    assert kept_text == "can leave it"

    text = " ".join(result.stdout.split())  # compare text, not line breaks
    wrapper = " ".join(compaction_summary_text(summary).split())
    assert text.startswith(f"── 1. user {wrapper} ── 2. user {kept_text} ── 3. assistant")
    assert text.index(wrapper) < text.index(f"── 2. user {kept_text}")
    assert text.endswith(
        "446 messages, ~180,820 tokens, thinking off, model anthropic/claude-opus-4-5"
    )
    assert fixture_copy.read_bytes() == pi_fixture("before-compaction.jsonl").read_bytes()


def test_the_json_context_has_the_summary_wrapper_first_then_the_kept_messages(
    fixture_copy: Path,
) -> None:
    result = CliRunner().invoke(app, ["context", str(fixture_copy), "--format", "json"])
    assert result.exit_code == 0, result.output
    messages = json.loads(result.stdout)["messages"]
    summary, kept_text = _first_kept(fixture_copy)

    assert len(messages) == 446
    assert messages[0]["role"] == "user"
    assert messages[0]["content"] == [{"type": "text", "text": compaction_summary_text(summary)}]
    assert messages[1]["role"] == "user"
    assert messages[1]["content"] == [{"type": "text", "text": kept_text}]
    # ... through to the last message of the file, the `find .` bash execution.
    tree = SessionTree.open(fixture_copy)
    last = next(e for e in reversed(tree.get_entries()) if e["type"] == "message")
    assert last["message"]["role"] == "bashExecution"
    assert messages[-1] == {"entryId": last["id"], **convert_to_llm([last["message"]])[0]}
    assert fixture_copy.read_bytes() == pi_fixture("before-compaction.jsonl").read_bytes()
