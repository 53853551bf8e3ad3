"""Issue 24 point 4: every command says the same thing about a parent cycle.

A leaf whose parent chain loops is refused, with the one ``ParentCycleError`` line, by every
command that reads the path to it (``info``, ``tree``, ``context``, ``compact`` and ``prune``,
dry runs included); ``check`` reports the cycle's entries in the same words; ``navigate`` checks
its target instead, so it can move the leaf off the cycle. A cycle away from the leaf leaves
those commands working, and ``info`` counts it among the problems.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli_env import invoke, ok
from core_helpers import header, user_entry

pytestmark = pytest.mark.usefixtures("clean_cli")

ROOT = user_entry("r0000000", None, "root")
GOOD = user_entry("g0000000", "r0000000", "a good branch")
CASES: dict[str, tuple[dict[str, Any], ...]] = {
    "parent loop": (
        user_entry("a0000000", "b0000000", "in a loop"),
        user_entry("b0000000", "a0000000", "also"),
    ),
    "self-parent": (user_entry("s0000000", "s0000000", "its own parent"),),
    "duplicate ids": (
        user_entry("d1000000", "r0000000", "first d1"),
        user_entry("d2000000", "d1000000", "d2"),
        user_entry("d1000000", "d2000000", "second d1"),
    ),
}
READERS = [
    ["info"],
    ["tree"],
    ["context"],
    ["context", "--format", "json"],
    ["context", "--format", "openai"],
    ["compact", "--dry-run"],
    ["compact"],
    ["prune", "--dry-run"],
    ["prune"],
]


def _file(path: Path, *entries: dict[str, Any]) -> bytes:
    data = b"".join(json.dumps(e).encode() + b"\n" for e in (header(), *entries))
    path.write_bytes(data)
    return data


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_leaf_on_a_cycle_is_refused_alike_by_every_reader(tmp_path: Path, case: str) -> None:
    path = tmp_path / "s.jsonl"
    original = _file(path, ROOT, GOOD, *CASES[case])
    said = set()
    for args in READERS:
        result = invoke(*args, path)
        assert result.exit_code == 1, (args, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {path}:"), (args, result.output)
        assert "its parent chain loops back on itself" in lines[0]
        said.add(lines[0])
    assert len(said) == 1, said  # the same line from every command
    assert path.read_bytes() == original
    # check names the same cycle, in the same words
    checked = invoke("check", path)
    assert checked.exit_code == 1
    flat = " ".join(checked.output.split())
    shown = said.pop().split("(", 1)[1].split(")", 1)[0]
    assert f"its parent chain loops back on itself ({shown})" in flat


@pytest.mark.parametrize("case", sorted(CASES))
def test_navigate_moves_the_leaf_off_the_cycle(tmp_path: Path, case: str) -> None:
    path = tmp_path / "s.jsonl"
    _file(path, ROOT, GOOD, *CASES[case])
    ok("navigate", path, "g0000000")
    for args in READERS:
        ok(*args, path)


def test_a_cycle_away_from_the_leaf_is_a_problem_info_counts(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _file(path, *CASES["parent loop"], ROOT, GOOD)
    info = ok("info", path).stdout
    assert "2 (run contextree check)" in info
    assert "none found" not in info
    assert "2 messages" in ok("context", path).stdout.splitlines()[-1]
    assert invoke("check", path).exit_code == 1
