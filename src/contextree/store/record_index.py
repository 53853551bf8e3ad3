"""The id index of a session's records, built from the end of the file as far as it is needed.

The leaf of a session is its last entry, and its context usually lies in the last few thousand
lines; opening a large session should cost what the leaf needs, not what the whole history
holds. So a lazily loaded index decodes entry envelopes in chunks from the end of the byte
buffer backwards, each chunk twice the size of the one before: a lookup that misses decodes
further back until it finds the id or reaches the header. Whatever needs every entry (file
order, the load report, writing) calls :meth:`RecordIndex.complete` first.

Entries only ever point back to earlier lines, and for duplicate ids the last line wins, so an
index of a file's tail answers every lookup it can answer exactly as the full index would.

Until the index is complete the number of lines before a chunk is unknown, so lines are
numbered from the end (the last line is -1) and renumbered from the start on completion.
"""

from __future__ import annotations

import dataclasses
import signal
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import filterfalse
from operator import attrgetter, countOf
from types import FrameType

from contextree.entries.codec import replacements
from contextree.store.byte_source import Buffer, BufferBytes, ByteSource, ReadsAhead
from contextree.store.index import (
    BadLine,
    LoadReport,
    Record,
    SessionHead,
    collector_paused,
)
from contextree.store.lines import mark_partial_last_line, parse_lines

__all__ = ["FIRST_CHUNK_BYTES", "RecordIndex"]

FIRST_CHUNK_BYTES = 1 << 20
"""Bytes decoded by the first lazy step back from the end; each later step doubles."""

_PAUSE_GC_BYTES = 8 << 20
"""Decoding a chunk larger than this pauses the garbage collector (see collector_paused)."""

