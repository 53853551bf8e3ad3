"""Read results that a later read, write or edit of the same file has made stale.

A ``read`` result shows a file as it was. When the file is read again in full, or written or
edited, the earlier result is out of date and the newer entry holds what the model needs; the
earlier result is then the first thing worth pruning, whatever its age. Paths are compared as
the tool calls wrote them; a result is matched with its call in the nearest assistant message
before it (where the agent loop puts it, which keeps the search short). A read with
``offset`` or ``limit`` shows part of a file, so it supersedes only an earlier read with the
same arguments; a failed call supersedes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from contextree.entries.types import (
    StoredEntry,
    entry_message,
    is_assistant_message,
    is_tool_call_content,
    is_tool_result_message,
)

__all__ = ["FILE_TOOLS", "Superseded", "SupersededReads", "stale_reads"]

_WRITERS = {"write": "written", "edit": "edited"}
FILE_TOOLS = frozenset({"read", *_WRITERS})
"""The tools whose results can supersede a read, or be superseded."""


@dataclass(frozen=True, slots=True)
class Superseded:
    """A stale read result: its entry, where it is in the walk, what made it stale."""

    entry: StoredEntry
    position: int
    by: str
    """The id of the entry that supersedes it."""
    why: str
    """``read again``, ``written`` or ``edited``."""


class SupersededReads:
    """Follows a context's entries in path order and records the read results made stale.

    Fed one entry at a time (:meth:`take`), so a host that sees its context grow feeds only
    the new entries.
    """

    __slots__ = ("_calls", "_open", "_position", "superseded")

    def __init__(self) -> None:
        self._calls: dict[str, tuple[str, str, str]] = {}  # call id -> (tool, path, read key)
        self._open: dict[str, list[tuple[StoredEntry, int, str]]] = {}  # path -> current reads
        self._position = 0
        self.superseded: dict[int, Superseded] = {}
        """By the entry's position among the entries taken."""

    def take(self, entry: StoredEntry) -> list[Superseded]:
        """Record one entry of the path (the next one after those taken before); returns the
        earlier results it makes stale."""
        position = self._position
        self._position += 1
        message = entry_message(entry)
        if is_assistant_message(message):
            self._calls = _file_calls(message.get("content"))
        elif is_tool_result_message(message) and not message.get("isError"):
            call = self._calls.get(str(message.get("toolCallId")))
            if call is not None and call[0] == message.get("toolName"):
                return self._note_result(entry, position, *call)
        return []

    def _note_result(
        self, entry: StoredEntry, position: int, tool: str, path: str, key: str
    ) -> list[Superseded]:
        reads = self._open.setdefault(path, [])
        if tool == "read":
            # A full read replaces every earlier read; a partial one only the same part.
            stale = [r for r in reads if not key or r[2] == key]
            why = "read again"
        else:
            stale, why = list(reads), _WRITERS[tool]
        marked = [Superseded(e, p, entry["id"], why) for e, p, _ in stale]
        for item in marked:
            self.superseded[item.position] = item
        gone = {r[1] for r in stale}
        reads[:] = [r for r in reads if r[1] not in gone]
        if tool == "read":
            reads.append((entry, position, key))
        return marked


def _read_key(arguments: dict[str, Any]) -> str:
    """``""`` for a whole-file read, else the part it reads."""
    part = {k: arguments.get(k) for k in ("offset", "limit") if arguments.get(k) is not None}
    return json.dumps(part, sort_keys=True) if part else ""


def _file_calls(content: Any) -> dict[str, tuple[str, str, str]]:
    """call id -> (tool, path, read key) of an assistant message's file tool calls."""
    calls: dict[str, tuple[str, str, str]] = {}
    for block in content if isinstance(content, list) else ():
        if not is_tool_call_content(block):
            continue
        name, arguments = block.get("name"), block.get("arguments")
        if not isinstance(name, str) or name not in FILE_TOOLS or not isinstance(arguments, dict):
            continue
        path = arguments.get("path")
        if isinstance(path, str) and path:
            calls[str(block.get("id"))] = (str(name), path, _read_key(arguments))
    return calls


def stale_reads(region: Sequence[StoredEntry], results: Sequence[int]) -> dict[int, Superseded]:
    """What :class:`SupersededReads` finds over ``region``, looking only at the file tool
    results at ``results`` (positions, ascending) and the assistant message before each."""
    tracker = SupersededReads()
    calls_at: dict[int, dict[str, tuple[str, str, str]]] = {}
    for position in results:
        entry = region[position]
        message = entry_message(entry)
        if not is_tool_result_message(message) or message.get("isError"):
            continue
        reply = position - 1
        while reply >= 0 and not is_assistant_message(entry_message(region[reply])):
            reply -= 1
        if reply < 0:
            continue
        if reply not in calls_at:
            reply_message = entry_message(region[reply])
            calls_at[reply] = _file_calls(reply_message.get("content") if reply_message else None)
        call = calls_at[reply].get(str(message.get("toolCallId")))
        if call is not None and call[0] == message.get("toolName"):
            tracker._note_result(entry, position, *call)
    return tracker.superseded
