"""The dry runs' cost reports: the figures of a session put into :func:`project_costs`."""

from __future__ import annotations

from collections.abc import Sequence

from contextree.compaction.cache_guard import cache_state
from contextree.compaction.cost import CostReport, growth_per_request, project_costs
from contextree.compaction.prepare import context_region
from contextree.compaction.prune import PruneDecision, tokens_after
from contextree.compaction.run import CompactionPlan
from contextree.context.build import build_context_from_path
from contextree.entries.ids import now_ms
from contextree.entries.types import StoredEntry, entry_message, is_assistant_message
from contextree.settings.prices import find_price
from contextree.settings.schema import Settings
from contextree.tokens.estimate import TokenEstimator, get_estimator

__all__ = ["compaction_cost", "prune_cost", "session_model"]


def session_model(path: Sequence[StoredEntry]) -> str | None:
    """``provider:model`` of the last reply on the path (the model the next request uses)."""
    for index in range(len(path) - 1, -1, -1):
        message = entry_message(path[index])
        if is_assistant_message(message) and isinstance(message.get("model"), str):
            provider = message.get("provider")
            model = str(message["model"])
            return f"{provider}:{model}" if isinstance(provider, str) else model
    return None


class _Context:
    """A path's context as the cost model needs it."""

    def __init__(
        self, path: Sequence[StoredEntry], settings: Settings, estimator: TokenEstimator, at_ms: int
    ) -> None:
        self.estimate = estimator.estimate
        _, start = context_region(path)
        self.region = path[start:]
        messages = build_context_from_path(path).messages
        self.tokens = sum(self.estimate(m) for m in messages)
        self.growth = growth_per_request(messages, self.tokens)
        self.model = session_model(self.region)
        warm = cache_state(self.region, settings.prune, at_ms).warm
        self.cached = self.tokens - self._from_last_reply() if warm else 0

    def _from_last_reply(self) -> int:
        # The last request sent everything before its reply; the reply and what followed it
        # are not cached yet.
        for index in range(len(self.region) - 1, -1, -1):
            if is_assistant_message(entry_message(self.region[index])):
                return self.tokens_from(index)
        return self.tokens

    def tokens_from(self, position: int) -> int:
        """Tokens of the region's messages from ``position`` to the end."""
        message = entry_message(self.region[position])
        own = self.estimate(message) if message is not None else 0
        return tokens_after(self.region, position, self.estimate)[position] + own


def prune_cost(
    path: Sequence[StoredEntry],
    decision: PruneDecision,
    settings: Settings,
    *,
    estimator: TokenEstimator | None = None,
    at_ms: int | None = None,
) -> CostReport | None:
    """The next ``cost.turns`` requests with and without ``decision``; ``None`` when it
    prunes nothing."""
    if not decision.candidates:
        return None
    context = _Context(
        path, settings, estimator or get_estimator(settings.estimator), at_ms or now_ms()
    )
    ids = {str(c.entry.get("id")) for c in decision.candidates}
    first = next((i for i, entry in enumerate(context.region) if str(entry.get("id")) in ids), None)
    if first is None:  # the decision is not about this path
        return None
    return project_costs(
        context_tokens=context.tokens,
        after_tokens=context.tokens - decision.tokens_saved,
        unchanged_tokens=context.tokens - context.tokens_from(first),
        cached_tokens=context.cached,
        growth=context.growth,
        turns=settings.cost_turns,
        model=context.model,
        price=find_price(context.model, settings.prices),
    )


def compaction_cost(
    plan: CompactionPlan,
    settings: Settings,
    *,
    summarizer: str | None,
    estimator: TokenEstimator | None = None,
    at_ms: int | None = None,
) -> CostReport:
    """The next ``cost.turns`` requests with and without the planned compaction, its
    summary call (by ``summarizer``, a model spec; ``None``: offline, free) included."""
    estimate = estimator or get_estimator(settings.estimator)
    context = _Context(plan.path, settings, estimate, at_ms or now_ms())
    prep = plan.preparation
    kept = sum(estimate.estimate(m) for m in prep.recent_messages)
    summarized = sum(
        estimate.estimate(m) for m in (*prep.messages_to_summarize, *prep.turn_prefix_messages)
    )
    price = find_price(summarizer, settings.prices) if summarizer else None
    once = 0.0
    notes: list[str] = []
    if price is not None:
        once = (summarized * price.input + plan.summary_budget * price.output) / 1_000_000
    elif summarizer and summarizer != "offline":
        notes.append(f"the summary call ({summarizer}) is not priced: no price known")
    return project_costs(
        context_tokens=context.tokens,
        after_tokens=kept + plan.summary_budget,
        unchanged_tokens=0,  # the summary comes first: nothing of the cached prefix stays
        cached_tokens=context.cached,
        growth=context.growth,
        turns=settings.cost_turns,
        model=context.model,
        price=find_price(context.model, settings.prices),
        one_time_usd=once,
        notes=notes,
    )
