"""An estimator that remembers its estimates of the message objects it has seen.

The threshold check before every model call estimates each tool result of the context (to
decide what pruning would save), and between two calls nearly all of them are the same
objects: the session hands out the dicts it decoded once. Stored messages are never changed
in place (pruning writes new versions), so an estimate is remembered per object identity; the
object is held with it, so its ``id`` cannot be reused by another while it is remembered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextree.tokens.estimate import TokenEstimator

__all__ = ["MemoizedEstimator"]


class MemoizedEstimator:
    """``base``'s estimates, remembered per message object for two generations.

    :meth:`next_generation` starts a new one: estimates not asked for since the one before are
    forgotten, so what is kept never outgrows what the last two rounds of checks used.
    """

    __slots__ = ("_base", "_current", "_previous", "name")

    def __init__(self, base: TokenEstimator) -> None:
        self._base = base
        self.name = base.name
        self._current: dict[int, tuple[Mapping[str, Any], int]] = {}
        self._previous: dict[int, tuple[Mapping[str, Any], int]] = {}

    def estimate(self, message: Mapping[str, Any]) -> int:
        """Tokens of one message: remembered when this very object was estimated recently."""
        key = id(message)
        hit = self._current.get(key)
        if hit is not None and hit[0] is message:
            return hit[1]
        hit = self._previous.get(key)
        if hit is None or hit[0] is not message:
            hit = (message, self._base.estimate(message))
        self._current[key] = hit
        return hit[1]

    def count_text(self, text: str) -> int:
        """Tokens of a plain text (not remembered: texts are cheap to count)."""
        return self._base.count_text(text)

    def next_generation(self) -> None:
        """Forget what was not asked for during the previous generation."""
        self._previous, self._current = self._current, {}
