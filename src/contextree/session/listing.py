"""Summaries of session files for listings (``contextree sessions``), without loading them.

A listing may cover hundreds of files, some of them 100 MB: each file is read once and only a
few of its lines are decoded - the header, the lines that may hold the latest ``session_info``
(found by searching backwards) and the lines up to the first user message. Entries are counted
as the lines after the header that hold a JSON object, without decoding any. A file that is not
a session (no header, unreadable, a directory) gets a summary with a ``problem`` instead of
raising.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from contextree.entries.codec import (
    DECODE_ERRORS,
    LineError,
    decode_object,
    replaced_text,
    surrogate_free,
)
from contextree.entries.types import is_text_content
from contextree.errors import SessionFileError, UnsupportedVersionError
from contextree.store.index import SessionHead, parse_head

__all__ = [
    "SessionListing",
    "SessionSummary",
    "list_session_folders",
    "list_sessions",
    "session_files",
    "summarize_session_file",
]

PREVIEW_CHARS = 200
"""The longest first-message preview kept in a summary (one line, cut with an ellipsis)."""


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """What a listing shows of one session file.

    ``problem`` is set (and ``id``, ``entries`` are ``None``) when the file could not be read as
    a session; ``name`` and ``first_message`` are ``None`` when the session has none.
    """

    path: Path
    modified: float
    """Modification time (seconds since the epoch, as ``os.stat`` gives it)."""
    size: int
    id: str | None = None
    cwd: str | None = None
    name: str | None = None
    first_message: str | None = None
    """The first user message's text on one line, cut to :data:`PREVIEW_CHARS`."""
    entries: int | None = None
    problem: str | None = None

    @property
    def modified_at(self) -> datetime:
        """The modification time as an aware datetime in the local time zone."""
        return datetime.fromtimestamp(self.modified).astimezone()

    def to_json(self) -> dict[str, Any]:
        """The summary as a JSON object (pi's camelCase keys; ``modified`` in ISO 8601)."""
        return {
            "path": str(self.path),
            "id": self.id,
            "name": self.name,
            "modified": self.modified_at.isoformat(timespec="seconds"),
            "entries": self.entries,
            "bytes": self.size,
            "firstMessage": self.first_message,
            "cwd": self.cwd,
            "problem": self.problem,
        }


class _Info(msgspec.Struct):
    """The keys of a session_info entry (every other key is skipped by the parser)."""

    type: Any = None
    name: Any = None


class _Role(msgspec.Struct):
    role: Any = None


class _MessageProbe(msgspec.Struct):
    """A message entry's type and role; the content is skipped by the parser."""

    type: Any = None
    message: _Role | None = None


_info_decoder = msgspec.json.Decoder(_Info)
_message_decoder = msgspec.json.Decoder(_MessageProbe)

_T = TypeVar("_T")


def _probe(decoder: msgspec.json.Decoder[_T], line: memoryview) -> _T | None:
    """``line`` decoded by ``decoder``, invalid UTF-8 read as U+FFFD (as pi does); ``None``
    when it cannot be decoded."""
    try:
        return decoder.decode(line)
    except DECODE_ERRORS:
        fixed = surrogate_free(line)  # pi's lone surrogate escapes
        if fixed is not None:
            try:
                return decoder.decode(fixed)
            except DECODE_ERRORS:
                pass
        text = replaced_text(line)
    if text is None:
        return None
    try:
        return decoder.decode(text)
    except DECODE_ERRORS:
        return None


_INFO_TOKEN = b'"session_info"'
_MESSAGE_TOKEN = b'"message"'
"""A line starting with white space: the only kind that may be blank."""


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


def _line_at(data: bytes, position: int) -> tuple[int, int]:
    """``(start, end)`` of the line holding byte ``position`` (without the newline)."""
    start = data.rfind(b"\n", 0, position) + 1
    end = data.find(b"\n", position)
    return start, len(data) if end < 0 else end


