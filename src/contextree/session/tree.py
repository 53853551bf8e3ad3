"""``SessionTree``: the append-only tree of a session, its leaf, and every append of pi.

Appending makes a child of the current leaf and moves the leaf to it (pi-behaviour.md §1.6).
The leaf on open is the last entry in file order. Entries are plain dicts with pi's keys; treat
them as read-only (a change is a new entry or an atomic rewrite through :meth:`rewrite_entries`).

Writes go through the store's transaction: under the lock we first take in whatever another
process appended since we last looked, then write, so concurrent writers lose nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from contextree.entries.ids import iso_now
from contextree.entries.types import StoredEntry, StoredMessage
from contextree.errors import EntryNotFoundError, TreeError
from contextree.session.rebase import WriteMark
from contextree.session.tree_nodes import PathView, TreeNode, parent_cycle
from contextree.session.tree_sync import TreeSync
from contextree.store.index import Record
from contextree.store.jsonl import JsonlFileStore
from contextree.store.memory import MemoryStore
from contextree.store.missing import missing_session
from contextree.store.url import is_store_url, open_store

__all__ = ["PathView", "SessionTree", "TreeNode", "parent_cycle"]


class SessionTree(TreeSync):
    """A session: header, entries in file order, and the current leaf."""

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
        preload: bool = False,
    ) -> SessionTree:
        """Open the session at ``path`` (created on the first append when missing): a JSONL
        file, or a ``sqlite://PATH#SESSION`` / ``postgresql://...#SESSION`` URL
        (:mod:`contextree.store.url`).

        ``session_id`` names a session created here (default: a new UUIDv7). ``preload``
        does :meth:`preload`'s work before returning, as pi's open does.
        """
        if is_store_url(path):
            store = open_store(path, fsync=fsync)
            if not create and not store.exists():
                raise missing_session(path)
            tree = cls(store, cwd=cwd, now=now, session_id=session_id)
        else:
            file = Path(path)
            if file.is_dir() or (not create and not file.exists()):
                raise missing_session(file)
            tree = cls(JsonlFileStore(file, fsync=fsync), cwd=cwd, now=now, session_id=session_id)
        if preload:
            tree.preload()
        return tree

    @classmethod
    def in_memory(
        cls, data: bytes = b"", *, cwd: str | None = None, now: Callable[[], str] = iso_now
    ) -> SessionTree:
        """A session kept in memory; ``data`` may hold the lines of an existing session."""
        return cls(MemoryStore(data), cwd=cwd, now=now)

    # -- appending ------------------------------------------------------------------------------

    def _base(self, kind: str) -> StoredEntry:
        return {
            "type": kind,
            "id": self._new_id(self._index.complete_all().by_id.__contains__),
            "parentId": self.leaf_id,
            "timestamp": self._now(),
        }

    def append_entry(self, entry: StoredEntry) -> str:
        """Append a complete entry dict (it must carry ``type``, ``id``, ``parentId``)."""
        if not isinstance(entry.get("type"), str) or not isinstance(entry.get("id"), str):
            raise TreeError('an entry needs a string "type" and "id"')
        if entry["id"] in self._index.complete_all().by_id:
            raise TreeError(f"an entry with id {entry['id']} already exists")
        self._write([Record.from_entry(entry)])
        return str(entry["id"])

    def append_message(self, message: StoredMessage) -> str:
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
        entry: StoredEntry = {"type": "custom", "customType": custom_type}
        if data is not None:
            entry["data"] = data
        entry.update(id=base["id"], parentId=base["parentId"], timestamp=base["timestamp"])
        return self.append_entry(entry)

    def append_custom_message(
        self, custom_type: str, content: str | list[Any], display: bool = True, details: Any = None
    ) -> str:
        """Append a ``custom_message`` entry (reaches the LLM as a user message)."""
        base = self._base("custom_message")
        entry: StoredEntry = {
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
