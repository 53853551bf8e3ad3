"""Two workers pruning one shared session at once (issue 27 item 3), on every store.

A prune decides from the path it read, then rewrites the session under the write lock. Before,
the second of two workers rewrote the whole session again with its own copies of the entries
the first had pruned already (clobbering whatever the first wrote there). Now the rewrite
replaces only entries still as they were read; what others appended meanwhile is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from contextree.compaction.prune import PruneDecision, prune_session
from contextree.compaction.prune_decider import PruneDecider
from contextree.entries.types import Entry
from contextree.session.tree import SessionTree
from contextree.settings import PruneSettings
from core_helpers import assistant, chars, tool_call, tool_result, user
from shared_workers import STORES, Meeting, lock_is_free, run_workers, shared_target

SMALL = PruneSettings(protect_tokens=100, minimum_savings=10)


@pytest.fixture(params=STORES)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return shared_target(request, tmp_path)


def _shared_session(target: str) -> list[str]:
    """Four 200-token tool results; the ids of those outside the protected window."""
    tree = SessionTree.open(target)
    tree.append_message(user("Look around the repository."))
    results = []
    for n in range(4):
        tree.append_message(assistant("", calls=[tool_call(f"c{n}")]))
        results.append(tree.append_message(tool_result(f"c{n}", chars(200, str(n)))))
    return results[:-1]


class _PausingDecider(PruneDecider):
    """Decides as usual, then runs ``meanwhile`` before the prune goes on to its rewrite."""

    def __init__(self, meanwhile: Callable[[], None]) -> None:
        super().__init__()
        self.meanwhile = meanwhile

    def decide(
        self,
        path_entries: Sequence[Entry],
        settings: PruneSettings | None = None,
        *,
        at_ms: int | None = None,
    ) -> PruneDecision:
        decision = super().decide(path_entries, settings, at_ms=at_ms)
        self.meanwhile()
        return decision


def _pruned_at(target: str) -> dict[str, Any]:
    fresh = SessionTree.open(target, create=False)
    return {
        str(e["id"]): e["message"].get("prunedAt")
        for e in fresh.get_entries()
        if e["type"] == "message" and e["message"]["role"] == "toolResult"
    }


def test_the_second_prune_leaves_the_first_ones_work(target: str) -> None:
    old = _shared_session(target)
    ours, theirs = SessionTree.open(target), SessionTree.open(target)
    seen: list[PruneDecision] = []

    def other_worker_prunes() -> None:
        assert lock_is_free(target)
        seen.append(prune_session(theirs, SMALL, now=lambda: 111))

    decision = prune_session(
        ours, SMALL, now=lambda: 222, decider=_PausingDecider(other_worker_prunes)
    )
    assert seen[0].pruned_count == len(old)
    assert decision.pruned_count == 0 and decision.tokens_saved == 0
    assert "another worker" in decision.reason
    stamps = _pruned_at(target)
    assert [stamps[i] for i in old] == [111] * len(old)
    # The loser's view is the session as it is: the first worker's pruned results.
    assert all(ours.get_entry(i)["message"]["prunedAt"] == 111 for i in old)


def test_entries_appended_meanwhile_are_kept(target: str) -> None:
    old = _shared_session(target)
    ours, appender = SessionTree.open(target), SessionTree.open(target)
    added: list[str] = []

    def other_worker_appends() -> None:
        added.append(appender.append_message(user("Now run the tests.")))

    decision = prune_session(
        ours, SMALL, now=lambda: 222, decider=_PausingDecider(other_worker_appends)
    )
    assert decision.pruned_count == len(old)
    fresh = SessionTree.open(target, create=False)
    assert fresh.leaf_id == added[0]
    assert [fresh.get_entry(i)["message"]["prunedAt"] for i in old] == [222] * len(old)
    appender.append_message(assistant("They pass."))  # the appender goes on after the rewrite
    assert SessionTree.open(target, create=False).get_branch()[-2]["id"] == added[0]


# --- separate processes ------------------------------------------------------------------------


def _pruning_worker(target: str, stamp: int, meeting: Meeting) -> int:
    tree = SessionTree.open(target, create=False)
    decider = _PausingDecider(meeting.arrive)
    return prune_session(tree, SMALL, now=lambda: stamp, decider=decider).pruned_count


def test_two_processes_pruning_at_once_prune_each_result_once(target: str) -> None:
    old = _shared_session(target)
    meeting = Meeting(workers=2)
    added: list[str] = []

    def while_both_decided() -> None:
        assert lock_is_free(target)
        added.append(SessionTree.open(target).append_message(user("A third worker's turn.")))

    counts = run_workers(
        _pruning_worker,
        [(target, 1000, meeting), (target, 2000, meeting)],
        meeting,
        while_both_decided,
    )
    assert sorted(counts) == [0, len(old)]
    stamps = _pruned_at(target)
    winner = 1000 if counts[0] else 2000
    assert [stamps[i] for i in old] == [winner] * len(old)
    fresh = SessionTree.open(target, create=False)
    assert fresh.leaf_id == added[0]
