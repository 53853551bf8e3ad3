"""Issue 28: the 8-writer SIGKILL campaign on the database stores, short (bench/store_kills.py
runs it for minutes, with PostgreSQL crash-restarts and held locks). Writers append, compact,
prune, navigate and repair; every entry whose append returned must be stored exactly once and
every parentId must name a stored entry."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.store_kills import Outcome, run_campaign  # noqa: E402


def _url(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if kind == "sqlite":
        return f"sqlite://{tmp_path}/kills.db#{uuid.uuid4().hex}"
    server: Any = request.getfixturevalue("postgres")
    return f"{server.url}#{uuid.uuid4().hex}"


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_killed_writers_lose_duplicate_and_break_nothing(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    outcome: Outcome = run_campaign(
        _url(kind, tmp_path, request), 240, seed=28, store=kind, max_kills=12
    )
    assert outcome.kills >= 12 and outcome.acknowledged > 0
    assert (outcome.lost, outcome.duplicates, outcome.broken_links) == (0, 0, 0)
    assert outcome.failures == []
