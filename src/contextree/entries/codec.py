"""The JSON codec of session lines: one encoder and decoder, built once.

Decoding is lossless: a line becomes a plain ``dict`` holding every key it had. Every way
msgspec can reject a line becomes one :class:`LineError` with a reason (:func:`line_error`); the
store's envelope decoder (``contextree.store.index.Record``), which reads only the keys that
place an entry in the tree, reports through the same translation.

Invalid UTF-8 is read as pi reads it (node decodes the file with U+FFFD for each invalid
sequence): strict decoding comes first, and only a line it rejects is checked and decoded again
from :func:`replaced_text`. Valid lines pay nothing for this.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec

from contextree.entries.types import JsonDict

__all__ = [
    "DECODE_ERRORS",
    "INVALID_UTF8",
    "LineError",
    "decode_object",
    "decode_object_strict",
    "decode_objects_strict",
    "decode_replacing",
    "decoding",
    "encode_line",
    "entry_problem",
    "header_problem",
    "line_error",
    "replaced_text",
    "replacements",
    "surrogate_free",
]


class LineError(ValueError):
    """A line is not a JSON object of the expected shape; ``str()`` says why."""


_TOO_DEEP = "nested too deeply to decode (JSON nesting beyond the recursion limit)"
"""msgspec raises ``RecursionError`` on deep nesting (~1000 levels); it is a bad line too."""

_object_decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()


DECODE_ERRORS = (msgspec.ValidationError, msgspec.DecodeError, RecursionError)
"""Every way msgspec can reject a line (see :func:`line_error`)."""


def line_error(exc: BaseException) -> LineError:
    """The :class:`LineError`, with a reason, for one of :data:`DECODE_ERRORS`."""
    if isinstance(exc, msgspec.ValidationError):
        return LineError(_validation_reason(str(exc)))
    if isinstance(exc, msgspec.DecodeError):
        return LineError(f"not valid JSON ({exc})")
    return LineError(_TOO_DEEP)


@contextmanager
def decoding() -> Iterator[None]:
    """Turn every way msgspec can reject a line into one :class:`LineError` with a reason."""
    try:
        yield
    except DECODE_ERRORS as exc:
        raise line_error(exc) from None


# A \uXXXX escape of a UTF-16 surrogate: a high one (optionally followed by its low half) or
# a lone low one, each preceded by an even number of backslashes (else it is not an escape).
_SURROGATE_ESCAPE = re.compile(
    rb"(?<!\\)((?:\\\\)*)\\u([dD][89abAB][0-9a-fA-F]{2})(\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
    rb"|(?<!\\)((?:\\\\)*)\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def _replace_lone(match: re.Match[bytes]) -> bytes:
    if match.group(2) is not None:
        if match.group(3) is not None:
            return match.group(0)  # a pair: one character
        return match.group(1) + b"\\ufffd"
    return match.group(4) + b"\\ufffd"


def surrogate_free(line: bytes | memoryview) -> bytes | None:
    """``line`` with each lone surrogate escape (``"\\ud83e"``, which pi writes when it cuts a
    string inside an emoji) turned into ``\\ufffd``, or ``None`` when it has none.

    pi's ``JSON.parse`` accepts such a line and keeps the lone surrogate; msgspec rejects it.
    U+FFFD is what node writes for a lone surrogate to any UTF-8 output, and it is one UTF-16
    unit as well, so token estimates stay pi's.
    """
    raw = bytes(line)
    if b"\\u" not in raw:
        return None
    fixed = _SURROGATE_ESCAPE.sub(_replace_lone, raw)
    return fixed if fixed != raw else None


def decode_object_strict(line: bytes | memoryview) -> JsonDict:
    """Decode one line into a dict; raise :class:`LineError` when it is not a JSON object of
    valid UTF-8 (see :func:`decode_replacing` for what comes next). Lone surrogate escapes,
    valid JSON for pi, are read as U+FFFD (:func:`surrogate_free`)."""
    # A plain try (not ``decoding()``): this runs once per entry read, and a generator-based
    # context manager costs more than the decode of a small line.
    try:
        value = _object_decoder.decode(line)
    except DECODE_ERRORS as exc:
        fixed = surrogate_free(line)
        if fixed is None:
            raise line_error(exc) from None
        try:
            value = _object_decoder.decode(fixed)
        except DECODE_ERRORS as again:
            raise line_error(again) from None
    if not isinstance(value, dict):
        raise LineError(f"expected a JSON object, found {type(value).__name__}")
    return value


def decode_objects_strict(lines: memoryview) -> list[JsonDict] | None:
    """Decode consecutive lines, one JSON object each, in one call; ``None`` when any of them
    is not a JSON object of valid UTF-8 (the caller then decodes them one by one with
    :func:`decode_object_strict`, which says why, or reads one as pi does).

    The same decoder as :func:`decode_object_strict`, so the objects are the same; the call
    per line (and its slice) is what it saves: a fifth of decoding a context's entries."""
    try:
        values: list[Any] = _object_decoder.decode_lines(lines)
    except DECODE_ERRORS:
        return None
    for value in values:
        if type(value) is not dict:
            return None
    return values


