"""The views a session tree hands out: :class:`PathView` (a root-first path) and
:class:`TreeNode` (one node of the tree), and :func:`parent_cycle`, the walk that finds
parent cycles."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import overload

from contextree.entries.types import StoredEntry
from contextree.store.index import Record, entries_of

__all__ = ["PathView", "TreeNode", "parent_cycle", "timestamp_key"]


class PathView(Sequence[StoredEntry]):
    """A root-to-leaf path whose entries are decoded only when read.

    ``type_at`` and ``id_at`` answer from the index without decoding, so algorithms that look
    for the latest compaction or thinking level touch only the entries they use.
    """

    __slots__ = ("_records",)

    def __init__(self, records: list[Record]) -> None:
        self._records = records

    def __len__(self) -> int:
        return len(self._records)

    @overload
    def __getitem__(self, index: int) -> StoredEntry: ...

    @overload
    def __getitem__(self, index: slice) -> list[StoredEntry]: ...

    def __getitem__(self, index: int | slice) -> StoredEntry | list[StoredEntry]:
        if isinstance(index, slice):
            return entries_of(self._records[index])
        return self._records[index].entry

    def __iter__(self) -> Iterator[StoredEntry]:
        for record in self._records:
            yield record.entry

    def __reversed__(self) -> Iterator[StoredEntry]:
        for record in reversed(self._records):
            yield record.entry

    def __add__(self, other: Sequence[StoredEntry]) -> list[StoredEntry]:
        return [*self, *other]

    def __radd__(self, other: Sequence[StoredEntry]) -> list[StoredEntry]:
        return [*other, *self]

    def copy(self) -> list[StoredEntry]:
        """The entries as a list (all decoded)."""
        return list(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PathView | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PathView({len(self)} entries)"

    def type_at(self, index: int) -> str:
        return self._records[index].type

    def id_at(self, index: int) -> str | None:
        return self._records[index].id

    def ids(self) -> list[str | None]:
        """The ids of the path's entries, root first (nothing decoded)."""
        return [record.id for record in self._records]


def timestamp_key(record: Record) -> str:
    return record.timestamp or ""


def parent_cycle(
    lookup: Callable[[str], Record | None], start: Record, reaches_root: dict[str, bool]
) -> list[Record]:
    """The records of the cycle that ``start``'s parent chain runs into, in chain order from
    where it closes; ``[]`` when the chain ends (no parent, a missing one) or meets an id
    already in ``reaches_root``. ``lookup`` gives the record of an id (the last one wins).

    ``reaches_root`` is shared between calls so that each record is walked once: every record
    walked is marked ``True`` when its chain ends, ``False`` when it runs into a cycle (whether
    or not it is on it); the missing parent a chain ends at is marked ``True`` too, so that a
    later entry with that id shows the marks are stale. ``contextree check`` and the guard
    against writing under a cycle both use it.
    """
    walk: list[Record] = []
    position: dict[str, int] = {}
    cycle: list[Record] = []
    ends = True
    current: Record | None = start
    while current is not None and current.id is not None:
        key = current.id
        if key in reaches_root:
            ends = reaches_root[key]
            break
        if key in position:
            cycle = walk[position[key] :]
            ends = False
            break
        position[key] = len(walk)
        walk.append(current)
        parent = current.parent_id
        if parent is None:
            break
        current = lookup(parent)
        if current is None:
            reaches_root[parent] = True
    for record in walk:
        assert record.id is not None
        reaches_root[record.id] = ends
    return cycle


class TreeNode:
    """One entry of :meth:`SessionTree.get_tree` with its children (oldest first) and label.

    ``id`` and ``type`` come from the index; ``entry`` is decoded when first read, so showing a
    folded view of a large tree decodes only the entries it shows.
    """

    __slots__ = ("_record", "children", "label")

    def __init__(
        self, record: Record, children: list[TreeNode] | None = None, label: str | None = None
    ) -> None:
        self._record = record
        self.children: list[TreeNode] = children if children is not None else []
        self.label = label

    @property
    def entry(self) -> StoredEntry:
        return self._record.entry

    @property
    def id(self) -> str | None:
        return self._record.id

    @property
    def type(self) -> str:
        return self._record.type

    def __repr__(self) -> str:
        return f"TreeNode({self.id!r}, {self.type!r}, {len(self.children)} children)"
