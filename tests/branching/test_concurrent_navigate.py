"""Two workers navigating one shared session at once (issue 27 item 3), on every store.

Before, two workers leaving the same branch for the same place each paid for a summary and
each appended a ``branch_summary`` under the same parent. Now the summary call runs without the
write lock, the write re-checks under it, and the loser follows the winner's summary.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from branch_builders import assistant, user

from contextree.branching import NavigationResult, navigate_tree
from contextree.llm.scripted import ScriptedClient
from contextree.session.tree import SessionTree
from shared_workers import STORES, Meeting, MeetingClient, lock_is_free, run_workers, shared_target


@pytest.fixture(params=STORES)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return shared_target(request, tmp_path)


def _shared_session(target: str) -> dict[str, str]:
    """u0 - a0 - u1 - a1 (the leaf when opened); branch B: a0 - u2 - b2."""
    tree = SessionTree.open(target)
    ids = {}
    for name, message in [
        ("u0", user("Plan the parser.")),
        ("a0", assistant("Here is the plan.")),
        ("u2", user("Try the recursive descent idea.")),
        ("b2", assistant("Recursive descent tried; it was slow.")),
    ]:
        ids[name] = tree.append_message(message)
    tree.branch(ids["a0"])
    ids["u1"] = tree.append_message(user("Try a table-driven parser instead."))
    ids["a1"] = tree.append_message(assistant("The table-driven parser works."))
    return ids


async def _navigate_while(
    tree: SessionTree, to: str, meanwhile: Callable[[], Awaitable[None]], text: str = "ours"
) -> NavigationResult:
    """Navigate ``tree`` to ``to`` with a summary; ``meanwhile`` runs during the model call,
    once the write lock is seen to be free."""
    gate = asyncio.Event()
    client = ScriptedClient(gate=gate, default=f"## Goal\nThe {text} branch.")
    task = asyncio.create_task(navigate_tree(tree, to, summarize=True, client=client))
    while not client.requests:
        await asyncio.sleep(0.001)
    assert lock_is_free(_targets[id(tree)])
    await meanwhile()
    gate.set()
    return await task


_targets: dict[int, str] = {}
"""Where each worker's tree is, for the lock probe (a store's name masks a password)."""


def _open(target: str) -> SessionTree:
    tree = SessionTree.open(target, create=False)
    _targets[id(tree)] = target
    return tree


def _summaries(target: str) -> list[dict[str, Any]]:
    fresh = SessionTree.open(target, create=False)
    return [e for e in fresh.get_entries() if e["type"] == "branch_summary"]


def test_the_second_navigation_follows_the_first(target: str) -> None:
    ids = _shared_session(target)
    ours, theirs = _open(target), _open(target)

    async def other_worker_navigates() -> None:
        done = await _navigate_while(theirs, ids["a0"], _nothing, "their")
        assert not done.summarized_elsewhere and done.summary_entry is not None

    outcome = asyncio.run(_navigate_while(ours, ids["a0"], other_worker_navigates))
    (winner,) = _summaries(target)
    assert winner["summary"].endswith("The their branch.")
    assert winner["parentId"] == ids["a0"] and winner["abandonedLeafId"] == ids["a1"]
    assert outcome.summarized_elsewhere and not outcome.cancelled
    assert outcome.summary_entry == winner
    assert outcome.to_json()["summarizedElsewhere"] is True
    # The loser stands where the winner put the leaf, as a reload of the session does.
    assert ours.leaf_id == winner["id"] == SessionTree.open(target, create=False).leaf_id


def test_summaries_of_different_branches_are_both_kept(target: str) -> None:
    ids = _shared_session(target)
    ours, theirs = _open(target), _open(target)
    theirs.branch(ids["b2"])

    async def other_worker_leaves_branch_b() -> None:
        done = await _navigate_while(theirs, ids["a0"], _nothing, "B")
        assert not done.summarized_elsewhere

    outcome = asyncio.run(_navigate_while(ours, ids["a0"], other_worker_leaves_branch_b))
    assert not outcome.summarized_elsewhere
    left = {s["abandonedLeafId"] for s in _summaries(target)}
    assert left == {ids["a1"], ids["b2"]}
    assert outcome.summary_entry is not None and ours.leaf_id == outcome.summary_entry["id"]


def test_entries_appended_meanwhile_are_kept(target: str) -> None:
    ids = _shared_session(target)
    ours, appender = _open(target), _open(target)
    added: list[str] = []

    async def other_worker_appends() -> None:
        added.append(appender.append_message(user("Also benchmark the table parser.")))

    outcome = asyncio.run(_navigate_while(ours, ids["a0"], other_worker_appends))
    assert outcome.summary_entry is not None
    fresh = SessionTree.open(target, create=False)
    assert fresh.get_entry(added[0]) is not None
    assert [e["id"] for e in fresh.get_branch(added[0])][-2:] == [ids["a1"], added[0]]
    # Written last, the summary is where a reload puts the leaf.
    assert fresh.leaf_id == outcome.summary_entry["id"]


def test_a_persisted_move_made_after_another_workers_summary_wins(target: str) -> None:
    ids = _shared_session(target)
    ours, theirs = _open(target), _open(target)
    ours.branch(ids["u0"])  # moved away in memory; a1, the last entry ours knows, is the tip
    asyncio.run(_navigate_while(theirs, ids["a0"], _nothing, "their"))
    moved = asyncio.run(navigate_tree(ours, ids["a1"], persist=True))
    assert moved.leaf_entry_id is not None
    fresh = SessionTree.open(target, create=False)
    assert fresh.leaf_id == moved.leaf_entry_id == ours.leaf_id
    assert fresh.get_branch()[-2]["id"] == ids["a1"]


async def _nothing() -> None:
    return None


# --- separate processes ------------------------------------------------------------------------


def _navigating_worker(target: str, to: str, meeting: Meeting) -> dict[str, Any]:
    tree = SessionTree.open(target, create=False)
    client = MeetingClient(meeting, "## Goal\nThe table-driven branch.")
    result = asyncio.run(navigate_tree(tree, to, summarize=True, client=client))
    return {"elsewhere": result.summarized_elsewhere, "leaf": tree.leaf_id}


def test_two_processes_navigating_at_once_leave_one_summary(target: str) -> None:
    ids = _shared_session(target)
    meeting = Meeting(workers=2)
    added: list[str] = []

    def while_both_summarize() -> None:
        assert lock_is_free(target)
        added.append(SessionTree.open(target).append_message(user("A third worker's turn.")))

    results = run_workers(
        _navigating_worker, [(target, ids["a0"], meeting)] * 2, meeting, while_both_summarize
    )
    (summary,) = _summaries(target)
    assert sorted(r["elsewhere"] for r in results) == [False, True]
    assert all(r["leaf"] == summary["id"] for r in results)
    fresh = SessionTree.open(target, create=False)
    assert fresh.leaf_id == summary["id"] and fresh.get_entry(added[0]) is not None
