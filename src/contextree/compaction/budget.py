"""The one summary budget: what models are asked for and what the offline summarizer may use.

pi sends ``max_tokens = floor(0.8 x reserveTokens)`` (13,107 at the default reserve) for the
history summary (pi-behaviour §7.4). We keep that as the default, cap it (a summary as long as
the history it replaces saves nothing) and let ``compaction.summaryTokens`` set it outright.
The same figure is printed by ``compact --dry-run``, sent as ``max_tokens`` and enforced on the
offline summarizer, so the plan and the run never disagree.
"""

from __future__ import annotations

import math
from typing import Final

from contextree.settings.schema import CompactionSettings

__all__ = ["DEFAULT_SUMMARY_TOKENS_CAP", "MIN_SUMMARY_TOKENS", "summary_token_budget"]

DEFAULT_SUMMARY_TOKENS_CAP: Final = 8192
"""The derived default never exceeds this; an explicit ``summaryTokens`` may."""
MIN_SUMMARY_TOKENS: Final = 64
"""Below this no summary can hold a goal and a next step."""
_WINDOW_SHARE: Final = 4
"""With a known summarizer window, the output may use at most a quarter of it: the rest is
room for the conversation being summarized."""


def summary_token_budget(settings: CompactionSettings, *, context_window: int | None = None) -> int:
    """The summary's token budget for these settings and, when known, the summarizer's window.

    ``settings.summary_tokens`` > 0 is taken as it is; otherwise ``floor(0.8 x
    reserve_tokens)`` capped at :data:`DEFAULT_SUMMARY_TOKENS_CAP`. A known window caps either
    at a quarter of it. Never below :data:`MIN_SUMMARY_TOKENS`.
    """
    if settings.summary_tokens > 0:
        budget = settings.summary_tokens
    else:
        budget = min(math.floor(0.8 * settings.reserve_tokens), DEFAULT_SUMMARY_TOKENS_CAP)
    if context_window is not None and context_window > 0:
        budget = min(budget, context_window // _WINDOW_SHARE)
    return max(budget, MIN_SUMMARY_TOKENS)
