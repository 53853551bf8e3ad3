"""Token estimators, usage arithmetic and compaction thresholds (pi-behaviour.md §4).

``js_stringify`` and ``js_object_entries`` live in :mod:`contextree.entries.js_json`; they are
re-exported here for older imports.
"""

from contextree.entries.js_json import js_object_entries, js_stringify
from contextree.tokens.estimate import (
    IMAGE_CHARS,
    PiEstimator,
    TokenEstimator,
    Utf8Estimator,
    estimate_tokens,
    get_estimator,
    utf16_len,
)
from contextree.tokens.memo import MemoizedEstimator
from contextree.tokens.thresholds import resolve_threshold_tokens, should_compact
from contextree.tokens.usage import (
    ContextEstimate,
    calculate_context_tokens,
    calculate_prompt_tokens,
    estimate_context_tokens,
    estimate_current_tokens,
    get_last_assistant_usage,
    get_last_assistant_usage_index,
)

__all__ = [
    "IMAGE_CHARS",
    "ContextEstimate",
    "MemoizedEstimator",
    "PiEstimator",
    "TokenEstimator",
    "Utf8Estimator",
    "calculate_context_tokens",
    "calculate_prompt_tokens",
    "estimate_context_tokens",
    "estimate_current_tokens",
    "estimate_tokens",
    "get_estimator",
    "get_last_assistant_usage",
    "get_last_assistant_usage_index",
    "js_object_entries",
    "js_stringify",
    "resolve_threshold_tokens",
    "should_compact",
    "utf16_len",
]
