"""Whether the provider's prompt cache still holds the context, and what pruning would cost it.

Providers cache the prompt prefix of the last request. Changing a message inside that prefix
(pruning an old tool output) makes the provider write everything after it to the cache
again, at more than the input price, instead of reading it at a tenth of it. Pruning an
output while the cache is warm therefore pays only when little follows it; once the cache has
expired (the last reply is older than the provider's cache lifetime) everything is written
again anyway and pruning costs nothing extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from contextree.entries.ids import iso_to_ms
from contextree.entries.types import StoredEntry, entry_message, is_assistant_message
from contextree.settings.schema import PruneSettings

__all__ = ["CACHING_PROVIDERS", "CacheState", "cache_state"]

CACHING_PROVIDERS: Final = frozenset({"anthropic", "openai", "openai-codex"})
"""Providers whose APIs cache prompt prefixes even when a reply's usage does not say so."""


@dataclass(frozen=True, slots=True)
class CacheState:
    """The prompt cache as pruning sees it."""

    warm: bool
    """Pruning must respect the cache: it is in use and has not expired."""
    age_ms: int | None = None
    """Time since the last reply (``None``: no reply in the context)."""


def cache_state(region: Sequence[StoredEntry], settings: PruneSettings, now_ms: int) -> CacheState:
    """The cache state of a context region (the entries sent), judged from its last reply."""
    for entry in reversed(region):
        message = entry_message(entry)
        if not is_assistant_message(message):
            continue
        stamp = message.get("timestamp")
        sent = stamp if isinstance(stamp, int) and stamp > 0 else iso_to_ms(entry.get("timestamp"))
        age = max(0, now_ms - sent)
        usage = message.get("usage")
        cached = isinstance(usage, dict) and any(
            isinstance(usage.get(k), int) and usage[k] > 0 for k in ("cacheRead", "cacheWrite")
        )
        provider = message.get("provider")
        caching = cached or (isinstance(provider, str) and provider in CACHING_PROVIDERS)
        warm = settings.cache_aware and caching and age < settings.cache_ttl_seconds * 1000
        return CacheState(warm, age)
    return CacheState(False)
