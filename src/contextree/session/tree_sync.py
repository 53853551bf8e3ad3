"""Writing a session tree under the store's lock: first taking in whatever other writers
appended or rewrote since we last looked, then appending ours, or replacing the whole file
atomically (migrations, :meth:`rewrite_entries`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from contextree.context.build import appended_context
from contextree.entries.codec import encode_line
from contextree.entries.types import StoredEntry
from contextree.errors import EntryNotFoundError, ParentCycleError
from contextree.session.rebase import (
    CompactedElsewhereError,
    SummarizedElsewhereError,
    WriteMark,
    newest_below,
    same_summary,
)
from contextree.session.tree_nodes import parent_cycle
from contextree.session.tree_query import TreeQuery
from contextree.store.base import StoreTransaction
from contextree.store.index import BadLine, Record
from contextree.store.lines import parse_entry_lines

__all__ = ["TreeSync"]

_AppendAtEnd = Callable[[int, bytes], StoreTransaction | None]
"""``AppendsAtEnd.append_at_end`` of a store that has it."""

_EXTEND_AT_MOST = 16
"""Appends of more entries at once drop the cached context instead of extending it."""


def _still_blank(txn: StoreTransaction, start: int, end: int) -> bool:
    """Whether the bytes ``[start, end)`` of the stored file are still only whitespace."""
    return end <= start or txn.read_from(start)[: end - start].isspace()


class TreeSync(TreeQuery):
    """The store-sync side of ``SessionTree``: transactions, others' lines, rewrites."""

    # -- rewriting ------------------------------------------------------------------------------

    def rewrite_entries(
        self,
        replacements: Sequence[StoredEntry],
        *,
        planned_from: Sequence[StoredEntry] | None = None,
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
        self, by_new_id: dict[Any, StoredEntry], planned_from: Sequence[StoredEntry]
    ) -> dict[Any, StoredEntry]:
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
        if check is None and self._append_after_others(new):
            return
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

    def _append_after_others(self, new: list[Record]) -> bool:
        """Append ``new`` in one step where the store can (PostgreSQL: one round trip, no
        lock held while this process works) and take in what others appended meanwhile in
        front of it, as :meth:`_write` would have under the lock; ``False`` when the store
        cannot or declined (nothing written)."""
        # The optional method of AppendsAtEnd (an isinstance check of a runtime protocol cost
        # 30 µs per append).
        append_at_end: _AppendAtEnd | None = getattr(self.store, "append_at_end", None)
        if (
            append_at_end is None
            or self._needs_rewrite
            or self._known_size == 0
            or self._blank_tail is not None
        ):
            return False
        self._index.complete_all()
        self._refuse_cycles(new)
        lines = [encode_line(r.entry) for r in new]
        data = b"".join(line + b"\n" for line in lines)
        try:
            before = append_at_end(self._known_size, data)
        except BaseException:
            self._forget_marks(new)
            raise
        if before is None:
            self._forget_marks(new)
            return False
        self._sync(before)
        for record, line in zip(new, lines, strict=True):
            record.raw = line
        self._known_size = before.size + len(data)
        self._add(new)
        return True

    def _forget_marks(self, new: list[Record]) -> None:
        """Drop the cycle marks of entries checked but not written: a later check of them
        would take their ids for ids seen before and walk the whole chain again."""
        for record in new:
            if record.id is not None:
                self._reaches_root.pop(record.id, None)

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
            # a marked chain or the cached path ended at. Dropping them for every foreign
            # line made the next append walk the whole chain under the lock (issue 27 item 1).
            known = self._reaches_root
            ids = [r.id for r in foreign if isinstance(r, Record) and r.id is not None]
            # The cached path ended at a parent that was missing: a foreign line that is that
            # parent lengthens it.
            cached = self._path_cache
            orphan = cached[1][0].parent_id if cached is not None and cached[1] else None
            if any(key in known or key in index.by_id or key == orphan for key in ids):
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
