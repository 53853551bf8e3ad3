"""The state a :class:`~contextree.session.tree.SessionTree` keeps: its store, header, record
index and caches, how it loads, and the plain reads (records, entries by id, the leaf).

The tree is built in layers, one concern each: this module (state and loading),
:mod:`.tree_query` (paths, children, labels, context), :mod:`.tree_sync` (writing under the
lock, taking in other writers' lines, rewrites) and :mod:`.tree` (pi's appends).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

from contextree.context.build import SessionContext
from contextree.entries.ids import iso_now, new_entry_id, new_session_id
from contextree.entries.types import CURRENT_SESSION_VERSION, Header, StoredEntry
from contextree.errors import ContextreeError
from contextree.store.base import SessionStore
from contextree.store.byte_source import OpensBytes, RangeBytes
from contextree.store.index import (
    BadLine,
    LoadReport,
    ParsedSession,
    Record,
    SessionHead,
    entries_of,
    parse_head,
    slot_title,
)
from contextree.store.jsonl import JsonlFileStore
from contextree.store.lines import parse_session
from contextree.store.migrations import migrate
from contextree.store.record_index import RecordIndex

__all__ = ["LAZY_READ_MIN_BYTES", "TreeState"]

LAZY_READ_MIN_BYTES = 8 << 20
"""A session file at least this large is read by range as its index needs it (its context
usually lies in the last few megabytes), a smaller one whole."""

_EDGE_BYTES = 64 << 10
"""How much of a large session's start (for the header) and end (for a blank tail) is read on
open; a header or a blank tail that does not fit is read the usual way (whole)."""


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


def _edges(source: RangeBytes, name: str) -> tuple[SessionHead, int | None] | None:
    """The head of a large file (its torn last line noted) and where its blank tail begins,
    from its first and last bytes; ``None`` when those do not settle them or the format is
    an old one (read and migrated whole)."""
    size = source.size
    tail_start = max(0, size - _EDGE_BYTES)
    tail = source.read(tail_start, size)
    blank = _blank_tail(tail)
    if blank == 0:
        return None  # all blank: how far back it goes, only the whole file shows
    start = source.read(0, min(size, _EDGE_BYTES))
    try:
        head = parse_head(start[: start.rfind(b"\n") + 1], name)
    except ContextreeError:
        return None  # the whole read says what is wrong, with the whole file in view
    if head.version < CURRENT_SESSION_VERSION:
        return None
    head.report.partial_last_line = not tail.endswith(b"\n")
    return head, None if blank is None else tail_start + blank


class TreeState:
    """A session's header, records and leaf as loaded; the base of ``SessionTree``."""

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
        data = b""
        if isinstance(store, OpensBytes) and store.exists():
            read = self._open_lazily(store)
            if read is None:
                return  # loaded, lazily
            data = read
        elif store.exists():
            data = store.read()
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

    def _open_lazily(self, store: OpensBytes) -> bytes | None:
        """Load a large session reading only its first and last bytes, and later what the
        leaf needs (see :mod:`contextree.store.byte_source`); ``None`` once loaded so.
        Otherwise the whole content, for the usual load: a small session, an old format
        (migrated whole), or a head or tail that the first and last bytes do not settle."""
        source = store.open_bytes()
        if source is None:  # gone since exists() said it was there: as the whole read says
            return self.store.read()
        size = source.size
        edges = None
        try:
            edges = _edges(source, self.store.name) if size >= LAZY_READ_MIN_BYTES else None
            if edges is None:
                return source.read(0, size)
        finally:
            if edges is None:
                source.close()
        head, blank_tail = edges
        self._blank_tail = blank_tail
        self._known_size = size
        self._needs_rewrite = False
        self._install(head, RecordIndex.lazy_source(source, size, head))
        return None

    def _load(self, data: bytes) -> None:
        head = parse_head(data, self.store.name)
        if head.version < CURRENT_SESSION_VERSION:
            # Old formats are migrated whole, in memory; they are small and rare.
            parsed = parse_session(data, self.store.name)
            self._needs_rewrite = migrate(parsed)
            self._install(
                head, RecordIndex.loaded(parsed.items, parsed.report, parsed.next_line), parsed
            )
        else:
            self._needs_rewrite = False
            self._install(head, RecordIndex.lazy(data, head))

    def _install(
        self, head: SessionHead, index: RecordIndex, migrated: ParsedSession | None = None
    ) -> None:
        """Take ``head`` and ``index`` as the loaded session (``migrated``: its header as
        migrated) and find the leaf."""
        self.header = migrated.header if migrated is not None else head.header
        self._header_raw = migrated.header_raw if migrated is not None else head.header_raw
        self._index = index
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

    @property
    def read_report(self) -> LoadReport:
        """What loading found wrong in the lines read so far, with their line numbers:
        unreadable lines, invalid UTF-8 replaced, a torn last line (:attr:`report` once every
        line has been read). For a reader of the leaf's context, which in a large session
        reads only the file's tail; repeated ids and missing parents need :attr:`report`."""
        return self._index.read_report()

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

    def get_entries(self) -> list[StoredEntry]:
        """Every entry in file order."""
        return entries_of(self.records())

    def get_entry(self, entry_id: str) -> StoredEntry | None:
        """The entry with ``entry_id``, or ``None``."""
        record = self._index.get(entry_id)
        return record.entry if record is not None else None

    def has_entry(self, entry_id: str) -> bool:
        return self.record_of(entry_id) is not None

    def record_of(self, entry_id: str) -> Record | None:
        """The record of ``entry_id`` (the last line with that id), or ``None``."""
        return self._index.get(entry_id)

    def line_of(self, entry_id: str) -> int | None:
        """The file line of ``entry_id`` (the last one with that id), for error messages."""
        record = self.record_of(entry_id)
        if record is None or record.line is None:
            return None
        return self._index.file_line(record.line)

    def get_leaf_entry(self) -> StoredEntry | None:
        return self.get_entry(self.leaf_id) if self.leaf_id is not None else None

    def _forget_branches(self) -> None:
        """Drop what is cached about branches (after anything but our own appends)."""
        self._path_cache = None
        self._context_cache = None
        self._compaction_cache = None
