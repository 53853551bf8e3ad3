"""The settings schema: every typed settings value with its default, and the one key table.

:data:`KEYS` maps each key of the settings files (pi's dotted camelCase,
``compaction.reserveTokens``) to the field it sets and the validator that parses it; the
environment names (``CONTEXTREE_COMPACTION_RESERVE_TOKENS``), ``contextree config`` and
docs/settings.md follow it.
:mod:`contextree.settings.load` only reads and merges the sources and hands the values here
(:func:`settings_from_values`). Defaults follow DESIGN.md "Defaults" and pi's settings.json.

:class:`RedactionSettings` is defined in :mod:`contextree.security.redact` and re-exported here:
the security layer sits below settings (``tests/test_architecture.py``) and builds its
``Redactor`` from it, so it cannot import it from this module.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from contextree.security.redact import RedactionSettings, compile_pattern
from contextree.settings.prices import DEFAULT_PRICES, ModelPrice, parse_prices

__all__ = [
    "KEYS",
    "BranchSummarySettings",
    "CompactionSettings",
    "Key",
    "LoadedSettings",
    "PruneSettings",
    "RedactionSettings",
    "RetrySettings",
    "Settings",
    "parse_bool",
    "settings_from_values",
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


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Every setting contextree reads, typed."""

    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    branch_summary: BranchSummarySettings = field(default_factory=BranchSummarySettings)
    prune: PruneSettings = field(default_factory=PruneSettings)
    retry: RetrySettings = field(default_factory=RetrySettings)
    model: str | None = None
    """Default model spec (``provider:model``); ``None`` means the offline summarizer."""
    estimator: str = "pi"
    context_windows: dict[str, int] = field(default_factory=dict)
    prompts_dir: str | None = None
    fsync: bool = False
    prices: dict[str, ModelPrice] = field(default_factory=lambda: dict(DEFAULT_PRICES))
    """Model prices for the cost report (``prices``, merged over the built-in table)."""
    cost_turns: int = 10
    """``cost.turns``: how many coming requests the dry runs' cost report looks at."""
    keep_thinking_turns: int = -1
    """``context.keepThinkingTurns``: requests leave out the thinking of replies older than the
    last N turns (the file keeps it); -1 keeps all."""
    allow_outside_cwd: bool = False
    redaction: RedactionSettings = field(default_factory=RedactionSettings)
    """What is blanked out of text sent to a summarizer (``redaction.*``)."""
    recall_index_dir: str | None = None
    """``recall.indexDir``: where the recall indexes of session files are cached (default
    ``$XDG_CACHE_HOME/contextree/recall``)."""
    recall_auto: bool = True
    """``recall.auto``: once the path has a compaction, a user message that names words the
    model no longer sees carries what recall finds for them (:mod:`contextree.recall.auto`)."""
    trust_project_settings: bool = False
    """``security.trustProjectSettings``, honoured from user files, the environment and the
    command line only: lets a project's files choose models and endpoints, turn redaction off
    and let tools outside the project."""


Validator = Callable[[Any], Any]
"""Parses a raw value (TOML, JSON or an environment string); ``ValueError`` when bad."""


