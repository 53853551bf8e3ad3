"""``uncompact`` then ``compact`` again leaves a tree pi 0.73.1 opens at the same leaf with the
same context (issue 26 item 5): the undo is a move in the tree (a ``contextree.leaf`` entry),
nothing is deleted, and the next compaction is written under it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from contextree.branching.uncompact import uncompact
from contextree.compaction import OfflineSummarizer, compact_session
from contextree.session.tree import SessionTree
from differential.installs import Install
from differential.pi_checks import check_contexts, pi_settings
from recall.recall_session import add_turns, compacted_file

pytestmark = pytest.mark.differential


def _pi_sees(pi: Install, tree: SessionTree, home: Path) -> None:
    assert tree.path is not None
    job = {"file": str(tree.path), "leaves": [tree.leaf_id]}
    [answer] = pi.run([job], home)
    assert answer["leafId"] == tree.leaf_id  # pi loads the file at our leaf
    assert check_contexts(SessionTree.open(tree.path), answer) == 1


def test_uncompact_then_compact_again(pi: Install, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    tree = compacted_file(path)
    add_turns(tree, 12, start=100)
    asyncio.run(compact_session(tree, OfflineSummarizer(), settings=pi_settings(2000)))
    lines = len(path.read_bytes().splitlines())
    second = tree.latest_compaction()
    assert second is not None

    undone = uncompact(SessionTree.open(path), persist=True)
    assert undone is not None and undone.compaction_id == second["id"]
    assert len(path.read_bytes().splitlines()) == lines + 1  # one leaf entry, nothing deleted
    _pi_sees(pi, SessionTree.open(path), tmp_path / "home1")

    again = SessionTree.open(path)
    first = again.latest_compaction()
    assert first is not None and first["id"] != second["id"]  # the earlier one is in effect
    asyncio.run(compact_session(again, OfflineSummarizer(), settings=pi_settings(2000)))
    latest = again.latest_compaction()
    assert latest is not None and latest["id"] not in (first["id"], second["id"])
    _pi_sees(pi, again, tmp_path / "home2")
