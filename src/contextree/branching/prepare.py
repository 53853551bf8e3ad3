"""Turn abandoned entries into the messages a branch summary is made from (pi-behaviour.md §9.2).

Entries are taken newest first until the token budget is spent, so a long branch keeps its most
recent work. Earlier compactions and branch summaries come in as their summary messages, and
file operations are gathered from every entry, also from those that no longer fit the budget.

Deliberate difference (docs/compatibility.md): pi leaves tool results out, so a branch summary
cannot say whether the tests passed or what an error said. We keep them, each cut to
:data:`BRANCH_TOOL_RESULT_CHARS` characters as oh-my-pi does; ``tool_result_chars=0`` gives
pi's selection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contextree.compaction.file_ops import FileOps, extract_file_ops_from_message, seed_from_details
from contextree.context.build import compaction_summary_message, message_from_entry
from contextree.entries.types import (
    StoredEntry,
    StoredMessage,
    entry_message,
    is_branch_summary_entry,
    is_compaction_entry,
    is_custom_message_entry,
    is_message_entry,
    is_text_content,
    is_tool_call_content,
    is_tool_result_message,
)
from contextree.tokens.estimate import TokenEstimator, get_estimator

__all__ = ["BRANCH_TOOL_RESULT_CHARS", "BranchPreparation", "prepare_branch_entries"]

BRANCH_TOOL_RESULT_CHARS = 2000
"""Tool results reach a branch summary cut to this many characters (0: left out, as pi)."""

_SUMMARY_ENTRY_SHARE = 0.9
"""A compaction or branch summary that overflows the budget still goes in while the messages
taken so far use less than this share of it (it stands for a lot of history)."""


@dataclass(frozen=True, slots=True)
class BranchPreparation:
    """The messages to summarize (oldest first), the files touched, and their token estimate."""

    messages: list[StoredMessage]
    file_ops: FileOps = field(default_factory=FileOps)
    total_tokens: int = 0


def _is_from_extension(entry: Mapping[str, Any]) -> bool:
    # pi writes ``fromHook``, the fork ``fromExtension``; either one marks a hook's summary.
    return entry.get("fromHook") is True or entry.get("fromExtension") is True


def _message_for_summary(
    entry: StoredEntry, tool_result_chars: int, call_ids: set[str]
) -> StoredMessage | None:
    if is_compaction_entry(entry):
        return compaction_summary_message(entry)
    message = entry_message(entry)
    if message is not None:
        if is_tool_result_message(message):
            # A result whose call is not in the branch says nothing a reader can place.
            call_id = message.get("toolCallId")
            if tool_result_chars <= 0 or not isinstance(call_id, str) or call_id not in call_ids:
                return None
            return _cut_tool_result(message, tool_result_chars)
        return message
    summary_like = is_custom_message_entry(entry) or is_branch_summary_entry(entry)
    if summary_like:  # a bool: ``entry`` stays the stored dict message_from_entry takes
        return message_from_entry(entry, for_context=False)
    return None


def _cut_tool_result(message: Mapping[str, Any], limit: int) -> StoredMessage | None:
    """A copy of a tool result whose text blocks together hold at most ``limit`` characters
    (``None`` when it has no text)."""
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": _cut(content, limit)} if content else None
    if not isinstance(content, list):
        return None
    left = limit
    blocks: list[Any] = []
    for block in content:
        if not is_text_content(block):
            continue  # images say nothing a summary can use
        text = block.get("text")
        if not isinstance(text, str) or left <= 0:
            continue
        cut = _cut(text, left)
        left -= len(text)
        text = cut
        blocks.append({**block, "text": text})
    return {**message, "content": blocks} if blocks else None


def _cut(text: str, limit: int) -> str:
    return (
        text
        if len(text) <= limit
        else f"{text[:limit]}\n[... {len(text) - limit} more characters cut]"
    )


def _tool_call_ids(entries: Sequence[StoredEntry]) -> set[str]:
    ids: set[str] = set()
    for entry in entries:
        if not is_message_entry(entry):
            continue
        content = entry["message"].get("content")
        if isinstance(content, list):
            ids.update(
                call_id
                for block in content
                if is_tool_call_content(block) and isinstance(call_id := block.get("id"), str)
            )
    return ids


def prepare_branch_entries(
    entries: Sequence[StoredEntry],
    token_budget: int = 0,
    *,
    estimator: TokenEstimator | None = None,
    tool_result_chars: int = BRANCH_TOOL_RESULT_CHARS,
) -> BranchPreparation:
    """Select the messages of ``entries`` (oldest first) that fit ``token_budget``.

    Args:
        entries: the abandoned entries, oldest first (from
            :func:`~contextree.branching.collect_entries_for_branch_summary`).
        token_budget: tokens the messages may use; 0 or less means no limit.
        estimator: token estimator; default pi's chars/4.
        tool_result_chars: tool results are kept cut to this many characters; 0 leaves them
            out as pi does.

    File operations are seeded from the ``details`` of branch summaries that contextree or pi
    generated (not those a hook supplied), then taken from the tool calls of every assistant
    message, including the one that overflowed the budget.
    """
    estimate = (estimator or get_estimator("pi")).estimate
    ops = FileOps()
    for entry in entries:
        if is_branch_summary_entry(entry) and not _is_from_extension(entry):
            seed_from_details(ops, entry.get("details"))

    call_ids = _tool_call_ids(entries) if tool_result_chars > 0 else set()
    messages: list[StoredMessage] = []
    total = 0
    for entry in reversed(entries):
        message = _message_for_summary(entry, tool_result_chars, call_ids)
        if message is None:
            continue
        extract_file_ops_from_message(message, ops)
        tokens = estimate(message)
        if token_budget > 0 and total + tokens > token_budget:
            if (
                (is_compaction_entry(entry) or is_branch_summary_entry(entry))
                and total < token_budget * _SUMMARY_ENTRY_SHARE
            ):
                messages.append(message)
                total += tokens
            break
        messages.append(message)
        total += tokens
    messages.reverse()
    return BranchPreparation(messages, ops, total)
