"""Slow writes on a shared session: where a compaction planned at one leaf lands once other
writers have appended below that leaf in the meantime, and when a branch summary is one another
writer already left (issue 27 item 3).

A compaction reads the path, waits for a model for seconds, then appends. Several workers on one
session (SQLite, PostgreSQL, or a file several processes write) may do so at once: without a
look at what arrived meanwhile, each appends its own compaction under the same parent (one of
the two branches is dead, and the summarizer was paid twice) and the entries others appended
during the model call fall off the path. Under the write lock, after taking in the others'
lines, the planned leaf is followed down to the newest entry the others hung below it; a
compaction among those means another worker won the race. A navigation with a summary is the
same kind of write: a ``branch_summary`` another writer appended meanwhile at the same place, of
the branch left from the same leaf, means that move was made (and paid for) already.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from contextree.errors import TreeError
from contextree.store.index import BadLine, Record

__all__ = [
    "CompactedElsewhereError",
    "SummarizedElsewhereError",
    "WriteMark",
    "newest_below",
    "same_summary",
]


@dataclass(frozen=True, slots=True)
class WriteMark:
    """How far a tree knew its session when a slow write was planned
    (:meth:`~contextree.session.tree.SessionTree.write_mark`)."""

    leaf_id: str | None
    taken_in: int
    """How many lines of other writers the tree had taken in: those after are news."""
    loads: int
    """How often the tree had (re)loaded the session (after another writer's rewrite the
    count of lines taken in starts again)."""


class CompactedElsewhereError(TreeError):
    """Another writer appended a compaction below the leaf this one was planned at."""

    def __init__(self, entry_id: str, leaf_id: str) -> None:
        self.entry_id = entry_id
        self.leaf_id = leaf_id
        super().__init__(
            f"another writer compacted this branch meanwhile (compaction {entry_id}); "
            "nothing was written"
        )


class SummarizedElsewhereError(TreeError):
    """Another writer appended a summary of the same branch at the same place meanwhile."""

    def __init__(self, entry_id: str, leaf_id: str) -> None:
        self.entry_id = entry_id
        self.leaf_id = leaf_id
        super().__init__(
            f"another writer summarized this branch here meanwhile (branch summary {entry_id}); "
            "nothing was written"
        )


def same_summary(
    news: Iterable[Record | BadLine], parent_id: str | None, abandoned_leaf_id: str | None
) -> str | None:
    """The id of the first ``branch_summary`` in ``news`` hung at ``parent_id`` that records
    leaving ``abandoned_leaf_id`` (``abandonedLeafId``); ``None`` when there is none. A summary
    without that key (pi's, or an older one) is never taken for ours: we cannot tell which
    branch it summarizes."""
    if abandoned_leaf_id is None:
        return None
    for record in news:
        if not isinstance(record, Record) or record.type != "branch_summary":
            continue
        if record.parent_id != parent_id or record.id is None:
            continue
        if record.entry.get("abandonedLeafId") == abandoned_leaf_id:
            return record.id
    return None


def newest_below(
    news: Iterable[Record | BadLine], leaf_id: str | None
) -> tuple[str | None, str | None]:
    """Follow ``leaf_id`` down through ``news`` (other writers' lines, in file order):
    ``(tip, compaction)``, the newest entry below the leaf (the leaf itself when none) and
    the first compaction met on the way, if any."""
    below = {leaf_id}
    tip, compaction = leaf_id, None
    for record in news:
        if not isinstance(record, Record) or record.id is None:
            continue
        if record.parent_id not in below:
            continue
        below.add(record.id)
        tip = record.id
        if compaction is None and record.type == "compaction":
            compaction = record.id
    return tip, compaction
