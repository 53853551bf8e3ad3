"""``run_eval``: the generated corpus, or a user's own session with a probes file, compacted
over N rounds at each budget and scored."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from contextree.eval.corpus import EvalSession, build_corpus
from contextree.eval.report import BudgetReport, EvalReport, budget_label
from contextree.eval.rounds import SessionRun, run_session
from contextree.eval.score import KeptCheck, visible
from contextree.llm.base import ModelClient

__all__ = ["DEFAULT_RATIOS", "run_eval", "run_sessions"]

DEFAULT_RATIOS: tuple[float | None, ...] = (None, 0.2)
"""The full budget, then 20% of the original size."""


async def run_sessions(
    sessions: Sequence[EvalSession],
    summarizer: ModelClient,
    *,
    rounds: int,
    ratios: Sequence[float | None] = DEFAULT_RATIOS,
    kept: KeptCheck = visible,
    instructions: str | None = None,
    model: str = "",
    seed: int | None = None,
    context_window: int | None = None,
) -> EvalReport:
    """Run every session at every budget (sessions one after another: a local model server
    takes one request at a time). ``context_window``: the summarizer's window in tokens, when
    known (a small local model's: requests are then planned to fit it)."""
    probes = tuple(planted.probe for session in sessions for planted in session.probes)
    budgets = []
    for ratio in ratios:
        runs: list[SessionRun] = []
        for session in sessions:
            run = await run_session(
                session.name,
                session.slices,
                session.probes,
                summarizer,
                ratio=ratio,
                kept=kept,
                instructions=instructions,
                context_window=context_window,
            )
            runs.append(run)
        budgets.append(BudgetReport(budget_label(ratio), probes, tuple(runs)))
    check = getattr(kept, "__name__", "custom")
    return EvalReport(
        model or summarizer.name, rounds, seed, len(sessions), tuple(budgets), check=check
    )


def run_eval(
    summarizer: ModelClient,
    *,
    rounds: int = 5,
    sessions: int = 35,
    seed: int = 25,
    ratios: Sequence[float | None] = DEFAULT_RATIOS,
    kept: KeptCheck = visible,
    instructions: str | None = None,
) -> EvalReport:
    """The retention eval over the generated corpus (``sessions`` sessions, ``rounds``
    compactions each, at each of ``ratios``: ``None`` is the full budget)."""
    corpus = build_corpus(sessions=sessions, rounds=rounds, seed=seed)
    return asyncio.run(
        run_sessions(
            corpus,
            summarizer,
            rounds=rounds,
            ratios=ratios,
            kept=kept,
            instructions=instructions,
            seed=seed,
        )
    )
