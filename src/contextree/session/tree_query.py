"""Reading paths of a session tree: branches, children, leaves, labels, the tree view, the
context of a leaf, and moving the leaf (with the cycle checks that guard it)."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Final

from contextree.context.build import ContextNeeds, SessionContext, build_context_from_path
from contextree.entries.types import StoredEntry
from contextree.errors import EntryNotFoundError, ParentCycleError
from contextree.session.tree_nodes import PathView, TreeNode, parent_cycle, timestamp_key
from contextree.session.tree_state import TreeState
from contextree.store.index import BULK_ITEMS, Record, collector_paused

__all__ = ["TreeQuery"]

_ID: Final = attrgetter("id")


class TreeQuery(TreeState):
    """The query side of ``SessionTree``: paths, branches and context."""

    def get_branch(self, from_id: str | None = None) -> PathView:
        """The root-first path to ``from_id`` (default: the leaf); stops at cycles.

        A read-only sequence of entries, each decoded when first read (``list(...)`` makes a
        list): on a 100k-entry session, decoding the whole path up front took a second while
        most callers read a few entries.
        """
        start = from_id if from_id is not None else self.leaf_id
        if start is None:
            return PathView([])
        if self._index.get(start) is None:
            raise EntryNotFoundError(start)
        return PathView(self._path_records(start))

    def preload(self) -> None:
        """Read what the leaf's path and its context need now rather than on first use: walk
        the path (reading and indexing the session's lines up to its root) and decode the
        entries from the latest compaction's first kept entry on.

        A session opens lazily - only its last lines are read - so that a command that needs
        the end of a large session (``contextree context``) does not read all of it; the first
        ``get_branch()`` pays for the rest. A process that will work on the whole path again
        and again (a server, a host holding sessions open) can pay that on open instead, as
        pi does: its open reads and parses every line.
        """
        if self.leaf_id is None:
            return
        path = self._path_records(self.leaf_id)
        start = 0
        for position in range(len(path) - 1, -1, -1):
            if path[position].type == "compaction":
                kept = path[position].entry.get("firstKeptEntryId")
                start = next(
                    (at for at in range(position, -1, -1) if path[at].id == kept), position
                )
                break
        for record in path[start:]:
            record.entry  # noqa: B018 - decoded and kept on the record

    def get_branch_view(self, from_id: str | None = None) -> PathView:
        """The same as :meth:`get_branch` (kept for callers of earlier releases)."""
        return self.get_branch(from_id)

    def _path_records(self, start: str) -> list[Record]:
        cached = self._path_cache
        if cached is not None and cached[0] == start:
            return list(cached[1])
        path = self._walk_path(start)
        self._path_cache = (start, path)
        return list(path)

    def _walk_path(self, start: str) -> list[Record]:
        index = self._index
        by_id = index.by_id
        get = by_id.get
        path: list[Record] = []
        append = path.append
        current = index.get(start)
        while current is not None:
            # Every record on the path is indexed, so a longer path than the index must loop:
            # only then pay for a seen-set. (The range counts the steps: two len() calls a step
            # cost 2-4 ms of the 13-17 ms walk of a 95k-entry path, the index complete.)
            for _ in range(len(by_id) + 1 - len(path)):
                append(current)
                parent = current.parent_id
                if parent is None:
                    path.reverse()
                    return path
                current = get(parent)
                if current is None:
                    break
            else:
                break  # longer than the index
            # Not decoded yet, or missing. The walk goes on to the root (the file's first
            # lines, most often): the index reads each chunk back while it decodes the last.
            current = index.get(parent, read_ahead=True)
        if current is None:
            path.reverse()
            return path
        path = []
        seen: set[str] = set()
        current = index.get(start)
        while current is not None and current.id not in seen:
            assert current.id is not None
            seen.add(current.id)
            path.append(current)
            parent = current.parent_id
            current = index.get(parent) if parent is not None else None
        path.reverse()
        return path

    def get_children(self, entry_id: str | None) -> list[StoredEntry]:
        """Direct children of ``entry_id`` (``None``: the roots), oldest first."""
        return [record.entry for record in self._child_map().get(entry_id, [])]

    def _child_map(self) -> dict[str | None, list[Record]]:
        if self._children is None:
            children: dict[str | None, list[Record]] = {}
            by_id = self._index.complete_all().by_id
            # A list for nearly every entry, none in a cycle: the collector's passes over
            # them cost half again as much as building them (60 ms at 100k entries).
            with collector_paused(len(by_id) >= BULK_ITEMS):
                for record in self.records():
                    if record.id is None or by_id.get(record.id) is not record:
                        continue
                    parent = record.parent_id
                    if parent is None or parent == record.id or parent not in by_id:
                        parent = None
                    children.setdefault(parent, []).append(record)
            for siblings in children.values():
                if len(siblings) > 1:  # most entries have one child: skip 100k trivial sorts
                    siblings.sort(key=timestamp_key)
            self._children = children
        return self._children

    def leaves(self) -> list[str]:
        """Ids of the entries without children (the tips of all branches), in file order."""
        children = self._child_map()
        by_id = self._index.by_id
        return [
            key
            for record in self.records()
            if (key := record.id) is not None and by_id.get(key) is record and key not in children
        ]

    def labels(self) -> dict[str, str]:
        """Resolved labels by target id: the last label entry for a target wins; empty clears."""
        resolved: dict[str, str] = {}
        for record in self.records():
            if record.type != "label":
                continue
            entry = record.entry
            target, label = entry.get("targetId"), entry.get("label")
            if not isinstance(target, str):
                continue
            if isinstance(label, str) and label:
                resolved[target] = label
            else:
                resolved.pop(target, None)
        return resolved

    def get_label(self, entry_id: str) -> str | None:
        return self.labels().get(entry_id)

    def get_tree(self) -> list[TreeNode]:
        """The whole tree: roots (and entries caught in cycles) with children by timestamp."""
        # A node, its list of children and a child map entry for every entry, none in a
        # cycle: the collector's passes over them took a tenth of `contextree tree` on a
        # 100k-entry session.
        with collector_paused(len(self._index.by_id) >= BULK_ITEMS):
            return self._build_tree()

    def _build_tree(self) -> list[TreeNode]:
        labels = self.labels()
        children = self._child_map()
        placed: set[str] = set()

        def build(roots: Sequence[Record]) -> list[TreeNode]:
            out: list[TreeNode] = []
            stack: list[tuple[Record, list[TreeNode]]] = [(r, out) for r in reversed(roots)]
            while stack:
                record, siblings = stack.pop()
                assert record.id is not None
                if record.id in placed:
                    continue
                placed.add(record.id)
                node = TreeNode(record, [], labels.get(record.id))
                siblings.append(node)
                for child in reversed(children.get(record.id, [])):
                    stack.append((child, node.children))
            return out

        nodes = build(children.get(None, []))
        stranded = [r for r in self.records() if r.id is not None and r.id not in placed]
        if stranded:
            # Entries whose parents form a cycle have no root; show them rather than lose them.
            nodes.extend(build([r for r in stranded if self._index.by_id.get(r.id or "") is r]))
        return nodes

    def build_session_context(self, leaf_id: str | None = None) -> SessionContext:
        """The context of ``leaf_id`` (default: the current leaf), pi's ``buildSessionContext``."""
        target = leaf_id if leaf_id is not None else self.leaf_id
        if target is None:
            return SessionContext()
        cached = self._context_cache
        if cached is None or cached[0] != target:
            if self._index.get(target) is None:
                raise EntryNotFoundError(target)
            context = build_context_from_path(PathView(self._context_records(target)))
            self._context_cache = cached = (target, context)
        context = cached[1]
        # Fresh lists: the caller may change them, the cached ones must not change.
        return SessionContext(
            list(context.messages), context.thinking_level, context.model, list(context.entry_ids)
        )

    def latest_compaction(self, leaf_id: str | None = None) -> StoredEntry | None:
        """The latest compaction on the path to ``leaf_id`` (default: the leaf), or ``None``."""
        target = leaf_id if leaf_id is not None else self.leaf_id
        if target is None:
            return None
        cached = self._compaction_cache
        if cached is None or cached[0] != target:
            if self._index.get(target) is None:
                raise EntryNotFoundError(target)
            found: Record | None = None
            path = self._path_records(target)
            for index in range(len(path) - 1, -1, -1):
                if path[index].type == "compaction":
                    found = path[index]
                    break
            self._compaction_cache = cached = (target, found)
        return cached[1].entry if cached[1] is not None else None

    def ensure_context_acyclic(self, entry_id: str) -> None:
        """:meth:`ensure_acyclic` for the part of ``entry_id``'s chain that its context reads
        (back to the latest compaction's kept region; in a large session, a little): raise
        :class:`~contextree.errors.ParentCycleError` when that part loops. A loop further back
        does not change the context; ``check`` and every write still find it."""
        if self._index.get(entry_id) is None:
            raise EntryNotFoundError(entry_id)
        if self._context_walk(entry_id)[1]:
            self.ensure_acyclic(entry_id)  # names the cycle, in the words of every command

    def _context_records(self, start: str) -> list[Record]:
        """The end of ``start``'s path that its context reads (in a large session, a little)."""
        return self._context_walk(start)[0]

    def _context_walk(self, start: str) -> tuple[list[Record], bool]:
        """:meth:`_context_records`, and whether the walk ran into an entry it had passed."""
        needs = ContextNeeds()
        index = self._index
        path: list[Record] = []
        seen: set[str | None] = set()
        current = index.get(start)
        while current is not None and current.id not in seen:
            seen.add(current.id)
            path.append(current)
            if needs.satisfied_by(current):
                current = None
                break
            parent = current.parent_id
            current = index.get(parent) if parent is not None else None
        path.reverse()
        return path, current is not None

    # -- moving the leaf ------------------------------------------------------------------------

    def branch(self, entry_id: str) -> None:
        """Move the leaf to ``entry_id``; nothing is written (pi's ``branch``).

        The move itself is not checked for a parent cycle (that would read the whole chain of
        a lazily opened file); the next append under it raises ``ParentCycleError``, and
        :meth:`ensure_acyclic` checks on demand.
        """
        if self._index.get(entry_id) is None:
            raise EntryNotFoundError(entry_id)
        self.leaf_id = entry_id

    def path_cycle(self, entry_id: str) -> list[str]:
        """The ids of the parent cycle that ``entry_id``'s chain runs into (duplicate ids
        resolved as pi does: the last line wins); ``[]`` when the chain reaches a root."""
        record = self._index.get(entry_id)
        if record is None:
            raise EntryNotFoundError(entry_id)
        marks = self._reaches_root
        if entry_id not in marks and self._path_reaches_root(entry_id):
            return []
        cycle = parent_cycle(self._index.get, record, marks)
        if not cycle and self._reaches_root.get(entry_id) is False:
            # Walked before: it runs into a cycle found then. Walk again to name it.
            cycle = parent_cycle(self._index.get, record, {})
        return [str(r.id) for r in cycle]

    def _path_reaches_root(self, entry_id: str) -> bool:
        """Whether ``entry_id``'s path ends at a root or a missing parent, walked the way
        :meth:`get_branch` walks it (and kept for it: a command that checks the leaf and then
        reads its path walks the chain once). Marks the path's records as reaching the root."""
        path = self._path_records(entry_id)
        parent = path[0].parent_id if path else None
        if parent is not None and self._index.get(parent) is not None:
            return False  # the walk stopped at an entry it had seen: a loop
        # The ids taken at C speed into one table (a generator of pairs: 8-10 ms of a 95k-entry
        # path), then one update.
        reached = dict.fromkeys(map(_ID, path), True)
        reached.pop(None, None)
        marks = self._reaches_root
        marks.update(reached)
        if parent is not None:
            marks[parent] = True  # as parent_cycle marks a missing parent
        return True

    def ensure_acyclic(self, entry_id: str) -> None:
        """Raise :class:`~contextree.errors.ParentCycleError` when ``entry_id``'s parent chain
        loops: an entry written under it would make a file pi hangs on (it walks a branch from
        the last entry without a guard). Walks the chain once; later calls and our own appends
        below it cost a lookup."""
        cycle = self.path_cycle(entry_id)
        if cycle:
            raise ParentCycleError(self.store.name, entry_id, cycle, line=self.line_of(entry_id))

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry; the next append starts a new root."""
        self.leaf_id = None
