"""Cheap questions about a sequence of entries.

A lazy path (``SessionTree.get_branch_view``) answers an entry's type and id from its index
without decoding the entry; a plain list answers from the dicts. Algorithms that only look for
the latest compaction or thinking level use these and decode nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence

from contextree.entries.types import Entry

__all__ = ["id_at", "type_at"]


def type_at(path: Sequence[Entry], index: int) -> object:
    """The ``type`` of ``path[index]``."""
    lookup = getattr(path, "type_at", None)
    return lookup(index) if lookup is not None else path[index].get("type")


def id_at(path: Sequence[Entry], index: int) -> object:
    """The ``id`` of ``path[index]``."""
    lookup = getattr(path, "id_at", None)
    return lookup(index) if lookup is not None else path[index].get("id")
