"""What the events of a report saved in money, at a model's input price.

A token an event took out of the context is not sent with any later request on the path:
each later turn saves it once. Priced at the model's input price (``usdPerRequest``) and over
the turns that followed on this path (``usdSoFar``). Where the model has a prompt cache most of
those tokens would have been cache reads, so the cache-read price is given beside it
(``usdPerRequestCached``); which applies depends on how the cache was warm, which a session
file does not record. No price known: every figure is ``None``, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextree.entries.types import entry_message, is_assistant_message
from contextree.report.series import ReportEvent, SessionSeries
from contextree.settings.prices import ModelPrice

__all__ = ["EventMoney", "event_money", "session_model"]

_MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class EventMoney:
    """Dollars one event saved; ``None`` when no price is known."""

    per_request: float | None
    per_request_cached: float | None
    so_far: float | None
    later_turns: int


def session_model(path: Sequence[Mapping[str, Any]]) -> str | None:
    """``provider:model`` of the last assistant reply on ``path`` (``None``: no reply)."""
    for entry in reversed(path):
        message = entry_message(entry)
        if message is not None and is_assistant_message(message):
            model, provider = message.get("model"), message.get("provider")
            if isinstance(model, str) and model:
                return f"{provider}:{model}" if isinstance(provider, str) and provider else model
    return None


def event_money(series: SessionSeries, price: ModelPrice | None) -> list[EventMoney]:
    """One :class:`EventMoney` per event of ``series``, in order."""
    turns = len(series.turns)
    return [_money(event, turns, price) for event in series.events]


def _money(event: ReportEvent, turns: int, price: ModelPrice | None) -> EventMoney:
    later = max(0, turns - event.turn + 1)  # the turn it precedes and every one after it
    if price is None:
        return EventMoney(None, None, None, later)
    per_request = event.tokens_saved * price.input / _MILLION
    cached = (
        event.tokens_saved * price.cache_read / _MILLION if price.cache_read is not None else None
    )
    return EventMoney(per_request, cached, per_request * later, later)
