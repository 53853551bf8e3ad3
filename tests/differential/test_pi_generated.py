"""Generated session trees against pi 0.73.1 itself (node): contexts of every entry as the leaf,
their LLM messages and serialization, ``prepare_compaction`` of every leaf at five keep budgets,
and the branch collection of every move from a tip.

Sessions come from seeds (``generate``); ``CONTEXTREE_DIFFERENTIAL_SEED`` picks another first
seed (``CONTEXTREE_DIFFERENTIAL_SESSIONS`` how many), to explore beyond the fixed ones. All
sessions go to one node process.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from contextree.session import SessionTree
from differential.generate import KEEPS, generate_session
from differential.installs import Install
from differential.pi_checks import branch_pairs, check_branches, check_contexts, check_prepare

pytestmark = pytest.mark.differential

FIRST_SEED = int(os.environ.get("CONTEXTREE_DIFFERENTIAL_SEED", "1100"))
SESSIONS = int(os.environ.get("CONTEXTREE_DIFFERENTIAL_SESSIONS", "30"))
SEEDS = range(FIRST_SEED, FIRST_SEED + SESSIONS)

Json = dict[str, Any]


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[Path, bytes]]:
    folder = tmp_path_factory.mktemp("generated")
    out = {}
    for seed in SEEDS:
        path = folder / f"session-{seed}.jsonl"
        generate_session(seed, path)
        out[seed] = (path, path.read_bytes())
    return out


@pytest.fixture(scope="module")
def answers(
    pi: Install, sessions: dict[int, tuple[Path, bytes]], tmp_path_factory: pytest.TempPathFactory
) -> dict[int, Json]:
    jobs = []
    for path, _ in sessions.values():
        tree = SessionTree.open(path)
        jobs.append(
            {
                "file": str(path),
                "leaves": None,
                "serialize": True,
                "hashText": True,
                "prepare": {"leaves": None, "keep": list(KEEPS)},
                "pairs": branch_pairs(tree),
            }
        )
    results = pi.run(jobs, tmp_path_factory.mktemp("pi-home"))
    return dict(zip(sessions, results, strict=True))


@pytest.mark.parametrize("seed", SEEDS)
def test_pi_opens_the_file_as_written_with_our_leaf_and_entries(
    seed: int, sessions: dict[int, tuple[Path, bytes]], answers: dict[int, Json]
) -> None:
    path, written = sessions[seed]
    answer = answers[seed]
    tree = SessionTree.open(path)
    assert path.read_bytes() == written  # pi changed nothing
    assert answer["version"] == "0.73.1"
    assert answer["leafId"] == tree.leaf_id
    assert answer["ids"] == [e["id"] for e in tree.get_entries()]
    for entry in tree.get_entries():
        if entry["type"] == "message":
            assert answer["messages"][entry["id"]] == entry["message"]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_context_of_every_leaf_equals_pi(
    seed: int, sessions: dict[int, tuple[Path, bytes]], answers: dict[int, Json]
) -> None:
    tree = SessionTree.open(sessions[seed][0])
    assert check_contexts(tree, answers[seed], hashed=True) == len(tree.get_entries())


@pytest.mark.parametrize("seed", SEEDS)
def test_prepare_compaction_of_every_leaf_equals_pi(
    seed: int, sessions: dict[int, tuple[Path, bytes]], answers: dict[int, Json]
) -> None:
    tree = SessionTree.open(sessions[seed][0])
    seen = check_prepare(tree, answers[seed], hashed=True)
    assert sum(seen.values()) == len(tree.get_entries()) * len(KEEPS)


def test_the_generated_sessions_reach_every_kind_of_plan(
    sessions: dict[int, tuple[Path, bytes]], answers: dict[int, Json]
) -> None:
    """Across the seeds, plans equal pi's, plans pi splits where we do not (decision 2), plans
    with nothing to summarize (decision 4) and pi's own refusals all occur."""
    totals = {"equal": 0, "nothing": 0, "split_turn_rule": 0, "none": 0}
    split = 0
    for seed, (path, _) in sessions.items():
        tree = SessionTree.open(path)
        for kind, count in check_prepare(tree, answers[seed], hashed=True).items():
            totals[kind] += count
        split += sum(
            1
            for by_keep in answers[seed]["prepare"].values()
            for plan in by_keep.values()
            if plan and plan["isSplitTurn"] and plan["turnPrefixMessages"]
        )
    assert all(totals.values()), totals
    assert split > 0  # real split turns with a prefix, equal to pi's


@pytest.mark.parametrize("seed", SEEDS)
def test_branch_collection_equals_pi(
    seed: int, sessions: dict[int, tuple[Path, bytes]], answers: dict[int, Json]
) -> None:
    tree = SessionTree.open(sessions[seed][0])
    assert check_branches(tree, answers[seed]) > 0
