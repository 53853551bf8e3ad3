"""``eval --recall`` (issue 26 item 7): a probe the summary dropped still counts when what the
recall tool shows for a search of the planted sentence's words (5 hits, their excerpts and the
requests they answer) holds its values."""

from __future__ import annotations

import json
from collections.abc import Sequence

from typer.testing import CliRunner

from contextree.cli.app import app
from contextree.compaction.offline import OfflineSummarizer
from contextree.entries.types import AgentMessage
from contextree.eval import run_eval
from contextree.eval.probes import Probe
from contextree.eval.recall_check import recall_query, visible_or_recalled


class _Forgetful(OfflineSummarizer):
    """A summarizer that keeps nothing of the conversation."""

    def summarize_messages(self, messages: Sequence[AgentMessage], **kw: object) -> str:
        return "## Goal\nKeep working."


def test_recall_finds_what_a_summary_that_keeps_nothing_dropped() -> None:
    seen = run_eval(_Forgetful(), sessions=6, rounds=3, ratios=(None,)).to_json()
    found = run_eval(
        _Forgetful(), sessions=6, rounds=3, ratios=(None,), kept=visible_or_recalled
    ).to_json()
    assert seen["check"] == "visible" and found["check"] == "visible_or_recalled"
    assert seen["mean_survival"] < 0.5  # the summary kept nothing: only what is still kept
    assert found["mean_survival"] > seen["mean_survival"] + 0.3


def test_the_query_leaves_the_values_out() -> None:
    probe = Probe(
        "p1", "fact", ("Postgres 15", "us-west-2"),
        text="The production database is Postgres 15 in us-west-2.",
    )  # fmt: skip
    query = recall_query(probe)
    assert "postgres" not in query and "west" not in query
    assert set(query.split()) == {"production", "database"}
    assert recall_query(Probe("p2", "fact", ("8472",))) == '"8472"'


def test_the_command_line_flag() -> None:
    result = CliRunner().invoke(
        app, ["eval", "--recall", "--sessions", "3", "--rounds", "2", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["check"] == "visible_or_recalled"


def test_only_what_the_tool_shows_counts_not_the_whole_entry() -> None:
    from contextree.eval.recall_check import recalled
    from contextree.session.tree import SessionTree
    from recall.recall_session import fold_away

    tree = SessionTree.in_memory()
    far = " ".join(["padding"] * 1500)
    tree.append_message(
        {"role": "user", "content": f"the invoice total is INV-7731 {far} and the PO is PO-5512"}
    )
    fold_away(tree, "## Goal\nPay it.")
    near = Probe("p1", "fact", ("INV-7731",), text="the invoice total is INV-7731")
    beyond = Probe("p2", "fact", ("PO-5512",), text="the invoice total and the PO is PO-5512")
    assert recalled(near, tree)
    assert not recalled(beyond, tree)  # 1,500 words away from "invoice": not in the excerpt
