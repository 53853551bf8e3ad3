"""Concurrent writers on one session file (see :mod:`reliability.concurrency`).

``tests/session/test_tree.py`` already has four processes appending through the library; here
the appenders run while ``contextree prune`` (an atomic rewrite), ``compact``, ``navigate
--summarize`` and ``check --repair`` write the same file from other processes.
"""

from __future__ import annotations

from pathlib import Path

from reliability.concurrency import run_concurrency


def test_appenders_and_cli_rewrites_at_once_lose_nothing(tmp_path: Path) -> None:
    stats = run_concurrency(tmp_path, writers=3, minimum=60, rounds=1, seed=1)
    assert not stats.problems, "\n".join(stats.problems)
    assert stats.torn_lines == 0 and stats.lost == 0
    assert stats.appends >= 3 * 60
    assert stats.cli_runs == {"prune": 2, "compact": 1, "navigate": 1, "check": 1}
    # Every line is an entry: the appends, the header, and what the commands wrote.
    assert stats.lines > stats.appends
