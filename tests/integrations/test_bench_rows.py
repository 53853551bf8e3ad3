"""The framework adapters' benchmark rows: wired into ``python -m bench`` and measurable.

The figures themselves are the benchmark's business (``python -m bench``); this checks that
each row is declared so it can hold them and that the OpenAI Agents SDK turn runs on a small
generated session without touching the original file.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def bench_importable(monkeypatch: pytest.MonkeyPatch, repo_root: Path) -> None:
    monkeypatch.syspath_prepend(str(repo_root))


@pytest.mark.usefixtures("bench_importable")
def test_every_row_starts_empty_with_its_target_in_place() -> None:
    from bench.core import Target, _metrics

    rows = {metric.key: metric for metric in _metrics()}
    assert all(metric.values == {} for metric in rows.values())
    assert all(m.target is None or isinstance(m.target, Target) for m in rows.values())
    for key in ("pydantic_ai_turn", "openai_agents_turn"):
        assert rows[key].target == Target("<", 5, "10k")
    assert "openai_agents_own" in rows


@pytest.mark.usefixtures("bench_importable")
def test_the_openai_agents_turn_is_measured_on_a_copy(tmp_path: Path) -> None:
    pytest.importorskip("agents")
    from bench.generate import generate_session
    from bench.integrations_openai_agents import measure_openai_agents_turn

    session = generate_session(tmp_path / "small.jsonl", 400).path
    before = session.read_bytes()
    workdir = tmp_path / "work"
    workdir.mkdir()

    figures = measure_openai_agents_turn(session, workdir, turns=3)

    assert set(figures) == {"openai_agents_turn", "openai_agents_own"}
    assert 0 < figures["openai_agents_own"] <= figures["openai_agents_turn"]
    assert session.read_bytes() == before
    assert list(workdir.iterdir()) == []
