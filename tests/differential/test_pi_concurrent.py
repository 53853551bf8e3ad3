"""The real pi appending to a session while contextree rewrites it (issue 15 item 1).

pi 0.73.1 appends with ``appendFileSync`` and never takes contextree's lock; an append it starts
just before one of our renames lands in the old inode. This runs pi's own SessionManager
(``pi_appender.mjs``) against the library's rewrites and the ``contextree prune`` command and
checks, from both sides, that no line pi wrote is lost or broken
(harness: ``tests/reliability/unlocked.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from differential.installs import Install
from differential.pi_writer import assert_pi_reaches, start_pi_appender
from reliability.unlocked import race_rewrites, start_session

pytestmark = pytest.mark.differential

_TURNS = 500


def test_no_pi_append_is_lost_to_a_loop_of_rewrites(pi: Install, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    start_session(path)
    appender = start_pi_appender(pi, path, turns=_TURNS, pause_ms=5, output_bytes=1500)
    stats = race_rewrites(path, appender, _TURNS, tmp_path / "home")
    assert not stats.problems, stats.problems[:5]
    assert (stats.lost, stats.twice, stats.torn_lines) == (0, 0, 0)
    # Enough rewrites raced pi (their number depends on the machine's load).
    assert stats.rewrites >= 20 and stats.prunes >= 10 and stats.cli_prunes >= 1, stats
    assert_pi_reaches(pi, path, stats.ids, tmp_path / "pi-home")
