"""The pruning decision for a session in use, without walking its whole context every turn.

:func:`~contextree.compaction.prune.decide_prune` walks the context's tool results from the
newest back, and a host asks for the decision before every model call, so a long context costs
a walk over hundreds of results each turn. The decision has a simpler form: a result is pruned
when it is *eligible* (not pruned yet, not from a protected tool, clearly larger than its
placeholder) and the results newer than it add up to at least ``protect_tokens``; pruning
happens when those results save at least ``minimum_savings``. With prefix sums over the
results in path order, "newer ones add up to at least the window" is one bisection, and the
savings before that point one lookup. :class:`PruneDecider` keeps the sums and extends them
when the context only grew at its end.
"""

from __future__ import annotations

import operator
from bisect import bisect_right
from collections.abc import Sequence
from itertools import islice

from contextree.compaction.prepare import context_region
from contextree.compaction.prune import (
    PruneCandidate,
    PruneDecision,
    nothing_pruned,
    placeholder_tokens,
    worth_pruning,
)
from contextree.entries.types import Entry, entry_message, is_tool_result_message
from contextree.settings.schema import PruneSettings
from contextree.tokens.estimate import TokenEstimator, get_estimator

__all__ = ["PruneDecider"]


class PruneDecider:
    """:func:`~contextree.compaction.prune.decide_prune`, remembering the context between calls.

    Gives the same decision as ``decide_prune(path, settings, estimator=estimator)`` for every
    path; when the context region is the previous one plus entries at its end (the same entry
    objects: nothing was rewritten), only the new entries are estimated and a decision that
    prunes nothing costs a bisection.
    """

    __slots__ = (
        "_eligible",
        "_eligible_count",
        "_estimate",
        "_protected",
        "_region",
        "_results",
        "_saved",
        "_tokens",
        "_total",
    )

    def __init__(self, estimator: TokenEstimator | None = None) -> None:
        self._estimate = (estimator or get_estimator("pi")).estimate
        self._protected: frozenset[str] | None = None
        self._forget()

    def _forget(self) -> None:
        self._region: list[Entry] = []  # the context region the sums describe
        self._results: list[Entry] = []  # its tool-result entries, oldest first
        self._tokens: list[int] = []
        self._eligible: list[bool] = []
        # Prefix sums, index k covering results[:k]: tokens, savings and count of eligible ones.
        self._total = [0]
        self._saved = [0]
        self._eligible_count = [0]

    def decide(
        self, path_entries: Sequence[Entry], settings: PruneSettings | None = None
    ) -> PruneDecision:
        """The decision ``decide_prune`` gives for ``path_entries`` (a root-to-leaf path)."""
        settings = settings or PruneSettings()
        protected = frozenset(settings.protected_tools)
        _, start = context_region(path_entries)
        region = list(path_entries[start:])
        known = len(self._region)
        if (
            protected != self._protected
            or len(region) < known
            or not all(map(operator.is_, islice(region, known), self._region))
        ):
            self._protected = protected
            self._forget()
            known = 0
        for entry in islice(region, known, None):
            self._take(entry, protected)
        self._region = region
        return self._decision(settings)

    def _take(self, entry: Entry, protected: frozenset[str]) -> None:
        message = entry_message(entry)
        if not is_tool_result_message(message):
            return
        tokens = self._estimate(message)
        # The same tests as decide_prune, in its order: pruned before (pi's mark or our saved
        # original), a protected tool, too small to shrink clearly.
        eligible = (
            message.get("prunedAt") is None
            and "prunedContent" not in message
            and message.get("toolName") not in protected
            and worth_pruning(tokens)
        )
        self._results.append(entry)
        self._tokens.append(tokens)
        self._eligible.append(eligible)
        self._total.append(self._total[-1] + tokens)
        saving = tokens - placeholder_tokens(tokens) if eligible else 0
        self._saved.append(self._saved[-1] + saving)
        self._eligible_count.append(self._eligible_count[-1] + eligible)

    def _decision(self, settings: PruneSettings) -> PruneDecision:
        # Result i (oldest first) is outside the window when the results after it add up to
        # at least protect_tokens: total - total[i + 1] >= protect, i.e. total[i + 1] <= limit.
        # The sums only grow, so those results are a prefix: count them with a bisection.
        limit = self._total[-1] - settings.protect_tokens
        outside = bisect_right(self._total, limit, 1) - 1
        saved = self._saved[outside]
        if self._eligible_count[outside] == 0:
            return nothing_pruned(None, settings)
        if saved < settings.minimum_savings:
            return nothing_pruned(saved, settings)
        candidates = [
            PruneCandidate(self._results[i], self._tokens[i])
            for i in range(outside - 1, -1, -1)  # newest first, as decide_prune lists them
            if self._eligible[i]
        ]
        return PruneDecision(candidates, saved)
