"""The recall index of a session file notices what the real pi 0.73.1 appended (pi knows
nothing of the index) and indexes it on the next use (issue 26)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextree.recall import open_recall_index, recall
from contextree.session.tree import SessionTree
from differential.installs import Install
from differential.pi_writer import start_pi_appender
from recall.recall_session import PORT, compacted_file

pytestmark = pytest.mark.differential


def test_entries_pi_appends_are_noticed_and_indexed(pi: Install, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    tree = compacted_file(path)
    before_pi = tree.leaf_id
    assert recall(tree, PORT).hits  # the index is built
    appender = start_pi_appender(pi, path, turns=3, pause_ms=0, output_bytes=40)
    pi_ids = appender.collect()
    assert len(pi_ids) == 6
    reopened = SessionTree.open(path)
    assert reopened.leaf_id == pi_ids[-1]
    index = open_recall_index(reopened)
    report = index.sync(reopened)
    assert (report.reason, report.added) == ("appended", 6)
    # Searched from the leaf before pi's turns: they are a branch the leaf has not reached.
    found = recall(reopened, "PI-MARK-1", leaf_id=before_pi, all_branches=True, index=index)
    assert [hit.entry_id for hit in found.hits] == [pi_ids[3]]
    assert recall(reopened, PORT, index=index).hits  # the earlier entries are still there
    index.close()
