"""Usage arithmetic: context size from the provider's measured usage (pi-behaviour.md §4.2).

The provider's reported usage of the last assistant reply is the best measure of the context;
only the messages after it are estimated. Replies that were aborted or failed carry no usable
usage and are skipped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from contextree.entries.types import (
    StoredEntry,
    StoredMessage,
    Usage,
    is_assistant_message,
    is_compaction_summary_message,
    is_message_entry,
    is_tool_result_message,
)
from contextree.tokens.estimate import PiEstimator, TokenEstimator

__all__ = [
    "ContextEstimate",
    "calculate_context_tokens",
    "calculate_prompt_tokens",
    "estimate_context_tokens",
    "estimate_current_tokens",
    "get_last_assistant_usage",
    "get_last_assistant_usage_index",
]

_INVALID_STOP_REASONS = frozenset({"aborted", "error"})


@dataclass(frozen=True, slots=True)
class ContextEstimate:
    """How many tokens a list of messages takes, and where the number comes from."""

    tokens: int
    """``usage_tokens - pruned_tokens + trailing_tokens``."""
    usage_tokens: int
    """Context tokens of the last valid assistant usage, 0 when there is none."""
    trailing_tokens: int
    """Estimated tokens of the messages after that usage (of all messages without one)."""
    last_usage_index: int | None
    """Index of the assistant message whose usage was used, ``None`` when there is none."""
    pruned_tokens: int = 0
    """What pruning after that usage was measured saved (set by
    :func:`estimate_current_tokens` only): the measured usage still counted the originals."""


def _count(value: object) -> int:
    # Usage fields are token counts; anything else (missing, null, text) counts 0.
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if isinstance(value, float):
        return math.floor(value) if math.isfinite(value) else 0
    return value


def calculate_context_tokens(usage: Usage) -> int:
    """``totalTokens`` when it is non-zero, else ``input + output + cacheRead + cacheWrite``."""
    total = _count(usage.get("totalTokens"))
    if total:
        return total
    return sum(_count(usage.get(key)) for key in ("input", "output", "cacheRead", "cacheWrite"))


def calculate_prompt_tokens(usage: Usage) -> int:
    """The prompt side of a usage: ``input + cacheRead + cacheWrite``.

    Falls back to :func:`calculate_context_tokens` when those are all 0 (as the fork does).
    """
    prompt = sum(_count(usage.get(key)) for key in ("input", "cacheRead", "cacheWrite"))
    return prompt if prompt > 0 else calculate_context_tokens(usage)


def _valid_usage(message: object) -> Usage | None:
    if not is_assistant_message(message):
        return None
    stop = message.get("stopReason")
    if isinstance(stop, str) and stop in _INVALID_STOP_REASONS:
        return None
    usage = message.get("usage")
    return usage if isinstance(usage, dict) else None


def get_last_assistant_usage(entries: Sequence[StoredEntry]) -> Usage | None:
    """The usage of the last assistant reply among ``message`` entries that was not aborted or
    failed, or ``None`` when there is none."""
    for entry in reversed(entries):
        if isinstance(entry, dict) and is_message_entry(entry):
            usage = _valid_usage(entry["message"])
            if usage is not None:
                return usage
    return None


def get_last_assistant_usage_index(messages: Sequence[StoredMessage]) -> int | None:
    """Index of the last assistant message with a valid usage, or ``None``."""
    for index in range(len(messages) - 1, -1, -1):
        if _valid_usage(messages[index]) is not None:
            return index
    return None


def estimate_context_tokens(
    messages: Sequence[StoredMessage], estimator: TokenEstimator | None = None
) -> ContextEstimate:
    """The context size of ``messages``: the last valid usage plus estimates of what follows.

    Without any valid usage every message is estimated. ``estimator`` defaults to pi's.
    """
    counter = estimator if estimator is not None else PiEstimator()
    index = get_last_assistant_usage_index(messages)
    if index is None:
        estimated = sum(counter.estimate(message) for message in messages)
        return ContextEstimate(estimated, 0, estimated, None)
    usage: Usage = messages[index]["usage"]
    usage_tokens = calculate_context_tokens(usage)
    trailing = sum(counter.estimate(message) for message in messages[index + 1 :])
    return ContextEstimate(usage_tokens + trailing, usage_tokens, trailing, index)


def estimate_current_tokens(
    messages: Sequence[StoredMessage], estimator: TokenEstimator | None = None
) -> ContextEstimate:
    """Like :func:`estimate_context_tokens`, but a usage measured before the compaction that
    starts ``messages`` is stale (it counted the history the summary replaced) and is ignored,
    and what pruning saved after the usage was measured is subtracted (``pruned_tokens``).
    """
    if not messages or not is_compaction_summary_message(messages[0]):
        return _minus_later_pruning(
            messages, estimate_context_tokens(messages, estimator), estimator
        )
    since = _count(messages[0].get("timestamp"))
    for index in range(len(messages) - 1, 0, -1):
        message = messages[index]
        if _valid_usage(message) is not None and _count(message.get("timestamp")) > since:
            estimate = estimate_context_tokens(messages, estimator)
            return _minus_later_pruning(messages, estimate, estimator)
    counter = estimator if estimator is not None else PiEstimator()
    estimated = sum(counter.estimate(message) for message in messages)
    return ContextEstimate(estimated, 0, estimated, None)


def _minus_later_pruning(
    messages: Sequence[StoredMessage], estimate: ContextEstimate, estimator: TokenEstimator | None
) -> ContextEstimate:
    """``estimate`` less what tool results pruned after its usage was measured saved (their
    originals, kept in ``prunedContent``, were in the measured prompt; now a placeholder is)."""
    index = estimate.last_usage_index
    if index is None:
        return estimate
    measured_at = _count(messages[index].get("timestamp"))
    counter = estimator if estimator is not None else PiEstimator()
    saved = 0
    for message in messages[:index]:
        if not is_tool_result_message(message) or "prunedContent" not in message:
            continue
        if _count(message.get("prunedAt")) <= measured_at:
            continue  # pruned before the request the usage measured
        original = {**message, "content": message["prunedContent"]}
        saved += max(0, counter.estimate(original) - counter.estimate(message))
    if not saved:
        return estimate
    saved = min(saved, estimate.usage_tokens)
    return ContextEstimate(
        estimate.tokens - saved, estimate.usage_tokens, estimate.trailing_tokens, index, saved
    )
