"""Tool-output pruning (pi-behaviour.md §6), lossless per DESIGN decision 6.

Old tool results outside a protected window of recent output are replaced, for the model, by a
short placeholder. Unlike the fork, the original content is kept in the entry under
``prunedContent``: pi reads the placeholder in ``content`` and ignores the extra key, and
nothing the tools produced is lost.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from contextree.compaction.cache_guard import CacheState, cache_state
from contextree.compaction.prepare import context_region
from contextree.compaction.superseded import FILE_TOOLS, Superseded, stale_reads
from contextree.entries.ids import now_ms
from contextree.entries.types import (
    StoredEntry,
    StoredMessage,
    entry_message,
    is_tool_result_message,
)
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
    "finish_decision",
    "is_pruned",
    "nothing_pruned",
    "placeholder_tokens",
    "prune_placeholder",
    "prune_session",
    "prune_tool_outputs",
    "superseded_candidate",
    "superseded_placeholder",
    "tokens_after",
    "tool_name",
    "worth_pruning",
]


@dataclass(frozen=True, slots=True)
class PruneCandidate:
    """A tool result that would be pruned, with its estimated tokens and why."""

    entry: StoredEntry
    tokens: int
    reason: str = "old"
    """``old`` (outside the protect window) or ``superseded`` (a later entry replaces it)."""
    superseded_by: str | None = None
    """For ``superseded``: the id of the entry that supersedes it."""
    why: str = ""
    """For ``superseded``: ``read again``, ``written`` or ``edited``."""

    @property
    def placeholder(self) -> str:
        """The text the model sees instead of the output."""
        if self.superseded_by is None:
            return prune_placeholder(self.tokens)
        return superseded_placeholder(self.tokens, self.superseded_by, self.why)

    @property
    def saving(self) -> int:
        """Estimated tokens saved: the output less its placeholder."""
        return self.tokens - math.ceil(len(self.placeholder) / 4)

    def to_json(self) -> dict[str, Any]:
        message = entry_message(self.entry) or {}
        return {
            "entryId": self.entry.get("id"),
            "toolName": tool_name(message),
            "tokens": self.tokens,
            "reason": self.reason,
            "supersededBy": self.superseded_by,
        }


@dataclass(frozen=True, slots=True)
class PruneDecision:
    """What pruning would do; empty ``candidates`` when it is not worth it."""

    candidates: list[PruneCandidate] = field(default_factory=list)
    tokens_saved: int = 0
    held_for_cache: int = 0
    """Outputs that would have been pruned but were kept for the warm prompt cache."""
    cache: CacheState = field(default_factory=lambda: CacheState(False))
    reason: str = ""
    """Why nothing is pruned (empty when something is)."""

    @property
    def pruned_count(self) -> int:
        return len(self.candidates)

    def to_json(self) -> dict[str, Any]:
        """The decision as ``prune --format json`` shows it (docs/cli-json.md): each output
        with its ``reason``, or why none."""
        return {
            "pruned": self.pruned_count,
            "tokensSaved": self.tokens_saved,
            "entries": [c.to_json() for c in self.candidates],
            "reason": self.reason or None,
            "heldForCache": self.held_for_cache,
            "cacheWarm": self.cache.warm,
        }


def prune_placeholder(tokens: int) -> str:
    """The text a pruned tool result shows the model."""
    return f"[Output truncated - {tokens} tokens]"


def superseded_placeholder(tokens: int, by: str, why: str) -> str:
    """The text a superseded read result shows the model: it names the newer entry."""
    return f"[Output superseded - file {why} in entry {by}; {tokens} tokens]"


def placeholder_tokens(tokens: int) -> int:
    """The estimated tokens of the placeholder for a ``tokens``-token result (chars / 4)."""
    return math.ceil(len(prune_placeholder(tokens)) / 4)


def worth_pruning(tokens: int) -> bool:
    """Whether a ``tokens``-token result shrinks clearly: its placeholder must be under half
    its size (our deviation from pi, which also replaces "(no output)" by a longer placeholder).
    With the 8-token placeholder, results of 16 tokens or fewer are kept."""
    return 2 * placeholder_tokens(tokens) < tokens


def tool_name(message: Mapping[str, object]) -> str | None:
    """A tool result's ``toolName``; ``None`` when it has none or (in a damaged file) holds
    another JSON type: such a name protects nothing, as in the fork, whose
    ``protectedTools.includes(toolName)`` is false for it (``contextree check`` warns)."""
    name = message.get("toolName")
    return name if isinstance(name, str) else None


def is_pruned(message: Mapping[str, object]) -> bool:
    """Pruned before: pi's mark, or our saved original (a line may have lost ``prunedAt``)."""
    return message.get("prunedAt") is not None or "prunedContent" in message


