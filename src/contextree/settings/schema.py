"""Typed settings values and their defaults (DESIGN.md "Defaults"; pi settings.json keys)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "BranchSummarySettings",
    "CompactionSettings",
    "PruneSettings",
    "RetrySettings",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionSettings:
    """``compaction.*``: when to compact and how much recent history to keep verbatim."""

    enabled: bool = True
    reserve_tokens: int = 16384
    """Room kept free for the summary and the next turn; also sizes the summary call."""
    keep_recent_tokens: int = 20000
    """Estimated tokens of recent messages kept verbatim after a compaction."""
    threshold_percent: float = -1
    """Compact above this percentage of the window; <= 0 means the reserve rule."""
    threshold_tokens: int = -1
    """Compact above this many tokens; > 0 takes priority over the percentage."""
    auto_continue: bool = True
    remote_endpoint: str | None = None
    adjust_keep_recent_by_usage: bool = True
    """Shrink keep_recent_tokens by the measured-usage / estimate ratio (pi-behaviour §4.4)."""
    summary_tokens: int = -1
    """The summary's token budget: the ``max_tokens`` sent to models and the offline
    summarizer's ceiling. -1 means pi's ``0.8 x reserve_tokens``, capped (see
    :func:`contextree.compaction.budget.summary_token_budget`)."""
    fallback_to_offline: bool = True
    """When every model fails, summarize with the offline summarizer instead of failing."""
    record_facts: bool = True
    """Append the offline summarizer's recorded facts (verbatim constraints, open errors,
    TODOs, files) to a model's summary, so no fact depends on the model's recall."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PruneSettings:
    """Tool-output pruning (pi-behaviour §6)."""

    enabled: bool = True
    protect_tokens: int = 40000
    minimum_savings: int = 20000
    protected_tools: tuple[str, ...] = ("skill", "read")
    superseded_reads: bool = True
    """Prune a read result first, whatever its age or tool, once the file was read again in
    full, written or edited later in the context (the placeholder names that entry)."""
    cache_aware: bool = True
    """With a provider prompt cache that has not expired, prune an output only when at most
    ``cache_guard_tokens`` follow it (the provider writes what follows to its cache again)."""
    cache_guard_tokens: int = 8000
    cache_ttl_seconds: int = 300
    """The provider's cache lifetime: 300 (5 minutes, the default of Anthropic and OpenAI) or
    3600 (Anthropic's 1-hour cache, OpenAI's extended retention)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BranchSummarySettings:
    """``branchSummary.*``."""

    enabled: bool = False
    reserve_tokens: int = 16384


@dataclass(frozen=True, slots=True, kw_only=True)
class RetrySettings:
    """``retry.*``: retries of failed summarization calls."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_delay_ms: int = 30000
    fallback_models: tuple[str, ...] = field(default_factory=tuple)
