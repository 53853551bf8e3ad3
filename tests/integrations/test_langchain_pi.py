"""A session file written through ContextreeMiddleware opens in the real pi 0.73.1 with the same
context (differential; skips without pi, fails in CI where .ci/run installs it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from contextree.session import SessionTree
from differential.installs import Install, find_pi, require
from differential.pi_checks import check_contexts
from fakes.langchain_server import MeasuringFakeServer
from integrations.langchain_helpers import agent, ask, compactions, middleware, script_turn

pytestmark = pytest.mark.differential


@pytest.fixture(scope="module")
def pi() -> Install:
    return require(find_pi(), "PI_UNAVAILABLE")


@pytest.fixture
def server() -> Iterator[MeasuringFakeServer]:
    with MeasuringFakeServer() as fake:
        yield fake


def test_pi_reads_the_context_the_agent_was_sent(
    pi: Install, server: MeasuringFakeServer, tmp_path: Path
) -> None:
    path = tmp_path / "langchain.jsonl"
    mw = middleware(path)
    graph = agent(server, mw)
    for turn in range(14):
        script_turn(server, turn)
        graph.invoke(ask(turn))
    tree = SessionTree.open(path)
    assert len(compactions(tree)) >= 2
    written = path.read_bytes()
    # Every entry as the leaf: before, between and after the compactions.
    leaves = [entry["id"] for entry in tree.get_entries()]

    (answer,) = pi.run(
        [{"file": str(path), "leaves": leaves, "serialize": True}], tmp_path / "home"
    )

    assert path.read_bytes() == written  # pi changed nothing
    assert answer["leafId"] == tree.leaf_id
    assert check_contexts(tree, answer) == len(leaves)
    assert tree.build_session_context().messages == mw.session.context_messages()