def superseded_candidate(stale: Superseded, tokens: int) -> PruneCandidate | None:
    """The candidate for a stale read, or ``None`` when its placeholder would not be small."""
    candidate = PruneCandidate(stale.entry, tokens, "superseded", stale.by, stale.why)
    return candidate if 2 * (tokens - candidate.saving) < tokens else None


def finish_decision(
    region: Sequence[StoredEntry],
    superseded: list[tuple[int, PruneCandidate]],
    old: list[tuple[int, PruneCandidate]],
    settings: PruneSettings,
    cache: CacheState,
    estimate: Callable[[StoredMessage], int],
) -> PruneDecision:
    """Stale reads first, then old outputs (each newest first, with their region positions);
    the cache guard, then the minimum savings."""
    chosen = {position for position, _ in superseded}
    picked = [*superseded, *((p, c) for p, c in old if p not in chosen)]
    held = 0
    if cache.warm and picked:
        after = tokens_after(region, min(p for p, _ in picked), estimate)
        kept = [(p, c) for p, c in picked if after[p] <= settings.cache_guard_tokens]
        held, picked = len(picked) - len(kept), kept
    candidates = [c for _, c in picked]
    saved = sum(c.saving for c in candidates)
    if not candidates or saved < settings.minimum_savings:
        return nothing_pruned(saved if candidates else None, settings, held=held, cache=cache)
    return PruneDecision(candidates, saved, held, cache)


def nothing_pruned(
    saved: int | None, settings: PruneSettings, *, held: int = 0, cache: CacheState | None = None
) -> PruneDecision:
    """The empty decision, saying why: no candidate (``saved`` is ``None``; ``held`` of them
    kept for the warm prompt cache), or savings below ``minimum_savings``."""
    if saved is None and held:
        reason = (
            f"{held:,} tool result{'s' if held != 1 else ''} would be pruned, but the prompt "
            f"cache is warm and more than {settings.cache_guard_tokens:,} tokens follow "
            f"{'them' if held != 1 else 'it'} (pruning.cacheGuardTokens)"
        )
    elif saved is None:
        reason = (
            "no tool result outside the protected window (the newest "
            f"{settings.protect_tokens:,} tokens of tool output) is large enough to shrink"
        )
    else:
        reason = (
            f"pruning would save ~{saved:,} tokens, below the minimum of "
            f"{settings.minimum_savings:,} (--minimum-savings)"
        )
        if held:
            reason += f"; {held:,} more kept for the warm prompt cache"
    return PruneDecision(held_for_cache=held, cache=cache or CacheState(False), reason=reason)


def tokens_after(
    region: Sequence[StoredEntry], first: int, estimate: Callable[[StoredMessage], int]
) -> dict[int, int]:
    """Estimated tokens of the messages after each position from ``first`` to the end."""
    after: dict[int, int] = {}
    total = 0
    for position in range(len(region) - 1, first - 1, -1):
        after[position] = total
        message = entry_message(region[position])
        if message is not None:
            total += estimate(message)
    return after


def decide_prune(
    path_entries: Sequence[StoredEntry],
    settings: PruneSettings | None = None,
    *,
    estimator: TokenEstimator | None = None,
    at_ms: int | None = None,
) -> PruneDecision:
    """Choose tool results to prune: stale reads, then old ones outside the protected window,
    each held back while the prompt cache is warm unless little follows it. ``at_ms`` is the
    time the cache is judged at (default: now)."""
    return _decide(
        path_entries,
        settings or PruneSettings(),
        estimator or get_estimator("pi"),
        now_ms() if at_ms is None else at_ms,
    )


