"""Tool-call pairing for ``contextree check``, from a small summary of each message entry.

``check`` decodes every entry once and lets it go (so its memory stays near the file's size);
what pairing needs of a message - its role, a result's call id, an assistant's calls - is kept
here instead of the decoded entries.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from contextree.entries.types import (
    is_assistant_message,
    is_tool_call_content,
    is_tool_result_message,
)

if TYPE_CHECKING:
    from contextree.store.index import Record

__all__ = ["ToolMessage", "ToolPairing"]


@dataclass(frozen=True, slots=True)
class ToolMessage:
    """What pairing keeps of a message entry that is not a tool result."""

    role: Literal["assistant", "other"]
    calls: tuple[tuple[object, object], ...] = ()
    """An assistant's tool calls: ``(id, name)``."""


_OTHER = ToolMessage("other")
"""Every message of another role: one shared summary."""
_NO_CALLS = ToolMessage("assistant")
"""Every assistant message without tool calls: one shared summary."""

Problem = tuple[Literal["error", "warning"], str, "Record"]

Lookup = Callable[[str], "Record | None"]
"""The record of an id (the last line with it), as the session's index answers."""


class ToolPairing:
    """Tool-call pairing over the message entries of a session, given in file order.

    ``check`` decodes each entry once and lets it go; this keeps only what pairing needs, in a
    list by file line: an assistant's calls, and that a message of another role is there. A
    tool result is checked when it is given, against the messages before it (they come first
    in a file), and only its call id is kept (the call's own string when it matches): at 100k
    entries this is 8 MB less than a summary of every message, at ``check``'s peak of memory.
    """

    def __init__(self, lookup: Lookup) -> None:
        self._lookup = lookup
        self._summaries: list[ToolMessage | None] = []
        self._answered: set[str] = set()
        self._errors: list[Problem] = []
        self._later: list[tuple[Record, object]] = []

    def add(self, record: Record, message: object) -> None:
        """Take in the ``message`` of the entry ``record`` (one not an object is walked past,
        as entries of other types are)."""
        if is_tool_result_message(message):
            self._result(record, message.get("toolCallId"), defer=True)
            return
        if is_assistant_message(message):
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            calls = tuple(
                (b.get("id"), _name(b.get("name"))) for b in blocks if is_tool_call_content(b)
            )
            summary = ToolMessage("assistant", calls) if calls else _NO_CALLS
        elif isinstance(message, dict):
            summary = _OTHER
        else:
            return
        line = record.line
        assert line is not None  # every loaded record has its line
        summaries = self._summaries
        summaries.extend([None] * (line + 1 - len(summaries)))
        summaries[line] = summary

    def problems(self, records: Iterable[Record]) -> list[Problem]:
        """``(severity, message, record)``: results without their call (errors), then calls
        without a result (warnings), each in file order. ``records``: every entry, in file
        order, after every message was given to :meth:`add`."""
        for record, call_id in self._later:
            self._result(record, call_id, defer=False)
        errors = sorted(self._errors, key=lambda problem: problem[2].line or 0)
        warnings: list[Problem] = []
        for record in records:
            summary = self._summary(record)
            for call_id, name in summary.calls if summary is not None else ():
                if str(call_id) not in self._answered:
                    text = f"tool call {call_id!r} ({name}) has no result"
                    warnings.append(("warning", text, record))
        return errors + warnings

    def _summary(self, record: Record) -> ToolMessage | None:
        line, summaries = record.line, self._summaries
        return summaries[line] if line is not None and line < len(summaries) else None

    def _result(self, record: Record, call_id: object, *, defer: bool) -> None:
        made = self._call(record, call_id, defer=defer)
        if made is _UNDECIDED:
            self._later.append((record, call_id))
            return
        self._answered.add(str(call_id if made is None else made))
        if made is None:
            text = f"tool result for call {call_id!r} has no matching tool call before it"
            self._errors.append(("error", text, record))

    def _call(self, record: Record, call_id: object, *, defer: bool) -> object:
        """The matching call id of the assistant message before ``record`` (past other
        results and non-message entries); ``None`` when it made no such call;
        ``_UNDECIDED`` (with ``defer``) when an entry on the way comes later in the file."""
        lookup, seen = self._lookup, set[str]()
        current = lookup(record.parent_id) if record.parent_id else None
        while current is not None and current.id not in seen:
            if defer and (current.line or 0) > (record.line or 0):
                return _UNDECIDED  # not given yet
            seen.add(str(current.id))
            parent = self._summary(current)
            if parent is not None and parent.role == "assistant":
                return next((made for made, _ in parent.calls if made == call_id), None)
            if parent is not None and parent.role == "other":
                return None
            current = lookup(current.parent_id) if current.parent_id else None
        return None


_UNDECIDED: Final = object()


def _name(name: object) -> object:
    # Tool names repeat: one string each (2.8 MB of the summaries of a 100k-entry session).
    return sys.intern(name) if isinstance(name, str) else name