def _count_entries(data: bytes, start: int) -> int:
    """Lines from ``start`` on that hold a JSON object (``{`` ... ``}``), without decoding any.

    Blank lines and lines a load skips as unreadable (a truncated last line, text, an array)
    are not counted, so the count is ``info``'s for every file whose objects decode.
    """
    size = len(data)
    if start >= size:
        return 0
    ended = data.endswith(b"\n")
    lines = data.count(b"\n", start) + (0 if ended else 1)
    # pi writes one object a line: check cheaply that every line starts with { and ends with }.
    starts = (data[start] == 0x7B) + data.count(b"\n{", start)
    ends = data.count(b"}\n", start) + (0 if ended else data.endswith(b"}"))
    if starts == lines and ends == lines:
        return lines
    count = 0
    position = start
    while position < size:
        newline = data.find(b"\n", position)
        end = size if newline < 0 else newline
        line = data[position:end].strip()
        if line.startswith(b"{") and line.endswith(b"}"):
            count += 1
        position = end + 1
    return count


def _latest_name(data: bytes, start: int) -> str | None:
    """The name set by the last ``session_info`` entry (pi: the latest one wins).

    Only lines holding the ``"session_info"`` token are decoded, from the end backwards. An
    entry without a name, or with an empty one, clears the name: the result is then ``None``.
    """
    position = len(data)
    while True:
        hit = data.rfind(_INFO_TOKEN, start, position)
        if hit < 0:
            return None
        line_start, line_end = _line_at(data, hit)
        position = line_start
        if line_start < start:
            return None
        probe = _probe(_info_decoder, memoryview(data)[line_start:line_end])
        if probe is None:
            continue  # a damaged line, or one that only mentions session_info
        if probe.type == "session_info":
            name = probe.name
            return (name.strip() or None) if isinstance(name, str) else None


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = (block.get("text") for block in content if is_text_content(block))
        return " ".join(text for text in texts if isinstance(text, str) and text)
    return ""


def _first_user_message(data: bytes, start: int, width: int) -> str | None:
    """The text of the first user message that has text, on one line; ``None`` when none has.

    Only lines holding the ``"message"`` token are looked at; of those, only the role is
    decoded until the first user message, which is then decoded whole.
    """
    position = start
    view = memoryview(data)
    while True:
        hit = data.find(_MESSAGE_TOKEN, position)
        if hit < 0:
            return None
        line_start, line_end = _line_at(data, hit)
        position = line_end + 1
        if line_start < start:
            continue
        line = view[line_start:line_end]
        message_probe = _probe(_message_decoder, line)
        if message_probe is None:
            continue
        if (
            message_probe.type != "message"
            or message_probe.message is None
            or message_probe.message.role != "user"
        ):
            continue
        try:
            entry = decode_object(line)
        except LineError:
            continue
        message = entry.get("message")
        text = _one_line(_message_text(message), width) if isinstance(message, dict) else ""
        if text:
            return text
        # As pi's session list does: a user message without text (an image, say) is passed by.


def _not_a_session(reason: str) -> str:
    reason = reason.removesuffix("; the file was left unchanged")
    prefix = "not a session file: "
    if reason.startswith(prefix):
        return reason
    if reason == "is empty":
        reason = "the file is empty"
    elif reason == "has no valid session header":
        reason = "no valid session header"
    return prefix + reason


