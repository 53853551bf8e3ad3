"""The threshold trigger measures with the estimator ``tokens.estimator`` names, as the
compaction it starts does (it used pi's estimate whatever the setting said)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from contextree.integrations.core import ManagedSession
from contextree.settings.load import Settings
from contextree.settings.schema import CompactionSettings, PruneSettings

pytestmark = pytest.mark.anyio


def _settings(estimator: str) -> Settings:
    compaction = CompactionSettings(
        reserve_tokens=4_000, keep_recent_tokens=2_000, adjust_keep_recent_by_usage=False
    )
    return Settings(compaction=compaction, prune=PruneSettings(enabled=False), estimator=estimator)


@pytest.mark.parametrize(("estimator", "compacts"), [("pi", False), ("utf8", True)])
async def test_the_threshold_follows_the_estimator_setting(
    tmp_path: Path, estimator: str, compacts: bool
) -> None:
    # 8 x 5,000 "é": 10,000 tokens by UTF-16 units / 4, 20,000 by UTF-8 bytes / 4; the
    # window of 20,000 with 4,000 reserved compacts above 16,000.
    session = ManagedSession.open(
        tmp_path / "s.jsonl",
        model="openai:gpt-4o",
        context_window=20_000,
        settings=_settings(estimator),
    )
    start = int(time.time() * 1000)
    text = [{"type": "text", "text": "é" * 5_000}]
    session.append([{"role": "user", "content": text, "timestamp": start + i} for i in range(8)])
    result = await session.maybe_compact()
    assert (result is not None) is compacts
