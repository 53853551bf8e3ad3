"""``python -m bench.reference`` runs contextree, pi 0.73.1 and oh-my-pi 18.2.3 on one file and
they walk the same path (issue 27's "path + prepare after open" comparison; the times are the
benchmark's business, never asserted here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from differential.installs import Install

pytestmark = pytest.mark.differential


@pytest.fixture(autouse=True)
def bench_importable(monkeypatch: pytest.MonkeyPatch, repo_root: Path) -> None:
    monkeypatch.syspath_prepend(str(repo_root))


def test_the_three_systems_time_the_same_path(pi: Install, omp: Install, tmp_path: Path) -> None:
    from bench.generate import generate_session
    from bench.reference import FIELDS, measure_reference

    session = generate_session(tmp_path / "s.jsonl", 400, seed=3)
    medians, notes, paths = measure_reference(session.path, 1, pi=pi.root, omp=omp.root)
    assert notes == []
    assert set(medians) == {
        "contextree",
        "contextree, preload=True",
        "pi 0.73.1 (node)",
        "oh-my-pi 18.2.3 (bun)",
    }
    for row in medians.values():
        assert row["length"] == session.leaf_path_length
        assert all(row[field] >= 0 for field in FIELDS)
    # The same entries in the same order (a SHA-256 of the ids, root first).
    assert len(set(paths.values())) == 1 and len(paths) == 4


def test_a_missing_install_is_left_out_with_a_note(tmp_path: Path) -> None:
    from bench.generate import generate_session
    from bench.reference import measure_reference

    session = generate_session(tmp_path / "s.jsonl", 200, seed=4)
    medians, notes, paths = measure_reference(
        session.path, 1, pi=tmp_path / "no-pi", omp=tmp_path / "no-omp"
    )
    ours = ["contextree", "contextree, preload=True"]
    assert list(medians) == ours and list(paths) == ours
    assert len(notes) == 2 and "pi left out" in notes[0] and "oh-my-pi left out" in notes[1]


def test_the_table_gives_the_work_after_open_and_the_whole() -> None:
    from bench.reference import _table

    row = {"open": 400.0, "branch": 20.0, "prepare": 8.0, "branch_again": 0.5, "length": 90.0}
    table = _table({"pi": row}).splitlines()
    assert "path + prepare after open | open + path + prepare" in table[0]
    assert "| pi | 400 ms | 20 ms | 8 ms | 28 ms | 428 ms | 0.5 ms | 90 |" in table
