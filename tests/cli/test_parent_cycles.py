"""Nothing is written under a parent cycle (issue 15 item 8).

pi walks a branch from the file's last entry by ``parentId`` with no guard against cycles, so an
entry written under a cycle - through a ``parentId`` loop, a self-parent, or duplicate ids that
make a loop once the last line of an id wins - leaves a file pi hangs on. ``navigate`` (the
command and the library's ``navigate_tree``) and every append (``branch_with_summary``
included) refuse with one line naming the file and the entry, and leave the file as it was.
``contextree check`` finds the same cycles with the same walk (``parent_cycle``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from cli_env import invoke
from contextree.branching.navigate import navigate_tree
from contextree.compaction.offline import OfflineSummarizer
from contextree.errors import ParentCycleError
from contextree.session.check import check_session
from contextree.session.tree import SessionTree
from core_helpers import header, user, user_entry

pytestmark = pytest.mark.usefixtures("clean_cli")


def _file(path: Path, *entries: dict[str, Any]) -> bytes:
    data = b"".join(json.dumps(e).encode() + b"\n" for e in (header(), *entries))
    path.write_bytes(data)
    return data


ROOT = user_entry("r0000000", None, "root")
GOOD = user_entry("g0000000", "r0000000", "a good branch")
LOOP = (user_entry("a0000000", "b0000000", "in a loop"), user_entry("b0000000", "a0000000", "also"))
SELF = (
    user_entry("s0000000", "s0000000", "its own parent"),
    user_entry("t0000000", "s0000000", "under it"),
)
# Duplicate ids: d1's second line wins and hangs it under d2, which hangs under d1.
DUPLICATES = (
    user_entry("d1000000", "r0000000", "first d1"),
    user_entry("d2000000", "d1000000", "d2"),
    user_entry("d1000000", "d2000000", "second d1"),
)

# The entries, the target, and the entry a move there would write under: the target's parent
# for a user message (pi puts it back in the editor), the target itself otherwise.
CASES = {
    "parent loop": ((*LOOP, GOOD), "a0000000", "b0000000"),
    "self-parent": ((*SELF, GOOD), "t0000000", "s0000000"),
    "duplicate ids": ((*DUPLICATES, GOOD), "d2000000", "d1000000"),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("summarize", [False, True])
def test_navigate_refuses_a_target_under_a_cycle(
    tmp_path: Path, case: str, summarize: bool
) -> None:
    entries, target, named = CASES[case]
    path = tmp_path / "s.jsonl"
    original = _file(path, ROOT, *entries)
    args = ["navigate", path, target, *(["--summarize"] if summarize else [])]
    result = invoke(*args)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    assert f"{path}:" in errors[0] and f"entry {named}:" in errors[0]
    assert "parent chain loops back on itself" in errors[0]
    assert path.read_bytes() == original
    # The cycle the command refused is one that check reports.
    found = check_session(SessionTree.open(path))
    cycle = {f.entry_id for f in found.errors if "loops back on itself" in f.message}
    assert cycle and all(entry_id in errors[0] for entry_id in cycle)


def test_navigate_to_a_good_entry_still_works_in_a_file_with_a_cycle(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _file(path, ROOT, GOOD, *LOOP)
    result = invoke("navigate", path, "g0000000")
    assert result.exit_code == 0, result.output
    tree = SessionTree.open(path)
    # A user message target goes back to the editor: the move lands on its parent, on disk.
    assert tree.get_branch()[-2]["id"] == "r0000000"


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_library_refuses_to_write_under_a_cycle(tmp_path: Path, case: str) -> None:
    entries, target, named = CASES[case]
    path = tmp_path / "s.jsonl"
    original = _file(path, ROOT, *entries)
    tree = SessionTree.open(path)
    with pytest.raises(ParentCycleError, match=named) as raised:
        asyncio.run(
            navigate_tree(tree, target, summarize=True, client=OfflineSummarizer(), persist=True)
        )
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)
    assert raised.value.entry_id == named and named in raised.value.cycle
    with pytest.raises(ParentCycleError, match=f"entry {target}:"):
        tree.ensure_acyclic(target)
    with pytest.raises(ParentCycleError, match=f"entry {target}:"):
        tree.branch_with_summary(target, "a summary")
    tree.branch(target)  # in memory only, as in pi (not checked: it would read the whole chain)
    with pytest.raises(ParentCycleError, match=f"entry {target}:"):
        tree.append_message(user("under the cycle"))
    assert path.read_bytes() == original
    # A good entry elsewhere in the same file can still take appends.
    tree.branch("g0000000")
    written = tree.append_message(user("fine"))
    assert SessionTree.open(path).get_entry(written)["parentId"] == "g0000000"


def test_no_append_lands_under_a_leaf_whose_chain_loops(tmp_path: Path) -> None:
    # The last line is the leaf (pi's rule too); here it sits in a loop.
    path = tmp_path / "s.jsonl"
    original = _file(path, ROOT, *LOOP)
    tree = SessionTree.open(path)
    assert tree.leaf_id == "b0000000"
    with pytest.raises(ParentCycleError, match="b0000000"):
        tree.append_message(user("under the loop"))
    assert path.read_bytes() == original


def test_a_foreign_line_that_closes_a_cycle_is_noticed_at_the_next_append(
    tmp_path: Path,
) -> None:
    # Our appends are checked in O(1) after the first walk; a line another writer adds may
    # change an earlier chain (a repeated id: the last line wins), so it is walked again.
    path = tmp_path / "s.jsonl"
    _file(path, ROOT)
    tree = SessionTree.open(path)
    tree.append_message(user("one"))
    second = tree.append_message(user("two"))
    before = path.read_bytes()
    with open(path, "a") as handle:  # pi, say: the root repeated, now under ``second``
        handle.write(json.dumps(user_entry("r0000000", second, "root again")) + "\n")
    with pytest.raises(ParentCycleError):
        tree.append_message(user("three"))
    assert path.read_bytes().startswith(before)
    assert len(path.read_bytes().splitlines()) == len(before.splitlines()) + 1


def test_a_rewrite_that_would_close_a_parent_cycle_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    original = _file(
        path,
        user_entry("a0000000", None, "a"),
        user_entry("b0000000", "a0000000", "b"),
        user_entry("c0000000", "b0000000", "c"),
    )
    tree = SessionTree.open(path)
    under_its_grandchild = {**tree.get_entry("a0000000"), "parentId": "c0000000"}
    with pytest.raises(ParentCycleError, match="a0000000 -> c0000000 -> b0000000 -> a0000000"):
        tree.rewrite_entries([under_its_grandchild])
    assert path.read_bytes() == original
    # Two replacements that only loop together are refused as well.
    pair = [
        {**tree.get_entry("b0000000"), "parentId": "c0000000"},
        {**tree.get_entry("c0000000"), "parentId": "b0000000"},
    ]
    with pytest.raises(ParentCycleError):
        tree.rewrite_entries(pair)
    assert path.read_bytes() == original
    # A new parent elsewhere in the tree is fine.
    tree.rewrite_entries([{**tree.get_entry("c0000000"), "parentId": "a0000000"}])
    assert SessionTree.open(path).get_entry("c0000000")["parentId"] == "a0000000"