_parents = attrgetter("parent_id")
_ids = attrgetter("id")


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) back until the block is done; it is raised right after.

    The handler is swapped for one that only notes the signal: blocking the signal in this
    thread would not do, as the kernel hands a process's signal to any thread that does not
    block it, and Python runs the handler in the main thread all the same. Only the main
    thread may swap handlers, and only it receives KeyboardInterrupt; elsewhere this is a
    no-op.
    """
    if threading.current_thread() is not threading.main_thread() or (
        signal.getsignal(signal.SIGINT) is None  # a handler set outside Python: left alone
    ):
        yield
        return
    caught: list[tuple[int, FrameType | None]] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append((signum, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            if callable(previous):
                previous(*caught[0])
            elif previous == signal.SIG_DFL:
                signal.raise_signal(signal.SIGINT)


class RecordIndex:
    """Entry records of one session in file order, and the last record of each id."""

    def __init__(self, report: LoadReport) -> None:
        """An empty, complete index (a new session)."""
        self._report = report
        self.items: list[Record | BadLine] = []
        """Records and bad lines in file order (while lazy: only the decoded tail)."""
        self.by_id: dict[str, Record] = {}
        """The last record of each id (while lazy: of the decoded tail)."""
        self.next_line = 1
        self._source: ByteSource = BufferBytes(b"")
        self._floor = 0  # where entry lines begin
        self._pending = 0  # bytes [floor, pending) are not decoded yet
        self._chunk = FIRST_CHUNK_BYTES
        self._first_line = 1
        self._lines_seen = 0  # lines decoded so far, counted from the end
        self._needs_id = True
        self._leading: Sequence[BadLine] = ()  # unreadable lines before the header
        # replacements() when report.invalid_utf8 was last gathered (-1: gather again).
        self._replacements_seen = 0
        self._recount_due = False  # complete, but the report not yet gathered from the items

    @classmethod
    def lazy(cls, data: bytes, head: SessionHead) -> RecordIndex:
        """An index of ``data``'s entry lines (after ``head``) that decodes them on demand."""
        return cls.lazy_source(BufferBytes(data), len(data), head)

    @classmethod
    def lazy_source(cls, source: ByteSource, size: int, head: SessionHead) -> RecordIndex:
        """An index of the entry lines (after ``head``) of the ``size`` bytes of ``source``,
        read and decoded on demand; the source is closed once every line is decoded."""
        index = cls(head.report)
        index._source = source
        index._floor = head.body_start
        index._pending = size
        index._first_line = head.first_line
        index.next_line = head.first_line
        index._needs_id = head.version >= 2
        index._leading = head.leading
        return index

    @classmethod
    def loaded(
        cls, items: list[Record | BadLine], report: LoadReport, next_line: int
    ) -> RecordIndex:
        """A complete index of already parsed ``items`` (file order; ``next_line`` follows)."""
        index = cls(report)
        index.next_line = next_line
        index.add(items)
        return index

    # -- lazy part ------------------------------------------------------------------------------

    @property
    def report(self) -> LoadReport:
        """Problems found while loading; whole only once :attr:`complete` is true."""
        if self._recount_due:
            self.recount(self._leading)
        return self._report

    @property
    def complete(self) -> bool:
        """True when every line of the file is decoded (the report is then made whole when
        it is first asked for)."""
        return self._pending <= self._floor

    def get(self, entry_id: str, *, read_ahead: bool = False) -> Record | None:
        """The record of ``entry_id``, decoding further back until it is found or all is read.

        ``read_ahead``: the caller goes on back to the file's start (a walk to a path's root),
        so each step back has the next one's bytes read while it decodes."""
        record = self.by_id.get(entry_id)
        while record is None and self._pending > self._floor:
            self._step_back(read_ahead=read_ahead)
            record = self.by_id.get(entry_id)
        return record

    def last_record(self) -> Record | None:
        """The last record in file order (the leaf on open)."""
        while True:
            for item in reversed(self.items):
                if type(item) is Record:
                    return item
            if self.complete:
                return None
            self._step_back()

    def newest_first(self) -> Iterator[Record | BadLine]:
        """Items from the last line back, decoding further back only as far as the caller reads
        (a reader of what was appended since it last looked stops after a few lines).

        Nothing else may read through the index while the iterator is in use: a lookup that
        decodes further back would shift the positions it walks."""
        position = len(self.items)
        while True:
            items = self.items
            while position > 0:
                position -= 1
                yield items[position]
            if self.complete:
                return
            before = len(items)
            self._step_back()
            position = len(self.items) - before

    def complete_all(self) -> RecordIndex:
        """Decode everything not decoded yet and finish the report; returns ``self``."""
        if not self.complete:
            self._step_back(to_floor=True)
        return self

    def _region(self) -> tuple[Buffer, int, int]:
        """The next whole lines back from where decoding stopped: a buffer, the content offset
        of its first byte, and the content offset where those lines begin."""
        floor, end, size = self._floor, self._pending, self._chunk
        while True:
            start = self._back(end, size)
            data, base = self._source.region(start, end)
            if start == floor:
                return data, base, start
            # Begin after the first newline: the bytes before it end a line that begins
            # further back, which a later step reads whole.
            newline = data.find(b"\n", start - base, end - base)
            if newline >= 0 and base + newline + 1 < end:
                return data, base, base + newline + 1
            size *= 2  # one line longer than the step: read further back

    def _step_back(self, *, to_floor: bool = False, read_ahead: bool = False) -> None:
        end = self._pending
        if to_floor:
            start = self._floor
            data, base = self._source.region(start, end)
        else:
            data, base, start = self._region()
            if read_ahead:
                self._read_ahead(start)
        with collector_paused(end - start > _PAUSE_GC_BYTES):
            last_step = start == self._floor
            table: dict[str, Record] = {}
            chunk, count = parse_lines(
                data,
                start - base,
                end - base,
                first_line=self._first_line if last_step else None,
                lines_after=self._lines_seen,
                needs_id=self._needs_id,
                report=LoadReport(self.report.source),  # made whole when asked for (report)
                index=table,
            )
            if not self.items:
                mark_partial_last_line(chunk, self.report)  # this chunk holds the last item
            # Only now change state, so an interrupted step (Ctrl-C) can simply run again; and
            # Ctrl-C waits while it changes (else the chunk could be merged twice, or its
            # lines numbered from a count that already held it).
            with _interrupts_held():
                lines_seen = self._lines_seen + count
                if last_step:
                    # The count from the start is known: renumber what was counted from the end.
                    self._renumber(self._first_line + lines_seen)
                self._merge(chunk, table)
                self._chunk = self._next_chunk()
                self._lines_seen = lines_seen
                self._pending = start
                if last_step:
                    self._finish()

    def _back(self, end: int, size: int) -> int:
        """Where a step of ``size`` bytes back from ``end`` begins (never before the floor)."""
        return max(self._floor, end - size)

    def _next_chunk(self) -> int:
        """The size the next step back first tries: each step doubles."""
        return self._chunk * 2

    def _read_ahead(self, start: int) -> None:
        """Have the source read the next step's bytes (the range :meth:`_region` will ask for
        first) while this step decodes. Only for a caller that goes back to the start (see
        :meth:`get`): a reader of the tail (``context`` reads a few megabytes back) would read
        a chunk for nothing."""
        source = self._source
        if start > self._floor and isinstance(source, ReadsAhead):
            source.read_ahead(self._back(start, self._next_chunk()), start)

    def _merge(self, chunk: list[Record | BadLine], table: dict[str, Record]) -> None:
        """Put an earlier chunk in front, and its records by id (``table``, see
        :func:`~contextree.store.lines.parse_lines`) in the index: ids already known belong to
        later lines and win."""
        by_id = self.by_id
        known = len(by_id)
        by_id.update(table)  # (the same dict: a walk holds its bound ``get``)
        if len(by_id) < known + len(table):
            # An id of the chunk's was known (rare): the record of its last line wins again.
            # (Looking for such ids first cost half as much again as the update.)
            for item in self.items:
                if type(item) is Record and item.id in table:
                    by_id[item.id] = item
        if self.items:
            # In place: a new list would take and then drop a reference to every item so far
            # (a write to each record's memory, 100,000 of them at a time late in a walk).
            self.items[:0] = chunk
        else:
            self.items = chunk

    def _renumber(self, shift: int) -> None:
        # Only lines still counted from the end (negative) move: run again after an
        # interruption, it finishes what it began.
        items = self.items
        bad = False
        for item in items:  # (a loop over records alone: a pass over every record of a walk)
            if type(item) is Record:
                line = item.line
                assert line is not None
                if line < 0:
                    item.line = line + shift
            else:
                bad = True
        if bad:
            for position, item in enumerate(items):
                if isinstance(item, BadLine) and item.line < 0:
                    items[position] = dataclasses.replace(item, line=item.line + shift)

    def _finish(self) -> None:
        """Note that the report must now be made whole (when it is asked for: a reader of a
        path does not need a pass over every record to find repeated ids)."""
        self._recount_due = True
        self.next_line = self._first_line + self._lines_seen
        self._source.close()  # records keep their own reference to the buffers

    def _note_duplicates(self, records: Iterable[Record]) -> None:
        first: dict[str, int] = {}
        duplicates = self._report.duplicate_ids  # (called by recount: not the property)
        for record in records:
            key = record.id
            assert key is not None
            line = record.line or 0
            if key in first:
                duplicates.setdefault(key, [first[key]]).append(line)
            else:
                first[key] = line

    # -- complete part --------------------------------------------------------------------------

    def current_report(self) -> LoadReport:
        """The whole file's report (completing the index), its ``invalid_utf8`` up to date
        with every line read so far."""
        self.complete_all()
        seen = replacements()
        if seen != self._replacements_seen:
            # Some line somewhere was read with invalid UTF-8 replaced since we last looked
            # (never, for valid files): gather this file's lines.
            self._replacements_seen = seen
            report = self.report
            header = report.header_utf8_line
            report.invalid_utf8[:] = [
                *([header] if header is not None else []),
                *(
                    item.line or 0
                    for item in self.items
                    if type(item) is Record and item.utf8_replaced
                ),
            ]
        return self.report

    def file_line(self, line: int) -> int:
        """The file's line number of an item's ``line``: until the index is complete, lines
        are counted from the end (the last is -1), and the lines not read yet give the offset
        (a count of newlines, not a decode)."""
        if line > 0 or self.complete:
            return line
        below = self._source.count_newlines(self._floor, self._pending)
        return line + self._first_line + self._lines_seen + below

    def read_report(self) -> LoadReport:
        """What the lines decoded so far show (the whole report once the index is complete):
        unreadable lines, invalid UTF-8 replaced, a torn last line. Repeated ids and missing
        parents are left out until every line is read: a lazily opened session's reader that
        needs only its tail should not read the whole file to warn about its head."""
        if self.complete:
            return self.current_report()
        whole = self.report
        report = LoadReport(whole.source, partial_last_line=whole.partial_last_line)
        report.header_utf8_line = whole.header_utf8_line
        bad = [item for item in self.items if type(item) is not Record]
        replaced = [
            item for item in self.items if type(item) is Record and item.utf8_replaced
        ]
        for item in bad:
            assert isinstance(item, BadLine)
            report.bad_lines.append(dataclasses.replace(item, line=self.file_line(item.line)))
        report.invalid_utf8.extend(self.file_line(record.line or 0) for record in replaced)
        report.bad_lines[:0] = self._leading
        if whole.header_utf8_line is not None:
            report.invalid_utf8.insert(0, whole.header_utf8_line)
        return report

    def recount(self, leading: Sequence[BadLine]) -> None:
        """Gather the report's problems from the items afresh: the bad lines (after the
        ``leading`` ones before the header), repeated ids and missing parents."""
        assert self.complete, "complete the index first"
        report, by_id, items = self._report, self.by_id, self.items
        records = [item for item in items if type(item) is Record]
        # Every item is a record or a bad line: when all are records, no pass looks for the
        # bad lines, and the ids are counted, not listed, until they turn out to repeat
        # (two passes over a 100k-entry session's records, 10 ms of the 25 of this).
        bad = (i for i in items if isinstance(i, BadLine)) if len(records) < len(items) else ()
        report.bad_lines[:] = [*leading, *bad]
        report.duplicate_ids.clear()
        # Some id is on more than one line when the ids indexed are fewer than the records
        # with one: then the slow pass. (Every id indexed is a record's, so as many ids as
        # records means every record has one and none repeats: no pass to count the records
        # without an id, 6 ms at 100k entries.)
        with_ids = len(records)
        if with_ids != len(by_id):
            with_ids -= countOf(map(_ids, records), None)
        if with_ids != len(by_id):
            self._note_duplicates(record for record in records if record.id is not None)
        # The parents not indexed, without a set of every parent first (19 ms against 7 ms
        # of loading the 100k bench session).
        missing = set(filterfalse(by_id.__contains__, map(_parents, records)))
        missing.discard(None)
        report.orphans[:] = (
            [
                (record.id or "?", record.line, record.parent_id)
                for record in records
                if record.parent_id is not None and record.parent_id in missing
            ]
            if missing
            else []
        )
        if replacements():
            self._replacements_seen = -1  # line numbers may have changed: gather them anew
        self._recount_due = False  # only now: an interrupted recount runs again when asked

    def renumber_from(self, first_line: int) -> None:
        """Give the items one line each from ``first_line`` on (a rewrite wrote them so)."""
        items = self.items
        number = first_line
        for position, item in enumerate(items):
            if type(item) is Record:
                item.line = number
            else:
                assert isinstance(item, BadLine)
                items[position] = dataclasses.replace(item, line=number)
            number += 1
        self.next_line = number

    def add(self, items: Sequence[Record | BadLine]) -> None:
        """Add ``items`` that follow everything indexed so far (the index must be complete)."""
        assert self.complete, "complete the index before adding to it"
        if not items:
            return
        by_id = self.by_id
        duplicates = self.report.duplicate_ids
        last_line = items[-1].line
        if last_line is not None:
            self.next_line = max(self.next_line, last_line + 1)
        records: list[Record] = []
        for item in items:
            self.items.append(item)
            if type(item) is not Record:
                continue
            records.append(item)
            key = item.id
            if key is None:
                continue
            if key in by_id:
                lines = duplicates.setdefault(key, [by_id[key].line or 0])
                lines.append(item.line or 0)
            by_id[key] = item
        # A new line may supply the parent an earlier orphan was missing.
        orphans = [o for o in self.report.orphans if o[2] not in by_id]
        orphans.extend(
            (r.id or "?", r.line, r.parent_id)
            for r in records
            if r.parent_id is not None and r.parent_id not in by_id
        )
        self.report.orphans[:] = orphans
