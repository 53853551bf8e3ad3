"""Crash safety: SIGKILL at random points of appends, compaction, pruning, navigation and the
v1 -> v3 migration; see :mod:`reliability.crash` for the harness and the checks.

The seed comes from ``RELIABILITY_SEED`` or is drawn at random; every failure names it, and
``RELIABILITY_SEED=<seed> pytest tests/reliability/test_crash_safety.py`` replays the run.
``python -m bench.reliability`` runs the same harness for many more iterations.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from pi_fixtures import pi_fixture
from reliability.crash import SCENARIOS, kill_at_every_io, run_crash_campaign
from reliability.faults import build_session

SEED = int(os.environ.get("RELIABILITY_SEED") or random.randrange(2**32))
ITERATIONS = 30


def _report(problems: list[str]) -> str:
    return f"seed {SEED} (replay with RELIABILITY_SEED={SEED}):\n" + "\n".join(problems[:20])


def test_random_kills_lose_no_entry_whose_append_returned(tmp_path: Path) -> None:
    stats = run_crash_campaign(
        tmp_path, iterations=ITERATIONS, seed=SEED, v1_fixture=pi_fixture("large-session.jsonl")
    )
    assert not stats.problems, _report(stats.problems)
    assert stats.entries_lost == 0
    assert stats.iterations == ITERATIONS
    assert set(stats.per_scenario) == set(SCENARIOS)
    # Most workers must really die mid-way, or the test proves little.
    assert stats.killed >= ITERATIONS // 2, _report([f"only {stats.killed} kills"])
    assert stats.killed_at_io and stats.killed_by_timer


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_kill_at_every_io_call_leaves_a_usable_file(tmp_path: Path, scenario: str) -> None:
    # Exhaustive over the scenario's writes, fsyncs and renames: the rewrite of pruning and of
    # the migration is interrupted at every step, and the file is the old or the new one.
    if scenario == "migrate":
        start = pi_fixture("large-session.jsonl")
    else:
        start = tmp_path / "start.jsonl"
        build_session(start)
    stats = kill_at_every_io(tmp_path / "work", scenario=scenario, start=start, seed=SEED)
    assert not stats.problems, _report(stats.problems)
    assert stats.killed == stats.iterations >= 2
    if scenario in ("prune", "migrate"):
        assert stats.rewrites_interrupted >= 1
