"""Turn abandoned entries into the messages a branch summary is made from (pi-behaviour.md §9.2).

Entries are taken newest first until the token budget is spent, so a long branch keeps its most
recent work. Tool results are left out (the assistant's tool calls say what was done), earlier
compactions and branch summaries come in as their summary messages, and file operations are
gathered from every entry, also from those that no longer fit the budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from contextree.compaction.file_ops import FileOps, extract_file_ops_from_message, seed_from_details
from contextree.context.build import compaction_summary_message, message_from_entry
from contextree.entries.types import AgentMessage, Entry
from contextree.tokens.estimate import TokenEstimator, get_estimator

__all__ = ["BranchPreparation", "prepare_branch_entries"]

_SUMMARY_ENTRY_SHARE = 0.9
"""A compaction or branch summary that overflows the budget still goes in while the messages
taken so far use less than this share of it (it stands for a lot of history)."""


@dataclass(frozen=True, slots=True)
class BranchPreparation:
    """The messages to summarize (oldest first), the files touched, and their token estimate."""

    messages: list[AgentMessage]
    file_ops: FileOps = field(default_factory=FileOps)
    total_tokens: int = 0


def _is_from_extension(entry: Entry) -> bool:
    # pi writes ``fromHook``, the fork ``fromExtension``; either one marks a hook's summary.
    return entry.get("fromHook") is True or entry.get("fromExtension") is True


def _message_for_summary(entry: Entry) -> AgentMessage | None:
    kind = entry.get("type")
    if kind == "compaction":
        return compaction_summary_message(entry)
    if kind == "message":
        message = entry.get("message")
        # The assistant's tool call already says what a tool result was about.
        if not isinstance(message, dict) or message.get("role") == "toolResult":
            return None
        return message
    if kind in ("custom_message", "branch_summary"):
        return message_from_entry(entry, for_context=False)
    return None


def prepare_branch_entries(
    entries: Sequence[Entry],
    token_budget: int = 0,
    *,
    estimator: TokenEstimator | None = None,
) -> BranchPreparation:
    """Select the messages of ``entries`` (oldest first) that fit ``token_budget``.

    Args:
        entries: the abandoned entries, oldest first (from
            :func:`~contextree.branching.collect_entries_for_branch_summary`).
        token_budget: tokens the messages may use; 0 or less means no limit.
        estimator: token estimator; default pi's chars/4.

    File operations are seeded from the ``details`` of branch summaries that contextree or pi
    generated (not those a hook supplied), then taken from the tool calls of every assistant
    message, including the one that overflowed the budget.
    """
    estimate = (estimator or get_estimator("pi")).estimate
    ops = FileOps()
    for entry in entries:
        if entry.get("type") == "branch_summary" and not _is_from_extension(entry):
            seed_from_details(ops, entry.get("details"))

    messages: list[AgentMessage] = []
    total = 0
    for entry in reversed(entries):
        message = _message_for_summary(entry)
        if message is None:
            continue
        extract_file_ops_from_message(message, ops)
        tokens = estimate(message)
        if token_budget > 0 and total + tokens > token_budget:
            if (
                entry.get("type") in ("compaction", "branch_summary")
                and total < token_budget * _SUMMARY_ENTRY_SHARE
            ):
                messages.append(message)
                total += tokens
            break
        messages.append(message)
        total += tokens
    messages.reverse()
    return BranchPreparation(messages, ops, total)
