"""``contextree navigate`` (typer's CliRunner on a session file in tmp_path)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from branch_builders import two_branches
from typer.testing import CliRunner, Result

from contextree.branching import LEAF_CUSTOM_TYPE
from contextree.cli.navigate_cmd import register
from contextree.compaction.prompt_templates import load_prompt
from contextree.session.tree import SessionTree


@pytest.fixture
def cli() -> typer.Typer:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:
        """A stand-in for the contextree app (commands are subcommands)."""

    register(app)
    return app


Session = tuple[Path, dict[str, str]]
Navigate = Callable[..., Result]


@pytest.fixture
def session(tmp_path: Path) -> Session:
    """A session file holding ``two_branches``, and the ids of its entries."""
    path = tmp_path / "session.jsonl"
    ids = two_branches(SessionTree.open(path))
    return path, ids


@pytest.fixture
def navigate(cli: typer.Typer, session: Session) -> Navigate:
    """``contextree navigate <session file> *args``."""
    path, _ = session

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, ["navigate", str(path), *args])

    return invoke


def _texts(tree: SessionTree) -> list[str]:
    out = []
    for message in tree.build_session_context().messages:
        content = message.get("content", message.get("summary", ""))
        out.append(content if isinstance(content, str) else content[0]["text"])
    return out


def test_navigate_without_summarize_records_the_leaf(navigate: Navigate, session: Session) -> None:
    path, ids = session
    result = navigate(ids["a3"])
    assert result.exit_code == 0, result.output
    assert f"Moved the leaf from {ids['a2']} to {ids['a3']}." in result.output
    assert "contextree.leaf" in result.output
    reopened = SessionTree.open(path)
    leaf = reopened.get_leaf_entry()
    assert leaf is not None
    assert leaf["type"] == "custom" and leaf["customType"] == LEAF_CUSTOM_TYPE
    assert leaf["parentId"] == ids["a3"]
    # The custom entry is not in the context: it is the context of a3.
    assert _texts(reopened) == [
        "Start the project",
        "Started.",
        "Write the docs",
        "Reading docs.",
    ]


def test_navigate_to_a_user_message_prints_the_editor_text(
    navigate: Navigate, session: Session
) -> None:
    path, ids = session
    prefix = ids["u3"][:6]
    result = navigate(prefix)
    assert result.exit_code == 0, result.output
    assert "Message to edit and send again:\nWrite the docs" in result.output
    reopened = SessionTree.open(path)
    assert reopened.get_leaf_entry()["parentId"] == ids["a1"]  # type: ignore[index]
    assert _texts(reopened) == ["Start the project", "Started."]


def test_navigate_with_summarize_uses_the_offline_summarizer(
    navigate: Navigate, session: Session
) -> None:
    path, ids = session
    result = navigate(ids["a3"], "--summarize", "--label", "left the parser")
    assert result.exit_code == 0, result.output
    assert "Branch summary" in result.output
    assert load_prompt("branch-preamble") in result.output.replace("\n", " ").replace("  ", " ")
    reopened = SessionTree.open(path)
    summaries = [e for e in reopened.get_entries() if e["type"] == "branch_summary"]
    (summary,) = summaries
    assert summary["parentId"] == ids["a3"]
    assert "src/a.py" in summary["summary"]
    assert reopened.get_label(summary["id"]) == "left the parser"
    # No contextree.leaf entry: the summary (and its label) already put the leaf on disk.
    assert not any(e["type"] == "custom" for e in reopened.get_entries())
    assert reopened.build_session_context().messages[-1]["role"] == "branchSummary"


def test_navigate_with_instructions_reaches_the_summary(
    navigate: Navigate, session: Session
) -> None:
    path, ids = session
    result = navigate(ids["a3"], "--summarize", "--instructions", "the parser")
    assert result.exit_code == 0, result.output
    entries = SessionTree.open(path).get_entries()
    assert any(e["type"] == "branch_summary" for e in entries)


def test_navigate_to_the_current_leaf_changes_nothing(navigate: Navigate, session: Session) -> None:
    path, ids = session
    before = path.read_bytes()
    result = navigate(ids["a2"])
    assert result.exit_code == 0, result.output
    assert path.read_bytes() == before


def test_navigate_to_the_current_leaf_says_so(navigate: Navigate, session: Session) -> None:
    _, ids = session
    result = navigate(ids["a2"])
    assert result.output.splitlines() == [f"The leaf is already at {ids['a2']}; nothing to move."]


def test_navigate_to_the_current_leaf_still_writes_the_label(
    navigate: Navigate, session: Session
) -> None:
    path, ids = session
    before = _texts(SessionTree.open(path))
    result = navigate(ids["a2"], "--label", "checkpoint")
    assert result.exit_code == 0, result.output
    tree = SessionTree.open(path)
    assert tree.get_label(ids["a2"]) == "checkpoint"
    label_entry = tree.get_leaf_entry()
    assert label_entry is not None and label_entry["type"] == "label"
    assert result.output.splitlines() == [
        f"The leaf is already at {ids['a2']}; nothing to move.",
        f"Label entry {label_entry['id']}.",
    ]
    # The context is the same: a label carries no message.
    assert _texts(tree) == before


def test_an_unknown_or_ambiguous_target_is_one_error_line(
    navigate: Navigate, session: Session
) -> None:
    path, _ = session
    result = navigate("zzzz")
    assert result.exit_code == 1
    assert "Entry zzzz not found" in result.output
    tree = SessionTree.open(path)
    for entry_id in ("fff00001", "fff00002"):
        tree.append_entry(
            {
                "type": "custom",
                "customType": "x",
                "id": entry_id,
                "parentId": None,
                "timestamp": "2026-01-01T00:00:00.000Z",
            }
        )
    result = navigate("fff")
    assert result.exit_code == 1
    assert "matches 2 entries (fff00001, fff00002)" in result.output


def test_an_unknown_model_is_one_error_line(navigate: Navigate, session: Session) -> None:
    path, ids = session
    before = path.read_bytes()
    result = navigate(ids["a3"], "--summarize", "--model", "opnai:gpt-4o")
    assert result.exit_code == 1
    assert 'did you mean "openai"' in result.output
    assert path.read_bytes() == before
