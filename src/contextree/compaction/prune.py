"""Tool-output pruning (pi-behaviour.md §6), lossless per DESIGN decision 6.

Old tool results outside a protected window of recent output are replaced, for the model, by a
short placeholder. Unlike the fork, the original content is kept in the entry under
``prunedContent``: pi reads the placeholder in ``content`` and ignores the extra key, and
nothing the tools produced is lost.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from contextree.compaction.prepare import context_region
from contextree.entries.ids import now_ms
from contextree.entries.types import Entry, entry_message, is_tool_result_message
from contextree.settings.schema import PruneSettings
from contextree.tokens.estimate import TokenEstimator, get_estimator

if TYPE_CHECKING:
    from contextree.compaction.prune_decider import PruneDecider
    from contextree.session.tree import SessionTree

__all__ = [
    "PruneCandidate",
    "PruneDecision",
    "apply_prune",
    "decide_prune",
    "nothing_pruned",
    "placeholder_tokens",
    "prune_placeholder",
    "prune_session",
    "prune_tool_outputs",
    "worth_pruning",
]


@dataclass(frozen=True, slots=True)
class PruneCandidate:
    """A tool result that would be pruned, with its estimated tokens."""

    entry: Entry
    tokens: int


@dataclass(frozen=True, slots=True)
class PruneDecision:
    """What pruning would do; empty ``candidates`` when it is not worth it."""

    candidates: list[PruneCandidate] = field(default_factory=list)
    tokens_saved: int = 0
    reason: str = ""
    """Why nothing is pruned (empty when something is)."""

    @property
    def pruned_count(self) -> int:
        return len(self.candidates)


def prune_placeholder(tokens: int) -> str:
    """The text a pruned tool result shows the model."""
    return f"[Output truncated - {tokens} tokens]"


def placeholder_tokens(tokens: int) -> int:
    """The estimated tokens of the placeholder for a ``tokens``-token result (chars / 4)."""
    return math.ceil(len(prune_placeholder(tokens)) / 4)


def worth_pruning(tokens: int) -> bool:
    """Whether a ``tokens``-token result shrinks clearly: its placeholder must be under half
    its size (our deviation from pi, which also replaces "(no output)" by a longer placeholder).
    With the 8-token placeholder, results of 16 tokens or fewer are kept."""
    return 2 * placeholder_tokens(tokens) < tokens


def decide_prune(
    path_entries: Sequence[Entry],
    settings: PruneSettings | None = None,
    *,
    estimator: TokenEstimator | None = None,
) -> PruneDecision:
    """Choose tool results to prune, newest to oldest, outside the protected window."""
    settings = settings or PruneSettings()
    estimate = (estimator or get_estimator("pi")).estimate
    protected = set(settings.protected_tools)
    accumulated = 0
    candidates: list[PruneCandidate] = []
    # Unlike the fork, only the current context is walked: results before the latest
    # compaction's kept region are no longer sent, so pruning them saves nothing, and counting
    # them would make the threshold check subtract savings that never happened.
    _, start = context_region(path_entries)
    # One slice decodes the region at once (a PathView's entries are decoded already in a
    # session that is in use): cheaper than reading the entries one by one.
    for entry in reversed(path_entries[start:]):
        message = entry_message(entry)
        if not is_tool_result_message(message):
            continue
        tokens = estimate(message)
        # Already pruned: pi's mark, or our saved original (a line may have lost prunedAt).
        if message.get("prunedAt") is not None or "prunedContent" in message:
            accumulated += tokens
            continue
        # The window is checked before adding: the result that crosses it is still protected.
        if accumulated < settings.protect_tokens or message.get("toolName") in protected:
            accumulated += tokens
            continue
        if not worth_pruning(tokens):
            accumulated += tokens  # still sent as it is, so it fills the window like any other
            continue
        candidates.append(PruneCandidate(entry, tokens))
        accumulated += tokens
    saved = sum(c.tokens - placeholder_tokens(c.tokens) for c in candidates)
    if not candidates or saved < settings.minimum_savings:
        return nothing_pruned(saved if candidates else None, settings)
    return PruneDecision(candidates, saved)


def nothing_pruned(saved: int | None, settings: PruneSettings) -> PruneDecision:
    """The empty decision, saying why: no candidate at all (``saved`` is ``None``), or
    savings below ``minimum_savings``."""
    if saved is None:
        reason = (
            "no tool result outside the protected window (the newest "
            f"{settings.protect_tokens:,} tokens of tool output) is large enough to shrink"
        )
    else:
        reason = (
            f"pruning would save ~{saved:,} tokens, below the minimum of "
            f"{settings.minimum_savings:,} (--minimum-savings)"
        )
    return PruneDecision(reason=reason)


def apply_prune(decision: PruneDecision, *, now: Callable[[], int] = now_ms) -> list[Entry]:
    """New versions of the chosen entries: placeholder content, ``prunedAt``, original kept."""
    stamp = now()
    updated: list[Entry] = []
    for candidate in decision.candidates:
        entry = copy.deepcopy(candidate.entry)
        message = entry["message"]
        # An original saved before is never replaced by what is now in ``content``.
        message.setdefault("prunedContent", message.get("content"))
        message["content"] = [{"type": "text", "text": prune_placeholder(candidate.tokens)}]
        message["prunedAt"] = stamp
        updated.append(entry)
    return updated


def prune_tool_outputs(
    path_entries: Sequence[Entry],
    settings: PruneSettings | None = None,
    *,
    estimator: TokenEstimator | None = None,
    now: Callable[[], int] = now_ms,
) -> tuple[PruneDecision, list[Entry]]:
    """Decide and apply: the decision and the replacement entries (empty when none)."""
    decision = decide_prune(path_entries, settings, estimator=estimator)
    return decision, apply_prune(decision, now=now) if decision.candidates else []


def prune_session(
    tree: SessionTree,
    settings: PruneSettings | None = None,
    *,
    estimator: TokenEstimator | None = None,
    now: Callable[[], int] = now_ms,
    dry_run: bool = False,
    decider: PruneDecider | None = None,
) -> PruneDecision:
    """Prune the current branch of a ``SessionTree`` with one atomic rewrite of its file.

    A host that prunes before every model call passes the same ``decider`` each time (it
    then estimates only what is new; ``estimator`` is the decider's own).
    """
    path = tree.get_branch_view()
    if decider is not None:
        decision = decider.decide(path, settings)
    else:
        decision = decide_prune(path, settings, estimator=estimator)
    if decision.candidates and not dry_run:
        tree.rewrite_entries(apply_prune(decision, now=now))
    return decision
