"""Split stored bytes into a header and an ordered list of entry records.

Only the envelope (``type``, ``id``, ``parentId``) of each line is decoded here;
a :class:`Record` decodes its full body on first use, so opening a large session and building
the context of one leaf touches only the entries on that leaf's path. Lines that cannot be used
become :class:`BadLine` items and stay in place, verbatim, for any later rewrite.

A line with invalid UTF-8 is read as pi reads it, with U+FFFD for each invalid sequence, and
used; its record keeps the original bytes, which every rewrite writes back unchanged. Only a
line strict decoding rejects is looked at again, so valid files pay nothing for this. The
envelope decoder skips the bytes of the fields it does not read, so invalid UTF-8 inside a
message body is found when that entry is decoded; the load report lists what was found so far.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from sys import intern
from typing import Any, Final, TypeVar

import msgspec

from contextree.entries.codec import (
    DECODE_ERRORS,
    INVALID_UTF8,
    LineError,
    decode_object,
    decode_object_strict,
    decode_replacing,
    decoding,
    encode_line,
    header_problem,
    replaced_text,
    surrogate_free,
)
from contextree.entries.types import CURRENT_SESSION_VERSION, Header, StoredEntry
from contextree.errors import SessionFileError, UnsupportedVersionError

__all__ = [
    "BadLine",
    "LoadReport",
    "ParsedSession",
    "Record",
    "SessionHead",
    "collector_paused",
    "entries_of",
    "line_spans",
    "parse_entry_lines",
    "parse_head",
    "parse_lines",
    "parse_session",
]


# Our own fields of a Record get JSON names no session line uses (an invisible separator
# prefix), so decoding a line can only ever fill the envelope fields.
_OWN = "\u2063contextree."

_Probe = TypeVar("_Probe", bound=msgspec.Struct)
"""A small struct of the few fields a record reads from its line without decoding it."""


class Record(msgspec.Struct, gc=False):
    """One entry line: its place in the tree, and its body decoded on demand.

    The envelope fields (``type``, ``id``, ``parentId``) are decoded for every line at once by
    msgspec, straight into records; ``timestamp`` is read from the line when asked for. A
    loaded record points into the session's byte buffer (``buf[start:end]``) instead of
    holding a copy of its line; the line is decoded only when ``entry`` is first read.
    """

    type: str = ""
    id: str | None = None
    parent_id: str | None = msgspec.field(default=None, name="parentId")
    line: int | None = msgspec.field(default=None, name=_OWN + "line")
    stored: bytes | None = msgspec.field(default=None, name=_OWN + "stored")
    buf: bytes | None = msgspec.field(default=None, name=_OWN + "buf")
    start: int = msgspec.field(default=0, name=_OWN + "start")
    end: int = msgspec.field(default=0, name=_OWN + "end")
    cached: dict[str, Any] | None = msgspec.field(default=None, name=_OWN + "entry")
    utf8_replaced: bool = msgspec.field(default=False, name=_OWN + "utf8")
    """The line was read with invalid UTF-8 replaced by U+FFFD (its bytes stay as they are)."""

    @classmethod
    def from_entry(cls, entry: StoredEntry, *, line: int | None = None) -> Record:
        """A record for a new entry (no stored bytes yet)."""
        parent = entry.get("parentId")
        return cls(
            type=str(entry.get("type")),
            id=entry.get("id"),
            parent_id=parent if isinstance(parent, str) else None,
            line=line,
            cached=entry,
        )

    @property
    def raw(self) -> bytes | None:
        """The stored line (without newline), or ``None`` when the entry must be encoded."""
        if self.stored is not None:
            return self.stored
        if self.buf is not None:
            return self.buf[self.start : self.end]
        return None

    @raw.setter
    def raw(self, value: bytes | None) -> None:
        self.stored = value
        self.buf = None

    @property
    def entry(self) -> StoredEntry:
        """The full entry dict (decoded from the stored line on first access)."""
        if self.cached is None:
            self.cached = self.peek()
        return self.cached

    def peek(self) -> StoredEntry:
        """The full entry dict, decoded but not kept (the decoded one when there is one): a
        pass over every entry of a large session (``check``) then holds one at a time."""
        if self.cached is not None:
            return self.cached
        line: bytes | memoryview
        if self.buf is not None:
            line = memoryview(self.buf)[self.start : self.end]
        else:
            assert self.stored is not None
            line = self.stored
        try:
            return decode_object_strict(line)
        except LineError as exc:
            # Invalid UTF-8 (the envelope decoder skips the bytes of other fields): read it
            # as pi does; anything else is raised.
            entry = decode_replacing(line, exc)
            self.utf8_replaced = True
            return entry

    @property
    def timestamp(self) -> str | None:
        """The entry's ``timestamp`` when it is a string, else ``None``.

        Read from the line when asked (only sibling order and ``tree --format json`` ask), not
        kept with every record: 7 MB of a 100k-entry index."""
        probe = self._probe(_stamp_decoder)
        stamp = probe.timestamp if probe is not None else self.peek().get("timestamp")
        return stamp if isinstance(stamp, str) else None

    @property
    def is_decoded(self) -> bool:
        return self.cached is not None

    def message_role(self) -> object:
        """``entry["message"]["role"]`` (``None`` when absent), without decoding the entry.

        Counting messages by role over a whole session then costs a parse of each line but no
        dicts; an entry already decoded answers from its dict.
        """
        probe = self._probe(_role_decoder)
        if probe is not None:
            return probe.message.role if probe.message is not None else None
        message = self.entry.get("message")
        return message.get("role") if isinstance(message, dict) else None

    def _probe(self, decoder: msgspec.json.Decoder[_Probe]) -> _Probe | None:
        """A few fields read straight from the stored line by ``decoder`` (the rest of the line
        skipped); ``None`` when the entry is decoded already (its dict answers), there is no
        line, or the line is not the usual shape (the decoded entry tells then)."""
        line = self.raw if self.cached is None else None
        if line is None:
            return None
        try:
            return decoder.decode(line)
        except DECODE_ERRORS:
            return None

    def mark_changed(self) -> None:
        """Forget the stored bytes: the entry was changed and must be encoded again."""
        _ = self.entry
        self.raw = None

    def to_line(self) -> bytes:
        """The line to store: the original bytes when unchanged, else a fresh encoding."""
        raw = self.raw
        return raw if raw is not None else encode_line(self.entry)


_record_decoder = msgspec.json.Decoder(Record)


class _Stamp(msgspec.Struct):
    timestamp: Any = None


_stamp_decoder = msgspec.json.Decoder(_Stamp)


class _Role(msgspec.Struct):
    role: Any = None


class _MessageRole(msgspec.Struct):
    message: _Role | None = None


_role_decoder = msgspec.json.Decoder(_MessageRole)

_BULK = 1000
"""Decoding more entries than this at once pauses the garbage collector (see entries_of)."""


@contextmanager
def collector_paused(pause: bool = True) -> Iterator[None]:
    """Pause the cyclic garbage collector (when ``pause`` and it runs) for a bulk load.

    Loading creates many containers, none of them in a cycle; with the collector running, its
    passes over the growing heap take as long as the load itself. It resumes afterwards, with
    everything counted, so nothing it would find is missed.
    """
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def entries_of(records: Iterable[Record]) -> list[StoredEntry]:
    """The entries of ``records``, decoding those not decoded yet (in bulk without the GC)."""
    batch = records if isinstance(records, list) else list(records)
    with collector_paused(len(batch) >= _BULK):
        return [record.entry for record in batch]


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line that could not be used; kept verbatim so nothing a user wrote is lost."""

    line: int
    raw: bytes
    reason: str


