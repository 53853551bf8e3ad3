"""What the next requests cost with and without a prune or a compaction.

The model: each coming request sends the whole context. With a prompt cache, a request reads
from the cache the prefix the previous request sent and writes the rest. Without a change the
context grows by ``growth`` tokens a request (the context's own average per reply). A change
shrinks it to ``after`` tokens but leaves only ``unchanged`` tokens of the cached prefix valid
(0 for a compaction: the summary comes first; the tokens before the first pruned output for a
prune), so the first request after it writes more. A compaction also pays once for its summary
call. Output tokens are the same either way and left out. Only estimates: the provider's
tokenizer, its cache granularity and the conversation to come all differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contextree.entries.types import StoredMessage, is_assistant_message
from contextree.settings.prices import ModelPrice

__all__ = ["CostReport", "CostRun", "growth_per_request", "project_costs"]

_MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class CostRun:
    """Input of the next requests, one way (with or without the change)."""

    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    """Tokens written to the cache (or sent uncached when the model has no cache)."""
    money: float | None
    """US dollars, one-time costs included; ``None`` when the model's price is unknown."""
    per_request: list[float] = field(default_factory=list)
    """Cumulative dollars after each request (empty when the price is unknown)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "inputTokens": self.input_tokens,
            "cacheReadTokens": self.cache_read_tokens,
            "cacheWriteTokens": self.cache_write_tokens,
            "usd": None if self.money is None else round(self.money, 6),
        }


@dataclass(frozen=True, slots=True)
class CostReport:
    """The next ``turns`` requests without (``before``) and with (``after``) the change."""

    turns: int
    model: str | None
    priced: bool
    before: CostRun
    after: CostRun
    break_even_turn: int | None
    """The first request after which the change has cost no more than not making it."""
    one_time_usd: float = 0.0
    """Paid once for the change (a compaction's summary call), included in ``after``."""
    notes: tuple[str, ...] = ()
    """What the figures leave out (a price not known)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "model": self.model,
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "breakEvenTurn": self.break_even_turn,
            "oneTimeUsd": round(self.one_time_usd, 6),
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True)
class _Plan:
    first_read: int  # tokens the first request reads from the cache
    first_size: int  # tokens the first request sends


def _run(plan: _Plan, growth: int, turns: int, price: ModelPrice | None, once: float) -> CostRun:
    cached = price is None or price.cache_read is not None
    reads = writes = sent = 0
    money = once
    per_request: list[float] = []
    size, read = plan.first_size, plan.first_read if cached else 0
    for _ in range(turns):
        write = size - read
        reads, writes, sent = reads + read, writes + write, sent + size
        if price is not None:
            read_price = price.cache_read if price.cache_read is not None else price.input
            write_price = price.cache_write if price.cache_write is not None else price.input
            money += (read * read_price + write * write_price) / _MILLION
            per_request.append(money)
        # The next request reads all of this one from the cache and adds a reply's worth.
        read, size = (size if cached else 0), size + growth
    return CostRun(sent, reads, writes, money if price is not None else None, per_request)


def project_costs(
    *,
    context_tokens: int,
    after_tokens: int,
    unchanged_tokens: int,
    cached_tokens: int,
    growth: int,
    turns: int,
    model: str | None,
    price: ModelPrice | None,
    one_time_usd: float = 0.0,
    notes: Sequence[str] = (),
) -> CostReport:
    """The report for a change from ``context_tokens`` to ``after_tokens`` that keeps the first
    ``unchanged_tokens`` of the context; ``cached_tokens`` are in a warm cache now."""
    turns = max(1, turns)
    cached = min(cached_tokens, context_tokens)
    before = _run(_Plan(cached, context_tokens), growth, turns, price, 0.0)
    after = _run(
        _Plan(min(cached, unchanged_tokens, after_tokens), after_tokens),
        growth,
        turns,
        price,
        one_time_usd,
    )
    break_even = None
    if price is not None:
        pairs = zip(before.per_request, after.per_request, strict=True)
        break_even = next((k for k, (b, a) in enumerate(pairs, 1) if a <= b), None)
    elif after.input_tokens <= before.input_tokens:
        break_even = 1
    if price is None:
        notes = (f"no price known for {model or 'the session model'} (set prices)", *notes)
    return CostReport(
        turns, model, price is not None, before, after, break_even, one_time_usd, tuple(notes)
    )


def growth_per_request(messages: Sequence[StoredMessage], tokens: int) -> int:
    """The context's average growth per reply: its tokens over its assistant replies."""
    replies = sum(1 for m in messages if is_assistant_message(m))
    return max(1, tokens // max(1, replies))
