"""The recall benchmark rows are declared with the issue's targets and measure a small
generated session (the figures are the benchmark's business, never asserted here)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def bench_importable(monkeypatch: pytest.MonkeyPatch, repo_root: Path) -> None:
    monkeypatch.syspath_prepend(str(repo_root))


def test_rows_and_targets() -> None:
    from bench.core import Target, _metrics

    rows = {metric.key: metric for metric in _metrics()}
    assert rows["recall_build"].target == Target("<", 3, "100k")
    assert rows["recall_query"].target == Target("<", 50, "100k")
    assert rows["recall_cli"].target == Target("<", 0.5, "100k")
    assert rows["recall_cli_appended"].target == Target("<", 0.5, "100k")
    assert rows["recall_append"].target == Target("<", 1)


def test_measure_recall_runs(tmp_path: Path) -> None:
    from bench.generate import generate_session
    from bench.recall import compare_tokenizers, measure_recall

    generated = generate_session(tmp_path / "s.jsonl", 400, seed=3)
    before = generated.path.read_bytes()
    figures = measure_recall(generated.path, tmp_path, appends=5)
    assert set(figures) == {
        "recall_build",
        "recall_build_cpu",
        "recall_build_plain",
        "recall_query_cpu",
        "recall_append_cpu",
        "recall_query",
        "recall_cli",
        "recall_cli_cpu",
        "recall_cli_appended",
        "recall_append",
        "recall_db_mb",
    }
    assert generated.path.read_bytes() == before  # a copy was appended to
    rows = compare_tokenizers(generated.path, tmp_path)
    assert [row["tokenizer"] for row in rows] == [
        "unicode61",
        "unicode61 + tokenchars ._-/",
        "trigram",
    ]


def test_measure_build_runs(tmp_path: Path) -> None:
    from bench.generate import generate_session
    from bench.recall import measure_build

    generated = generate_session(tmp_path / "s.jsonl", 200, seed=4)
    rows = measure_build(generated.path, tmp_path, repeat=2)
    assert [set(row) for row in rows] == [
        {"build", "build_cpu", "build_plain", "build_plain_cpu"}
    ] * 2
    assert not (tmp_path / "recall-build").exists()  # each index removed after its build
