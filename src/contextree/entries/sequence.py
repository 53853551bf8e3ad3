"""Cheap questions about a sequence of entries.

A lazy path (``SessionTree.get_branch_view``) answers an entry's type and id from its index
without decoding the entry; a plain list answers from the dicts. Algorithms that only look for
the latest compaction or thinking level use these and decode nothing else. In loops, take a
reader once (:func:`type_reader`, :func:`id_reader`) rather than asking per index.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from contextree.entries.types import StoredEntry

__all__ = ["id_at", "id_reader", "type_at", "type_reader"]


def type_reader(path: Sequence[StoredEntry]) -> Callable[[int], object]:
    """A function giving the ``type`` of ``path[index]``."""
    lookup: Callable[[int], object] | None = getattr(path, "type_at", None)
    return lookup if lookup is not None else lambda index: path[index].get("type")


def id_reader(path: Sequence[StoredEntry]) -> Callable[[int], object]:
    """A function giving the ``id`` of ``path[index]``."""
    lookup: Callable[[int], object] | None = getattr(path, "id_at", None)
    return lookup if lookup is not None else lambda index: path[index].get("id")


def type_at(path: Sequence[StoredEntry], index: int) -> object:
    """The ``type`` of ``path[index]``."""
    return type_reader(path)(index)


def id_at(path: Sequence[StoredEntry], index: int) -> object:
    """The ``id`` of ``path[index]``."""
    return id_reader(path)(index)
