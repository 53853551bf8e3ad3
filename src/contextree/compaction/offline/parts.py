"""The serialized conversation's syntax (pi-behaviour.md §7.1): role-marked parts and the
``name(k=JSON, ...)`` tool calls."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from contextree.compaction.offline.digest import COMMAND_CHARS
from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.offline.text import clip
from contextree.compaction.serialize import SerializedPart, joined_parts
from contextree.tokens.estimate import utf16_len

_ROLES: Final = "User|Assistant thinking|Assistant tool calls|Assistant|Tool result"
_ROLE_KEYS: Final = {
    "User": "user",
    "Assistant thinking": "thinking",
    "Assistant": "assistant",
    "Assistant tool calls": "calls",
    "Tool result": "result",
}
# A part's text may contain blank lines, so parts are split only before a role marker (§7.1).
_PART_BOUNDARY = LazyPattern(rf"\n\n(?=\[(?:{_ROLES})\]: )")
_PART_HEAD = LazyPattern(rf"\[({_ROLES})\]: ")
_CALL_NAME = LazyPattern(r"\s*([^\s(;]+)\(")
_CALL_KEY = LazyPattern(r"\s*([^=(),\s]+)=")
_JSON = json.JSONDecoder()


@dataclass(frozen=True)
class Part:
    role: str
    text: str
    calls: tuple[ToolCall, ...] | None = field(default=None, compare=False, repr=False)
    """A tool-call part's calls, as :func:`parse_tool_calls` reads them from ``text``, when
    they came with it (see :class:`Conversation`); ``None``: parse the text."""


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, object]

    def describe(self) -> str:
        target = call_path(self) or call_command(self)
        return f"{self.name} `{clip(target, COMMAND_CHARS)}`" if target else self.name


class Conversation:
    """A serialized conversation, read by its parts when it came with them: the parts the
    serializer made (a 100k-entry session's compaction joined 4 MB of text, split it again
    and parsed back the JSON of 1,400 tool calls: 20 ms; and a part's own text may hold what
    looks like a boundary, see :func:`conversation_of`). The text itself is joined only when
    asked for; ``parts`` is ``None`` for a conversation given as text, which is split."""

    __slots__ = ("_pieces", "_text", "parts")

    def __init__(
        self,
        text: str | None = None,
        parts: list[Part] | None = None,
        *,
        pieces: Sequence[SerializedPart] = (),
    ) -> None:
        self._text = text
        self._pieces = pieces
        self.parts = parts

    @property
    def text(self) -> str:
        """The text ``serialize_conversation`` makes of it."""
        if self._text is None:
            self._text = joined_parts(self._pieces)
        return self._text

    def __bool__(self) -> bool:
        # (Every part's text starts with its role's mark.)
        return bool(self._text) if self._text is not None else bool(self._pieces)

    def utf16_units(self) -> int:
        """``utf16_len(self.text)``: counted part by part when the text is not joined (the
        text of a long session is not ASCII, and its length in UTF-16 meant encoding it)."""
        if self._text is not None:
            return utf16_len(self._text)
        pieces = self._pieces
        # "[" label "]: " text, and a blank line between two parts.
        marks = sum(len(label) + 4 for label, _, _ in pieces) + 2 * max(len(pieces) - 1, 0)
        return marks + sum(utf16_len(text) for _, text, _ in pieces)


def conversation_of(serialized: Sequence[SerializedPart]) -> Conversation:
    """The conversation of the parts ``serialized`` (``serialize_conversation``'s), each part
    as the serializer made it. A part's text may hold what looks like a boundary of its own
    (``\n\n[User]: `` in a fetched page or a file): split from the joined text, that would
    make the page's words the user's - a request, a rule, the goal - so the serializer's
    boundaries are the ones read."""
    parts = [
        Part(_ROLE_KEYS[label], body, None if calls is None else _as_read(calls))
        for label, body, calls in serialized
    ]
    return Conversation(parts=parts, pieces=serialized)


_CALL_NAME_WHOLE = LazyPattern(r"[^\s(;]+")
_CALL_KEY_WHOLE = LazyPattern(r"[^=(),\s]+")
_SAFE_INTEGER: Final = 2**53
"""JavaScript writes an integer below this in magnitude as Python does."""


def _as_read(
    calls: Sequence[tuple[object, list[tuple[str, object]] | None]],
) -> tuple[ToolCall, ...] | None:
    """The calls as :func:`parse_tool_calls` reads back their rendering, when that is sure to
    give them as they are: a name and keys its patterns take whole, and values that JSON gives
    back with their type (strings, booleans, null, safe integers). ``None``: parse the text.
    (An identifier holds none of the characters the patterns stop at.)"""
    read: list[ToolCall] = []
    for name, entries in calls:
        if not isinstance(name, str) or not (
            name.isidentifier() or _CALL_NAME_WHOLE.fullmatch(name)
        ):
            return None
        args: dict[str, object] = {}
        for key, value in entries or ():
            if not _reads_back(value) or not _whole_key(key):
                return None
            args[key] = value
        read.append(ToolCall(name, args))
    return tuple(read)


def _whole_key(key: object) -> bool:
    """Whether the key pattern takes ``key`` whole (a caller's dict may have a key that is no
    string: it is rendered, and read back, as one)."""
    return type(key) is str and (key.isidentifier() or _CALL_KEY_WHOLE.fullmatch(key) is not None)


def _reads_back(value: object) -> bool:
    """Whether JSON gives ``value`` back as it was from JavaScript's rendering of it."""
    if value is None or type(value) is str or type(value) is bool:
        return True
    return type(value) is int and -_SAFE_INTEGER < value < _SAFE_INTEGER


def parts_of(conversation: str | Conversation) -> list[Part]:
    """The parts of ``conversation``: those it came with from the serializer, else split
    from its text."""
    if isinstance(conversation, str):
        return split_parts(conversation) if conversation else []
    if conversation.parts is not None:
        return conversation.parts
    return split_parts(conversation.text) if conversation else []


def split_parts(conversation: str) -> list[Part]:
    parts: list[Part] = []
    for chunk in _PART_BOUNDARY.split(conversation):
        head = _PART_HEAD.match(chunk)
        if head:
            parts.append(Part(_ROLE_KEYS[head.group(1)], chunk[head.end() :]))
        elif chunk.strip():
            # Text before the first marker: not pi's format, read it as the user's words.
            parts.append(Part("user", chunk))
    return parts


def parse_tool_calls(text: str) -> list[ToolCall]:
    """``name(k=JSON, k2=JSON); name2()`` as rendered by §7.1; stops at the first oddity."""
    calls: list[ToolCall] = []
    pos = 0
    while True:
        name = _CALL_NAME.match(text, pos)
        if name is None:
            return calls
        pos = name.end()
        args: dict[str, object] = {}
        while pos < len(text) and text[pos] != ")":
            key = _CALL_KEY.match(text, pos)
            if key is None:
                calls.append(ToolCall(name.group(1), args))
                return calls
            try:
                args[key.group(1)], pos = _JSON.raw_decode(text, key.end())
            except json.JSONDecodeError:
                calls.append(ToolCall(name.group(1), args))
                return calls
            if text.startswith(", ", pos):
                pos += 2
        calls.append(ToolCall(name.group(1), args))
        pos += 1
        if not text.startswith("; ", pos):
            return calls
        pos += 2


def call_path(call: ToolCall) -> str:
    for key in ("path", "file_path", "filePath"):
        value = call.args.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def call_command(call: ToolCall) -> str:
    for key in ("command", "cmd"):
        value = call.args.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""