@dataclass(slots=True)
class LoadReport:
    """What loading a session found wrong; empty lists mean a clean file."""

    source: str
    bad_lines: list[BadLine] = field(default_factory=list)
    duplicate_ids: dict[str, list[int]] = field(default_factory=dict)
    orphans: list[tuple[str, int | None, str]] = field(default_factory=list)
    migrated_from: int | None = None
    partial_last_line: bool = False
    invalid_utf8: list[int] = field(default_factory=list)
    """Lines read with invalid UTF-8 replaced by U+FFFD, as pi reads them: used, and kept byte
    for byte. Entry bodies are decoded when first read, so this lists the lines read so far
    (``contextree check`` reads all); warnings, not damage."""
    header_utf8_line: int | None = None
    """The header's line number when it was read with invalid UTF-8 replaced."""

    @property
    def clean(self) -> bool:
        """Nothing skipped, repeated or cut off from its parent (lines read with invalid UTF-8
        replaced are used, so they do not count)."""
        return not (self.bad_lines or self.duplicate_ids or self.orphans)

    def messages(self) -> list[str]:
        """One line per problem, each naming the file and line."""
        out = []
        for bad in self.bad_lines:
            out.append(f"{self.source}:{bad.line}: skipped: {bad.reason}")
        for entry_id, lines in self.duplicate_ids.items():
            where = ", ".join(str(n) for n in lines)
            out.append(f"{self.source}: duplicate id {entry_id!r} on lines {where}; the last wins")
        for entry_id, line, parent in self.orphans:
            out.append(
                f"{self.source}:{line}: entry {entry_id} points to missing parent {parent!r}; "
                "it starts its own branch"
            )
        for line in self.invalid_utf8:
            out.append(f"{self.source}:{line}: {INVALID_UTF8}; the line is kept byte for byte")
        return out


