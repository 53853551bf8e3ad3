"""pi's own two session files (v1, ~1,000 entries each) against pi 0.73.1 itself.

pi migrates a copy (fresh ids, rewritten in place, as pi does on open); on that copy our
context, LLM messages and serialization equal pi's at a sample of leaves (every tenth entry,
the entries around each compaction, the last one), ``prepare_compaction`` at fewer leaves and
three budgets, and branch collections of moves from the last entry. Our own migration of the
untouched v1 file gives pi's entries, ids aside. Long texts are compared as hashes.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from contextree.session import SessionTree
from differential.installs import Install
from differential.pi_checks import check_branches, check_contexts, check_prepare
from pi_fixtures import pi_fixture

pytestmark = pytest.mark.differential

FILES = ("large-session.jsonl", "before-compaction.jsonl")
KEEPS = (20000, 3000, 300)

Json = dict[str, Any]


def _sample(ids: list[str], types: list[str], every: int) -> list[str]:
    picked = set(ids[::every]) | {ids[-1]}
    for index, kind in enumerate(types):
        if kind == "compaction":
            picked.update(ids[max(0, index - 2) : index + 3])
    return [i for i in ids if i in picked]


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """Per fixture: a copy for pi to migrate, and an untouched v1 copy for us."""
    folder = tmp_path_factory.mktemp("fixtures")
    out = {}
    for name in FILES:
        for_pi, original = folder / f"pi-{name}", folder / f"v1-{name}"
        shutil.copyfile(pi_fixture(name), for_pi)
        shutil.copyfile(pi_fixture(name), original)
        out[name] = (for_pi, original)
    return out


@pytest.fixture(scope="module")
def answers(
    pi: Install, copies: dict[str, tuple[Path, Path]], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Json]:
    home = tmp_path_factory.mktemp("pi-home")
    # First pass: pi migrates the copies; the sample needs their new ids.
    pi.run([{"file": str(p), "leaves": []} for p, _ in copies.values()], home)
    jobs = []
    for for_pi, _ in copies.values():
        tree = SessionTree.open(for_pi)
        ids = [str(e["id"]) for e in tree.get_entries()]
        types = [str(e["type"]) for e in tree.get_entries()]
        jobs.append(
            {
                "file": str(for_pi),
                "leaves": _sample(ids, types, 10),
                "serialize": True,
                "hashText": True,
                "prepare": {"leaves": _sample(ids, types, 60), "keep": list(KEEPS)},
                "pairs": [[ids[-1], target] for target in _sample(ids, types, 40)],
            }
        )
    return dict(zip(copies, pi.run(jobs, home), strict=True))


@pytest.mark.parametrize("name", FILES)
def test_contexts_at_sampled_leaves_equal_pi(
    name: str, copies: dict[str, tuple[Path, Path]], answers: dict[str, Json]
) -> None:
    tree = SessionTree.open(copies[name][0])
    assert tree.header["version"] == 3  # pi's migration, written back
    assert answers[name]["leafId"] == tree.leaf_id
    assert check_contexts(tree, answers[name], hashed=True, whole_list=False) > 100


@pytest.mark.parametrize("name", FILES)
def test_prepare_compaction_at_sampled_leaves_equals_pi(
    name: str, copies: dict[str, tuple[Path, Path]], answers: dict[str, Json]
) -> None:
    tree = SessionTree.open(copies[name][0])
    seen = check_prepare(tree, answers[name], hashed=True)
    assert seen["equal"] > 20, seen


@pytest.mark.parametrize("name", FILES)
def test_branch_collection_equals_pi(
    name: str, copies: dict[str, tuple[Path, Path]], answers: dict[str, Json]
) -> None:
    tree = SessionTree.open(copies[name][0])
    assert check_branches(tree, answers[name]) > 20


@pytest.mark.parametrize("name", FILES)
def test_our_migration_of_the_v1_file_gives_pis_entries(
    name: str, copies: dict[str, tuple[Path, Path]], answers: dict[str, Json]
) -> None:
    """Ids are fresh on both sides; mapped by position, every entry is the same."""
    theirs = SessionTree.open(copies[name][0]).get_entries()
    ours = SessionTree.open(copies[name][1]).get_entries()
    assert len(ours) == len(theirs)
    to_pi = {a["id"]: b["id"] for a, b in zip(ours, theirs, strict=True)}
    to_pi[None] = None
    for a, b in zip(ours, theirs, strict=True):
        mapped = {**a, "id": to_pi[a["id"]], "parentId": to_pi[a.get("parentId")]}
        if "firstKeptEntryId" in a:
            mapped["firstKeptEntryId"] = to_pi[a["firstKeptEntryId"]]
        assert mapped == b
