"""``expand_entry``: one original entry in full, with its neighbours on its branch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contextree.entries.types import StoredEntry
from contextree.errors import EntryNotFoundError

if TYPE_CHECKING:
    from contextree.session.tree import SessionTree

__all__ = ["Expansion", "expand_entry", "expansion_json"]


@dataclass(frozen=True, slots=True)
class Expansion:
    """The entry asked for and up to ``around`` entries before and after it."""

    entry_id: str
    entries: list[StoredEntry]
    """Oldest first: ancestors, the entry, then what follows it."""
    target: int
    """Index of the entry asked for in :attr:`entries`."""
    in_context: set[str]
    """Ids among :attr:`entries` that the leaf's context holds (the others are folded away
    or on another branch)."""


def _following(tree: SessionTree, entry_id: str, count: int) -> list[StoredEntry]:
    """Up to ``count`` entries after ``entry_id``: along the leaf's path when the entry is on
    it, else along each newest child."""
    if count <= 0:
        return []
    path = tree.get_branch_view()
    ids = path.ids()
    if entry_id in ids:
        start = ids.index(entry_id) + 1
        return list(path[start : start + count])
    found: list[StoredEntry] = []
    current = entry_id
    while len(found) < count:
        children = tree.get_children(current)
        if not children:
            break
        child = children[-1]
        found.append(child)
        current = str(child.get("id"))
    return found


def expand_entry(tree: SessionTree, entry_id: str, *, around: int = 0) -> Expansion:
    """The entry ``entry_id`` with ``around`` neighbours each side (raises
    :class:`EntryNotFoundError`)."""
    if around < 0:
        raise ValueError("around must not be negative")
    if not tree.has_entry(entry_id):
        raise EntryNotFoundError(entry_id)
    branch = tree.get_branch_view(entry_id)
    before = list(branch[max(0, len(branch) - 1 - around) :])
    entries = before + _following(tree, entry_id, around)
    context_ids = tree.build_session_context().entry_ids if tree.leaf_id is not None else []
    in_context = {i for i in context_ids if i is not None}
    return Expansion(entry_id, entries, len(before) - 1, in_context)


def expansion_json(expansion: Expansion) -> dict[str, Any]:
    """``expand --format json``: each entry as stored, marked target / inContext."""
    return {
        "entryId": expansion.entry_id,
        "entries": [
            {
                "target": index == expansion.target,
                "inContext": entry.get("id") in expansion.in_context,
                "entry": entry,
            }
            for index, entry in enumerate(expansion.entries)
        ],
    }
