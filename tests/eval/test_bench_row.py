"""The retention eval's rows in ``python -m bench`` (issue 25 item 7): declared with their
targets; the figures are the benchmark's business."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def bench_importable(monkeypatch: pytest.MonkeyPatch, repo_root: Path) -> None:
    monkeypatch.syspath_prepend(str(repo_root))


@pytest.mark.usefixtures("bench_importable")
def test_the_retention_rows_are_declared_with_their_targets() -> None:
    from bench.core import Target, _metrics

    rows = {metric.key: metric for metric in _metrics()}
    assert rows["retention_mean"].target == Target(">=", 0.95)
    assert rows["retention_20"].target == Target(">=", 0.75)
    assert {"retention_held_out", "retention_time"} <= set(rows)
    assert Target(">=", 0.95).holds(0.95) and not Target(">=", 0.95).holds(0.9)
