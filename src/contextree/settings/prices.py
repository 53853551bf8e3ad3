"""Model prices for the cost report, in US dollars per million tokens.

The built-in table holds the providers' published list prices for a few models at the time of
writing; prices change, so the ``prices`` setting adds models or replaces entries
(``prices."claude-sonnet-4-5" = {input = 3, output = 15, cacheRead = 0.3, cacheWrite = 3.75}``).
A model is looked up as ``provider:model``, then as its bare name, then without a date
suffix (``claude-sonnet-4-5-20250929`` and ``gpt-4o-2024-08-06`` find ``claude-sonnet-4-5`` and
``gpt-4o``); a newer model of a family (``claude-sonnet-4-6``) is not guessed from an older one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_PRICES", "ModelPrice", "find_price", "parse_prices"]

_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """Dollars per million tokens. A cache price of ``None``: the provider has no prompt
    cache for the model, every input token costs ``input``."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None


def _anthropic(input_price: float, output_price: float) -> ModelPrice:
    # Anthropic: a 5-minute cache write costs 1.25x input, a cache read 0.1x.
    return ModelPrice(input_price, output_price, input_price / 10, input_price * 1.25)


def _openai(input_price: float, output_price: float, cached: float) -> ModelPrice:
    # OpenAI caches automatically: writing costs plain input, reading the cached price.
    return ModelPrice(input_price, output_price, cached, input_price)


DEFAULT_PRICES: Mapping[str, ModelPrice] = {
    "claude-opus-4-5": _anthropic(5, 25),
    "claude-opus-4-1": _anthropic(15, 75),
    "claude-opus-4": _anthropic(15, 75),
    "claude-sonnet-4-5": _anthropic(3, 15),
    "claude-sonnet-4": _anthropic(3, 15),
    "claude-3-7-sonnet": _anthropic(3, 15),
    "claude-haiku-4-5": _anthropic(1, 5),
    "claude-3-5-haiku": _anthropic(0.8, 4),
    "gpt-5": _openai(1.25, 10, 0.125),
    "gpt-5-mini": _openai(0.25, 2, 0.025),
    "gpt-5-nano": _openai(0.05, 0.4, 0.005),
    "gpt-4.1": _openai(2, 8, 0.5),
    "gpt-4.1-mini": _openai(0.4, 1.6, 0.1),
    "gpt-4o": _openai(2.5, 10, 1.25),
    "gpt-4o-mini": _openai(0.15, 0.6, 0.075),
}


def find_price(model: str | None, table: Mapping[str, ModelPrice]) -> ModelPrice | None:
    """The price of ``model`` (``provider:model`` or a bare name) in ``table``, or ``None``."""
    if not model:
        return None
    bare = model.split(":", 1)[1] if ":" in model else model
    for name in (model, bare):
        if name in table:
            return table[name]
    undated = _DATE_SUFFIX.sub("", bare)
    return table.get(undated)


_FIELDS = {
    "input": "input",
    "output": "output",
    "cacheRead": "cache_read",
    "cacheWrite": "cache_write",
}


def parse_prices(value: Any) -> dict[str, ModelPrice]:
    """The ``prices`` setting: a table of model -> ``{input, output, cacheRead?, cacheWrite?}``
    merged over :data:`DEFAULT_PRICES`; raises ``ValueError`` naming the model and field."""
    if isinstance(value, str):
        import json

        value = json.loads(value)
    if not isinstance(value, dict):
        raise ValueError(f"expected a table of model -> prices, found {value!r}")
    table = dict(DEFAULT_PRICES)
    for model, fields in value.items():
        if not isinstance(fields, dict):
            raise ValueError(f"{model}: expected a table of prices, found {fields!r}")
        unknown = set(fields) - set(_FIELDS)
        if unknown:
            raise ValueError(f"{model}: unknown price field {sorted(unknown)[0]!r}")
        numbers: dict[str, float] = {}
        for key, name in _FIELDS.items():
            number = fields.get(key)
            if number is None:
                continue
            if isinstance(number, bool) or not isinstance(number, int | float) or number < 0:
                raise ValueError(f"{model}.{key}: expected a price >= 0, found {number!r}")
            numbers[name] = float(number)
        if "input" not in numbers or "output" not in numbers:
            raise ValueError(f"{model}: input and output prices are required")
        table[str(model)] = ModelPrice(**numbers)
    return table