@dataclass(slots=True)
class ParsedSession:
    """A session's stored bytes, split: header, entries and bad lines in file order."""

    header: Header
    header_raw: bytes | None
    version: int
    leading: list[BadLine]
    items: list[Record | BadLine]
    report: LoadReport
    next_line: int = 1
    """The number the line after the last one will have."""
    title_slot: bytes | None = None
    """oh-my-pi's title slot line, verbatim (see :class:`SessionHead`)."""


def line_spans(data: bytes, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` of every line of ``data[start:end]``, without the newline."""
    spans: list[tuple[int, int]] = []
    append = spans.append
    find = data.find
    size = len(data) if end is None else end
    position = start
    while position < size:
        newline = find(b"\n", position, size)
        if newline < 0:
            append((position, size))
            break
        append((position, newline))
        position = newline + 1
    return spans


_WHITESPACE = frozenset(b" \t\r\n\x0b\x0c")


def _is_blank(data: bytes, start: int, end: int) -> bool:
    # Look at the first byte before slicing: nearly every line starts with "{".
    return start == end or (data[start] in _WHITESPACE and data[start:end].isspace())


def _bad(number: int, raw: bytes, reason: str, report: LoadReport) -> BadLine:
    bad = BadLine(number, raw, reason)
    report.bad_lines.append(bad)
    return bad


def _scrub(record: Record, *, keep_flag: bool = False) -> None:
    """Forget what a line put into our own fields: a key spelled like one of them (the JSON
    escape ``"\\u2063contextree.stored"``) is an ordinary key of the entry, not our data.
    ``keep_flag`` keeps ``utf8_replaced`` when our own decoding set it."""
    record.stored = None
    record.cached = None
    if not keep_flag:
        record.utf8_replaced = False


def _placed(
    record: Record,
    data: bytes,
    start: int,
    end: int,
    number: int,
    *,
    needs_id: bool,
    report: LoadReport,
) -> Record | BadLine:
    """Give a decoded record its place in the buffer, or turn an unusable one into a BadLine."""
    if record.stored is not None or record.cached is not None:
        _scrub(record, keep_flag=True)
    if not record.type:
        return _bad(number, data[start:end], 'entry has no string "type"', report)
    if needs_id and not record.id:
        return _bad(
            number, data[start:end], 'entry has no "id" (expected 8 hex characters)', report
        )
    record.line = number
    record.buf = data
    record.start = start
    record.end = end
    return record


def _unreadable(raw: bytes, exc: LineError) -> str:
    """Why a line is bad; a line that ends in spaces is most likely an append that was
    interrupted while its reserved line was filled in (see JsonlFileStore)."""
    if raw.endswith(b" ") and raw.lstrip()[:1] == b"{":
        return f"{exc}; it ends in blank padding (an interrupted append); it is kept"
    return str(exc)


def _object_lines(data: bytes, spans: list[tuple[int, int]]) -> bool:
    """Whether every line starts with ``{`` and ends with ``}``.

    msgspec's ``decode_lines`` also reads two objects on one line and one object spread over
    two lines, so equal counts of records and lines alone do not pair them up: such lines
    could make up for each other. When every line is shaped like one object, none continues
    on the next (after a ``}`` an object can only go on with ``,``, ``}`` or ``]``), so each
    line holds exactly one record. Other files take the line-by-line path.
    """
    return all(
        start < end and data[start] == 0x7B and data[end - 1] == 0x7D for start, end in spans
    )


def _decode_one(line: bytes | memoryview) -> Record:
    try:
        with decoding():
            return _record_decoder.decode(line)
    except LineError:
        fixed = surrogate_free(line)  # pi's lone surrogate escapes: valid JSON to pi
        if fixed is not None:
            try:
                with decoding():
                    return _record_decoder.decode(fixed)
            except LineError:
                pass
        text = replaced_text(line)
        if text is None:
            raise
    # Invalid UTF-8 in an envelope field: read the line as pi does (U+FFFD).
    try:
        with decoding():
            record = _record_decoder.decode(text)
    except LineError as exc:
        raise LineError(f"{exc} (and invalid UTF-8)") from None
    record.utf8_replaced = True
    return record


def parse_lines(
    data: bytes,
    start: int = 0,
    end: int | None = None,
    *,
    first_line: int | None,
    lines_after: int = 0,
    needs_id: bool,
    report: LoadReport,
) -> tuple[list[Record | BadLine], int]:
    """Records for the lines of ``data[start:end]`` (unusable lines become BadLines), and how
    many lines that is.

    The lines are numbered from ``first_line`` on, or, when it is ``None``, from the end of
    the file, which ``lines_after`` more lines follow (the last line of the file is -1).
    """
    end = len(data) if end is None else end
    if start >= end:
        return [], 0
    records: list[Record] | None
    try:
        # msgspec decodes every envelope of the region, into records, in one call (skipping
        # blank lines).
        with decoding():
            records = _record_decoder.decode_lines(memoryview(data)[start:end])
    except LineError:
        records = None
    if records is not None:
        count = len(records)
        first = first_line if first_line is not None else -(lines_after + count)
        placed = _one_per_line(records, data, start, end, first, needs_id, report)
        if placed is not None:
            return placed, count
    spans = line_spans(data, start, end)
    count = len(spans)
    items = _parse_spans(
        data,
        spans,
        records,
        first_line=first_line if first_line is not None else -(lines_after + count),
        needs_id=needs_id,
        report=report,
    )
    return items, count


def _one_per_line(
    records: list[Record],
    data: bytes,
    start: int,
    end: int,
    first_line: int,
    needs_id: bool,
    report: LoadReport,
) -> list[Record | BadLine] | None:
    """``records``, each given its line, when the region has one line per record; ``None`` as
    soon as a line is not shaped like one object (then they may not pair up: see
    :func:`_object_lines`) or there are more or fewer lines than records.

    The hot loop of loading a large session: finding each line's end, checking its shape and
    placing its record in one pass over the lines (three passes cost 40% more).
    """
    items: list[Record | BadLine] = []
    append = items.append
    unusable: list[tuple[int, Record, int, int, int]] = []
    find = data.find
    position = start
    number = first_line
    for record in records:
        if position >= end:
            return None  # more records than lines
        newline = find(b"\n", position, end)
        if newline < 0:
            newline = end
        if data[position] != 0x7B or data[newline - 1] != 0x7D:
            return None
        if record.stored is not None or record.cached is not None or record.utf8_replaced:
            _scrub(record)
        if record.type and (record.id or not needs_id):
            # One string per entry type, not one per line (5 MB of a 100k-entry index).
            record.type = intern(record.type)
            record.line = number
            record.buf = data
            record.start = position
            record.end = newline
            append(record)
        else:
            # Reported only once the lines are known to pair up with the records.
            unusable.append((len(items), record, position, newline, number))
            append(record)
        number += 1
        position = newline + 1
    if position < end:
        return None  # more lines than records
    for at, record, line_start, line_end, line in unusable:
        items[at] = _placed(
            record, data, line_start, line_end, line, needs_id=needs_id, report=report
        )
    return items


def _parse_spans(
    data: bytes,
    spans: list[tuple[int, int]],
    records: list[Record] | None,
    *,
    first_line: int,
    needs_id: bool,
    report: LoadReport,
) -> list[Record | BadLine]:
    """Records for the given line spans of ``data`` when not every line holds one object:
    blank lines are skipped, and lines are decoded one by one when ``records`` (all of the
    region's, decoded at once) do not pair up with them."""
    whitespace = _WHITESPACE
    numbered = [
        (first_line + offset, start, end)
        for offset, (start, end) in enumerate(spans)
        if start != end and (data[start] not in whitespace or not data[start:end].isspace())
    ]
    if (
        records is not None
        and len(records) == len(numbered)
        and _object_lines(data, [(start, end) for _, start, end in numbered])
    ):
        return [
            _placed(record, data, start, end, number, needs_id=needs_id, report=report)
            for record, (number, start, end) in zip(records, numbered, strict=True)
        ]
    view = memoryview(data)
    items: list[Record | BadLine] = []
    for number, start, end in numbered:
        try:
            record = _decode_one(view[start:end])
        except LineError as exc:
            raw = data[start:end]
            items.append(_bad(number, raw, _unreadable(raw, exc), report))
            continue
        items.append(_placed(record, data, start, end, number, needs_id=needs_id, report=report))
    return items


def parse_entry_lines(
    data: bytes, *, first_line: int, needs_id: bool, report: LoadReport
) -> list[Record | BadLine]:
    """Turn a block of entry lines into records, reporting and keeping unusable lines."""
    items, _ = parse_lines(data, first_line=first_line, needs_id=needs_id, report=report)
    return items


@dataclass(slots=True)
class SessionHead:
    """The header of a session and where its entry lines begin (nothing after it is read)."""

    header: Header
    header_raw: bytes
    version: int
    leading: list[BadLine]
    body_start: int
    """Offset of the first byte after the header line."""
    first_line: int
    """Line number of the line at ``body_start``."""
    report: LoadReport
    title_slot: bytes | None = None
    """oh-my-pi 18's fixed-width first line (``{"type":"title","v":1,...,"pad":"   "}``),
    verbatim and without its newline; ``None`` for pi's format."""

    @property
    def slot_title(self) -> str | None:
        """The title held in the title slot, if any."""
        return slot_title(self.title_slot)


TITLE_SLOT_TYPE: Final = "title"
"""The ``type`` of oh-my-pi's title slot line."""


def slot_title(raw: bytes | None) -> str | None:
    """The ``title`` of a title-slot line (``None`` without one or when it has none)."""
    if raw is None:
        return None
    try:
        title = decode_object(raw).get("title")
    except LineError:
        return None
    return title if isinstance(title, str) and title.strip() else None


def parse_head(data: bytes, source: str) -> SessionHead:
    """Find the header; raise :class:`SessionFileError` when the file has none.

    Unreadable lines before the header are kept as leading bad lines; a readable line that is
    not a header means this is not a session file at all.
    """
    report = LoadReport(source)
    report.partial_last_line = bool(data) and not data.endswith(b"\n")
    leading: list[BadLine] = []
    title_slot: bytes | None = None
    size = len(data)
    position = 0
    number = 0
    while position < size:
        number += 1
        newline = data.find(b"\n", position)
        end = size if newline < 0 else newline
        start, position = position, end + 1
        if _is_blank(data, start, end):
            continue
        line = memoryview(data)[start:end]
        replaced = False
        try:
            try:
                candidate = decode_object_strict(line)
            except LineError as exc:
                candidate = decode_replacing(line, exc)
                replaced = True
        except LineError as exc:
            leading.append(BadLine(number, data[start:end], str(exc)))
            continue
        if number == 1 and candidate.get("type") == TITLE_SLOT_TYPE:
            # oh-my-pi 18 keeps the session's title in a fixed-size first line that it
            # rewrites in place; it is kept byte for byte, whatever it holds.
            title_slot = data[start:end]
            continue
        problem = header_problem(candidate)
        if problem is not None:
            raise SessionFileError(
                source, f"not a session file: {problem}; the file was left unchanged", line=number
            )
        version = candidate.get("version", 1)
        if version > CURRENT_SESSION_VERSION:
            raise UnsupportedVersionError(
                source,
                f"session format version {version} is newer than this contextree understands "
                f"({CURRENT_SESSION_VERSION}); upgrade contextree",
                line=number,
            )
        report.bad_lines.extend(leading)
        if replaced:
            report.header_utf8_line = number
        return SessionHead(
            header=candidate,
            header_raw=data[start:end],
            version=version,
            leading=leading,
            body_start=min(position, size),
            first_line=number + 1,
            report=report,
            title_slot=title_slot,
        )
    what = "is empty" if not data or data.isspace() else "has no valid session header"
    raise SessionFileError(source, f"{what}; the file was left unchanged")


def mark_partial_last_line(items: list[Record | BadLine], report: LoadReport) -> None:
    """Say why the last line is bad when the file ends without a newline (a torn append)."""
    if report.partial_last_line and items and isinstance(items[-1], BadLine):
        last = items[-1]
        items[-1] = BadLine(
            last.line, last.raw, "partial last line (an interrupted write); it is kept"
        )
        report.bad_lines[:] = [items[-1] if bad is last else bad for bad in report.bad_lines]


def parse_session(data: bytes, source: str) -> ParsedSession:
    """Parse a whole session; raise :class:`SessionFileError` when it has no valid header."""
    head = parse_head(data, source)
    items, count = parse_lines(
        data,
        head.body_start,
        first_line=head.first_line,
        needs_id=head.version >= 2,
        report=head.report,
    )
    mark_partial_last_line(items, head.report)
    return ParsedSession(
        header=head.header,
        header_raw=head.header_raw,
        version=head.version,
        leading=head.leading,
        items=items,
        report=head.report,
        next_line=head.first_line + count,
        title_slot=head.title_slot,
    )
