"""``contextree tree`` with several roots: each root is its own top-level branch (marked as a
fork is), never drawn as if it followed the previous root's last entry (the text output used
to draw ``a1 a2 a3 b1 b2`` as one chain)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_env import invoke
from core_helpers import Chain, assistant, header, jsonl, user

pytestmark = pytest.mark.usefixtures("clean_cli")


def _two_roots(path: Path) -> Path:
    chain = Chain()
    chain.msg(user("hello"))
    chain.msg(assistant("world"))
    chain.msg(user("more"))
    chain.msg(user("second root"), parent=None)
    chain.msg(assistant("ok"))
    path.write_bytes(jsonl(header(), *chain.entries))
    return path


def test_separate_roots_are_separate_top_level_branches(tmp_path: Path) -> None:
    result = invoke("tree", _two_roots(tmp_path / "s.jsonl"))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "session sess-1",
        "├── ◇ root 1",
        "│   ├── e001 user hello",
        "│   ├── e002 assistant world",
        "│   └── e003 user more",
        "└── ◆ root 2",
        "    ├── e004 user second root",
        "    └── e005 assistant ok  ◀ leaf",
    ]


def test_navigating_to_the_first_message_shows_the_new_root_apart(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    chain = Chain()
    chain.msg(user("hello"))
    chain.msg(assistant("world"))
    path.write_bytes(jsonl(header(), *chain.entries))
    assert invoke("navigate", path, "e001").exit_code == 0  # a new root: the leaf entry
    lines = invoke("tree", path).output.splitlines()
    assert lines[1] == "├── ◇ root 1" and lines[4].startswith("└── ◆ root 2")
    assert lines[5].startswith("    └── ") and lines[5].endswith("◀ leaf")


def test_one_root_is_drawn_as_before(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    chain = Chain()
    chain.msg(user("hello"))
    chain.msg(assistant("world"))
    path.write_bytes(jsonl(header(), *chain.entries))
    assert invoke("tree", path).output.splitlines() == [
        "session sess-1",
        "├── e001 user hello",
        "└── e002 assistant world  ◀ leaf",
    ]
