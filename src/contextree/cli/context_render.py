"""What ``contextree context`` prints: the model's messages as text, and the footer line.

Kept apart from :mod:`contextree.cli.render`: printing a large context into a pipe or a file
needs neither rich nor the compaction layer that module imports (about half of the command's
time on a 100k-entry session before, issue 27).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from contextree.cli.preview import kind_tag, plural, printable
from contextree.entries.js_json import js_stringify
from contextree.entries.types import is_text_content

if TYPE_CHECKING:
    from rich.console import RenderableType

    from contextree.context.build import SessionContext
    from contextree.entries.types import LlmMessage

__all__ = ["context_footer", "context_plain", "context_text", "footer_text"]

_ASCII_CONTROLS: Final = bytes([*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F])
"""The ASCII characters of :data:`~contextree.cli.preview.CONTROL_CHARACTERS` (a test keeps the
two in step)."""


def _block_text(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "thinking":
        return f"(thinking) {block.get('thinking', '')}"
    if kind == "toolCall":
        return f"→ {block.get('name')}({js_stringify(block.get('arguments', {}))})"
    if kind == "image":
        return f"[image {block.get('mimeType', '')}]"
    return f"[{kind} block]"


def _tool_name(message: LlmMessage) -> str:
    """`` (name)`` after a tool result's role; nothing when it has no string ``toolName``."""
    name = message.get("toolName")
    return f" ({name})" if isinstance(name, str) else ""


def _context_lines(messages: Sequence[LlmMessage]) -> Iterator[list[tuple[str, str]]]:
    """Each output line of the context as (text, style) pieces; bodies unstyled (""), and not
    yet made printable (the callers do: see :func:`printable`)."""
    for index, message in enumerate(messages, start=1):
        role = str(message.get("role"))
        header: list[tuple[str, str]] = [(f"── {index}. {role}", kind_tag(role)[1])]
        if role == "toolResult":
            header.append((_tool_name(message), "ct.meta"))
            if message.get("isError"):
                header.append((" error", "ct.error"))
        yield header
        content: object = message.get("content")
        if isinstance(content, str):
            yield [(content, "")]
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    yield [(_block_text(block), "")]
        yield []


def context_text(messages: Sequence[LlmMessage]) -> RenderableType:
    """What the model sees, message by message (styled, for a terminal)."""
    from rich.console import Group
    from rich.text import Text

    return Group(
        *(
            Text.assemble(*((printable(text), style) for text, style in pieces))
            for pieces in _context_lines(messages)
        )
    )


def context_plain(messages: Sequence[LlmMessage]) -> str:
    """The same text as :func:`context_text`, plain, for pipes and files: the hot path of
    ``contextree context`` on a large session, so written out without the styled pieces."""
    lines: list[str] = []
    add = lines.append
    for index, message in enumerate(messages, start=1):
        role = str(message.get("role"))
        if role == "toolResult":
            error = " error" if message.get("isError") else ""
            add(f"── {index}. {role}{_tool_name(message)}{error}")
        else:
            add(f"── {index}. {role}")
        content: object = message.get("content")
        if isinstance(content, str):
            add(content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    text = block.get("text") if is_text_content(block) else None
                    add(text if isinstance(text, str) else _block_text(block))
        add("")
    if not lines:
        return ""
    lines.append("")  # the last line ends with a newline too
    return _printable_fast("\n".join(lines))


_C1_LEAD: Final = b"\xc2"
"""The first byte of U+0080-U+00BF in UTF-8, the C1 controls among them."""


def _printable_fast(text: str) -> str:
    """:func:`printable`, a few times faster on a large text: in UTF-8 an ASCII byte is always
    its own character, so bytes' ``translate`` deletes the C0 controls and DEL in one C loop,
    where the regular expression steps through every character. Text that may hold a C1
    control (any character from U+0080 to U+00BF) takes the regular expression."""
    raw = text.encode("utf-8", "surrogatepass")
    kept = raw.translate(None, _ASCII_CONTROLS)
    if _C1_LEAD in kept:
        return printable(text)
    return text if len(kept) == len(raw) else kept.decode("utf-8", "surrogatepass")


def footer_text(context: SessionContext, *, sent: int, tokens: int) -> str:
    """The line under ``contextree context``: messages sent, tokens, thinking level, model."""
    model = context.model.spec if context.model else "-"
    return printable(
        f"{plural(sent, 'message')}, ~{tokens:,} tokens, "
        f"thinking {context.thinking_level}, model {model}"
    )


def context_footer(context: SessionContext, *, sent: int, tokens: int) -> RenderableType:
    """:func:`footer_text`, styled for a terminal."""
    from rich.text import Text

    return Text(footer_text(context, sent=sent, tokens=tokens), style="ct.meta")
