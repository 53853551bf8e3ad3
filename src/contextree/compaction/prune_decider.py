"""The pruning decision for a session in use, without walking its whole context every turn.

:func:`~contextree.compaction.prune.decide_prune` walks the context's tool results from the
newest back, and a host asks for the decision before every model call, so a long context costs
a walk over hundreds of results each turn. The decision has a simpler form: a result is pruned
when it is *eligible* (not pruned yet, not from a protected tool, clearly larger than its
placeholder) and the results newer than it add up to at least ``protect_tokens``; pruning
happens when those results save at least ``minimum_savings``. With prefix sums over the
results in path order, "newer ones add up to at least the window" is one bisection, and the
savings before that point one lookup. :class:`PruneDecider` keeps the sums and extends them
when the context only grew at its end. Stale reads are followed as entries arrive; only when
there are some, or the prompt cache is warm, is the decision finished candidate by candidate.
"""

from __future__ import annotations

import operator
from bisect import bisect_right
from collections.abc import Sequence
from itertools import islice

from contextree.compaction.cache_guard import cache_state
from contextree.compaction.prepare import context_region
from contextree.compaction.prune import (
    PruneCandidate,
    PruneDecision,
    finish_decision,
    is_pruned,
    placeholder_tokens,
    superseded_candidate,
    worth_pruning,
)
from contextree.compaction.superseded import SupersededReads
from contextree.entries.ids import now_ms
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
        "_index",
        "_positions",
        "_protected",
        "_region",
        "_results",
        "_saved",
        "_stale",
        "_tokens",
        "_total",
        "_unpruned",
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
        self._unpruned: list[bool] = []
        self._positions: list[int] = []  # each result's position in the region
        self._index: dict[int, int] = {}  # region position -> result index
        self._stale = SupersededReads()
        # Prefix sums, index k covering results[:k]: tokens, savings and count of eligible ones.
        self._total = [0]
        self._saved = [0]
        self._eligible_count = [0]

    def decide(
        self,
        path_entries: Sequence[Entry],
        settings: PruneSettings | None = None,
        *,
        at_ms: int | None = None,
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
        for position in range(known, len(region)):
            self._take(region[position], position, protected)
        self._region = region
        return self._decision(settings, now_ms() if at_ms is None else at_ms)

    def _take(self, entry: Entry, position: int, protected: frozenset[str]) -> None:
        self._stale.take(entry)
        message = entry_message(entry)
        if not is_tool_result_message(message):
            return
        tokens = self._estimate(message)
        # The same tests as decide_prune, in its order: pruned before (pi's mark or our saved
        # original), a protected tool, too small to shrink clearly.
        unpruned = not is_pruned(message)
        eligible = unpruned and message.get("toolName") not in protected and worth_pruning(tokens)
        self._index[position] = len(self._results)
        self._positions.append(position)
        self._unpruned.append(unpruned)
        self._results.append(entry)
        self._tokens.append(tokens)
        self._eligible.append(eligible)
        self._total.append(self._total[-1] + tokens)
        saving = tokens - placeholder_tokens(tokens) if eligible else 0
        self._saved.append(self._saved[-1] + saving)
        self._eligible_count.append(self._eligible_count[-1] + eligible)

    def _decision(self, settings: PruneSettings, at_ms: int) -> PruneDecision:
        # Result i (oldest first) is outside the window when the results after it add up to
        # at least protect_tokens: total - total[i + 1] >= protect, i.e. total[i + 1] <= limit.
        # The sums only grow, so those results are a prefix: count them with a bisection.
        limit = self._total[-1] - settings.protect_tokens
        outside = bisect_right(self._total, limit, 1) - 1
        stale = self._stale.superseded if settings.superseded_reads else {}
        cache = cache_state(self._region, settings, at_ms)
        if not stale and not cache.warm:
            # The common case, a bisection and a lookup: no stale read, no cache to respect.
            saved = self._saved[outside]
            if self._eligible_count[outside] == 0 or saved < settings.minimum_savings:
                return PruneDecision(cache=cache)
        superseded = []
        for position in sorted(stale, reverse=True):
            i = self._index[position]
            found = superseded_candidate(stale[position], self._tokens[i])
            if self._unpruned[i] and found is not None:
                superseded.append((position, found))
        old = [
            (self._positions[i], PruneCandidate(self._results[i], self._tokens[i]))
            for i in range(outside - 1, -1, -1)  # newest first, as decide_prune lists them
            if self._eligible[i] and self._positions[i] not in stale
        ]
        return finish_decision(self._region, superseded, old, settings, cache, self._estimate)
