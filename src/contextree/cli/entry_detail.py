"""One entry as text for the interactive tree: a one-line node label and the full preview.

Styles come from the CLI theme but are resolved to ``Style`` values here: textual draws a rich
``Text`` without our theme, so a named style such as ``"ct.id"`` would not be found.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rich.style import Style
from rich.text import Text

from contextree.cli.preview import (
    CONTROL_CHARACTERS,
    entry_kind,
    entry_preview,
    escaped,
    kind_tag,
)
from contextree.cli.theme import THEME
from contextree.entries.types import (
    StoredEntry,
    entry_message,
    is_assistant_message,
    is_bash_execution_message,
    is_branch_summary_entry,
    is_branch_summary_message,
    is_compaction_entry,
    is_compaction_summary_message,
    is_custom_message_entry,
    is_image_content,
    is_text_content,
    is_thinking_content,
    is_tool_call_content,
    is_tool_result_message,
)

__all__ = ["entry_detail", "entry_line", "theme_style"]


def theme_style(name: str) -> Style:
    """The ``Style`` the CLI theme gives ``name`` (a null style when it has none)."""
    return THEME.styles.get(name, Style.null())


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _kind_text(entry: StoredEntry) -> Text:
    kind = entry_kind(entry)
    tag, style = kind_tag(kind)
    return Text(tag, style=theme_style(style))


def entry_line(
    entry: StoredEntry, *, label: str | None, is_leaf: bool, on_path: bool, width: int = 60
) -> Text:
    """``<id> <kind> <preview>  #label  ◀ leaf``; the leaf's path bold, other branches dim."""
    text = Text()
    id_style = theme_style("ct.id") + Style(bold=on_path)
    text.append(escaped(str(entry.get("id"))), style=id_style)
    text.append(" ")
    text.append_text(_kind_text(entry))
    preview = entry_preview(entry, width)
    if preview:
        is_message = entry_message(entry) is not None
        text.append(" " + preview, style=Style.null() if is_message else theme_style("ct.meta"))
    if label:
        text.append(f"  #{escaped(label)}", style=theme_style("ct.label"))
    if is_leaf:
        text.append("  ◀ leaf", style=theme_style("ct.leaf"))
    if not on_path:
        text.stylize(Style(dim=True))
    return text


def entry_detail(entry: StoredEntry, *, label: str | None, is_leaf: bool, on_path: bool) -> Text:
    """Everything an entry holds: message text and tool calls, summaries, or its JSON."""
    text = Text()
    text.append(str(entry.get("id")), style=theme_style("ct.id") + Style(bold=True))
    text.append(" ")
    text.append_text(_kind_text(entry))
    if label:
        text.append(f"  #{label}", style=theme_style("ct.label"))
    if is_leaf:
        text.append("  ◀ leaf", style=theme_style("ct.leaf"))
    meta = [f"parent {entry.get('parentId') or '-'}", str(entry.get("timestamp", "-"))]
    if on_path and not is_leaf:
        meta.append("on the leaf's path")
    text.append("\n" + " · ".join(meta) + "\n\n", style=theme_style("ct.meta"))
    text.append_text(_body(entry))
    # Everything above may hold text from the session; a control character is shown as a
    # replacement mark (the same length, so the styles stay where they were).
    text.plain = CONTROL_CHARACTERS.sub("\ufffd", text.plain)
    return text


def _body(entry: StoredEntry) -> Text:
    message = entry_message(entry)
    if message is not None:
        return _message_body(message)
    if is_compaction_entry(entry):
        facts = f"first kept entry {entry.get('firstKeptEntryId')}"
        facts += f" · {entry.get('tokensBefore')} tokens before"
        return _summary_body(entry, facts)
    if is_branch_summary_entry(entry):
        where = entry.get("fromId")
        return _summary_body(entry, f"summary of a branch left behind, added on moving to {where}")
    if is_custom_message_entry(entry):
        body = Text(_content_text(entry.get("content")))
        body.append(f"\n\n({entry.get('customType')})", style=theme_style("ct.meta"))
        return body
    return Text(_json(entry))


def _summary_body(entry: Mapping[str, Any], facts: str) -> Text:
    body = Text(facts + "\n\n", style=theme_style("ct.meta"))
    body.append(str(entry.get("summary", "")))
    details = entry.get("details")
    if details is not None:
        body.append("\n\ndetails\n", style=theme_style("ct.heading"))
        body.append(_json(details), style=theme_style("ct.meta"))
    return body


def _message_body(message: dict[str, Any]) -> Text:
    if is_branch_summary_message(message) or is_compaction_summary_message(message):
        return Text(str(message.get("summary", "")))
    if is_bash_execution_message(message):
        body = Text(f"$ {message.get('command', '')}\n", style=theme_style("ct.heading"))
        body.append(str(message.get("output", "")))
        body.append(f"\n\nexit code {message.get('exitCode', '-')}", style=theme_style("ct.meta"))
        return body
    body = Text()
    if is_tool_result_message(message):
        body.append(f"{message.get('toolName', '')}\n", style=theme_style("ct.role.tool"))
        if message.get("isError"):
            body.append("error\n", style=theme_style("ct.error"))
    if is_assistant_message(message):
        named = (message.get("provider"), message.get("model"))
        model = "/".join(str(part) for part in named if part)
        stop = message.get("stopReason")
        facts = " · ".join(part for part in (model, f"stop: {stop}" if stop else "") if part)
        if facts:
            body.append(facts + "\n", style=theme_style("ct.meta"))
        if message.get("errorMessage"):
            body.append(f"{message['errorMessage']}\n", style=theme_style("ct.error"))
    if "content" not in message:
        body.append(_json(message))
        return body
    body.append_text(_content(message.get("content")))
    return body


def _content_text(content: object) -> str:
    return _content(content).plain


def _content(content: object) -> Text:
    if isinstance(content, str):
        return Text(content)
    if not isinstance(content, list):
        return Text(_json(content))
    parts: list[Text] = []
    for block in content:
        if not isinstance(block, dict):
            parts.append(Text(_json(block)))
            continue
        if is_text_content(block):
            parts.append(Text(str(block.get("text", ""))))
        elif is_thinking_content(block):
            parts.append(Text(f"(thinking) {block.get('thinking', '')}", style=Style(dim=True)))
        elif is_tool_call_content(block):
            call = Text(f"→ {block.get('name')}", style=theme_style("ct.role.tool"))
            call.append("\n" + _json(block.get("arguments", {})))
            parts.append(call)
        elif is_image_content(block):
            parts.append(Text(f"[image {block.get('mimeType', '')}]", style=theme_style("ct.meta")))
        else:
            kind = block.get("type")
            parts.append(Text(f"[{kind} block]\n{_json(block)}", style=theme_style("ct.meta")))
    return Text("\n\n").join(parts)
