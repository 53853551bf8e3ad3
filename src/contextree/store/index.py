"""Split stored bytes into a header and an ordered list of entry records.

Only the envelope (``type``, ``id``, ``parentId``, ``timestamp``) of each line is decoded here;
a :class:`Record` decodes its full body on first use, so opening a large session and building
the context of one leaf touches only the entries on that leaf's path. Lines that cannot be used
become :class:`BadLine` items and stay in place, verbatim, for any later rewrite.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from contextree.entries.codec import (
    Envelope,
    LineError,
    decode_envelope,
    decode_object,
    encode_line,
    header_problem,
)
from contextree.entries.types import CURRENT_SESSION_VERSION, Entry, Header
from contextree.errors import SessionFileError, UnsupportedVersionError

__all__ = ["BadLine", "LoadReport", "ParsedSession", "Record", "parse_entry_lines", "parse_session"]


class Record:
    """One entry line: its place in the tree, and its body decoded on demand."""

    __slots__ = ("_entry", "id", "line", "parent_id", "raw", "timestamp", "type")

    def __init__(
        self,
        *,
        type: str,
        id: str | None,
        parent_id: str | None,
        timestamp: str | None,
        line: int | None,
        raw: bytes | None,
        entry: Entry | None = None,
    ) -> None:
        self.type = type
        self.id = id
        self.parent_id = parent_id
        self.timestamp = timestamp
        self.line = line
        self.raw = raw
        self._entry = entry

    @classmethod
    def from_entry(cls, entry: Entry, *, line: int | None = None) -> Record:
        """A record for a new entry (no stored bytes yet)."""
        parent = entry.get("parentId")
        stamp = entry.get("timestamp")
        return cls(
            type=str(entry.get("type")),
            id=entry.get("id"),
            parent_id=parent if isinstance(parent, str) else None,
            timestamp=stamp if isinstance(stamp, str) else None,
            line=line,
            raw=None,
            entry=entry,
        )

    @property
    def entry(self) -> Entry:
        """The full entry dict (decoded from the stored line on first access)."""
        if self._entry is None:
            assert self.raw is not None
            self._entry = decode_object(self.raw)
        return self._entry

    @property
    def is_decoded(self) -> bool:
        return self._entry is not None

    def mark_changed(self) -> None:
        """Forget the stored bytes: the entry was changed and must be encoded again."""
        _ = self.entry
        self.raw = None

    def to_line(self) -> bytes:
        """The line to store: the original bytes when unchanged, else a fresh encoding."""
        return self.raw if self.raw is not None else encode_line(self.entry)


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

    @property
    def clean(self) -> bool:
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


def parse_entry_lines(
    lines: list[bytes], *, first_line: int, needs_id: bool, report: LoadReport
) -> list[Record | BadLine]:
    """Turn entry lines into records, reporting and keeping the ones that do not parse."""
    items: list[Record | BadLine] = []
    append = items.append
    decode = decode_envelope
    number = first_line - 1
    for raw in lines:
        number += 1
        if not raw or raw.isspace():
            continue
        try:
            env: Envelope = decode(raw)
        except LineError as exc:
            bad = BadLine(number, raw, str(exc))
            report.bad_lines.append(bad)
            append(bad)
            continue
        if env.type is None or (needs_id and not env.id):
            reason = (
                'entry has no string "type"'
                if env.type is None
                else ('entry has no "id" (expected 8 hex characters)')
            )
            bad = BadLine(number, raw, reason)
            report.bad_lines.append(bad)
            append(bad)
            continue
        append(
            Record(
                type=env.type,
                id=env.id,
                parent_id=env.parentId,
                timestamp=env.timestamp,
                line=number,
                raw=raw,
            )
        )
    return items


def parse_session(data: bytes, source: str) -> ParsedSession:
    """Parse a whole session; raise :class:`SessionFileError` when it has no valid header."""
    report = LoadReport(source)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines and data:
        report.partial_last_line = True
    leading: list[BadLine] = []
    header: Header | None = None
    header_index = -1
    for index, raw in enumerate(lines):
        if not raw or raw.isspace():
            continue
        try:
            candidate = decode_object(raw)
        except LineError as exc:
            leading.append(BadLine(index + 1, raw, str(exc)))
            continue
        problem = header_problem(candidate)
        if problem is not None:
            raise SessionFileError(
                source,
                f"not a session file: {problem}; the file was left unchanged",
                line=index + 1,
            )
        header = candidate
        header_index = index
        break
    if header is None:
        what = "is empty" if not data.strip() else "has no valid session header"
        raise SessionFileError(source, f"{what}; the file was left unchanged")
    version = header.get("version", 1)
    if version > CURRENT_SESSION_VERSION:
        raise UnsupportedVersionError(
            source,
            f"session format version {version} is newer than this contextree understands "
            f"({CURRENT_SESSION_VERSION}); upgrade contextree",
            line=header_index + 1,
        )
    report.bad_lines.extend(leading)
    items = parse_entry_lines(
        lines[header_index + 1 :],
        first_line=header_index + 2,
        needs_id=version >= 2,
        report=report,
    )
    if report.partial_last_line and items and isinstance(items[-1], BadLine):
        last = items[-1]
        report.bad_lines[-1] = BadLine(
            last.line, last.raw, "partial last line (an interrupted write); it is kept"
        )
        items[-1] = report.bad_lines[-1]
    return ParsedSession(
        header=header,
        header_raw=lines[header_index],
        version=version,
        leading=leading,
        items=items,
        report=report,
    )
