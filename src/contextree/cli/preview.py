"""One-line previews of entries and messages, for trees and tables."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from contextree.entries.js_json import js_stringify
from contextree.entries.types import (
    StoredEntry,
    entry_message,
    is_bash_execution_message,
    is_branch_summary_entry,
    is_branch_summary_message,
    is_compaction_entry,
    is_compaction_summary_message,
    is_custom_entry,
    is_custom_message_entry,
    is_image_content,
    is_label_entry,
    is_model_change_entry,
    is_text_content,
    is_tool_call_content,
    is_tool_result_message,
)
from contextree.text.escapes import escaped

__all__ = [
    "CONTROL_CHARACTERS",
    "entry_kind",
    "entry_preview",
    "escaped",
    "kind_tag",
    "message_text",
    "one_line",
    "plural",
    "printable",
]

CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters other than newline and tab (C0, DEL and C1)."""


def plural(count: int, word: str) -> str:
    """``"1 message"``, ``"2 messages"``."""
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def printable(text: str) -> str:
    """``text`` without control characters other than newline and tab.

    Sessions hold whatever tools printed, escape sequences included, and rich passes ESC
    through: shown as it is, such text could drive the terminal of whoever looks at it.
    """
    return CONTROL_CHARACTERS.sub("", text)


def one_line(text: str, width: int) -> str:
    """``text`` printable, its white space folded to single spaces, cut to ``width`` with "…"."""
    flat = " ".join(printable(text).split())
    return flat if len(flat) <= width else flat[: max(0, width - 1)] + "…"


def _text(value: object, default: str = "") -> str:
    """``value`` when it is a string, else ``default``: a damaged file can hold any JSON value
    (or null) where pi writes a string, and "None" or "['x']" in a preview means nothing."""
    return value if isinstance(value, str) else default


NO_SUMMARY: Final = "(no summary)"
"""What a preview shows for a summary that is not a string (null in a damaged file)."""


def _call_args(arguments: object) -> str:
    if not isinstance(arguments, dict):
        return ""
    return ", ".join(f"{key}={js_stringify(value)}" for key, value in arguments.items())


def message_text(message: Mapping[str, Any]) -> str:
    """The readable text of a message: text blocks, tool calls, summaries or commands."""
    if is_branch_summary_message(message) or is_compaction_summary_message(message):
        return _text(message.get("summary"), NO_SUMMARY)
    if is_bash_execution_message(message):
        return f"$ {_text(message.get('command'))}"
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if is_text_content(block):
                parts.append(_text(block.get("text")))
            elif is_tool_call_content(block):
                name = _text(block.get("name"), "?")
                parts.append(f"→ {name}({_call_args(block.get('arguments'))})")
            elif is_image_content(block):
                parts.append(f"[image {_text(block.get('mimeType'))}]")
    return " ".join(p for p in parts if p)


_ROLE_STYLES: Final = {
    "user": "ct.role.user",
    "assistant": "ct.role.assistant",
    "toolResult": "ct.role.tool",
}
_KIND_TAGS: Final = {
    "compaction": ("[compaction]", "ct.compaction"),
    "branch_summary": ("[branch summary]", "ct.branch_summary"),
    # oh-my-pi's /clear: the model's context starts after it.
    "reset_boundary": ("[reset]", "ct.compaction"),
}


def kind_tag(kind: str) -> tuple[str, str]:
    """How the tree shows an entry of ``kind`` (from :func:`entry_kind`): text and style name."""
    return _KIND_TAGS.get(kind, (kind, _ROLE_STYLES.get(kind, "ct.role.other")))


def entry_kind(entry: StoredEntry) -> str:
    """``user``, ``assistant``, ``toolResult``, ``compaction``, ``label`` ... for an entry."""
    message = entry_message(entry)
    if message is not None:
        role = message.get("role", "message")  # shown, not dispatched on
        return printable(role if isinstance(role, str) and role else "message")
    return printable(_text(entry.get("type", "?"), "?"))


def entry_preview(entry: StoredEntry, width: int = 72) -> str:
    """A short description of what an entry holds (printable: see :func:`printable`)."""
    return printable(_preview(entry, width))


def _preview(entry: StoredEntry, width: int) -> str:
    message = entry_message(entry)
    if message is not None:
        if is_tool_result_message(message):
            text = message_text(message)
            name = message.get("toolName")
            return one_line(f"{name}: {text}" if isinstance(name, str) else text, width)
        return one_line(message_text(message), width)
    if is_compaction_entry(entry) or is_branch_summary_entry(entry):
        return one_line(_text(entry.get("summary"), NO_SUMMARY), width)
    if is_custom_message_entry(entry):
        return one_line(message_text({"content": entry.get("content")}), width)
    kind = entry.get("type")
    if kind == "reset_boundary":
        return "context cleared: the model sees only what follows"
    if kind == "title_change":
        return one_line(_text(entry.get("title")), width)
    if kind == "thinking_level_change":
        # oh-my-pi writes null for off (pi-behaviour.md 1.5).
        return _text(entry.get("thinkingLevel"), "off")
    if is_model_change_entry(entry):
        # pi writes provider and modelId, oh-my-pi "provider/modelId" in model.
        provider, model_id = _text(entry.get("provider")), _text(entry.get("modelId"))
        pair = f"{provider}/{model_id}" if provider or model_id else ""
        return _text(entry.get("model")) or pair or "(no model)"
    if is_label_entry(entry):
        # An absent or empty label clears it (pi-behaviour.md 1.5).
        return f"{_text(entry.get('targetId'), '?')} = {_text(entry.get('label')) or '(cleared)'}"
    if is_custom_entry(entry):
        return _text(entry.get("customType"))
    if kind == "session_info":
        return _text(entry.get("name")) or "(cleared)"
    return ""
