"""Rewrites against an appender that takes no lock, as pi appends (issue 15 item 1); the real
pi does the same in tests/differential/test_pi_concurrent.py."""

from __future__ import annotations

from pathlib import Path

from reliability.common import child_env
from reliability.unlocked import Appender, python_appender_command, race_rewrites, start_session

_TURNS = 150


def test_no_append_of_an_unlocked_writer_is_lost_to_a_loop_of_rewrites(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    start_session(path)
    command = python_appender_command(path, turns=_TURNS, pause_ms=5, output_bytes=1500)
    appender = Appender.start(command, cwd=tmp_path, env=child_env())
    stats = race_rewrites(path, appender, _TURNS, tmp_path / "home")
    assert not stats.problems, stats.problems[:5]
    assert stats.appended == 2 * _TURNS
    assert (stats.lost, stats.twice, stats.torn_lines) == (0, 0, 0)
    assert stats.rewrites >= 10 and stats.prunes >= 5, stats
