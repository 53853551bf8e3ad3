"""Render a conversation as plain text for a summarizer (pi-behaviour.md §7.1).

A summarizer reads the conversation as one text, not as messages, so it does not try to
continue it. The output is byte-for-byte what pi's ``serializeConversation`` produces.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, assert_never

from contextree.entries.js_json import js_object_entries, js_stringify
from contextree.entries.types import LlmMessage, is_text_content, known_block, known_message
from contextree.tokens.estimate import utf16_len

__all__ = [
    "TOOL_RESULT_MAX_CHARS",
    "TOOL_RESULT_TAIL_CHARS",
    "RawCall",
    "SerializedPart",
    "joined_parts",
    "serialize_conversation",
    "serialized_parts",
]

TOOL_RESULT_MAX_CHARS: Final = 2000
"""Tool results longer than this (in UTF-16 code units, as pi counts) are cut."""
TOOL_RESULT_TAIL_CHARS: Final = 1000
"""With ``keep_tail``: how much of a long tool result's end is kept besides its start."""

RawCall = tuple[object, list[tuple[str, Any]] | None]
"""A tool call as :func:`serialized_parts` renders it: its name, and its arguments' entries
in JavaScript's order (``None`` when they are not an object)."""
SerializedPart = tuple[str, str, list[RawCall] | None]
"""A part of a serialized conversation: its role's label (``"User"``, ``"Tool result"``...),
its text after ``[label]: ``, and for a tool-call part the calls its text renders."""


def serialize_conversation(llm_messages: Iterable[LlmMessage], *, keep_tail: bool = False) -> str:
    """The conversation as text: ``[User]: ...``, ``[Assistant]: ...``, ... parts joined by a
    blank line.

    Takes the output of ``convert_to_llm``. Only ``user``, ``assistant`` and ``toolResult``
    messages are rendered; tool results are cut at :data:`TOOL_RESULT_MAX_CHARS`, as pi does.
    ``keep_tail`` also keeps the last :data:`TOOL_RESULT_TAIL_CHARS` of a long result, where a
    command's outcome is (``41 passed``, an exit code); the offline summarizer reads that form.

    Raises:
        TypeError: a tool-call argument is not a JSON value.
    """
    return joined_parts(serialized_parts(llm_messages, keep_tail=keep_tail))


def joined_parts(parts: Iterable[SerializedPart]) -> str:
    """The text of ``parts``: ``[label]: text`` each, a blank line between two."""
    return "\n\n".join(f"[{label}]: {text}" for label, text, _ in parts)


def serialized_parts(
    llm_messages: Iterable[LlmMessage], *, keep_tail: bool = False
) -> list[SerializedPart]:
    """The parts :func:`serialize_conversation` joins, in order, each with its role's label
    apart and, for tool calls, the calls as they were: a reader of the text need not split
    it again nor parse the calls back (the offline summarizer, see offline/parts.py)."""
    parts: list[SerializedPart] = []
    for message in llm_messages:
        parts.extend(_message_parts(message, keep_tail))
    return parts


def _message_parts(message: object, keep_tail: bool = False) -> list[SerializedPart]:
    known = known_message(message)
    if known is None:
        return []  # not an object, or a role this format does not define: not rendered
    match known["role"]:
        case "user":
            text = _joined_text(known.get("content"))
            return [("User", text, None)] if text else []
        case "assistant":
            return _assistant_parts(known.get("content"))
        case "toolResult":
            text = _joined_text(known.get("content"))
            if not text:
                return []
            if keep_tail:
                return [("Tool result", _head_and_tail(text), None)]
            return [("Tool result", _truncate(text, TOOL_RESULT_MAX_CHARS), None)]
        case (
            "developer"
            | "bashExecution"
            | "pythonExecution"
            | "custom"
            | "hookMessage"
            | "branchSummary"
            | "compactionSummary"
            | "fileMention"
        ):
            return []  # convert_to_llm has rewritten or dropped these; pi renders three roles
        case _:
            assert_never(known)


def _joined_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(_str(block.get("text")) for block in content if is_text_content(block))


def _assistant_parts(content: object) -> list[SerializedPart]:
    if not isinstance(content, list):
        return []
    texts: list[str] = []
    thinkings: list[str] = []
    calls: list[RawCall] = []
    for item in content:
        block = known_block(item)
        if block is None:
            continue  # not an object, or a block type this format does not define
        match block["type"]:
            case "text":
                texts.append(_str(block.get("text")))
            case "thinking":
                thinkings.append(_str(block.get("thinking")))
            case "toolCall":
                arguments = block.get("arguments")
                entries = js_object_entries(arguments) if isinstance(arguments, dict) else None
                calls.append((block.get("name"), entries))
            case "image" | "redactedThinking":
                pass  # pi renders neither
            case _:
                assert_never(block)
    parts: list[SerializedPart] = []
    # As in pi, a part is emitted as soon as it has a block, even one with empty text.
    if thinkings:
        parts.append(("Assistant thinking", "\n".join(thinkings), None))
    if texts:
        parts.append(("Assistant", "\n".join(texts), None))
    if calls:
        rendered = "; ".join(_tool_call(name, entries) for name, entries in calls)
        parts.append(("Assistant tool calls", rendered, calls))
    return parts


def _tool_call(name: object, entries: list[tuple[str, Any]] | None) -> str:
    rendered = ""
    if entries is not None:
        rendered = ", ".join(f"{key}={js_stringify(value)}" for key, value in entries)
    return f"{_str(name)}({rendered})"


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _truncate(text: str, max_chars: int) -> str:
    """The first ``max_chars`` UTF-16 units of ``text`` and a note of how many were cut."""
    length = utf16_len(text)
    if length <= max_chars:
        return text
    if text.isascii():
        head = text[:max_chars]
    else:
        # Cut where JavaScript's slice cuts, even inside a surrogate pair.
        units = text.encode("utf-16-le", "surrogatepass")[: 2 * max_chars]
        head = units.decode("utf-16-le", "surrogatepass")
    return f"{head}\n\n[... {length - max_chars} more characters truncated]"


def _head_and_tail(text: str) -> str:
    """The start and the end of a long text, with a note of how much is left out between."""
    tail = TOOL_RESULT_TAIL_CHARS
    if len(text) <= TOOL_RESULT_MAX_CHARS + tail:
        return text
    omitted = len(text) - TOOL_RESULT_MAX_CHARS - tail
    return f"{text[:TOOL_RESULT_MAX_CHARS]}\n[... {omitted} characters omitted ...]\n{text[-tail:]}"