def _decide(
    path_entries: Sequence[StoredEntry],
    settings: PruneSettings,
    estimator: TokenEstimator,
    at_ms: int,
) -> PruneDecision:
    estimate = estimator.estimate
    protected = set(settings.protected_tools)
    accumulated = 0
    # Unlike the fork, only the current context is walked: results before the latest
    # compaction's kept region are no longer sent, so pruning them saves nothing, and counting
    # them would make the threshold check subtract savings that never happened.
    _, start = context_region(path_entries)
    # One slice decodes the region at once (a PathView's entries are decoded already in a
    # session that is in use): cheaper than reading the entries one by one.
    region = path_entries[start:]
    old: list[tuple[int, PruneCandidate]] = []
    files: dict[int, tuple[int, bool]] = {}  # file tool results: position -> (tokens, pruned)
    for position in range(len(region) - 1, -1, -1):
        entry = region[position]
        message = entry_message(entry)
        if not is_tool_result_message(message):
            continue
        tokens = estimate(message)
        accumulated_before = accumulated
        accumulated += tokens  # every result fills the window, pruned or not
        tool = tool_name(message)
        if tool in FILE_TOOLS:
            files[position] = (tokens, is_pruned(message))
        if is_pruned(message):
            continue
        # The window is checked before adding: the result that crosses it is still protected.
        if accumulated_before < settings.protect_tokens or tool in protected:
            continue
        if worth_pruning(tokens):
            old.append((position, PruneCandidate(entry, tokens)))
    stale = stale_reads(region, sorted(files)) if settings.superseded_reads else {}
    superseded = [
        (position, found)
        for position in sorted(stale, reverse=True)
        if not files[position][1]
        and (found := superseded_candidate(stale[position], files[position][0])) is not None
    ]
    old = [(position, candidate) for position, candidate in old if position not in stale]
    cache = cache_state(region, settings, at_ms)
    return finish_decision(region, superseded, old, settings, cache, estimate)


def apply_prune(decision: PruneDecision, *, now: Callable[[], int] = now_ms) -> list[StoredEntry]:
    """New versions of the chosen entries: placeholder content, ``prunedAt``, original kept."""
    stamp = now()
    updated: list[StoredEntry] = []
    for candidate in decision.candidates:
        entry = copy.deepcopy(candidate.entry)
        message = entry["message"]
        # An original saved before is never replaced by what is now in ``content``.
        message.setdefault("prunedContent", message.get("content"))
        message["content"] = [{"type": "text", "text": candidate.placeholder}]
        message["prunedAt"] = stamp
        updated.append(entry)
    return updated


def prune_tool_outputs(
    path_entries: Sequence[StoredEntry],
    settings: PruneSettings | None = None,
    *,
    estimator: TokenEstimator | None = None,
    now: Callable[[], int] = now_ms,
) -> tuple[PruneDecision, list[StoredEntry]]:
    """Decide and apply: the decision and the replacement entries (empty when none)."""
    stamp = now()  # one time for the cache and the stamp
    settings = settings or PruneSettings()
    decision = _decide(path_entries, settings, estimator or get_estimator("pi"), stamp)
    return decision, apply_prune(decision, now=lambda: stamp) if decision.candidates else []


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

    On a session other workers share, a tool result another worker pruned (or changed)
    between the decision and the rewrite is left as they wrote it, and the decision returned
    lists only what this call pruned; what they appended meanwhile is kept.
    """
    settings = settings or PruneSettings()
    path = tree.get_branch_view()
    stamp = now()  # one time for the cache and the stamp
    if decider is not None:
        decision = decider.decide(path, settings, at_ms=stamp)
    else:
        decision = _decide(path, settings, estimator or get_estimator("pi"), stamp)
    if not decision.candidates or dry_run:
        return decision
    done = tree.rewrite_entries(
        apply_prune(decision, now=lambda: stamp),
        planned_from=[c.entry for c in decision.candidates],
    )
    return _only(decision, set(done))


def _only(decision: PruneDecision, done: set[str]) -> PruneDecision:
    """``decision`` narrowed to the entries rewritten (others were changed elsewhere)."""
    kept = [c for c in decision.candidates if c.entry.get("id") in done]
    if len(kept) == len(decision.candidates):
        return decision
    if not kept:
        return PruneDecision(
            held_for_cache=decision.held_for_cache,
            cache=decision.cache,
            reason="another worker pruned or changed these tool results meanwhile",
        )
    saved = sum(c.saving for c in kept)
    return PruneDecision(kept, saved, decision.held_for_cache, decision.cache)