def parse_bool(value: Any) -> bool:
    """``true``/``false`` as a bool or as text (``yes``, ``on``, ``1`` ...)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "1", "yes", "on"):
        return True
    if isinstance(value, str) and value.lower() in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"expected true or false, found {value!r}")


def _int(minimum: int | None = None) -> Validator:
    def check(value: Any) -> int:
        if isinstance(value, bool):
            raise ValueError(f"expected an integer, found {value!r}")
        try:
            number = int(value) if not isinstance(value, float) or value.is_integer() else None
        except (TypeError, ValueError):
            number = None
        if number is None:
            raise ValueError(f"expected an integer, found {value!r}")
        if minimum is not None and number < minimum and number != -1:
            raise ValueError(
                f"expected an integer >= {minimum} (or -1 for the default), found {number}"
            )
        return number

    return check


def _number(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"expected a number, found {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected a number, found {value!r}") from None


def _str_or_none(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected a string, found {value!r}")
    return value


def _str_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"expected a list of strings, found {value!r}")
    return tuple(value)


def _windows(value: Any) -> dict[str, int]:
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, dict):
        raise ValueError(f"expected a table of model -> tokens, found {value!r}")
    return {str(k): _int(1)(v) for k, v in value.items()}


def _patterns(value: Any) -> tuple[str, ...]:
    # A string is one pattern, or a JSON list: regexes hold commas, so no comma splitting.
    if isinstance(value, str):
        value = json.loads(value) if value.lstrip().startswith("[") else [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"expected a list of regular expressions, found {value!r}")
    for pattern in value:
        compile_pattern(pattern)
    return tuple(value)


def _estimator(value: Any) -> str:
    if value not in ("pi", "utf8"):
        raise ValueError(f'expected "pi" or "utf8", found {value!r}')
    return str(value)


class Key(NamedTuple):
    """Where a settings key lands and how its value is parsed."""

    section: str
    """The :class:`Settings` attribute of the key's section (``compaction``), or ``""`` for a
    field of :class:`Settings` itself."""
    name: str
    """The field set."""
    validate: Validator


KEYS: dict[str, Key] = {
    "compaction.enabled": Key("compaction", "enabled", parse_bool),
    "compaction.reserveTokens": Key("compaction", "reserve_tokens", _int(0)),
    "compaction.keepRecentTokens": Key("compaction", "keep_recent_tokens", _int(0)),
    "compaction.thresholdPercent": Key("compaction", "threshold_percent", _number),
    "compaction.thresholdTokens": Key("compaction", "threshold_tokens", _int(0)),
    "compaction.autoContinue": Key("compaction", "auto_continue", parse_bool),
    "compaction.remoteEndpoint": Key("compaction", "remote_endpoint", _str_or_none),
    "compaction.adjustKeepRecentByUsage": Key(
        "compaction", "adjust_keep_recent_by_usage", parse_bool
    ),
    "compaction.summaryTokens": Key("compaction", "summary_tokens", _int(1)),
    "compaction.fallbackToOffline": Key("compaction", "fallback_to_offline", parse_bool),
    "compaction.recordFacts": Key("compaction", "record_facts", parse_bool),
    "branchSummary.enabled": Key("branch_summary", "enabled", parse_bool),
    "branchSummary.reserveTokens": Key("branch_summary", "reserve_tokens", _int(0)),
    "pruning.enabled": Key("prune", "enabled", parse_bool),
    "pruning.protectTokens": Key("prune", "protect_tokens", _int(0)),
    "pruning.minimumSavings": Key("prune", "minimum_savings", _int(0)),
    "pruning.protectedTools": Key("prune", "protected_tools", _str_list),
    "pruning.supersededReads": Key("prune", "superseded_reads", parse_bool),
    "pruning.cacheAware": Key("prune", "cache_aware", parse_bool),
    "pruning.cacheGuardTokens": Key("prune", "cache_guard_tokens", _int(0)),
    "pruning.cacheTtlSeconds": Key("prune", "cache_ttl_seconds", _int(1)),
    "retry.enabled": Key("retry", "enabled", parse_bool),
    "retry.maxRetries": Key("retry", "max_retries", _int(0)),
    "retry.baseDelayMs": Key("retry", "base_delay_ms", _int(0)),
    "retry.maxDelayMs": Key("retry", "max_delay_ms", _int(0)),
    "retry.fallbackModels": Key("retry", "fallback_models", _str_list),
    "model": Key("", "model", _str_or_none),
    "tokens.estimator": Key("", "estimator", _estimator),
    "contextWindows": Key("", "context_windows", _windows),
    "prompts.dir": Key("", "prompts_dir", _str_or_none),
    "storage.fsync": Key("", "fsync", parse_bool),
    "context.keepThinkingTurns": Key("", "keep_thinking_turns", _int(1)),
    "prices": Key("", "prices", parse_prices),
    "cost.turns": Key("", "cost_turns", _int(1)),
    "tools.allowOutsideCwd": Key("", "allow_outside_cwd", parse_bool),
    "redaction.enabled": Key("redaction", "enabled", parse_bool),
    "redaction.patterns": Key("redaction", "patterns", _patterns),
    "security.trustProjectSettings": Key("", "trust_project_settings", parse_bool),
    "recall.indexDir": Key("", "recall_index_dir", _str_or_none),
    "recall.auto": Key("", "recall_auto", parse_bool),
}
"""Every settings key we read, with where it lands and how it is validated."""


_SECTIONS: Final[dict[str, Callable[..., Any]]] = {
    "compaction": CompactionSettings,
    "branch_summary": BranchSummarySettings,
    "prune": PruneSettings,
    "retry": RetrySettings,
    "redaction": RedactionSettings,
}


def settings_from_values(values: Mapping[str, Any]) -> Settings:
    """The :class:`Settings` with validated ``values`` (by key of :data:`KEYS`) over the
    defaults."""
    sections: dict[str, dict[str, Any]] = {section: {} for section in _SECTIONS}
    top: dict[str, Any] = {}
    for key, value in values.items():
        section, name, _ = KEYS[key]
        (sections[section] if section else top)[name] = value
    parts = {section: kind(**sections[section]) for section, kind in _SECTIONS.items()}
    return Settings(**parts, **top)


@dataclass(frozen=True, slots=True)
class LoadedSettings:
    """Effective settings, where each value came from, and warnings about the sources."""

    settings: Settings
    origins: dict[str, str]
    warnings: list[str]

    def value(self, key: str) -> Any:
        """The effective value of ``key`` (of :data:`KEYS`)."""
        section, name, _ = KEYS[key]
        holder = getattr(self.settings, section) if section else self.settings
        return getattr(holder, name)
