"""Folding a session tree for display: linear runs, and which of their entries stay visible.

``contextree tree --fold N`` and the tree browser (``tree -i``) show a tree the same way: a
*run* is a stretch of entries each with exactly one child; a long run shows ``keep`` entries
at each end, the *notable* ones between (the leaf, compactions, branch summaries, reset
boundaries and labelled entries), and folds the stretches between those.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from contextree.session.tree import TreeNode

__all__ = ["NOTABLE_TYPES", "fold_run", "is_notable", "linear_run"]

NOTABLE_TYPES: Final = frozenset({"compaction", "branch_summary", "reset_boundary"})
"""Entry types a fold never hides."""

Piece = TreeNode | list[TreeNode]
"""An entry to show, or a folded stretch of entries (oldest first)."""


def linear_run(start: TreeNode) -> list[TreeNode]:
    """``start`` and its descendants while each has exactly one child (the last may fork)."""
    run = [start]
    while len(run[-1].children) == 1:
        run.append(run[-1].children[0])
    return run


def is_notable(node: TreeNode, leaf_id: str | None) -> bool:
    """Whether a fold must keep ``node`` visible: the leaf, a label, or a notable type."""
    return node.id == leaf_id or node.label is not None or node.type in NOTABLE_TYPES


def fold_run(
    run: Sequence[TreeNode],
    *,
    keep: int,
    leaf_id: str | None,
    fold_over: int | None = None,
    min_fold: int = 1,
    notable_max: int | None = None,
) -> list[Piece]:
    """The pieces of ``run`` to show, oldest first: entries, and folded stretches as lists.

    Args:
        keep: entries shown at each end of a folded run; ``<= 0`` folds nothing.
        leaf_id: the leaf, which is always shown.
        fold_over: only runs longer than this fold (default and minimum ``2 * keep``).
        min_fold: a stretch shorter than this is shown instead of folded (folding one or two
            entries into a "… 2 more entries …" line saves nothing on a screen).
        notable_max: most notable entries kept visible inside one run, the leaf counted and
            always among them (then the oldest; ``None``: all), so a run of thousands of
            compactions still folds.
    """
    if keep <= 0 or len(run) <= max(fold_over or 0, 2 * keep):
        return list(run)
    middle = run[keep:-keep]
    notable = [i for i, node in enumerate(middle) if is_notable(node, leaf_id)]
    if notable_max is not None:
        leaf_at = [i for i in notable if middle[i].id == leaf_id]
        room = max(notable_max - len(leaf_at), 0)
        others = [i for i in notable if middle[i].id != leaf_id][:room]
        notable = sorted(others + leaf_at)
    pieces: list[Piece] = list(run[:keep])
    start = 0
    for index in [*notable, len(middle)]:
        gap = list(middle[start:index])
        if len(gap) >= max(min_fold, 1):
            pieces.append(gap)
        else:
            pieces.extend(gap)
        if index < len(middle):
            pieces.append(middle[index])
        start = index + 1
    pieces.extend(run[-keep:])
    return pieces
