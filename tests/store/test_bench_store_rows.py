"""The store benchmark rows carry issue 27's targets, and a worker's rate counts its appends,
not its exit (the figures are the benchmark's business, never asserted here)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def bench_importable(monkeypatch: pytest.MonkeyPatch, repo_root: Path) -> None:
    monkeypatch.syspath_prepend(str(repo_root))


def test_eight_worker_rows_carry_the_floors_and_the_scaling_target() -> None:
    from bench.core import Target, _metrics

    rows = {metric.key: metric for metric in _metrics()}
    limits = {"file": 3000, "sqlite": 2000, "postgres": 1000}
    for kind, limit in limits.items():
        assert rows[f"{kind}_appends_8"].target == Target(">=", limit)
        assert rows[f"{kind}_appends_8_ratio"].target == Target(">=", 0.7, "100k")
    rows["file_appends_8_ratio"].values["100k"] = 0.65
    assert rows["file_appends_8_ratio"].status()[0] == "MISS"


def test_the_scaling_rows_take_both_sizes_in_turn(tmp_path: Path) -> None:
    from bench.generate import generate_session
    from bench.stores import measure_scaling

    paths = {
        size: generate_session(tmp_path / f"{size}.jsonl", entries, seed=3).path
        for size, entries in (("10k", 60), ("100k", 240))
    }
    work = tmp_path / "work"
    work.mkdir()
    ratios = measure_scaling(paths, work, repeat=1, workers=2, appends=5)
    assert set(ratios) >= {"file_appends_8_ratio", "sqlite_appends_8_ratio"}
    assert all(ratio > 0 for ratio in ratios.values())
    assert sorted(p.name for p in work.iterdir()) == []  # the copies and the database removed


def test_a_floor_without_a_size_is_judged_on_the_worst_size() -> None:
    from bench.metrics import Metric, Target

    floor = Metric("rate", "rate", "/s", target=Target(">=", 3000))
    floor.values.update({"10k": 4000.0, "100k": 1000.0})
    assert floor.status()[0] == "MISS"
    ceiling = Metric("latency", "latency", "µs", target=Target("<", 100))
    ceiling.values.update({"10k": 40.0, "100k": 120.0})
    assert ceiling.status()[0] == "MISS"


def test_a_workers_exit_is_not_timed(tmp_path: Path) -> None:
    import sys

    from bench.stores import _timed_workers

    # Says "done" at once, then takes a second to exit: only the part until "done" counts.
    slow_exit = (
        "import pathlib, sys, time\n"
        "print('ready', flush=True)\n"
        "while not pathlib.Path(sys.argv[-1]).exists(): time.sleep(0.001)\n"
        "print(f'done {time.perf_counter()!r}', flush=True)\n"
        "time.sleep(1)\n"
    )
    elapsed = _timed_workers([[sys.executable, "-c", slow_exit]] * 2, tmp_path, "a fake worker")
    assert 0 < elapsed < 0.5


def test_workers_are_timed_to_their_last_append(tmp_path: Path) -> None:
    from bench.stores import _appends_per_second, _done_at

    assert _done_at("ready\ndone 12.5\n", "x") == 12.5
    with pytest.raises(RuntimeError, match="did not say"):
        _done_at("ready\n", "x")
    example = Path(__file__).resolve().parents[2] / "examples" / "todo-api-session.jsonl"
    session = tmp_path / "s.jsonl"
    session.write_bytes(example.read_bytes())
    rate = _appends_per_second(str(session), 2, 20, tmp_path)
    assert rate > 0
    assert session.read_bytes().count(b'"content":"bench ') == 40


def test_the_rewrite_rows(tmp_path: Path) -> None:
    from bench.core import Target, _metrics
    from bench.generate import generate_session
    from bench.rewrite import measure_rewrite

    rows = {metric.key: metric for metric in _metrics()}
    assert rows["rewrite_ratio"].target == Target("<=", 1.2, "10k")
    session = generate_session(tmp_path / "s.jsonl", 300, seed=5)
    figures = measure_rewrite(session.path, tmp_path, repeat=1)
    assert set(figures) == {"rewrite_fresh", "rewrite_after_appends", "rewrite_ratio"}
    assert figures["rewrite_fresh"] > 0 and figures["rewrite_after_appends"] > 0
    again = generate_session(tmp_path / "t.jsonl", 300, seed=5)
    assert session.path.read_bytes() == again.path.read_bytes()  # the bench wrote a copy
