"""The real pi appending to a session while contextree rewrites it (issue 15 items 1 and 8).

pi 0.73.1 appends with ``appendFileSync`` and never takes contextree's lock; an append it starts
just before one of our renames lands in the old inode. These tests run pi's own SessionManager
(``pi_appender.mjs``) against contextree's writers and check, from both sides, that no line pi
wrote is lost or broken.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from contextree.compaction.prune import prune_session
from contextree.session import SessionTree
from contextree.settings import PruneSettings
from core_helpers import assistant, header, jsonl, user
from differential.installs import Install
from differential.pi_writer import PiAppender, assert_both_read, entries_in_file

pytestmark = pytest.mark.differential

_TURNS = 500
_PRUNE = PruneSettings(protect_tokens=300, minimum_savings=0)


def _start_session(path: Path) -> None:
    # pi writes nothing until the session has an assistant message: start with one.
    first = {
        "type": "message",
        "id": "a0000001",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": user("run the logs"),
    }
    second = {
        "type": "message",
        "id": "a0000002",
        "parentId": "a0000001",
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": assistant("on it"),
    }
    path.write_bytes(jsonl(header(), first, second))


def _rewrite_once(path: Path, round_number: int) -> bool:
    """What ``contextree prune`` does (open, prune, one atomic rewrite); when there is nothing
    to prune, rewrite the first message instead. Returns whether it pruned."""
    tree = SessionTree.open(path)
    try:
        if prune_session(tree, _PRUNE).pruned_count:
            return True
        first = tree.get_entries()[0]
        message = {**first["message"], "content": [{"type": "text", "text": f"r{round_number}"}]}
        tree.rewrite_entries([{**first, "message": message}])
        return False
    finally:
        tree.store.close()  # type: ignore[attr-defined]


def test_no_pi_append_is_lost_to_a_loop_of_rewrites(pi: Install, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    _start_session(path)
    appender = PiAppender.start(pi, path, turns=_TURNS, pause_ms=5, output_bytes=1500)
    rounds = prunes = cli_prunes = 0
    while appender.running():
        if rounds % 40 == 20:
            # Now and then the command itself, in its own process.
            done = subprocess.run(
                [sys.executable, "-m", "contextree", "prune", str(path)],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
                env={
                    "PATH": "/usr/bin:/bin",
                    "HOME": str(tmp_path),
                    "CONTEXTREE_PRUNING_PROTECT_TOKENS": "300",
                    "CONTEXTREE_PRUNING_MINIMUM_SAVINGS": "0",
                },
            )
            assert done.returncode == 0, done.stderr
            cli_prunes += 1
        elif _rewrite_once(path, rounds):
            prunes += 1
        rounds += 1
    pi_ids = appender.collect()
    assert len(pi_ids) == 2 * _TURNS
    # Enough rewrites raced pi (their number depends on the machine's load).
    assert rounds >= 20 and prunes >= 10 and cli_prunes >= 1, (rounds, prunes, cli_prunes)
    assert_both_read(pi, path, pi_ids, tmp_path / "pi-home")
    # Pruning kept each tool output (in prunedContent once pruned).
    results = [e for e in entries_in_file(path) if e.get("message", {}).get("role") == "toolResult"]
    marks = {f"PI-MARK-{n} " for n in range(_TURNS)}
    found = {m for e in results for m in marks if m in str(e["message"])}
    assert found == marks
