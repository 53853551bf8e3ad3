"""The retention eval's figures for the bench table (issue 25): ``contextree eval`` with the
offline summarizer on the default corpus, and on the blind sessions of ``bench/blind`` (their
``test`` split), measured once (they do not depend on a session)."""

from __future__ import annotations

import time
from typing import Any

from bench.importable import ensure_importable

ensure_importable()

from contextree.compaction.offline import OfflineSummarizer  # noqa: E402
from contextree.eval import run_eval  # noqa: E402


def measure_retention() -> dict[str, float]:
    """Mean survival after five rounds, at 20% of the original size, on the held-out
    phrasings, and the wall time of the whole eval."""
    start = time.perf_counter()
    report = run_eval(OfflineSummarizer()).to_json()
    elapsed = time.perf_counter() - start
    return {
        "retention_mean": report["mean_survival"],
        "retention_20": report["budgets"]["0.2"]["mean_survival"],
        "retention_held_out": report["held_out"]["mean_survival"],
        "retention_time": elapsed,
    }


def measure_blind_retention() -> dict[str, float]:
    """Survival on the blind ``test`` sessions (written without sight of the summarizer): at
    the full budget and within 20%, each also with the recall tool's answer counted; and on
    ``fresh2`` to ``fresh12``, the splits written last (``fresh4`` to ``fresh12`` within 20%
    with recall too); and on ``dev2`` (items inside long tool results) with the recall tool's
    answer counted."""
    from bench.blind.__main__ import HELD_OUT, blind_reports

    reports = dict(blind_reports("test"))
    visible, recalled = reports[""], reports[" +recall"]
    fresh2 = dict(blind_reports("fresh2"))[""]
    fresh3 = dict(blind_reports("fresh3"))[""]
    long_results = dict(blind_reports("dev2"))[" +recall"]
    return {
        "blind_full": visible.full.overall().survival,
        "blind_20": visible.budgets[1].overall().survival,
        "blind_recall": recalled.full.overall().survival,
        "blind_recall_20": recalled.budgets[1].overall().survival,
        "blind_fresh2_full": fresh2.full.overall().survival,
        "blind_fresh2_20": fresh2.budgets[1].overall().survival,
        "blind_fresh3_full": fresh3.full.overall().survival,
        "blind_fresh3_20": fresh3.budgets[1].overall().survival,
        **{
            key: value
            for split in HELD_OUT[HELD_OUT.index("fresh4") :]
            for key, value in _with_recall_rows(split, dict(blind_reports(split))).items()
        },
        "blind_dev2_recall": long_results.full.overall().survival,
        "blind_dev2_recall_20": long_results.budgets[1].overall().survival,
    }


def _with_recall_rows(split: str, reports: dict[str, Any]) -> dict[str, float]:
    """A split's rows: survival at the full budget and within 20%, and within 20% with the
    recall tool's answer counted."""
    return {
        f"blind_{split}_full": reports[""].full.overall().survival,
        f"blind_{split}_20": reports[""].budgets[1].overall().survival,
        f"blind_{split}_recall_20": reports[" +recall"].budgets[1].overall().survival,
    }
