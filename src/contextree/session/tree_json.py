"""``contextree tree --format json``: every entry of the file, flat, with its place in the tree.

Flat rather than nested: a linear session of 100,000 entries would nest as deep, which neither
``json.dumps`` nor most readers take. Rebuild the tree from ``parentId``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contextree.entries.codec import LineError

if TYPE_CHECKING:
    from contextree.session.tree import SessionTree

__all__ = ["tree_json"]


def tree_json(tree: SessionTree) -> dict[str, Any]:
    """``{"leafId", "entries": [{"id", "parentId", "type", "role", "timestamp", "line",
    "label", "onLeafPath"}]}`` in file order (docs/cli-json.md)."""
    leaf = tree.leaf_id
    on_path = set(tree.get_branch_view().ids()) if leaf is not None else set()
    labels = tree.labels()
    entries: list[dict[str, Any]] = []
    for record in tree.records():
        role: object = None
        if record.type == "message":
            try:
                role = record.message_role()
            except (LineError, RecursionError):
                role = None  # check reports the entry
        entries.append(
            {
                "id": record.id,
                "parentId": record.parent_id,
                "type": record.type,
                "role": role if isinstance(role, str) else None,
                "timestamp": record.timestamp,
                "line": record.line,
                "label": labels.get(record.id) if record.id is not None else None,
                "onLeafPath": record.id in on_path,
            }
        )
    return {"leafId": leaf, "entries": entries}
