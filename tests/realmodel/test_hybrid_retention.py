"""Issue 25 item 8 with the real local model: the hybrid summary (SmolLM2-135M's text and the
recorded facts) keeps at least what the offline summary keeps, on eval sessions compacted
over two rounds. The model is tiny and its text poor: the recorded facts carry the rest."""

from __future__ import annotations

import asyncio

import pytest

from contextree.compaction.offline import OfflineSummarizer
from contextree.eval.corpus import build_corpus
from contextree.eval.report import EvalReport
from contextree.eval.run import run_sessions
from contextree.llm.base import ModelClient
from contextree.llm.registry import create_client
from realmodel.conftest import N_CTX, LlamaServer
from realmodel.test_llamacpp import Recording

pytestmark = pytest.mark.realmodel

_SESSIONS = 1
_ROUNDS = 2


def _run(client: ModelClient) -> EvalReport:
    corpus = build_corpus(sessions=_SESSIONS, rounds=_ROUNDS, seed=25)
    return asyncio.run(
        run_sessions(corpus, client, rounds=_ROUNDS, ratios=(0.2,), context_window=N_CTX)
    )


def test_the_hybrid_summary_keeps_what_the_offline_one_keeps(llama_server: LlamaServer) -> None:
    model = Recording(create_client(llama_server.spec, base_url=llama_server.base_url, timeout=600))
    hybrid, offline = _run(model), _run(OfflineSummarizer())
    assert model.calls >= _SESSIONS * _ROUNDS and model.overflows == []
    with_model, alone = hybrid.budgets[0], offline.budgets[0]
    assert with_model.overall().survival >= alone.overall().survival
    lost = {p.id for p in with_model.lost_probes()} - {p.id for p in alone.lost_probes()}
    assert lost == set()
