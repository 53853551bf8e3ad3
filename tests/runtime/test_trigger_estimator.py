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


def test_an_offline_first_candidate_is_used_as_it_is_before_any_fallback(tmp_path: Path) -> None:
    # The offline summarizer first, a model as the fallback: the offline summarizer cannot
    # fail, so the fallback is never reached; it must get the request itself (not a prompt
    # through the retrying client, which would parse the prompt back and record "model").
    from contextree.compaction.offline import OfflineSummarizer
    from contextree.hooks import HookRegistry
    from contextree.llm import OpenAIClient
    from contextree.runtime.retry import FallbackClient
    from contextree.runtime.triggers import CompactionTriggers
    from contextree.session.tree import SessionTree

    offline = OfflineSummarizer()
    model = OpenAIClient("gpt-4o-mini", base_url="http://127.0.0.1:9", api_key="k")

    async def emit(*args: object, **kwargs: object) -> None:
        return None

    triggers = CompactionTriggers(
        SessionTree.open(tmp_path / "s.jsonl"),
        Settings,
        hooks=HookRegistry(),
        redactor=None,
        emit=emit,
        model=lambda: ("openai", "gpt-4o-mini"),
        context_window=lambda: 128_000,
        candidates=lambda: [offline, model],
    )
    assert triggers._one_client([offline, model]) is offline
    assert isinstance(triggers._one_client([model, offline]), FallbackClient)
