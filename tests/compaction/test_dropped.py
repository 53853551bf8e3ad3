"""What a compaction takes out of the model's view: counted in the outcome and the
``session_compact`` event, listed by ``compact --show-dropped`` (dry run or not)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_env import clean_cli_env, ok, reset_consoles
from contextree.compaction import OfflineSummarizer, compact_session
from contextree.compaction.dropped import dropped_from_view, dropped_json, summary_carries
from contextree.compaction.run import CompactionOutcome, plan_compaction
from contextree.hooks import BEFORE_COMPACT, COMPACT, HookRegistry
from contextree.session.tree import SessionTree
from contextree.settings import CompactionSettings
from pi_fixtures import pi_fixture
from recall.recall_session import add_turns

SETTINGS = CompactionSettings(keep_recent_tokens=2000)


def _session(path: Path) -> tuple[SessionTree, str]:
    tree = SessionTree.open(path, cwd="/w")
    first = tree.append_message(
        {"role": "user", "content": "Rotate the deploy key on host zeta-9", "timestamp": 0}
    )
    tree.append_message(
        {
            "role": "toolResult",
            "toolCallId": "x",
            "toolName": "bash",
            "content": "ok",
            "timestamp": 0,
        }
    )
    add_turns(tree, 20)
    return tree, first


def test_summary_carries() -> None:
    assert summary_carries(
        "- Rotate the deploy key on zeta-9", "Rotate the deploy key on host zeta-9"
    )
    assert not summary_carries("Worked on parsing.", "Rotate the deploy key on host zeta-9")
    assert summary_carries("user said: ok go", "ok go")


def test_plan_lists_what_would_leave_the_view(tmp_path: Path) -> None:
    tree, first = _session(tmp_path / "s.jsonl")
    plan = plan_compaction(tree, settings=SETTINGS)
    assert not isinstance(plan, type(None)) and hasattr(plan, "preparation")
    dropped = dropped_from_view(plan.preparation, plan.path)  # type: ignore[union-attr]
    assert dropped.folded[0] == first and first in dropped.user_messages
    assert len(dropped.tool_outputs) == 1 and dropped.user_not_in_summary is None
    assert "userMessagesNotInSummary" not in dropped_json(dropped)


def test_a_summary_that_drops_a_request_is_reported(tmp_path: Path) -> None:
    tree, first = _session(tmp_path / "s.jsonl")
    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, lambda event: {"compaction": {"summary": "Worked on steps."}})
    events: list[Any] = []
    hooks.on(COMPACT, events.append)
    outcome = asyncio.run(
        compact_session(tree, OfflineSummarizer(), settings=SETTINGS, hooks=hooks)
    )
    assert isinstance(outcome, CompactionOutcome) and outcome.dropped is not None
    assert first in (outcome.dropped.user_not_in_summary or [])
    assert events[0].dropped == outcome.dropped
    payload = dropped_json(outcome.dropped)
    assert payload["messagesFolded"] == len(outcome.dropped.folded)
    assert first in payload["userMessagesNotInSummaryIds"]


def test_the_offline_summary_keeps_the_requests(tmp_path: Path) -> None:
    tree, _ = _session(tmp_path / "s.jsonl")
    outcome = asyncio.run(compact_session(tree, OfflineSummarizer(), settings=SETTINGS))
    assert isinstance(outcome, CompactionOutcome) and outcome.dropped is not None
    assert outcome.dropped.user_not_in_summary == []


@pytest.mark.parametrize("name", ["large-session.jsonl", "before-compaction.jsonl"])
def test_the_offline_summary_carries_every_user_message_of_pis_sessions(
    name: str, tmp_path: Path
) -> None:
    # Sessions we did not write: every user message folded away is carried. In
    # large-session.jsonl a plain correction ("no, the block should stay as is") was not,
    # before a user's "no, ..." line counted as a decision.
    path = tmp_path / name
    path.write_bytes(pi_fixture(name).read_bytes())
    tree = SessionTree.open(path)
    outcome = asyncio.run(compact_session(tree, OfflineSummarizer()))
    assert isinstance(outcome, CompactionOutcome) and outcome.dropped is not None
    assert len(outcome.dropped.user_messages) > 20
    assert outcome.dropped.user_not_in_summary == []


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    clean_cli_env(tmp_path, monkeypatch)
    yield
    reset_consoles()


@pytest.mark.usefixtures("cli")
def test_compact_shows_what_left_the_view(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    _, first = _session(path)
    before = path.read_bytes()
    listed = ok("compact", path, "--dry-run", "--show-dropped", "--keep-recent", "2000").output
    assert path.read_bytes() == before  # nothing written
    assert "leave the model's view:" in listed and first in listed
    assert "Rotate the deploy key" in listed
    done = ok("compact", path, "-q", "--keep-recent", "2000").output
    assert "Out of the model's view: 34 messages folded, 1 tool output, 17 user messages." in done
    assert "Every folded user message is in the summary." in done