def summarize_session_file(path: Path, *, preview_chars: int = PREVIEW_CHARS) -> SessionSummary:
    """Summarize one session file, reading it once and decoding only the lines needed.

    ``entries`` counts the lines after the header that hold a JSON object, as ``info`` does
    (``len(SessionTree)``) for a file without damage inside an object; a line that is not an
    object (a truncated last line, text) is not counted, by either. Never raises for a bad
    file: the summary's ``problem`` says what is wrong with it.
    """
    try:
        info = path.stat()
    except OSError as exc:
        return SessionSummary(
            path, 0.0, 0, problem=_not_a_session(f"cannot be read ({exc.strerror or exc})")
        )
    base = SessionSummary(path, info.st_mtime, info.st_size)
    if stat.S_ISDIR(info.st_mode):
        return replace(base, problem=_not_a_session("is a directory"))
    if not stat.S_ISREG(info.st_mode):
        return replace(base, problem=_not_a_session("not a regular file"))
    try:
        data = path.read_bytes()
    except OSError as exc:
        return replace(base, problem=_not_a_session(f"cannot be read ({exc.strerror or exc})"))
    try:
        head = parse_head(data, str(path))
    except UnsupportedVersionError as exc:
        return replace(base, problem=exc.reason)
    except SessionFileError as exc:
        return replace(base, problem=_not_a_session(exc.reason))
    cwd = head.header.get("cwd")
    return replace(
        base,
        size=len(data),
        id=str(head.header.get("id")),
        cwd=cwd if isinstance(cwd, str) else None,
        name=_latest_name(data, head.body_start) or head.slot_title or _header_title(head),
        first_message=_first_user_message(data, head.body_start, preview_chars),
        entries=_count_entries(data, head.body_start),
    )


def _header_title(head: SessionHead) -> str | None:
    """oh-my-pi's older place for the title: the header's ``title``."""
    title = head.header.get("title")
    return title if isinstance(title, str) and title.strip() else None


def _jsonl_files(folder: Path) -> list[Path]:
    with os.scandir(folder) as found:
        return sorted(Path(item.path) for item in found if item.name.endswith(".jsonl"))


def session_files(folder: Path, *, nested: bool = False) -> list[Path]:
    """The ``*.jsonl`` paths in ``folder`` (and with ``nested``, in each folder inside it).

    A missing ``folder`` has none (a directory with no session yet has no sessions folder).
    Raises :class:`OSError` when ``folder`` exists but cannot be listed; with ``nested``,
    folders inside it that cannot be listed are skipped.
    """
    try:
        files = _jsonl_files(folder)
    except FileNotFoundError:
        return []
    if nested:
        with os.scandir(folder) as found:
            children = sorted(Path(item.path) for item in found if _is_folder(item))
        for child in children:
            try:
                files.extend(_jsonl_files(child))
            except OSError:
                continue
    return files


def _is_folder(item: os.DirEntry[str]) -> bool:
    try:
        return item.is_dir() and not item.name.endswith(".jsonl")
    except OSError:
        return False


def _mtime(path: Path) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def list_sessions(
    paths: Iterable[Path], *, limit: int | None = None, preview_chars: int = PREVIEW_CHARS
) -> list[SessionSummary]:
    """Summaries of ``paths``, newest first (by modification time), at most ``limit`` of them.

    Only the files that make the cut are read; ``limit`` ``None`` or 0 means all.
    """
    ordered = sorted(((_mtime(p), p) for p in paths), reverse=True)
    chosen = ordered[:limit] if limit else ordered
    return [summarize_session_file(path, preview_chars=preview_chars) for _, path in chosen]


@dataclass(frozen=True, slots=True)
class SessionListing:
    """What ``contextree sessions`` lists: where it looked, how many files, the newest ones."""

    folders: list[Path]
    """The folders looked in (missing ones included; they hold nothing)."""
    nested: bool
    """Whether the folders inside each folder were looked in too."""
    total: int
    """Session files found in all of them."""
    sessions: list[SessionSummary]
    """The newest of them, newest first (all, or as many as the limit allowed)."""


def list_session_folders(
    folders: Sequence[Path],
    *,
    nested: bool = False,
    limit: int | None = None,
    preview_chars: int = PREVIEW_CHARS,
) -> SessionListing:
    """The session files of ``folders`` (:func:`session_files`), the newest ``limit`` of them
    summarized (:func:`list_sessions`; ``None`` or 0 summarizes all)."""
    files: list[Path] = []
    for folder in folders:
        if folder.is_dir():
            files.extend(session_files(folder, nested=nested))
    sessions = list_sessions(files, limit=limit, preview_chars=preview_chars)
    return SessionListing(list(folders), nested, len(files), sessions)
