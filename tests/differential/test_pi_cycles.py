"""pi 0.73.1 still builds the leaf's context of a file with a parent cycle after our moves
(issue 15 item 8).

pi walks a branch from the file's last entry without a guard against cycles; before the fix a
``navigate`` onto a cycle appended its ``contextree.leaf`` entry there, and pi hung building that
leaf's context. Now a move onto a cycle is refused (``tests/cli/test_parent_cycles.py``) and a
move elsewhere in the same file writes under a chain that ends: pi loads the result and builds
the context of its leaf. A hang would show as the driver's timeout.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from contextree.branching.navigate import navigate_tree
from contextree.errors import ParentCycleError
from contextree.session.tree import SessionTree
from core_helpers import header, user, user_entry
from differential.installs import Install

pytestmark = pytest.mark.differential


FILES = {
    "parent loop": (
        [user_entry("a0000000", "b0000000", "a"), user_entry("b0000000", "a0000000", "b")],
        "a0000000",
    ),
    "duplicate ids": (
        [
            user_entry("d1000000", "r0000000", "first d1"),
            user_entry("d2000000", "d1000000", "d2"),
            user_entry("d1000000", "d2000000", "second d1"),
        ],
        "d2000000",
    ),
}


def test_pi_builds_the_leaf_context_after_our_moves_in_a_file_with_a_cycle(
    pi: Install, tmp_path: Path
) -> None:
    jobs = []
    for name, (entries, cyclic) in FILES.items():
        path = tmp_path / f"{name.replace(' ', '-')}.jsonl"
        lines = [header(), user_entry("r0000000", None, "root"), *entries]
        lines.append(user_entry("g0000000", "r0000000", "good"))
        lines.append(
            {
                **user_entry("h0000000", "g0000000", "reply"),
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "ok"}],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "m",
                    "usage": {
                        "input": 1,
                        "output": 1,
                        "cacheRead": 0,
                        "cacheWrite": 0,
                        "totalTokens": 2,
                        "cost": {
                            "input": 0,
                            "output": 0,
                            "cacheRead": 0,
                            "cacheWrite": 0,
                            "total": 0,
                        },
                    },
                    "stopReason": "stop",
                    "timestamp": 0,
                },
            }
        )
        path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
        tree = SessionTree.open(path)
        with pytest.raises(ParentCycleError):
            asyncio.run(navigate_tree(tree, cyclic, persist=True))
        moved = asyncio.run(navigate_tree(tree, "g0000000", persist=True))
        assert moved.leaf_entry_id is not None  # written under the root: a chain that ends
        tree.append_message(user("and on from there"))
        jobs.append({"file": str(path), "leaves": [tree.leaf_id]})
    for job, result in zip(jobs, pi.run(jobs, tmp_path / "home"), strict=True):
        leaf = job["leaves"][0]
        assert result["leafId"] == leaf
        messages = result["contexts"][leaf]["messages"]
        assert len(messages) == 2  # root, then our message: the move left "good" behind
