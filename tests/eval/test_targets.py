"""The offline summarizer against issue 25's targets, on the default eval (35 sessions, five
rounds): mean survival >= 0.95, every kind >= 0.90, >= 0.75 within 20% of the original size,
and the held-out phrasings within 0.05 of the tuning ones. Figures, not timings."""

from __future__ import annotations

from contextree.compaction.offline import OfflineSummarizer
from contextree.eval import run_eval


def test_the_offline_summarizer_meets_the_retention_targets() -> None:
    report = run_eval(OfflineSummarizer()).to_json()
    assert report["mean_survival"] >= 0.95
    low = {kind: k["survival"] for kind, k in report["kinds"].items() if k["survival"] < 0.9}
    assert low == {}
    assert report["budgets"]["0.2"]["mean_survival"] >= 0.75
    assert report["budgets"]["0.2"]["max_context_ratio"] <= 0.2
    gap = report["tuning"]["mean_survival"] - report["held_out"]["mean_survival"]
    assert gap <= 0.05
