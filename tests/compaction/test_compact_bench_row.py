"""The ``compact`` CLI benchmark row (issue 27) is declared with its target and measures a
small generated session through copies (the figures are the benchmark's business, never
asserted here)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def bench_importable(monkeypatch: pytest.MonkeyPatch, repo_root: Path) -> None:
    monkeypatch.syspath_prepend(str(repo_root))


def test_row_and_target() -> None:
    from bench.core import Target, _metrics

    rows = {metric.key: metric for metric in _metrics()}
    assert rows["compact_cli"].target == Target("<=", 1, "100k")
    assert rows["compact_cli"].unit == "s"
    assert rows["compact_cli_cpu"].target is None
    assert rows["context_cli"].target == Target("<=", 0.3, "100k")


def test_measure_compact_cli_runs_on_copies(tmp_path: Path) -> None:
    from bench.cli_commands import measure_compact_cli
    from bench.generate import generate_session

    generated = generate_session(tmp_path / "s.jsonl", 400, seed=3)
    before = generated.path.read_bytes()
    figures = measure_compact_cli(generated.path, tmp_path, repeat=1)
    assert set(figures) == {"compact_cli", "compact_cli_cpu"}
    assert all(value > 0 for value in figures.values())
    assert generated.path.read_bytes() == before  # each run compacted a copy
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]  # copies removed


def test_measure_context_cli_reads_the_session(tmp_path: Path) -> None:
    from bench.cli_commands import measure_context_cli
    from bench.generate import generate_session

    generated = generate_session(tmp_path / "s.jsonl", 400, seed=3)
    before = generated.path.read_bytes()
    figures = measure_context_cli(generated.path, tmp_path, repeat=1)
    assert set(figures) == {"context_cli", "context_cli_cpu"}
    assert all(value > 0 for value in figures.values())
    assert generated.path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]
