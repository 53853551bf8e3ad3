"""``SessionTree``: the append-only tree of a session, its leaf, and every append of pi.

Appending makes a child of the current leaf and moves the leaf to it (pi-behaviour.md §1.6).
The leaf on open is the last entry in file order. Entries are plain dicts with pi's keys; treat
them as read-only (a change is a new entry or an atomic rewrite through :meth:`rewrite_entries`).

Writes go through the store's transaction: under the lock we first take in whatever another
process appended since we last looked, then write, so concurrent writers lose nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, overload

from contextree.context.build import (
    ContextNeeds,
    SessionContext,
    appended_context,
    build_context_from_path,
)
from contextree.entries.codec import encode_line
from contextree.entries.ids import iso_now, new_entry_id, new_session_id
from contextree.entries.types import CURRENT_SESSION_VERSION, AgentMessage, Entry, Header
from contextree.errors import (
    EntryNotFoundError,
    ParentCycleError,
    TreeError,
)
from contextree.session.rebase import (
    CompactedElsewhereError,
    SummarizedElsewhereError,
    WriteMark,
    newest_below,
    same_summary,
)
from contextree.store.base import SessionStore, StoreTransaction
from contextree.store.index import (
    BadLine,
    LoadReport,
    Record,
    entries_of,
    parse_entry_lines,
    parse_head,
    parse_session,
    slot_title,
)
from contextree.store.jsonl import JsonlFileStore
from contextree.store.memory import MemoryStore
from contextree.store.migrations import migrate
from contextree.store.missing import missing_session
from contextree.store.record_index import RecordIndex
from contextree.store.url import is_store_url, open_store

__all__ = ["PathView", "SessionTree", "TreeNode"]

_EXTEND_AT_MOST = 16
"""Appends of more entries at once drop the cached context instead of extending it."""


class PathView(Sequence[Entry]):
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
    def __getitem__(self, index: int) -> Entry: ...

    @overload
    def __getitem__(self, index: slice) -> list[Entry]: ...

    def __getitem__(self, index: int | slice) -> Entry | list[Entry]:
        if isinstance(index, slice):
            return entries_of(self._records[index])
        return self._records[index].entry

    def __iter__(self) -> Iterator[Entry]:
        for record in self._records:
            yield record.entry

    def __reversed__(self) -> Iterator[Entry]:
        for record in reversed(self._records):
            yield record.entry

    def __add__(self, other: Sequence[Entry]) -> list[Entry]:
        return [*self, *other]

    def __radd__(self, other: Sequence[Entry]) -> list[Entry]:
        return [*other, *self]

    def copy(self) -> list[Entry]:
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


def _timestamp_key(record: Record) -> str:
    return record.timestamp or ""


def _blank_tail(data: bytes) -> int | None:
    """Where the whitespace at the end of ``data`` begins, when there is more of it than a
    final newline (what an append that reserved its line and has not filled it in yet looks
    like); ``None`` otherwise. A file that ends with an entry costs a look at two bytes."""
    if not data[-2:].isspace():
        return None
    end = len(data)
    while end:
        chunk = data[max(0, end - 4096) : end]
        kept = len(chunk.rstrip())
        if kept:
            return end - len(chunk) + kept
        end -= len(chunk)
    return 0


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


def _still_blank(txn: StoreTransaction, start: int, end: int) -> bool:
    """Whether the bytes ``[start, end)`` of the stored file are still only whitespace."""
    return end <= start or txn.read_from(start)[: end - start].isspace()


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
    def entry(self) -> Entry:
        return self._record.entry

    @property
    def id(self) -> str | None:
        return self._record.id

    @property
    def type(self) -> str:
        return self._record.type

    def __repr__(self) -> str:
        return f"TreeNode({self.id!r}, {self.type!r}, {len(self.children)} children)"


class SessionTree:
    """A session: header, entries in file order, and the current leaf."""

    def __init__(
        self,
        store: SessionStore,
        *,
        cwd: str | None = None,
        now: Callable[[], str] = iso_now,
        new_id: Callable[[Callable[[str], bool]], str] = new_entry_id,
        session_id: str | None = None,
    ) -> None:
        """Load ``store`` (an existing session), or start a new one when it holds nothing."""
        self.store = store
        self._now = now
        self._new_id = new_id
        self._index = RecordIndex(LoadReport(store.name))
        self._leading: list[BadLine] = []
        self._children: dict[str | None, list[Record]] | None = None
        # The root-to-entry path last walked, kept up to date by our own appends: an agent asks
        # for the leaf's path several times a turn, and walking 100k parents takes a while.
        self._path_cache: tuple[str, list[Record]] | None = None
        # Likewise the context and the latest compaction of the leaf last asked for: a host
        # rebuilds the context before every model call, and our appends only add to its end.
        self._context_cache: tuple[str, SessionContext] | None = None
        self._compaction_cache: tuple[str, Record | None] | None = None
        self._known_size = 0
        self._needs_rewrite = False
        # Which ids' parent chains end (True) or run into a cycle (False), as far as looked at
        # (see parent_cycle); kept across our own appends, dropped when others write.
        self._reaches_root: dict[str, bool] = {}
        # Other writers' lines taken in since the last (re)load, in file order, and how many
        # (re)loads there were: a WriteMark counts on them to tell what arrived meanwhile.
        self._taken_in: list[Record | BadLine] = []
        self._loads = 0
        data = store.read() if store.exists() else b""
        # Read without the lock: the blank lines at the end may be space another writer has
        # reserved and is filling in (see JsonlFileStore); the first sync under the lock looks
        # at them again.
        self._blank_tail = _blank_tail(data)
        if data and not data.isspace():
            self._load(data)
            self._known_size = len(data)
        else:
            self.header: Header = {
                "type": "session",
                "version": CURRENT_SESSION_VERSION,
                "id": session_id or new_session_id(),
                "timestamp": now(),
                "cwd": cwd if cwd is not None else os.getcwd(),
            }
            self._header_raw: bytes | None = None
            self._title_slot: bytes | None = None
            self.leaf_id: str | None = None
            # An empty file holds nothing to lose: the first write replaces it with a header.
            self._needs_rewrite = bool(data)
            self._known_size = len(data)

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        create: bool = True,
        cwd: str | None = None,
        fsync: bool = False,
        now: Callable[[], str] = iso_now,
        session_id: str | None = None,
    ) -> SessionTree:
        """Open the session at ``path`` (created on the first append when missing): a JSONL
        file, or a ``sqlite://PATH#SESSION`` / ``postgresql://...#SESSION`` URL
        (:mod:`contextree.store.url`).

        ``session_id`` names a session created here (default: a new UUIDv7).
        """
        if is_store_url(path):
            store = open_store(path, fsync=fsync)
            if not create and not store.exists():
                raise missing_session(path)
            return cls(store, cwd=cwd, now=now, session_id=session_id)
        file = Path(path)
        if file.is_dir() or (not create and not file.exists()):
            raise missing_session(file)
        return cls(JsonlFileStore(file, fsync=fsync), cwd=cwd, now=now, session_id=session_id)

    @classmethod
    def in_memory(
        cls, data: bytes = b"", *, cwd: str | None = None, now: Callable[[], str] = iso_now
    ) -> SessionTree:
        """A session kept in memory; ``data`` may hold the lines of an existing session."""
        return cls(MemoryStore(data), cwd=cwd, now=now)

    def _load(self, data: bytes) -> None:
        head = parse_head(data, self.store.name)
        if head.version < CURRENT_SESSION_VERSION:
            # Old formats are migrated whole, in memory; they are small and rare.
            parsed = parse_session(data, self.store.name)
            self._needs_rewrite = migrate(parsed)
            self.header = parsed.header
            self._header_raw = parsed.header_raw
            self._index = RecordIndex.loaded(parsed.items, parsed.report, parsed.next_line)
        else:
            self._needs_rewrite = False
            self.header = head.header
            self._header_raw = head.header_raw
            self._index = RecordIndex.lazy(data, head)
        self._leading = head.leading
        self._title_slot = head.title_slot
        self._children = None
        self._forget_branches()
        self._reaches_root = {}
        self._taken_in = []
        self._loads += 1
        last = self._index.last_record()
        self.leaf_id = last.id if last is not None else None

    @property
    def title(self) -> str | None:
        """The title oh-my-pi keeps for the session: its title slot's, else the header's
        (pi names sessions with ``session_info`` entries instead)."""
        title = slot_title(self._title_slot) or self.header.get("title")
        return title if isinstance(title, str) and title.strip() else None

    @property
    def report(self) -> LoadReport:
        """What loading found wrong in the whole file (reads every line not read yet).

        Its ``invalid_utf8`` lists the lines read so far whose invalid UTF-8 was replaced (an
        entry's body is decoded when first read; :func:`~contextree.session.check.check_session`
        reads every one).
        """
        return self._index.current_report()

    # -- reading --------------------------------------------------------------------------------

    @property
    def path(self) -> Path | None:
        """The session file, or ``None`` for an in-memory session."""
        return self.store.path if isinstance(self.store, JsonlFileStore) else None

    @property
    def session_id(self) -> str:
        return str(self.header.get("id"))

    def __len__(self) -> int:
        return sum(1 for _ in self.records())

    def records(self) -> Iterator[Record]:
        """Entry records in file order (bodies decoded on demand)."""
        for item in self._index.complete_all().items:
            if type(item) is Record:
                yield item

    def records_newest_first(self) -> Iterator[Record]:
        """Entry records from the last in file order back (a reader of what was appended since
        it last looked stops early)."""
        for item in self._index.newest_first():
            if type(item) is Record:
                yield item

    def lines_newest_first(self) -> Iterator[Record | BadLine]:
        """Records and unusable lines from the last line back, read lazily like
        :meth:`records_newest_first`."""
        return self._index.newest_first()

    @property
    def known_size(self) -> int:
        """Bytes of the store this tree has read or written (grows with its appends)."""
        return self._known_size

    def get_entries(self) -> list[Entry]:
        """Every entry in file order."""
        return entries_of(self.records())

    def get_entry(self, entry_id: str) -> Entry | None:
        """The entry with ``entry_id``, or ``None``."""
        record = self._index.get(entry_id)
        return record.entry if record is not None else None

    def has_entry(self, entry_id: str) -> bool:
        return self._index.get(entry_id) is not None

    def line_of(self, entry_id: str) -> int | None:
        """The file line of ``entry_id`` (the last one with that id), for error messages."""
        record = self._index.get(entry_id)
        return record.line if record is not None else None

    def get_leaf_entry(self) -> Entry | None:
        return self.get_entry(self.leaf_id) if self.leaf_id is not None else None

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
            append(current)
            # Every record on the path is indexed, so a longer path than the index must loop:
            # only then pay for a seen-set.
            if len(path) > len(by_id):
                break
            parent = current.parent_id
            if parent is None:
                current = None
                break
            current = get(parent)
            if current is None:
                current = index.get(parent)  # not decoded yet, or missing
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

    def get_children(self, entry_id: str | None) -> list[Entry]:
        """Direct children of ``entry_id`` (``None``: the roots), oldest first."""
        return [record.entry for record in self._child_map().get(entry_id, [])]

    def _child_map(self) -> dict[str | None, list[Record]]:
        if self._children is None:
            children: dict[str | None, list[Record]] = {}
            by_id = self._index.complete_all().by_id
            for record in self.records():
                if record.id is None or by_id.get(record.id) is not record:
                    continue
                parent = record.parent_id
                if parent is None or parent == record.id or parent not in by_id:
                    parent = None
                children.setdefault(parent, []).append(record)
            for siblings in children.values():
                if len(siblings) > 1:  # most entries have one child: skip 100k trivial sorts
                    siblings.sort(key=_timestamp_key)
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

    def latest_compaction(self, leaf_id: str | None = None) -> Entry | None:
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

    def _context_records(self, start: str) -> list[Record]:
        """The end of ``start``'s path that its context reads (in a large session, a little)."""
        needs = ContextNeeds()
        index = self._index
        path: list[Record] = []
        seen: set[str | None] = set()
        current = index.get(start)
        while current is not None and current.id not in seen:
            seen.add(current.id)
            path.append(current)
            if needs.satisfied_by(current):
                break
            parent = current.parent_id
            current = index.get(parent) if parent is not None else None
        path.reverse()
        return path

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
        marks = self._reaches_root
        marks.update((record.id, True) for record in path if record.id is not None)
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
            record = self._index.get(entry_id)
            raise ParentCycleError(
                self.store.name, entry_id, cycle, line=record.line if record else None
            )

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry; the next append starts a new root."""
        self.leaf_id = None

    # -- appending ------------------------------------------------------------------------------

    def _base(self, kind: str) -> Entry:
        return {
            "type": kind,
            "id": self._new_id(self._index.complete_all().by_id.__contains__),
            "parentId": self.leaf_id,
            "timestamp": self._now(),
        }

    def append_entry(self, entry: Entry) -> str:
        """Append a complete entry dict (it must carry ``type``, ``id``, ``parentId``)."""
        if not isinstance(entry.get("type"), str) or not isinstance(entry.get("id"), str):
            raise TreeError('an entry needs a string "type" and "id"')
        if entry["id"] in self._index.complete_all().by_id:
            raise TreeError(f"an entry with id {entry['id']} already exists")
        self._write([Record.from_entry(entry)])
        return str(entry["id"])

    def append_message(self, message: AgentMessage) -> str:
        """Append a ``message`` entry holding ``message``; returns the new id."""
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise TypeError('a message must be a dict with a string "role"')
        entry = self._base("message")
        entry["message"] = message
        return self.append_entry(entry)

    def append_thinking_level_change(self, thinking_level: str) -> str:
        entry = self._base("thinking_level_change")
        entry["thinkingLevel"] = thinking_level
        return self.append_entry(entry)

    def append_model_change(self, provider: str, model_id: str) -> str:
        entry = self._base("model_change")
        entry["provider"] = provider
        entry["modelId"] = model_id
        return self.append_entry(entry)

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = None,
        from_extension: bool = False,
        *,
        short_summary: str | None = None,
        preserve_data: dict[str, Any] | None = None,
        tokens_after: int | None = None,
        method: str | None = None,
        planned_at: WriteMark | None = None,
    ) -> str:
        """Append a ``compaction`` entry; writes both ``fromHook`` and ``fromExtension``.

        ``tokens_after`` (estimated context right after) and ``method`` are oh-my-pi's
        display fields; pi ignores them.

        ``planned_at`` (:meth:`write_mark`, taken before the path was read) makes the append
        safe on a session other writers share: under the write lock, entries they appended
        below that leaf meanwhile stay on the path (the compaction goes after the newest), and
        when one of them is a compaction nothing is written: the leaf moves to the newest
        entry below it and :class:`~contextree.session.rebase.CompactedElsewhereError` says
        which compaction won.
        """
        entry = self._base("compaction")
        entry["summary"] = summary
        if short_summary is not None:
            entry["shortSummary"] = short_summary
        entry["firstKeptEntryId"] = first_kept_entry_id
        entry["tokensBefore"] = tokens_before
        if tokens_after is not None:
            entry["tokensAfter"] = tokens_after
        if method is not None:
            entry["method"] = method
        if details is not None:
            entry["details"] = details
        entry["fromHook"] = from_extension
        entry["fromExtension"] = from_extension
        if preserve_data is not None:
            entry["preserveData"] = preserve_data
        if planned_at is None:
            return self.append_entry(entry)
        mark = planned_at
        self._write([Record.from_entry(entry)], check=lambda r: self._follow_others(r, mark))
        return str(entry["id"])

    def write_mark(self) -> WriteMark:
        """Where this tree stands now, for a slow write planned from it (see
        :meth:`append_compaction`)."""
        return WriteMark(self.leaf_id, len(self._taken_in), self._loads)

    def append_custom(self, custom_type: str, data: Any = None) -> str:
        """Append a ``custom`` entry (extension state; never in the LLM context)."""
        base = self._base("custom")
        entry: Entry = {"type": "custom", "customType": custom_type}
        if data is not None:
            entry["data"] = data
        entry.update(id=base["id"], parentId=base["parentId"], timestamp=base["timestamp"])
        return self.append_entry(entry)

    def append_custom_message(
        self, custom_type: str, content: str | list[Any], display: bool = True, details: Any = None
    ) -> str:
        """Append a ``custom_message`` entry (reaches the LLM as a user message)."""
        base = self._base("custom_message")
        entry: Entry = {
            "type": "custom_message",
            "customType": custom_type,
            "content": content,
            "display": display,
        }
        if details is not None:
            entry["details"] = details
        entry.update(id=base["id"], parentId=base["parentId"], timestamp=base["timestamp"])
        return self.append_entry(entry)

    def append_label(self, target_id: str, label: str | None) -> str:
        """Set (or with ``None``/empty, clear) the label of ``target_id``."""
        if self._index.get(target_id) is None:
            raise EntryNotFoundError(target_id)
        entry = self._base("label")
        entry["targetId"] = target_id
        if label:
            entry["label"] = label
        return self.append_entry(entry)

    def append_session_info(self, name: str | None) -> str:
        """Name the session (trimmed; empty clears)."""
        entry = self._base("session_info")
        trimmed = (name or "").strip()
        if trimmed:
            entry["name"] = trimmed
        return self.append_entry(entry)

    def branch_with_summary(
        self,
        branch_from_id: str | None,
        summary: str,
        details: Any = None,
        from_extension: bool = False,
        *,
        planned_at: WriteMark | None = None,
    ) -> str:
        """Move the leaf to ``branch_from_id`` and append a ``branch_summary`` there.

        ``planned_at`` (:meth:`write_mark`, taken at the leaf being left, before the branch
        was read) makes the append safe on a session other writers share: the entry records
        that leaf (``abandonedLeafId``), and when another writer appended a summary of the
        same branch at the same place meanwhile, nothing is written: the leaf moves to the
        newest entry below theirs and
        :class:`~contextree.session.rebase.SummarizedElsewhereError` names it.
        """
        if branch_from_id is not None and self._index.get(branch_from_id) is None:
            raise EntryNotFoundError(branch_from_id)
        self.leaf_id = branch_from_id
        entry = self._base("branch_summary")
        entry["fromId"] = branch_from_id if branch_from_id is not None else "root"
        entry["summary"] = summary
        if details is not None:
            entry["details"] = details
        entry["fromHook"] = from_extension
        entry["fromExtension"] = from_extension
        if planned_at is None or planned_at.leaf_id is None:
            return self.append_entry(entry)
        mark = planned_at
        entry["abandonedLeafId"] = mark.leaf_id
        self._write([Record.from_entry(entry)], check=lambda r: self._summary_elsewhere(r, mark))
        return str(entry["id"])

    # -- rewriting ------------------------------------------------------------------------------

    def rewrite_entries(
        self, replacements: Sequence[Entry], *, planned_from: Sequence[Entry] | None = None
    ) -> list[str]:
        """Replace entries (matched by id) with new versions in one atomic rewrite; returns
        the ids replaced.

        ``planned_from`` (the entries as they were read when the replacements were made)
        makes the rewrite safe on a session other writers share: an entry another writer
        changed since (pruned it, say) is left as they wrote it, and when none is left
        nothing is written. What others appended meanwhile is always kept.
        """
        by_new_id = {e.get("id"): e for e in replacements}
        with self.store.transaction() as txn:
            self._sync(txn)
            for key in by_new_id:
                if not isinstance(key, str) or key not in self._index.by_id:
                    raise EntryNotFoundError(str(key))
            if planned_from is not None:
                by_new_id = self._unchanged_since(by_new_id, planned_from)
                if not by_new_id:
                    return []
            replacements_by_id = {str(k): Record.from_entry(e) for k, e in by_new_id.items()}
            self._refuse_new_cycles(replacements_by_id)
            for key, entry in by_new_id.items():
                record = self._index.by_id[str(key)]
                replacement = replacements_by_id[str(key)]
                record.type = replacement.type
                record.parent_id = replacement.parent_id
                record.timestamp = replacement.timestamp
                record.cached = entry
                record.raw = None
            # A replacement may name another parent, or change what a context holds: tree
            # shapes, paths and contexts are recomputed on demand.
            self._children = None
            self._forget_branches()
            self._reaches_root = {}
            self._replace_all(txn, [])
        return [str(key) for key in by_new_id]

    def _unchanged_since(
        self, by_new_id: dict[Any, Entry], planned_from: Sequence[Entry]
    ) -> dict[Any, Entry]:
        """The replacements whose entry is still as it was read when they were made."""
        read = {e.get("id"): e for e in planned_from}
        by_id = self._index.by_id
        return {
            key: entry
            for key, entry in by_new_id.items()
            if key not in read or by_id[str(key)].entry == read[key]
        }

    def _refuse_new_cycles(self, replacements: dict[str, Record]) -> None:
        """Raise :class:`ParentCycleError` when a replacement's new ``parentId`` would make
        its own parent chain loop back to it (pi hangs on such a file); nothing is written."""
        index_get = self._index.get

        def lookup(key: str) -> Record | None:
            found = replacements.get(key)
            return found if found is not None else index_get(key)

        for key, replacement in replacements.items():
            current = self._index.by_id[key]
            if replacement.parent_id == current.parent_id:
                continue
            # A cycle that starts with the replacement is one its new parent closes; one the
            # chain merely runs into was there before and is not this rewrite's doing.
            cycle = parent_cycle(lookup, replacement, {})
            if cycle and cycle[0] is replacement:
                ids = [str(r.id) for r in cycle]
                raise ParentCycleError(self.store.name, key, ids, line=current.line)

    def refresh(self) -> bool:
        """Take in what other writers appended or rewrote since we last looked; ``True`` when
        anything changed. The leaf stays where it is (when it still exists)."""
        if not self.store.exists():
            return False
        with self.store.transaction() as txn:
            before = (self._known_size, txn.replaced)
            self._sync(txn)
            return before != (self._known_size, False)

    def flush(self) -> None:
        """Write pending migrations now (an atomic rewrite); no-op when nothing is pending."""
        if not self._needs_rewrite:
            return
        with self.store.transaction() as txn:
            self._sync(txn)
            self._replace_all(txn, [])

    @property
    def needs_rewrite(self) -> bool:
        """True when a migration is waiting for the next write."""
        return self._needs_rewrite

    def _write(self, new: list[Record], *, check: Callable[[Record], None] | None = None) -> None:
        """Append ``new`` under the write lock; ``check`` sees the first record once the
        others' lines are taken in (it may re-parent it, or raise to write nothing)."""
        self._walk_before_locking(new)
        with self.store.transaction() as txn:
            self._sync(txn)
            if check is not None:
                check(new[0])
            self._refuse_cycles(new)
            if self._needs_rewrite or txn.size == 0:
                self._replace_all(txn, new)
            else:
                lines = [encode_line(r.entry) for r in new]
                txn.append(b"".join(line + b"\n" for line in lines))
                for record, line in zip(new, lines, strict=True):
                    record.raw = line
                self._known_size = txn.size
                self._add(new)

    def _follow_others(self, first: Record, mark: WriteMark) -> None:
        """Hang ``first`` below what other writers appended under the planned leaf since
        ``mark``; raise CompactedElsewhereError (leaf moved) when that holds a compaction."""
        if first.parent_id != mark.leaf_id:
            return  # the leaf was moved on purpose since the plan
        tip, compaction = newest_below(self._news_since(mark), mark.leaf_id)
        if compaction is not None:
            self.leaf_id = tip
            raise CompactedElsewhereError(compaction, str(tip))
        if tip != mark.leaf_id:
            first.parent_id = tip
            if first.cached is not None:
                first.cached["parentId"] = tip
            self.leaf_id = tip

    def _summary_elsewhere(self, first: Record, mark: WriteMark) -> None:
        """Raise SummarizedElsewhereError (leaf moved) when another writer appended a summary
        of the branch left at ``mark`` where ``first`` would go, since ``mark``."""
        news = self._news_since(mark)
        theirs = same_summary(news, first.parent_id, mark.leaf_id)
        if theirs is not None:
            tip, _ = newest_below(news, theirs)
            self.leaf_id = tip
            raise SummarizedElsewhereError(theirs, str(tip))

    def _news_since(self, mark: WriteMark) -> list[Record | BadLine]:
        """Other writers' lines taken in since ``mark`` (under the write lock)."""
        if mark.loads == self._loads:
            return self._taken_in[mark.taken_in :]
        # Another writer rewrote the session: its lines were read afresh, so what came after
        # the planned leaf in the file is what may have arrived meanwhile.
        leaf = self._index.get(mark.leaf_id) if mark.leaf_id is not None else None
        after = leaf.line if leaf is not None and leaf.line is not None else 0
        return [r for r in self._index.items if r.line is not None and r.line > after]

    def _walk_before_locking(self, new: list[Record]) -> None:
        """Do a first write's whole-file work before taking the lock: complete the index and
        walk the parent chain the new entries hang from once (the marks stay true while other
        writers only append). Under the lock, each of 8 workers' first appends on a 100k-entry
        session used to walk it while the others waited (issue 27 item 1)."""
        index = self._index.complete_all()
        parent = new[0].parent_id if new else None
        start = index.get(parent) if parent is not None else None
        if start is not None and start.id not in self._reaches_root:
            parent_cycle(index.get, start, self._reaches_root)

    def _refuse_cycles(self, new: list[Record]) -> None:
        """Raise ParentCycleError when an entry of ``new`` would sit under a parent cycle (or
        close one, with an id that takes over another's). The chain of the leaf is walked once;
        after that an append under it costs a lookup."""
        known = self._reaches_root
        pending: dict[str, Record] = {}
        index_get = self._index.get

        def lookup(key: str) -> Record | None:
            found = pending.get(key)
            return found if found is not None else index_get(key)

        for record in new:
            if record.id is None:
                continue
            if record.id in known:
                known.clear()  # an id a chain ended at (or another's): the marks may be stale
            pending[record.id] = record
            cycle = parent_cycle(lookup, record, known)
            if cycle or known.get(record.id) is False:
                known.clear()  # they counted entries that will not be written
                parent = record.parent_id
                if parent is not None and index_get(parent) is not None:
                    self.ensure_acyclic(parent)
                ids = [str(r.id) for r in cycle] or [record.id]
                raise ParentCycleError(self.store.name, parent or record.id, ids)

    def _add(self, new: list[Record]) -> None:
        index = self._index
        for number, record in enumerate(new, index.next_line):
            record.line = number
        index.add(new)
        cached = self._path_cache
        for record in new:
            # A child of the entry whose path is cached: its path is that path plus itself.
            if cached is not None and record.parent_id == cached[0] and record.id is not None:
                cached[1].append(record)
                cached = (record.id, cached[1])
            else:
                cached = None
        self._path_cache = cached
        self._extend_branch_caches(new)
        # Rebuilt on demand: a new entry may be its own parent or supply an orphan's parent,
        # which changes more of the child map than the new entry's own place.
        self._children = None
        if new:
            self.leaf_id = new[-1].id

    def _forget_branches(self) -> None:
        """Drop what is cached about branches (after anything but our own appends)."""
        self._path_cache = None
        self._context_cache = None
        self._compaction_cache = None

    def _extend_branch_caches(self, new: list[Record]) -> None:
        """Carry the cached context and latest compaction over our appends to that leaf."""
        context, compaction = self._context_cache, self._compaction_cache
        if len(new) > _EXTEND_AT_MOST:
            context = compaction = None  # a bulk append: one rebuild costs less
        for record in new:
            if record.id is None:
                context = compaction = None
                break
            if context is not None:
                extended = (
                    appended_context(context[1], record.entry)
                    if record.parent_id == context[0]
                    else None
                )
                context = (record.id, extended) if extended is not None else None
            if compaction is not None:
                if record.parent_id != compaction[0]:
                    compaction = None
                elif record.type == "compaction":
                    compaction = (record.id, record)
                else:
                    compaction = (record.id, compaction[1])
        self._context_cache, self._compaction_cache = context, compaction

    def _replace_all(self, txn: StoreTransaction, new: list[Record]) -> None:
        # Unchanged lines are written as they were read, invalid UTF-8 included; only changed
        # ones are encoded anew (then valid UTF-8, U+FFFD where the original was not).
        header = self._header_raw if self._header_raw is not None else encode_line(self.header)
        # oh-my-pi's title slot stays the first line, byte for byte (it is fixed-width).
        lines = [self._title_slot] if self._title_slot is not None else []
        lines.extend(bad.raw for bad in self._leading)
        lines.append(header)
        keep_from = self._unfinished_tail(txn)
        if keep_from is not None:
            # Stays where it is, after the rewritten lines, instead of being ended with a
            # newline here: a writer that takes no lock (pi) may be writing it right now,
            # and the store carries over what it finishes.
            self._index.items.pop()
        encoded: list[Record] = []
        for item in self._index.items:
            if isinstance(item, BadLine):
                lines.append(item.raw)
                continue
            raw = item.raw
            if raw is None:
                raw = encode_line(item.entry)
                encoded.append(item)
            lines.append(raw)
        lines.extend(encode_line(r.entry) for r in new)
        data = b"\n".join(lines) + b"\n"
        txn.replace(data, keep_from=keep_from)
        report = self._index.report
        if self._header_raw is None:
            report.header_utf8_line = None  # encoded anew: valid UTF-8 now
        elif report.header_utf8_line is not None:
            # Blank lines before it are gone; the title slot, when there is one, is line 1.
            slot = 1 if self._title_slot is not None else 0
            report.header_utf8_line = slot + len(self._leading) + 1
        for record in encoded:
            record.utf8_replaced = False
        self._known_size = len(data)
        self._header_raw = header
        self._needs_rewrite = False
        self._add(new)
        # Renumber: the rewrite wrote one line per item, in order (blank lines are gone).
        slot = 1 if self._title_slot is not None else 0
        self._leading = [
            replace(bad, line=n) for n, bad in enumerate(self._leading, start=1 + slot)
        ]
        self._index.renumber_from(slot + len(self._leading) + 2)
        self._index.recount(self._leading)  # the report, with the new line numbers

    def _unfinished_tail(self, txn: StoreTransaction) -> int | None:
        """Where the stored content's last line begins when that line is unfinished (no
        newline after it) and unreadable: a torn line, or another writer's line in flight."""
        items = self._index.items
        size = txn.size
        if not items or size != self._known_size or not isinstance(items[-1], BadLine):
            return None
        raw = items[-1].raw
        start = size - len(raw)
        if start <= 0 or txn.read_from(start - 1) != b"\n" + raw:
            return None
        return start

    def _sync(self, txn: StoreTransaction) -> None:
        """Take in what other writers did since we last looked (and complete the index)."""
        self._index.complete_all()
        size = txn.size
        # Nothing known yet but bytes stored: another writer created the session after we
        # looked; take it in whole (its header included) rather than as a tail.
        created_elsewhere = self._known_size == 0 and size > 0
        blank_tail, self._blank_tail = self._blank_tail, None
        if txn.replaced or size < self._known_size or created_elsewhere:
            self._reload(txn)
            return
        if blank_tail is not None and not _still_blank(txn, blank_tail, self._known_size):
            # An append that was reserved but not yet filled in when we read the file: the
            # line is there now, inside what we took for blank. Read the file again.
            self._reload(txn)
            return
        if size > self._known_size and self._known_size > 0:
            # One byte more: whether what we knew ended with a newline.
            tail = txn.read_from(self._known_size - 1)
            ended_line, tail = tail[:1] == b"\n", tail[1:]
            index = self._index
            first_line = index.next_line
            if not ended_line:
                if not tail.startswith(b"\n"):
                    # Another writer added bytes to our unfinished last line (pi appends
                    # without ending a torn line first), so that line changed: read the file
                    # again, as a fresh open would see it.
                    self._reload(txn)
                    return
                first_line -= 1  # the tail's first (empty) line is the end of that line
            foreign = parse_entry_lines(
                tail, first_line=first_line, needs_id=True, report=index.report
            )
            leaf = self.leaf_id
            # Paths, cached contexts and cycle marks stay true unless a foreign line repeats
            # an id we know (the last line wins, which moves a path) or is the missing parent
            # a marked chain ended at. Dropping them for every foreign line made the next
            # append walk the whole chain under the lock (issue 27 item 1).
            known = self._reaches_root
            ids = [r.id for r in foreign if isinstance(r, Record) and r.id is not None]
            if any(key in known or key in index.by_id for key in ids):
                self._reaches_root = {}
                self._forget_branches()
            index.add(foreign)
            self._taken_in.extend(foreign)
            self._children = None
            self.leaf_id = leaf
            self._known_size = size

    def _reload(self, txn: StoreTransaction) -> None:
        """Load the whole stored content again, keeping the leaf when it still exists."""
        leaf = self.leaf_id
        data = txn.read_from(0)
        if data and not data.isspace():
            self._load(data)
            self._index.complete_all()
            if leaf is None or leaf in self._index.by_id:
                self.leaf_id = leaf
        self._known_size = len(data)
