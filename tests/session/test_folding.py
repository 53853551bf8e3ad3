"""The one tree-folding algorithm ``tree --fold`` and the tree browser share."""

from __future__ import annotations

from contextree.session.folding import fold_run, is_notable, linear_run
from contextree.session.tree import SessionTree, TreeNode


def _chain(count: int) -> tuple[SessionTree, list[TreeNode]]:
    tree = SessionTree.in_memory()
    for n in range(count):
        tree.append_message({"role": "user", "content": f"m{n}", "timestamp": n})
    (root,) = tree.get_tree()
    return tree, linear_run(root)


def _shape(pieces: list[TreeNode | list[TreeNode]], run: list[TreeNode]) -> list[object]:
    """Entries as their index in ``run``, folds as ``("fold", length)``."""
    where = {id(node): i for i, node in enumerate(run)}
    return [("fold", len(p)) if isinstance(p, list) else where[id(p)] for p in pieces]


def test_a_linear_run_follows_single_children_to_the_end() -> None:
    tree, run = _chain(5)
    assert [node.id for node in run] == [r.id for r in tree.records()]


def test_short_runs_and_keep_zero_show_everything() -> None:
    tree, run = _chain(6)
    assert fold_run(run, keep=3, leaf_id=tree.leaf_id) == run
    assert fold_run(run, keep=0, leaf_id=tree.leaf_id) == run
    assert fold_run(run, keep=2, leaf_id=None, fold_over=10) == run


def test_a_long_run_keeps_its_ends_and_folds_the_middle() -> None:
    tree, run = _chain(10)
    pieces = fold_run(run, keep=2, leaf_id=tree.leaf_id)
    assert _shape(pieces, run) == [0, 1, ("fold", 6), 8, 9]


def test_notable_entries_and_the_leaf_stay_visible() -> None:
    tree, run = _chain(12)
    tree.append_label(str(run[5].id), "here")
    tree.branch(str(run[8].id))  # the leaf inside the folded stretch
    (root,) = tree.get_tree()
    run = linear_run(root)[:12]
    assert is_notable(run[5], tree.leaf_id) and is_notable(run[8], tree.leaf_id)
    pieces = fold_run(run, keep=2, leaf_id=tree.leaf_id)
    assert _shape(pieces, run) == [0, 1, ("fold", 3), 5, ("fold", 2), 8, ("fold", 1), 10, 11]


def test_min_fold_shows_short_stretches_and_notable_max_keeps_the_leaf() -> None:
    tree, run = _chain(12)
    tree.append_label(str(run[3].id), "a")
    tree.append_label(str(run[5].id), "b")
    tree.branch(str(run[8].id))
    (root,) = tree.get_tree()
    run = linear_run(root)[:12]
    pieces = fold_run(run, keep=2, leaf_id=tree.leaf_id, min_fold=3, notable_max=2)
    # one label and the leaf stay; the second label is folded; stretches under 3 are shown
    assert _shape(pieces, run) == [0, 1, 2, 3, ("fold", 4), 8, 9, 10, 11]
