"""The pruning decision for a session in use, without walking its whole context every turn.

:func:`~contextree.compaction.prune.decide_prune` walks the context's tool results from the
newest back, and a host asks for the decision before every model call, so a long context costs
a walk over hundreds of results each turn. The decision has a simpler form: a result is pruned
when it is *eligible* (not pruned yet, not from a protected tool, clearly larger than its
placeholder) and the results newer than it add up to at least ``protect_tokens``; pruning
happens when those results save at least ``minimum_savings``. With prefix sums over the
results in path order, "newer ones add up to at least the window" is one bisection, and the
savings before that point one lookup. :class:`PruneDecider` keeps the sums and extends them
when the context only grew at its end. Stale reads are followed as entries arrive, with their
savings in running totals (and, for those also old enough to prune, in a Fenwick tree over the
results, so "how much of the old savings is a stale read's" is a lookup too); with a warm
prompt cache only the results in the last ``cache_guard_tokens`` (a bisection on prefix sums
of every message) can be pruned, so only those are looked at.
"""

from __future__ import annotations

import operator
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import islice

from contextree.compaction.cache_guard import cache_state
from contextree.compaction.prepare import context_region
from contextree.compaction.prune import (
    PruneCandidate,
    PruneDecision,
    is_pruned,
    nothing_pruned,
    placeholder_tokens,
    superseded_candidate,
    tool_name,
    worth_pruning,
)
from contextree.compaction.superseded import Superseded, SupersededReads
from contextree.entries.ids import now_ms
from contextree.entries.types import StoredEntry, entry_message, is_tool_result_message
from contextree.settings.schema import PruneSettings
from contextree.tokens.estimate import TokenEstimator, get_estimator

__all__ = ["PruneDecider"]


class _Fenwick:
    """Prefix sums of (savings, count) over result indices that grow at the end."""

    __slots__ = ("_count", "_saving")

    def __init__(self) -> None:
        self._saving = [0]  # 1-based nodes
        self._count = [0]

    def append(self) -> None:
        """A new index holding zero (its node covers earlier indices: copy their sums)."""
        node = len(self._saving)
        low = node - (node & -node)
        saving, count = self.prefix(node - 1)
        low_saving, low_count = self.prefix(low)
        self._saving.append(saving - low_saving)
        self._count.append(count - low_count)

    def add(self, index: int, saving: int) -> None:
        node = index + 1
        while node < len(self._saving):
            self._saving[node] += saving
            self._count[node] += 1
            node += node & -node

    def prefix(self, end: int) -> tuple[int, int]:
        """Sums over indices ``[0, end)``."""
        saving = count = 0
        while end > 0:
            saving += self._saving[end]
            count += self._count[end]
            end -= end & -end
        return saving, count


class PruneDecider:
    """:func:`~contextree.compaction.prune.decide_prune`, remembering the context between calls.

    Gives the same decision as ``decide_prune(path, settings, estimator=estimator)`` for every
    path; when the context region is the previous one plus entries at its end (the same entry
    objects: nothing was rewritten), only the new entries are estimated and a decision that
    prunes nothing costs a few bisections.
    """

    __slots__ = (
        "_all",
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
        "_stale_candidates",
        "_stale_count",
        "_stale_old",
        "_stale_saving",
        "_tokens",
        "_total",
        "_unpruned",
    )

    def __init__(self, estimator: TokenEstimator | None = None) -> None:
        self._estimate = (estimator or get_estimator("pi")).estimate
        self._protected: frozenset[str] | None = None
        self._forget()

    def _forget(self) -> None:
        self._region: list[StoredEntry] = []  # the context region the sums describe
        self._results: list[StoredEntry] = []  # its tool-result entries, oldest first
        self._tokens: list[int] = []
        self._eligible: list[bool] = []
        self._unpruned: list[bool] = []
        self._positions: list[int] = []  # each result's position in the region
        self._index: dict[int, int] = {}  # region position -> result index
        # Prefix sums, index k covering results[:k]: tokens, savings and count of eligible ones.
        self._total = [0]
        self._saved = [0]
        self._eligible_count = [0]
        self._all = [0]  # tokens of every message, index k covering region[:k]
        self._stale = SupersededReads()
        self._stale_candidates: dict[int, PruneCandidate] = {}  # by result index
        self._stale_saving = 0
        self._stale_count = 0
        self._stale_old = _Fenwick()  # stale results that are also old-eligible

    def decide(
        self,
        path_entries: Sequence[StoredEntry],
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

    def _take(self, entry: StoredEntry, position: int, protected: frozenset[str]) -> None:
        message = entry_message(entry)
        if not is_tool_result_message(message):
            self._all.append(self._all[-1] + (self._estimate(message) if message else 0))
            self._stale.take(entry)
            return
        tokens = self._estimate(message)
        self._all.append(self._all[-1] + tokens)
        # The same tests as decide_prune, in its order: pruned before (pi's mark or our saved
        # original), a protected tool, too small to shrink clearly.
        unpruned = not is_pruned(message)
        eligible = unpruned and tool_name(message) not in protected and worth_pruning(tokens)
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
        self._stale_old.append()
        for stale in self._stale.take(entry):
            self._mark_stale(self._index[stale.position], stale)

    def _mark_stale(self, index: int, stale: Superseded) -> None:
        tokens = self._tokens[index]
        if self._eligible[index]:
            # No longer an old output: its old savings leave the old sums.
            self._stale_old.add(index, tokens - placeholder_tokens(tokens))
        found = superseded_candidate(stale, tokens) if self._unpruned[index] else None
        if found is not None:
            self._stale_candidates[index] = found
            self._stale_saving += found.saving
            self._stale_count += 1

    def _decision(self, settings: PruneSettings, at_ms: int) -> PruneDecision:
        # Result i (oldest first) is outside the window when the results after it add up to
        # at least protect_tokens: total - total[i + 1] >= protect, i.e. total[i + 1] <= limit.
        # The sums only grow, so those results are a prefix: count them with a bisection.
        limit = self._total[-1] - settings.protect_tokens
        outside = bisect_right(self._total, limit, 1) - 1
        stale_on = settings.superseded_reads
        overlap_saving, overlap_count = self._stale_old.prefix(outside) if stale_on else (0, 0)
        count = self._eligible_count[outside] - overlap_count
        saved = self._saved[outside] - overlap_saving
        if stale_on:
            count, saved = count + self._stale_count, saved + self._stale_saving
        cache = cache_state(self._region, settings, at_ms)
        if not cache.warm and (count == 0 or saved < settings.minimum_savings):
            return nothing_pruned(saved if count else None, settings, cache=cache)
        first = 0
        if cache.warm:
            # Only results with at most cache_guard_tokens after them: a suffix of the region.
            floor = bisect_left(self._all, self._all[-1] - settings.cache_guard_tokens) - 1
            first = bisect_left(self._positions, max(0, floor))
        stale = self._stale_candidates if stale_on else {}
        candidates = [stale[i] for i in range(len(self._results) - 1, first - 1, -1) if i in stale]
        candidates += [
            PruneCandidate(self._results[i], self._tokens[i])
            for i in range(outside - 1, first - 1, -1)  # newest first, as decide_prune lists them
            if self._eligible[i]
            and (not stale_on or self._positions[i] not in self._stale.superseded)
        ]
        held = count - len(candidates) if cache.warm else 0
        kept = sum(c.saving for c in candidates)
        if not candidates or kept < settings.minimum_savings:
            return nothing_pruned(kept if candidates else None, settings, held=held, cache=cache)
        return PruneDecision(candidates, kept, held, cache)
