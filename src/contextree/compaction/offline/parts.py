"""The serialized conversation's syntax (pi-behaviour.md §7.1): role-marked parts and the
``name(k=JSON, ...)`` tool calls."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final

from contextree.compaction.offline.digest import COMMAND_CHARS
from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.offline.text import clip

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


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: dict[str, object]

    def describe(self) -> str:
        target = call_path(self) or call_command(self)
        return f"{self.name} `{clip(target, COMMAND_CHARS)}`" if target else self.name


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
