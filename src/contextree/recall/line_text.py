"""An entry's document text read straight from its stored line, for rebuilding an index.

A rebuild reads every entry of a session once. Decoding each line into dicts builds objects
the index never reads (usage, thinking text, signatures, image data) and then walks them; the
decoder here reads only the fields that become document text, into structs, and makes the
text by the rules of :func:`contextree.recall.documents.entry_text`, field for field.

The structs accept only the usual shapes: a field of another JSON type than the usual one, a
content block that is not an object, tool-call arguments holding a float or a nested value...
raise :class:`UnusualLine`, and such an entry is read the general way instead. Either way the
text is the same; only the time differs.
"""

from __future__ import annotations

from typing import Annotated, Final

import msgspec

from contextree.entries.codec import DECODE_ERRORS
from contextree.entries.js_json import js_stringify

__all__ = ["UnusualLine", "line_text"]

_SafeInteger = Annotated[int, msgspec.Meta(ge=-(2**53), le=2**53)]
_Arguments = dict[str, str | bool | _SafeInteger | None] | str | None
"""Tool-call arguments as nearly all are: a flat object of strings, booleans and integers
JavaScript holds exactly, which ``js_stringify`` writes with msgspec's encoder (a float or a
nested value fails the line here: ``js_stringify`` has its own writer for those)."""


class _Block(msgspec.Struct, gc=False):
    type: str = ""
    text: str | None = None
    name: str = ""
    arguments: _Arguments = None


_Content = str | list[_Block] | None


class _Message(msgspec.Struct, gc=False):
    role: str = ""
    content: _Content = None
    # UNSET (absent) and null differ: a null prunedContent hides the content.
    pruned_content: _Content | msgspec.UnsetType = msgspec.field(
        default=msgspec.UNSET, name="prunedContent"
    )
    tool_name: str = msgspec.field(default="", name="toolName")
    command: str = ""
    output: str = ""
    summary: str | None = None


class _Line(msgspec.Struct, gc=False):
    type: str = ""
    id: str | None = None
    timestamp: str | None = None
    message: _Message | None = None
    summary: str | None = None
    content: _Content = None


_line_decoder: Final = msgspec.json.Decoder(_Line)
_encode: Final = msgspec.json.Encoder().encode


class UnusualLine(Exception):
    """The line is not of the shapes read here: read it the general way."""


def line_text(line: bytes) -> tuple[str, str, str, str] | None:
    """``(entry id, role, timestamp, text)`` of the entry on ``line``: what ``entry_document``
    makes of the decoded entry (before redaction), ``None`` when it makes no document.

    Raises:
        UnusualLine: the line must be decoded and read the general way.
    """
    try:
        entry = _line_decoder.decode(line)
        found = _entry_text(entry)
    except (UnicodeDecodeError, *DECODE_ERRORS):
        raise UnusualLine from None
    if found is None or entry.id is None:
        return None
    return (entry.id, found[0], entry.timestamp or "", found[1])


def _entry_text(entry: _Line) -> tuple[str, str] | None:
    kind = entry.type
    if kind == "message":
        message = entry.message
        if message is None:
            return None
        text = _message_text(message)
        return (message.role, text) if text.strip() else None
    if kind in ("compaction", "branch_summary"):
        summary = entry.summary
        return (kind, summary) if summary is not None and summary.strip() else None
    if kind == "custom_message":
        text = _blocks(entry.content)
        return ("custom", text) if text.strip() else None
    return None  # no words (the builder reads no other types)


def _message_text(message: _Message) -> str:
    match message.role:
        case "assistant":
            return _blocks(message.content, calls=True)
        case "toolResult":
            pruned = message.pruned_content
            original = message.content if pruned is msgspec.UNSET else pruned
            return f"{message.tool_name}\n{_blocks(original)}".strip()
        case "bashExecution":
            return f"$ {message.command}\n{message.output}"
        case "branchSummary" | "compactionSummary":
            return message.summary if message.summary is not None else ""
        case _:
            return _blocks(message.content)  # the other roles, known or not


def _blocks(content: _Content, *, calls: bool = False) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        kind = block.type
        if kind == "text":
            if block.text is not None:
                parts.append(block.text)
        elif kind == "toolCall" and calls:
            parts.append(f"{block.name} {_arguments(block.arguments)}")
        # image, thinking and redactedThinking blocks hold no words; other types are unknown
    return "\n".join(parts)


def _arguments(arguments: _Arguments) -> str:
    """``js_stringify(arguments)``, or the arguments themselves when they are a string."""
    if arguments is None:
        return "null"
    if type(arguments) is str:
        return arguments
    if arguments and (min(arguments) < ":" or max(arguments) >= "\x80"):
        # A key may begin with a digit (any key before ":" or one not ASCII, which
        # str.isdigit may call one): JavaScript may order it first, js_stringify knows how.
        return js_stringify(arguments)
    return _encode(arguments).decode()
