"""Results of service tools whose facts wait for the assistant's next words: a long result's
sentences that the assistant speaks of - as it makes the call ("let me check Priya's HR
profile for her Thursday arrangement") or after it ("there's a cap on the total field") - are
the ones that mattered to the work, whatever values they name (see
:func:`~contextree.compaction.offline.tool_results.result_facts`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from contextree.compaction.offline.tool_results import ResultFact, result_facts, spoken_words

__all__ = ["WaitingResults"]


class _Waiting(NamedTuple):
    tool: str
    text: str
    called_with: str
    """What the assistant said as it made the call."""
    label: str
    """How a note of what a writing call wrote starts ("" for a result)."""


class WaitingResults:
    """The results read so far whose facts are not yet noted."""

    def __init__(self) -> None:
        self._waiting: list[_Waiting] = []

    def add(self, tool: str, text: str, called_with: str, label: str = "") -> None:
        """A result of ``tool`` (or with ``label``, the new words a writing call was given),
        and what the assistant said as it made the call."""
        self._waiting.append(_Waiting(tool, text, called_with, label))

    def read(self, echo: str = "") -> Iterator[ResultFact]:
        """The facts of every waiting result, ``echo`` being what the assistant said next
        (words made into a set once for all of them); none wait afterwards."""
        if not self._waiting:
            return
        spoken = spoken_words(echo)
        calling: dict[str, frozenset[str]] = {}
        waiting, self._waiting = self._waiting, []
        for tool, text, called_with, label in waiting:
            if called_with not in calling:
                calling[called_with] = spoken | spoken_words(called_with)
            yield from result_facts(tool, text, calling[called_with], label=label)
