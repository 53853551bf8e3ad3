"""What a compaction takes out of the model's view, and which user messages its summary lost.

A compaction folds the messages from the start of the current context up to the first kept
entry into its summary. The report names them: how many messages, which tool outputs, which
user messages - and, once the summary is written, which of those user messages it does not
carry. A user message counts as carried when at least half of its distinct content words
(four characters or more, or holding a digit, ``_``, ``.`` or ``/``: identifiers, numbers,
paths) appear in the summary; a message with no such word, when its whole text does. That is a
heuristic for a reader (a paraphrase may carry a request in other words): ``contextree recall``
finds any of them again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from contextree.compaction.prepare import CompactionPreparation
from contextree.context.build import message_from_entry
from contextree.entries.types import (
    StoredEntry,
    is_bash_execution_message,
    is_text_content,
    is_tool_result_message,
    is_user_message,
)

__all__ = ["DroppedFromView", "dropped_from_view", "dropped_json", "summary_carries"]

_WORD: Final = re.compile(r"[\w./-]+")
_CARRIED_SHARE: Final = 0.5


@dataclass(frozen=True, slots=True)
class DroppedFromView:
    """The messages a compaction folds out of the context (entry ids, oldest first)."""

    folded: list[str]
    """Every entry whose message leaves the context."""
    tool_outputs: list[str]
    """Tool results and bash executions among them: outputs the model no longer sees."""
    user_messages: list[str]
    """User messages among them."""
    user_not_in_summary: list[str] | None = None
    """User messages the summary does not carry; ``None`` before there is a summary."""


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(block.get("text", "")) for block in content if is_text_content(block)
        )
    return ""


def _content_words(text: str) -> set[str]:
    words = {w.strip("./-").lower() for w in _WORD.findall(text)}
    return {w for w in words if len(w) >= 4 or any(ch.isdigit() or ch in "_./" for ch in w)} - {""}


def summary_carries(summary: str, message_text: str) -> bool:
    """Whether ``summary`` carries a user message (see the module docstring)."""
    return _Summary(summary).carries(message_text)


class _Summary:
    """A summary's words, found once for all the user messages checked against it (once per
    message made this 2.5 s of a 100k-entry compaction)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._words: set[str] | None = None
        self._folded: str | None = None

    def carries(self, message_text: str) -> bool:
        wanted = _content_words(message_text)
        if not wanted:
            folded = " ".join(message_text.split()).lower()
            if self._folded is None:
                self._folded = " ".join(self._text.split()).lower()
            return not folded or folded in self._folded
        if self._words is None:
            self._words = _content_words(self._text)
        return len(wanted & self._words) >= _CARRIED_SHARE * len(wanted)


def dropped_from_view(
    preparation: CompactionPreparation, path: Sequence[StoredEntry], summary: str | None = None
) -> DroppedFromView:
    """What compacting ``path`` as ``preparation`` plans folds away; with the ``summary``,
    also the user messages it does not carry."""
    folded: list[str] = []
    tools: list[str] = []
    users: list[str] = []
    missing: list[str] = []
    carried = _Summary(summary) if summary is not None else None
    for entry in path[preparation.boundary_start : preparation.first_kept_entry_index]:
        message = message_from_entry(entry, for_context=False)
        entry_id = entry.get("id")
        if message is None or not isinstance(entry_id, str):
            continue
        folded.append(entry_id)
        if is_tool_result_message(message) or is_bash_execution_message(message):
            tools.append(entry_id)
        elif is_user_message(message):
            users.append(entry_id)
            if carried is not None and not carried.carries(_text(message.get("content"))):
                missing.append(entry_id)
    return DroppedFromView(folded, tools, users, missing if summary is not None else None)


def dropped_json(dropped: DroppedFromView) -> dict[str, Any]:
    """The report as ``compact``'s JSON shows it (camelCase)."""
    payload: dict[str, Any] = {
        "messagesFolded": len(dropped.folded),
        "toolOutputsFolded": len(dropped.tool_outputs),
        "userMessagesFolded": len(dropped.user_messages),
        "foldedEntryIds": dropped.folded,
        "toolOutputEntryIds": dropped.tool_outputs,
        "userMessageEntryIds": dropped.user_messages,
    }
    if dropped.user_not_in_summary is not None:
        payload["userMessagesNotInSummary"] = len(dropped.user_not_in_summary)
        payload["userMessagesNotInSummaryIds"] = dropped.user_not_in_summary
    return payload
