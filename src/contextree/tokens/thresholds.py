"""When automatic compaction fires (pi-behaviour.md §4.3).

Settings use pi's keys and sentinels: ``thresholdTokens`` and ``thresholdPercent`` are off at
their default of -1; ``reserveTokens`` is kept free below the context window otherwise.
"""

from __future__ import annotations

import math

__all__ = ["resolve_threshold_tokens", "should_compact"]


def _is_set(value: float) -> bool:
    return math.isfinite(value) and value > 0


def resolve_threshold_tokens(
    context_window: int,
    *,
    reserve_tokens: int,
    threshold_percent: float = -1,
    threshold_tokens: float = -1,
) -> int:
    """The context size above which compaction fires.

    In priority order: ``threshold_tokens`` (kept within ``1 .. context_window - 1``), then
    ``threshold_percent`` of the window (clamped to 1-99 %), then
    ``context_window - reserve_tokens``.
    """
    if _is_set(threshold_tokens):
        return math.floor(min(context_window - 1, max(1, threshold_tokens)))
    if _is_set(threshold_percent):
        percent = min(99.0, max(1.0, threshold_percent))
        return math.floor(context_window * percent / 100)
    # pi 0.73.1's rule. The fork reserves max(15 % of the window, reserveTokens) instead; we
    # deliberately keep pi's rule so that the same settings compact at the same point in both.
    return context_window - reserve_tokens


def should_compact(
    context_tokens: int,
    context_window: int,
    *,
    enabled: bool = True,
    reserve_tokens: int = 16384,
    threshold_percent: float = -1,
    threshold_tokens: float = -1,
) -> bool:
    """Whether a context of ``context_tokens`` should be compacted before the next call.

    Never when compaction is disabled or the context window is unknown (``<= 0``); otherwise
    when ``context_tokens`` exceeds :func:`resolve_threshold_tokens`.
    """
    if not enabled or context_window <= 0:
        return False
    threshold = resolve_threshold_tokens(
        context_window,
        reserve_tokens=reserve_tokens,
        threshold_percent=threshold_percent,
        threshold_tokens=threshold_tokens,
    )
    return context_tokens > threshold
