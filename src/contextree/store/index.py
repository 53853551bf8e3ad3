"""Entry records, the load report, and a session's header found in its stored bytes (the entry
lines are turned into records by :mod:`contextree.store.lines`).

Only the envelope (``type``, ``id``, ``parentId``) of each line is decoded when it is read;
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
from typing import Any, Final, TypeVar

import msgspec

from contextree.entries.codec import (
    DECODE_ERRORS,
    INVALID_UTF8,
    LineError,
    decode_object,
    decode_object_strict,
    decode_objects_strict,
    decode_replacing,
    encode_line,
    header_problem,
)
from contextree.entries.types import CURRENT_SESSION_VERSION, Header, StoredEntry
from contextree.errors import SessionFileError, UnsupportedVersionError
from contextree.store.byte_source import Buffer

__all__ = [
    "BULK_ITEMS",
    "BadLine",
    "LoadReport",
    "ParsedSession",
    "Record",
    "SessionHead",
    "collector_paused",
    "entries_of",
    "is_blank_line",
    "parse_head",
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
    buf: memoryview | None = msgspec.field(default=None, name=_OWN + "buf")
    """A view of the buffer the line is in (bytes, or a region of a file in memory of its
    own: see :mod:`contextree.store.byte_source`)."""
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
            return self.buf[self.start : self.end].tobytes()
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
            line = self.buf[self.start : self.end]
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


class _Stamp(msgspec.Struct):
    timestamp: Any = None


_stamp_decoder = msgspec.json.Decoder(_Stamp)


class _Role(msgspec.Struct):
    role: Any = None


class _MessageRole(msgspec.Struct):
    message: _Role | None = None


_role_decoder = msgspec.json.Decoder(_MessageRole)

BULK_ITEMS: Final = 1000
"""Work over at least this many entries at once (decoding them, building the tree view or
the child map) runs with the garbage collector paused (collector_paused)."""


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
    with collector_paused(len(batch) >= BULK_ITEMS):
        _decode_runs(batch)
        return [record.entry for record in batch]


def _decode_runs(batch: list[Record]) -> None:
    """Decode the records of ``batch`` that sit on consecutive lines of one buffer with one
    call per such run (a path's records mostly do: a side branch breaks a run).

    What this decodes is what ``entry`` would decode line by line; a run with a line that
    strict decoding rejects is left to ``entry`` whole (which reads it as pi does, or says
    why not). The call per line and its slice cost a fifth of decoding a context's entries
    (1,800 entries of the 10k bench session: 6.0 -> 4.8 ms).
    """
    count = len(batch)
    position = 0
    while position < count:
        first = batch[position]
        buf = first.buf
        after = position + 1
        if buf is None or first.cached is not None or first.stored is not None:
            position = after
            continue
        end = first.end
        while after < count:
            record = batch[after]
            # (stored is None whenever buf is set: the raw setter clears buf.)
            if record.buf is not buf or record.start != end + 1 or record.cached is not None:
                break
            end = record.end
            after += 1
        if after - position > 1:
            values = decode_objects_strict(buf[first.start : end])
            if values is not None and len(values) == after - position:
                for record, value in zip(batch[position:after], values, strict=True):
                    record.cached = value
        position = after


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


_WHITESPACE = frozenset(b" \t\r\n\x0b\x0c")


def is_blank_line(data: Buffer, start: int, end: int) -> bool:
    """Whether ``data[start:end]`` is empty or all whitespace."""
    # Look at the first byte before slicing: nearly every line starts with "{".
    return start == end or (data[start] in _WHITESPACE and data[start:end].isspace())


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
        if is_blank_line(data, start, end):
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
