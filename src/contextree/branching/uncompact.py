"""``uncompact``: undo the latest compaction on the path by moving the leaf back before it.

Nothing is deleted: the leaf moves to the compaction's parent, the state just before it was
written, and the compaction with whatever followed it stays in the file as a branch. With
``persist`` (the command line) the move is kept on disk as a ``contextree.leaf`` entry, as
``contextree navigate`` keeps its moves (DESIGN decision 8), so pi opens the file there too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contextree.branching.navigate import persist_leaf

if TYPE_CHECKING:
    from contextree.session.tree import SessionTree

__all__ = ["UncompactResult", "uncompact", "uncompact_json"]


@dataclass(frozen=True, slots=True)
class UncompactResult:
    """Which compaction was undone and where the leaf went."""

    compaction_id: str
    compaction_timestamp: str | None
    tokens_before: int | None
    """The context the compaction had folded (its ``tokensBefore``)."""
    old_leaf_id: str | None
    new_leaf_id: str | None
    """The compaction's parent: the leaf as it was just before the compaction."""
    left_behind: int
    """Entries from the compaction to the old leaf, now on a branch of their own."""
    leaf_entry_id: str | None
    """The ``contextree.leaf`` entry written (``persist``), if one was needed."""


def uncompact(tree: SessionTree, *, persist: bool = False) -> UncompactResult | None:
    """Move the leaf to just before the latest compaction on its path; ``None`` when the path
    has no compaction (nothing to undo)."""
    compaction = tree.latest_compaction()
    if compaction is None:
        return None
    compaction_id = str(compaction["id"])
    old_leaf = tree.leaf_id
    path_ids = tree.get_branch_view().ids()
    left_behind = len(path_ids) - path_ids.index(compaction_id)
    parent = compaction.get("parentId")
    if isinstance(parent, str) and tree.has_entry(parent):
        tree.branch(parent)
    else:
        tree.reset_leaf()
    recorded = persist_leaf(tree) if persist else None
    tokens = compaction.get("tokensBefore")
    stamp = compaction.get("timestamp")
    return UncompactResult(
        compaction_id=compaction_id,
        compaction_timestamp=stamp if isinstance(stamp, str) else None,
        tokens_before=tokens if isinstance(tokens, int) else None,
        old_leaf_id=old_leaf,
        new_leaf_id=parent if isinstance(parent, str) else None,
        left_behind=left_behind,
        leaf_entry_id=recorded,
    )


def uncompact_json(result: UncompactResult | None) -> dict[str, Any]:
    """``uncompact --format json``: every documented key always there (docs/cli-json.md),
    ``null`` when there was nothing to undo."""
    if result is None:
        return {
            "undone": None,
            "oldLeafId": None,
            "newLeafId": None,
            "leftBehind": None,
            "leafEntryId": None,
        }
    return {
        "undone": {
            "compactionId": result.compaction_id,
            "timestamp": result.compaction_timestamp,
            "tokensBefore": result.tokens_before,
        },
        "oldLeafId": result.old_leaf_id,
        "newLeafId": result.new_leaf_id,
        "leftBehind": result.left_behind,
        "leafEntryId": result.leaf_entry_id,
    }
