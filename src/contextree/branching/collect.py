"""Which entries a move in the tree leaves behind (pi-behaviour.md §9.1).

Moving the leaf from ``old_leaf_id`` to ``target_id`` abandons the entries between the old leaf
and the deepest entry both paths share (the common ancestor). Those entries, oldest first, are
what a branch summary describes. The walk does not stop at compaction entries: an earlier
compaction's summary is part of what the branch knew.
"""

from __future__ import annotations

from dataclasses import dataclass

from contextree.entries.types import StoredEntry
from contextree.session.tree import SessionTree

__all__ = ["BranchCollection", "collect_entries_for_branch_summary"]


@dataclass(frozen=True, slots=True)
class BranchCollection:
    """The entries a move abandons, oldest first, and where the two paths meet."""

    entries: list[StoredEntry]
    """From just after the common ancestor to the old leaf, every entry type included."""
    common_ancestor_id: str | None
    """The deepest entry on both paths; ``None`` when they share nothing (or no old leaf)."""


def collect_entries_for_branch_summary(
    tree: SessionTree, old_leaf_id: str | None, target_id: str
) -> BranchCollection:
    """The entries abandoned by moving the leaf from ``old_leaf_id`` to ``target_id``.

    - No old leaf: nothing is abandoned.
    - ``target_id`` is a descendant of the old leaf: the ancestor is the old leaf; nothing.
    - ``target_id`` is an ancestor of the old leaf: the entries after the target.

    Unlike pi, the walk is safe against ``parentId`` cycles (each entry is visited once).

    Raises:
        EntryNotFoundError: ``old_leaf_id`` or ``target_id`` is not in the tree.
    """
    if old_leaf_id is None:
        return BranchCollection([], None)
    old_path = {entry.get("id") for entry in tree.get_branch(old_leaf_id)}
    common: str | None = None
    for entry in reversed(tree.get_branch(target_id)):
        entry_id = entry.get("id")
        if entry_id in old_path and isinstance(entry_id, str):
            common = entry_id
            break

    entries: list[StoredEntry] = []
    seen: set[str] = set()
    current: str | None = old_leaf_id
    while current is not None and current != common and current not in seen:
        found = tree.get_entry(current)
        if found is None:
            break
        seen.add(current)
        entries.append(found)
        parent = found.get("parentId")
        current = parent if isinstance(parent, str) else None
    entries.reverse()
    return BranchCollection(entries, common)
