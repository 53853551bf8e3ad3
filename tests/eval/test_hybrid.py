"""A model's summary with the recorded facts keeps at least what the offline summary keeps
(issue 25 item 8), even when the model writes almost nothing: the recorded facts carry every
line the offline summary would hold that the model's text does not."""

from __future__ import annotations

import asyncio

from contextree.compaction.offline import OfflineSummarizer, record_facts
from contextree.eval.corpus import build_corpus
from contextree.eval.report import EvalReport
from contextree.eval.run import run_sessions
from contextree.llm.base import ModelClient
from contextree.llm.scripted import ScriptedClient

_TERSE = "## Goal\nKeep working on the project.\n\n## Progress\nSome work was done."


def _run(client: ModelClient) -> EvalReport:
    corpus = build_corpus(sessions=6, rounds=3, seed=25)
    return asyncio.run(run_sessions(corpus, client, rounds=3, ratios=(None, 0.2)))


def test_a_terse_model_with_recorded_facts_keeps_what_the_offline_summary_keeps() -> None:
    terse = ScriptedClient("terse", default=_TERSE)
    hybrid, offline = _run(terse), _run(OfflineSummarizer())
    assert len(terse.requests) >= 6 * 3 * 2  # every round's summary asked of the model
    for with_model, alone in zip(hybrid.budgets, offline.budgets, strict=True):
        assert with_model.overall().survival >= alone.overall().survival, with_model.label
    kinds, offline_kinds = hybrid.full.by_kind(), offline.full.by_kind()
    assert {k: s.survival for k, s in kinds.items() if s.survival < offline_kinds[k].survival} == {}


def test_lines_the_model_wrote_word_for_word_are_not_recorded_twice() -> None:
    said = "## Facts\n- The production database is Postgres 15 in us-west-2.\n"
    messages = [
        {
            "role": "user",
            "content": "The production database is Postgres 15 in us-west-2.",
            "timestamp": 1,
        },
        {"role": "user", "content": "I prefer terse answers with no em-dashes.", "timestamp": 2},
    ]
    alone = record_facts(messages, budget_tokens=2000)  # type: ignore[arg-type]
    after_model = record_facts(messages, budget_tokens=2000, said=said)  # type: ignore[arg-type]
    assert "Postgres 15 in us-west-2" in alone and "em-dashes" in alone
    assert "Postgres 15 in us-west-2" not in after_model
    assert "em-dashes" in after_model


def test_the_budget_cuts_the_least_important_lines_first() -> None:
    messages = [
        {
            "role": "user",
            "content": f"Note {n}: the mirror host is mirror-{n}.example.net.",
            "timestamp": n,
        }
        for n in range(60)
    ]
    text = record_facts(messages, budget_tokens=120)  # type: ignore[arg-type]
    assert text.startswith("## Recorded Facts (contextree)")
    assert len(text) <= 120 * 4
