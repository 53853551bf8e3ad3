"""Tool-call pairing for ``contextree check``, from a small summary of each message entry.

``check`` decodes every entry once and lets it go (so its memory stays near the file's size);
what pairing needs of a message - its role, a result's call id, an assistant's calls - is kept
here instead of the decoded entries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from contextree.entries.types import (
    is_assistant_message,
    is_tool_call_content,
    is_tool_result_message,
)

if TYPE_CHECKING:
    from contextree.store.index import Record

__all__ = ["ToolMessage", "pairing_problems", "tool_message"]


@dataclass(frozen=True, slots=True)
class ToolMessage:
    """What pairing needs of one message entry."""

    role: Literal["assistant", "toolResult", "other"]
    call_id: object = None
    """A tool result's ``toolCallId``, as the file holds it."""
    calls: tuple[tuple[object, object], ...] = ()
    """An assistant's tool calls: ``(id, name)``."""


_OTHER = ToolMessage("other")
"""Every message of another role: one shared summary (check keeps one per message entry)."""


def tool_message(message: object) -> ToolMessage | None:
    """The summary of an entry's ``message``; ``None`` when it is not an object (pairing walks
    past such entries, as past entries of other types)."""
    if is_tool_result_message(message):
        return ToolMessage("toolResult", call_id=message.get("toolCallId"))
    if is_assistant_message(message):
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        calls = tuple((b.get("id"), b.get("name")) for b in blocks if is_tool_call_content(b))
        return ToolMessage("assistant", calls=calls)
    return _OTHER if isinstance(message, dict) else None


def _answers(
    record: Record, call_id: object, by_id: dict[str, Record], messages: dict[int, ToolMessage]
) -> bool:
    """Whether the assistant message before ``record`` (past other results and non-message
    entries) made the call ``call_id``."""
    seen: set[str] = set()
    current = by_id.get(record.parent_id) if record.parent_id else None
    while current is not None and current.id not in seen:
        seen.add(str(current.id))
        parent = messages.get(id(current))
        if parent is not None and parent.role == "assistant":
            return any(made == call_id for made, _ in parent.calls)
        if parent is not None and parent.role == "other":
            return False
        current = by_id.get(current.parent_id) if current.parent_id else None
    return False


Problem = tuple[Literal["error", "warning"], str, "Record"]


def pairing_problems(records: Iterable[Record], messages: dict[int, ToolMessage]) -> list[Problem]:
    """``(severity, message, record)``: results without their call (errors), then calls
    without a result (warnings). ``messages`` maps ``id(record)`` to its summary."""
    in_order = list(records)
    by_id = {r.id: r for r in in_order if r.id is not None}
    answered: set[str] = set()
    problems: list[Problem] = []
    for record in in_order:
        summary = messages.get(id(record))
        if summary is None or summary.role != "toolResult":
            continue
        answered.add(str(summary.call_id))
        if not _answers(record, summary.call_id, by_id, messages):
            text = f"tool result for call {summary.call_id!r} has no matching tool call before it"
            problems.append(("error", text, record))
    for record in in_order:
        summary = messages.get(id(record))
        if summary is None or summary.role != "assistant":
            continue
        for call_id, name in summary.calls:
            if str(call_id) not in answered:
                text = f"tool call {call_id!r} ({name}) has no result"
                problems.append(("warning", text, record))
    return problems
