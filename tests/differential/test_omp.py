"""contextree and oh-my-pi 18.2.3 (bun) on each other's files, and a file contextree's own
commands write, read back by pi 0.73.1 and oh-my-pi.

- A session oh-my-pi's ``SessionManager`` writes (tool calls, !bash, a custom message, a
  compaction with ``shortSummary`` / ``preserveData`` / ``tokensAfter`` / ``method``, a branch
  summary, labels, a ``/clear`` boundary, a title) opens in contextree with oh-my-pi's leaf,
  title and labels, and every leaf's context is oh-my-pi's.
- contextree appends to that file (a turn, a compaction, a move with a branch summary);
  oh-my-pi reads the result, title slot and all, and its contexts are still ours.
- The generated sessions (``generate``, here with ``/clear`` boundaries too) open in oh-my-pi
  unchanged, with our contexts.
- A session written by ``compact_session`` (offline summarizer), ``navigate_tree`` with a
  branch summary, ``persist_leaf`` and ``prune_session`` opens in pi and in oh-my-pi with our
  leaf and contexts (and pi's plans and branch collections).
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from contextree.branching.navigate import navigate_tree
from contextree.compaction.offline import OfflineSummarizer
from contextree.compaction.run import CompactionOutcome, compact_session
from contextree.session import SessionTree
from contextree.settings import CompactionSettings
from differential.generate import KEEPS, generate_session
from differential.installs import Install
from differential.omp_checks import check_omp_contexts
from differential.pi_checks import branch_pairs, check_branches, check_contexts, check_prepare
from differential.workflow import new_session, write_session

pytestmark = pytest.mark.differential

GENERATED = range(2200, 2215)

Json = dict[str, Any]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def made(omp: Install, home: Path, tmp_path_factory: pytest.TempPathFactory) -> Json:
    """A session oh-my-pi wrote, with oh-my-pi's contexts of it."""
    (answer,) = omp.run([{"op": "make", "dir": str(tmp_path_factory.mktemp("omp"))}], home)
    return answer


# --- files oh-my-pi writes --------------------------------------------------------------------


def test_a_file_oh_my_pi_wrote_opens_with_its_leaf_title_labels_and_messages(made: Json) -> None:
    tree = SessionTree.open(made["file"])
    assert tree.report.clean
    assert tree.title == made["title"] == "Pager fixes"
    assert tree.leaf_id == made["leafId"]
    assert tree.labels() == made["labels"] and len(made["labels"]) == 2
    for entry in tree.get_entries():
        if entry["type"] == "message":
            assert made["messages"][entry["id"]] == entry["message"]
    kinds = {e["type"] for e in tree.get_entries()}
    assert {"compaction", "branch_summary", "reset_boundary", "title_change", "label"} <= kinds


def test_every_context_of_a_file_oh_my_pi_wrote_is_oh_my_pis(made: Json) -> None:
    tree = SessionTree.open(made["file"])
    assert check_omp_contexts(tree, made) == len(tree.get_entries())
    marks = made["marks"]
    # The cases the file was written for: after the compaction the summary (with its short
    # summary) and the kept user message come first; after /clear only what follows it.
    after = tree.build_session_context(marks["tip"]).messages
    assert after[0]["role"] == "compactionSummary" and "shortSummary" in after[0]
    assert after[1] == tree.get_entry(marks["keptUser"])["message"]  # type: ignore[index]
    last = tree.build_session_context().messages
    assert [m["role"] for m in last] == ["user", "assistant"]


def test_oh_my_pi_reads_what_contextree_appends_to_its_file(
    omp: Install, made: Json, home: Path, tmp_path: Path
) -> None:
    path = tmp_path / "appended.jsonl"
    shutil.copyfile(made["file"], path)
    slot = path.read_bytes().split(b"\n", 1)[0]
    tree = SessionTree.open(path)
    tree.append_message({"role": "user", "content": "Continue from contextree.", "timestamp": 5})
    outcome = asyncio.run(
        compact_session(
            tree,
            OfflineSummarizer(),
            settings=CompactionSettings(keep_recent_tokens=5, adjust_keep_recent_by_usage=False),
        )
    )
    assert isinstance(outcome, CompactionOutcome)
    result = asyncio.run(
        navigate_tree(tree, made["marks"]["tip"], summarize=True, client=OfflineSummarizer())
    )
    assert result.summary_entry is not None
    tree.append_message({"role": "user", "content": "Back on the first branch.", "timestamp": 6})
    assert path.read_bytes().split(b"\n", 1)[0] == slot  # the title slot, byte for byte

    (answer,) = omp.run([{"op": "contexts", "file": str(path)}], home)
    reopened = SessionTree.open(path)
    assert answer["title"] == reopened.title == "Pager fixes"
    assert check_omp_contexts(reopened, answer) == len(reopened.get_entries())


# --- files contextree writes ------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[Path, bytes]]:
    folder = tmp_path_factory.mktemp("generated")
    out = {}
    for seed in GENERATED:
        path = folder / f"session-{seed}.jsonl"
        generate_session(seed, path, resets=True)
        out[seed] = (path, path.read_bytes())
    return out


def test_generated_sessions_open_in_oh_my_pi_unchanged_with_our_contexts(
    omp: Install, generated: dict[int, tuple[Path, bytes]], home: Path
) -> None:
    jobs = [{"op": "contexts", "file": str(path)} for path, _ in generated.values()]
    for (path, written), answer in zip(generated.values(), omp.run(jobs, home), strict=True):
        assert path.read_bytes() == written
        tree = SessionTree.open(path)
        assert check_omp_contexts(tree, answer) == len(tree.get_entries())


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes, dict[str, str]]:
    """A session written by contextree's compaction, navigation, leaf and prune code."""
    path = tmp_path_factory.mktemp("workflow") / "session.jsonl"
    marks = write_session(new_session(path))
    return path, path.read_bytes(), marks


def test_a_session_contextree_wrote_opens_in_pi_with_our_contexts_plans_and_branches(
    pi: Install, written: tuple[Path, bytes, dict[str, str]], home: Path
) -> None:
    path, data, marks = written
    tree = SessionTree.open(path)
    job = {
        "file": str(path),
        "leaves": None,
        "serialize": True,
        "prepare": {"leaves": None, "keep": list(KEEPS)},
        "pairs": branch_pairs(tree, extra=[marks["abandoned"], marks["tip"]]),
    }
    (answer,) = pi.run([job], home)
    assert path.read_bytes() == data
    assert answer["leafId"] == tree.leaf_id
    assert check_contexts(tree, answer) == len(tree.get_entries())
    assert check_prepare(tree, answer)["equal"] > 0
    assert check_branches(tree, answer) > 0


def test_a_session_contextree_wrote_opens_in_oh_my_pi_with_our_contexts(
    omp: Install, written: tuple[Path, bytes, dict[str, str]], home: Path
) -> None:
    path, data, marks = written
    (answer,) = omp.run([{"op": "contexts", "file": str(path)}], home)
    assert path.read_bytes() == data
    tree = SessionTree.open(path)
    assert check_omp_contexts(tree, answer) == len(tree.get_entries())
    # The pruned results are in the context there, as the placeholder we wrote.
    pruned = [
        m
        for m in tree.build_session_context(marks["tip"]).messages
        if m.get("role") == "toolResult" and "prunedAt" in m
    ]
    assert pruned and all(m["content"][0]["text"].startswith("[Output truncated") for m in pruned)
