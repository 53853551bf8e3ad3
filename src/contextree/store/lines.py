"""Entry lines into records: the envelope of every line of a region decoded at once, each
record given its line and its place in the buffer; lines that cannot be used become
:class:`~contextree.store.index.BadLine` items, kept verbatim.

A file whose every line holds one object (all that pi and contextree write) takes, after
msgspec's decode, one pass over its lines' ends and one over the records (placing them, and
entering them in an id table when one is asked for); blank lines, torn or unreadable lines and
lines that hold two objects or half of one take the line-by-line path, which reads each as pi
does.
"""

from __future__ import annotations

import itertools
from sys import intern
from typing import Final, cast

import msgspec

from contextree.entries.codec import LineError, decoding, replaced_text, surrogate_free
from contextree.store.byte_source import Buffer
from contextree.store.index import (
    BadLine,
    LoadReport,
    ParsedSession,
    Record,
    is_blank_line,
    parse_head,
)

__all__ = [
    "PARTIAL_LAST_LINE",
    "line_spans",
    "mark_partial_last_line",
    "parse_entry_lines",
    "parse_lines",
    "parse_session",
]

_record_decoder = msgspec.json.Decoder(Record)


def line_spans(data: Buffer, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
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


def _bad(number: int, raw: bytes, reason: str, report: LoadReport) -> BadLine:
    bad = BadLine(number, raw, reason)
    report.bad_lines.append(bad)
    return bad


def _scrub(record: Record) -> Record:
    """Forget what a line put into our own fields: a key spelled like one of them (the JSON
    escape ``"\\u2063contextree.stored"``) is an ordinary key of the entry, not our data."""
    if record.stored is not None or record.cached is not None or record.utf8_replaced:
        record.stored = None
        record.cached = None
        record.utf8_replaced = False
    return record


def _placed(
    record: Record,
    data: Buffer,
    view: memoryview,
    start: int,
    end: int,
    number: int,
    *,
    needs_id: bool,
    report: LoadReport,
) -> Record | BadLine:
    """Give a decoded record (its own fields scrubbed) its place in the buffer, or turn an
    unusable one into a BadLine. ``view`` is a view of all of ``data``, which the records of
    one call share."""
    if not record.type:
        return _bad(number, data[start:end], 'entry has no string "type"', report)
    if needs_id and not record.id:
        return _bad(
            number, data[start:end], 'entry has no "id" (expected 8 hex characters)', report
        )
    record.line = number
    record.buf = view
    record.start = start
    record.end = end
    return record


def _unreadable(raw: bytes, exc: LineError) -> str:
    """Why a line is bad; a line that ends in spaces is most likely an append that was
    interrupted while its reserved line was filled in (see JsonlFileStore)."""
    if raw.endswith(b" ") and raw.lstrip()[:1] == b"{":
        return f"{exc}; it ends in blank padding (an interrupted append); it is kept"
    return str(exc)


def _object_lines(data: Buffer, spans: list[tuple[int, int]]) -> bool:
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
            return _scrub(_record_decoder.decode(line))
    except LineError:
        fixed = surrogate_free(line)  # pi's lone surrogate escapes: valid JSON to pi
        if fixed is not None:
            try:
                with decoding():
                    return _scrub(_record_decoder.decode(fixed))
            except LineError:
                pass
        text = replaced_text(line)
        if text is None:
            raise
    # Invalid UTF-8 in an envelope field: read the line as pi does (U+FFFD).
    try:
        with decoding():
            record = _scrub(_record_decoder.decode(text))
    except LineError as exc:
        raise LineError(f"{exc} (and invalid UTF-8)") from None
    record.utf8_replaced = True
    return record


def parse_lines(
    data: Buffer,
    start: int = 0,
    end: int | None = None,
    *,
    first_line: int | None,
    lines_after: int = 0,
    needs_id: bool,
    report: LoadReport,
    index: dict[str, Record] | None = None,
) -> tuple[list[Record | BadLine], int]:
    """Records for the lines of ``data[start:end]`` (unusable lines become BadLines), and how
    many lines that is.

    The lines are numbered from ``first_line`` on, or, when it is ``None``, from the end of
    the file, which ``lines_after`` more lines follow (the last line of the file is -1).

    ``index``, when given, is filled with the region's records by id (for an id on several
    lines, the last line's record), and a parent id that names a record of the region is
    pointed at that record's own id string (one string per id, not two: 5.7 MB of a
    100k-entry index).
    """
    end = len(data) if end is None else end
    if start >= end:
        return [], 0
    records: list[Record] | None
    # The records point into this one view of the buffer (a record's line is decoded from
    # it; a large region of a file is a memory map, not bytes: see byte_source).
    view = memoryview(data)
    try:
        # msgspec decodes every envelope of the region, into records, in one call (skipping
        # blank lines).
        with decoding():
            records = _record_decoder.decode_lines(view[start:end])
    except LineError:
        records = None
    if records is not None:
        count = len(records)
        first = first_line if first_line is not None else -(lines_after + count)
        ends = _object_line_ends(records, data, start, end)
        if ends is not None:
            items = _place(records, ends, data, view, start, first, needs_id, report, index)
            return items, count
    spans = line_spans(data, start, end)
    count = len(spans)
    items = _parse_spans(
        data,
        view,
        spans,
        records,
        first_line=first_line if first_line is not None else -(lines_after + count),
        needs_id=needs_id,
        report=report,
    )
    if index is not None:
        _index_records(items, index)
    return items, count


def _object_line_ends(
    records: list[Record], data: Buffer, start: int, end: int
) -> list[int] | None:
    """Where each line of ``data[start:end]`` ends, when the region has one line per record;
    ``None`` when a line is not shaped like one object (then they may not pair up: see
    :func:`_object_lines`) or there are more or fewer lines than records.

    A pass of its own, apart from placing the records (:func:`_place`): one loop doing both
    made a first whole path at 100k entries about 12 ms slower (of 0.22 s).
    """
    ends: list[int] = []
    append = ends.append
    find = data.find
    position = start
    while position < end:
        newline = find(b"\n", position, end)
        if newline < 0:
            newline = end
        if data[position] != 0x7B or data[newline - 1] != 0x7D:
            return None
        append(newline)
        position = newline + 1
    return ends if len(ends) == len(records) else None


def _place(
    records: list[Record],
    ends: list[int],
    data: Buffer,
    view: memoryview,
    start: int,
    first_line: int,
    needs_id: bool,
    report: LoadReport,
    index: dict[str, Record] | None,
) -> list[Record | BadLine]:
    """``records``, one a line, each given its line and place in ``data`` (a line ends at
    each of ``ends``) and entered in ``index`` (see :func:`parse_lines`); an unusable one is
    replaced by its BadLine, in place.

    The hot loop of loading a large session, so it skips what it can: consecutive entries
    mostly share a type and most entries' parent is the entry before, and comparing with the
    one before is cheaper than hashing a new string (interning, or looking the parent up).
    """
    table: dict[str, Record] = index if index is not None else {}
    get = table.get
    items = cast("list[Record | BadLine]", records)  # (the same list: a BadLine replaces)
    kind = ""  # the last type placed, interned
    last_id: str | None = None  # the id of the record placed last
    position = start
    for record, newline, number in zip(records, ends, itertools.count(first_line)):
        if record.stored is not None or record.cached is not None or record.utf8_replaced:
            _scrub(record)  # (tested here first: a call per line costs 5% of the loop)
        key = record.id
        decoded = record.type
        if decoded and (key or not needs_id):
            # One string per entry type, not one per line (5 MB of a 100k-entry index).
            if decoded != kind:
                kind = intern(decoded)
            record.type = kind
            record.line = number
            record.buf = view
            record.start = position
            record.end = newline
            parent = record.parent_id
            if parent is not None:
                if parent == last_id:
                    record.parent_id = last_id
                else:
                    found = get(parent)  # (parents come before their children)
                    if found is not None:
                        record.parent_id = found.id
            if key is not None:
                table[key] = record  # a later line of the same id overwrites: the last wins
                last_id = key
        else:
            items[number - first_line] = _placed(
                record, data, view, position, newline, number, needs_id=needs_id, report=report
            )
        position = newline + 1
    return items


def _index_records(items: list[Record | BadLine], index: dict[str, Record]) -> None:
    """Enter the records of ``items`` in ``index`` as :func:`_place` does."""
    get = index.get
    for item in items:
        if type(item) is not Record:
            continue
        parent = item.parent_id
        if parent is not None:
            found = get(parent)
            if found is not None:
                item.parent_id = found.id
        if item.id is not None:
            index[item.id] = item


def _parse_spans(
    data: Buffer,
    view: memoryview,
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
    numbered = [
        (first_line + offset, start, end)
        for offset, (start, end) in enumerate(spans)
        if not is_blank_line(data, start, end)
    ]
    if (
        records is not None
        and len(records) == len(numbered)
        and _object_lines(data, [(start, end) for _, start, end in numbered])
    ):
        return [
            _placed(
                _scrub(record), data, view, start, end, number, needs_id=needs_id, report=report
            )
            for record, (number, start, end) in zip(records, numbered, strict=True)
        ]
    items: list[Record | BadLine] = []
    for number, start, end in numbered:
        try:
            record = _decode_one(view[start:end])
        except LineError as exc:
            raw = data[start:end]
            items.append(_bad(number, raw, _unreadable(raw, exc), report))
            continue
        items.append(
            _placed(record, data, view, start, end, number, needs_id=needs_id, report=report)
        )
    return items


def parse_entry_lines(
    data: bytes, *, first_line: int, needs_id: bool, report: LoadReport
) -> list[Record | BadLine]:
    """Turn a block of entry lines into records, reporting and keeping unusable lines."""
    items, _ = parse_lines(data, first_line=first_line, needs_id=needs_id, report=report)
    return items


PARTIAL_LAST_LINE: Final = "partial last line (an interrupted write); it is kept"
"""Why an unreadable last line without its newline is bad (:func:`mark_partial_last_line`)."""


def mark_partial_last_line(items: list[Record | BadLine], report: LoadReport) -> None:
    """Say why the last line is bad when the file ends without a newline (a torn append)."""
    if report.partial_last_line and items and isinstance(items[-1], BadLine):
        last = items[-1]
        items[-1] = BadLine(last.line, last.raw, PARTIAL_LAST_LINE)
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
