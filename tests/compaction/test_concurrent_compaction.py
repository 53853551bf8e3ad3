"""Two workers compacting one shared session at once (issue 27 item 3), on every store.

Each plans from the same leaf and waits for its summarizer; before, both appended a compaction
under the same parent (a dead branch, the summarizer paid twice) and entries another worker
appended meanwhile fell off the path.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from contextree.compaction.prepare import NothingToCompact
from contextree.compaction.run import CompactionOutcome, compact_session
from contextree.llm.scripted import ScriptedClient
from contextree.session.tree import SessionTree
from core_helpers import assistant, user
from sample_session import settings
from shared_workers import Meeting, MeetingClient, lock_is_free, run_workers

STORES = ["file", "sqlite", "postgres"]


@pytest.fixture(params=STORES)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "file":
        return str(tmp_path / "shared.jsonl")
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/shared.db#s"
    server = request.getfixturevalue("postgres")
    return f"{server.url}#{uuid.uuid4().hex}"


def _shared_session(target: str) -> SessionTree:
    tree = SessionTree.open(target)
    for n in range(12):
        tree.append_message(user(f"Step {n}: change module_{n}.py so that it handles case {n}."))
        tree.append_message(assistant(f"Done with step {n}; module_{n}.py now handles it. " * 20))
    return tree


async def _compact_while(
    tree: SessionTree, meanwhile: Callable[[], Awaitable[None]]
) -> CompactionOutcome | NothingToCompact:
    """Compact ``tree``; ``meanwhile`` runs while its summarizer is waited for."""
    gate = asyncio.Event()
    client = ScriptedClient(gate=gate, default="## Goal\nThe steps so far.")
    task = asyncio.create_task(compact_session(tree, client, settings=settings(400)))
    while not client.requests:
        await asyncio.sleep(0.001)
    await meanwhile()
    gate.set()
    return await task


async def _nothing() -> None:
    return None


def _compactions(target: str) -> list[dict[str, object]]:
    fresh = SessionTree.open(target, create=False)
    return [e for e in fresh.get_entries() if e["type"] == "compaction"]


def test_the_second_compaction_stops_and_follows_the_first(target: str) -> None:
    ours = _shared_session(target)
    theirs = SessionTree.open(target)

    async def other_worker_compacts() -> None:
        done = await _compact_while(theirs, _nothing)
        assert isinstance(done, CompactionOutcome)

    outcome = asyncio.run(_compact_while(ours, other_worker_compacts))
    assert isinstance(outcome, NothingToCompact)
    assert outcome.reason == "compacted_elsewhere"
    (winner,) = _compactions(target)
    assert winner["id"] in outcome.message
    # The loser now stands on the compacted branch: its next turn sees the summary.
    assert ours.leaf_id == winner["id"]
    assert ours.build_session_context().messages[0]["role"] == "compactionSummary"


def test_entries_appended_meanwhile_stay_on_the_path(target: str) -> None:
    ours = _shared_session(target)
    theirs = SessionTree.open(target)
    added: list[str] = []

    async def other_worker_appends() -> None:
        added.append(theirs.append_message(user("Also: keep the public API unchanged.")))
        added.append(theirs.append_message(assistant("Noted, the API stays as it is.")))

    outcome = asyncio.run(_compact_while(ours, other_worker_appends))
    assert isinstance(outcome, CompactionOutcome)
    assert outcome.entry["parentId"] == added[-1]
    path_ids = [e["id"] for e in SessionTree.open(target, create=False).get_branch()]
    assert added[0] in path_ids and added[1] in path_ids
    texts = [str(m.get("content")) for m in ours.build_session_context().messages]
    assert any("keep the public API unchanged" in t for t in texts)
    assert len(_compactions(target)) == 1


def test_a_lone_compaction_is_unchanged(target: str) -> None:
    tree = _shared_session(target)
    leaf = tree.leaf_id
    outcome = asyncio.run(_compact_while(tree, _nothing))
    assert isinstance(outcome, CompactionOutcome)
    assert outcome.entry["parentId"] == leaf


# --- separate processes ------------------------------------------------------------------------


def _compacting_worker(target: str, meeting: Meeting) -> str:
    tree = SessionTree.open(target, create=False)
    client = MeetingClient(meeting, "## Goal\nThe steps so far.")
    done = asyncio.run(compact_session(tree, client, settings=settings(400)))
    return done.reason if isinstance(done, NothingToCompact) else "compacted"


def test_two_processes_compacting_at_once_leave_one_compaction(target: str) -> None:
    _shared_session(target)
    meeting = Meeting(workers=2)
    added: list[str] = []

    def while_both_summarize() -> None:
        assert lock_is_free(target)
        added.append(SessionTree.open(target).append_message(user("Also: keep the API.")))

    outcomes = run_workers(
        _compacting_worker, [(target, meeting)] * 2, meeting, while_both_summarize
    )
    assert sorted(outcomes) == ["compacted", "compacted_elsewhere"]
    (winner,) = _compactions(target)
    assert winner["parentId"] == added[0]
    assert SessionTree.open(target, create=False).leaf_id == winner["id"]
