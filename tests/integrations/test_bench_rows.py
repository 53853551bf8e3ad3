"""The framework adapters' benchmark rows: wired into ``python -m bench`` and measurable.

The figures themselves are the benchmark's business (``python -m bench``); this checks that
each row is declared so it can hold them and that each adapter's turn (OpenAI Agents SDK,
pydantic-ai, LangChain) runs on a small generated session without touching the original file.
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
    for key in ("pydantic_ai_turn", "openai_agents_turn", "langchain_turn"):
        assert rows[key].target == Target("<", 5, "10k")
    for key in ("pydantic_ai_own", "openai_agents_own", "langchain_adapter"):
        assert key in rows


# (framework package, bench module, measuring function, the figures it gives)
ADAPTERS = [
    (
        "agents",
        "bench.integrations_openai_agents",
        "measure_openai_agents_turn",
        {"openai_agents_turn": "openai_agents_own"},
    ),
    (
        "pydantic_ai",
        "bench.integrations_pydantic_ai",
        "measure_pydantic_ai_turn",
        {"pydantic_ai_turn": "pydantic_ai_own"},
    ),
    (
        "langchain",
        "bench.integrations_langchain",
        "measure_langchain_turn",
        {"langchain_turn": "langchain_adapter"},
    ),
]


@pytest.mark.usefixtures("bench_importable")
@pytest.mark.parametrize(
    ("framework", "module", "function", "figures"), ADAPTERS, ids=[a[0] for a in ADAPTERS]
)
def test_each_adapter_turn_is_measured_on_a_copy(
    tmp_path: Path, framework: str, module: str, function: str, figures: dict[str, str]
) -> None:
    pytest.importorskip(framework)
    import importlib

    from bench.generate import generate_session

    measure = getattr(importlib.import_module(module), function)
    session = generate_session(tmp_path / "small.jsonl", 400).path
    before = session.read_bytes()
    workdir = tmp_path / "work"
    workdir.mkdir()

    result = measure(session, workdir, turns=3)

    for whole, own in figures.items():
        assert 0 < result[own] <= result[whole]
    assert session.read_bytes() == before
    assert list(workdir.iterdir()) == []  # the copy is closed and removed
