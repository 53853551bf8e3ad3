"""Stored bytes as rows: the line splitting and envelope columns the database stores share.

A database store keeps a session as one row per line: the line's exact bytes (its ``\\n``
included, so the rows joined give back the stored bytes), its 1-based sequence number, its byte
offset, and ``type`` / ``id`` / ``parentId`` copied out of the JSON envelope for queries. A line
that is not a JSON object (a torn or bad line, a blank line) gets ``NULL`` columns; its bytes
are kept all the same.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

__all__ = ["Row", "rows_of", "split_lines"]


class _Envelope(msgspec.Struct):
    type: Any = None
    id: Any = None
    parentId: Any = None


_DECODER = msgspec.json.Decoder(_Envelope)


class Row(NamedTuple):
    """One stored line, ready for an INSERT."""

    seq: int
    offset: int
    line: bytes
    type: str | None
    id: str | None
    parent_id: str | None


def split_lines(data: bytes) -> list[bytes]:
    """``data`` cut after each ``\\n`` (only ``\\n``: a ``\\r`` stays inside its line); a last
    piece without one is a torn line of its own."""
    parts = data.split(b"\n")
    lines = [part + b"\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _text(value: Any) -> str | None:
    # PostgreSQL text cannot hold NUL; an id with one is kept in the line, not the column.
    return value if isinstance(value, str) and "\x00" not in value else None


def _envelope(line: bytes) -> tuple[str | None, str | None, str | None]:
    try:
        envelope = _DECODER.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None, None, None
    return _text(envelope.type), _text(envelope.id), _text(envelope.parentId)


def rows_of(data: bytes, *, first_seq: int, first_offset: int) -> list[Row]:
    """The rows of ``data`` numbered from ``first_seq`` at byte ``first_offset``."""
    rows: list[Row] = []
    offset = first_offset
    for seq, line in enumerate(split_lines(data), first_seq):
        kind, key, parent = _envelope(line)
        rows.append(Row(seq, offset, line, kind, key, parent))
        offset += len(line)
    return rows