def decode_object(line: bytes | memoryview) -> JsonDict:
    """Decode one line into a dict, invalid UTF-8 read as U+FFFD (as pi does); raise
    :class:`LineError` when it is not a JSON object."""
    try:
        return decode_object_strict(line)
    except LineError as exc:
        return decode_replacing(line, exc)


INVALID_UTF8 = "invalid UTF-8 read as U+FFFD (as pi reads it)"
"""What the load report and ``check`` say of a line with invalid UTF-8 that is still used."""


class _Replacements:
    count = 0


def replacements() -> int:
    """How many lines this process has read with invalid UTF-8 replaced (never goes down).

    Lets a reader of many lines learn cheaply whether any of them needed a replacement.
    """
    return _Replacements.count


def replaced_text(line: bytes | memoryview) -> str | None:
    """``line`` decoded with U+FFFD for each invalid UTF-8 sequence (as node's TextDecoder
    does), or ``None`` when it is valid UTF-8 (then invalid UTF-8 is not its problem). Lone
    surrogate escapes become ``\\ufffd`` too (:func:`surrogate_free`)."""
    raw = surrogate_free(line) or bytes(line)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        _Replacements.count += 1
        return raw.decode("utf-8", "replace")
    return None


def decode_replacing(line: bytes | memoryview, error: LineError) -> JsonDict:
    """After strict decoding of ``line`` failed with ``error``: the object read from the line
    with invalid UTF-8 replaced by U+FFFD. Raises ``error`` when the line is valid UTF-8, and a
    :class:`LineError` when even the replaced text is not a JSON object."""
    text = replaced_text(line)
    if text is None:
        raise error
    try:
        value = _object_decoder.decode(text)
    except DECODE_ERRORS as exc:
        raise LineError(f"{line_error(exc)} (and invalid UTF-8)") from None
    if not isinstance(value, dict):
        raise LineError(f"expected a JSON object, found {type(value).__name__} (and invalid UTF-8)")
    return value


def encode_line(obj: JsonDict) -> bytes:
    """Encode one entry or header as compact JSON (no newline), non-ASCII kept as UTF-8."""
    return _encoder.encode(obj)


def _validation_reason(text: str) -> str:
    # msgspec says e.g. "Expected `str | null`, got `int` - at `$.id`"
    return text.replace("$.", "field ").replace(" - at ", " at ")


def header_problem(obj: JsonDict) -> str | None:
    """Why ``obj`` is not a usable session header, or ``None`` when it is (§1.3, §1.7)."""
    if obj.get("type") != "session":
        return f'expected a session header (type "session"), found type {obj.get("type")!r}'
    if not isinstance(obj.get("id"), str):
        return 'session header has no string "id"'
    version = obj.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        return f'session header has an invalid "version" {version!r}'
    return None


def entry_problem(obj: JsonDict, *, needs_id: bool) -> str | None:
    """Why ``obj`` cannot be placed in the tree, or ``None``; unknown types are fine."""
    entry_type = obj.get("type")
    if not isinstance(entry_type, str) or not entry_type:
        return 'entry has no string "type"'
    if needs_id:
        entry_id = obj.get("id")
        if not isinstance(entry_id, str) or not entry_id:
            return 'entry has no string "id" (expected 8 hex characters)'
        parent = obj.get("parentId")
        if parent is not None and not isinstance(parent, str):
            return f'entry "parentId" must be a string or null, found {type(parent).__name__}'
    if entry_type == "message":
        message = obj.get("message")
        if not isinstance(message, dict):
            return 'message entry has no "message" object'
        if not isinstance(message.get("role"), str):
            return 'message entry has no string "message.role"'
    return None
