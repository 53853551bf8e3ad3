"""The retention eval itself (issue 25 item 7): its corpus, its scoring and its report."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from contextree.compaction.offline import OfflineSummarizer, SummaryKind
from contextree.entries.types import AgentMessage
from contextree.eval import PROBE_KINDS, build_corpus, run_eval
from contextree.eval.corpus import corpus_phrasings
from contextree.eval.phrasings import HELD_OUT, PHRASINGS, TUNING
from contextree.eval.report import Survival
from contextree.eval.score import context_text


def test_the_corpus_has_30_sessions_of_five_domains_with_every_kind_in_each() -> None:
    corpus = build_corpus()
    assert len(corpus) >= 30
    assert {s.domain for s in corpus} == {"coding", "ops", "data", "writing", "support"}
    for session in corpus:
        assert sorted(p.probe.kind for p in session.probes) == sorted(PROBE_KINDS)
        assert len(session.slices) == 5


def test_every_kind_has_five_phrasings_and_held_out_ones_in_every_placement() -> None:
    for kind in PROBE_KINDS:
        assert len([p for p in TUNING if p.kind == kind]) >= 5, kind
        assert [p for p in HELD_OUT if p.kind == kind], kind
    assert {p.placement for p in PHRASINGS} == {"user", "assistant", "tool", "system"}
    assert {p.placement for p in HELD_OUT} == {"user", "assistant", "tool", "system"}
    assert corpus_phrasings(build_corpus()) == {p.key for p in PHRASINGS}
    positions = Counter(p.probe.position for s in build_corpus() for p in s.probes)
    assert set(positions) == {"early", "middle", "late"}


def test_each_probe_is_planted_verbatim_in_its_message() -> None:
    for session in build_corpus(sessions=10):
        for planted in session.probes:
            message = session.slices[planted.probe.segment][planted.message]
            text = context_text([message])  # type: ignore[list-item]
            for value in planted.probe.values:
                assert value in text, (planted.probe.id, value)


def test_the_corpus_is_deterministic() -> None:
    assert build_corpus(sessions=3, seed=7) == build_corpus(sessions=3, seed=7)
    assert build_corpus(sessions=3, seed=7) != build_corpus(sessions=3, seed=8)


class _Dropping(OfflineSummarizer):
    """The offline summarizer, with every line that names a value of some probes removed."""

    def __init__(self, values: set[str]) -> None:
        super().__init__()
        self.values = {v.casefold() for v in values}

    def summarize_messages(self, messages: Sequence[AgentMessage], **kw: object) -> str:
        text = super().summarize_messages(messages, **kw)  # type: ignore[arg-type]
        return "\n".join(
            line for line in text.splitlines() if not any(v in line.casefold() for v in self.values)
        )


class _Everything(OfflineSummarizer):
    """A summarizer that keeps the whole conversation (and the previous summary)."""

    def summarize_messages(
        self,
        messages: Sequence[AgentMessage],
        *,
        kind: SummaryKind = "initial",
        previous_summary: str | None = None,
        **kw: object,
    ) -> str:
        from contextree.context.convert import convert_to_llm

        return (previous_summary or "") + "\n" + context_text(convert_to_llm(messages))


def test_a_summarizer_that_drops_a_kind_scores_zero_on_it() -> None:
    corpus = build_corpus(sessions=10, rounds=3)
    values = {v for s in corpus for p in s.probes if p.probe.kind == "fact" for v in p.probe.values}
    report = run_eval(_Dropping(values), sessions=10, rounds=3, ratios=(None,)).to_json()
    assert report["kinds"]["fact"]["scored"] > 0
    assert report["kinds"]["fact"]["survival"] == 0
    assert report["kinds"]["constraint"]["survival"] > 0


def test_a_summarizer_that_keeps_everything_scores_one() -> None:
    report = run_eval(_Everything(), sessions=10, rounds=3, ratios=(None,)).to_json()
    assert report["scored"] > 0
    assert report["mean_survival"] == 1.0
    assert report["lost_in_rounds"] == []


def test_the_json_report_has_the_figures_the_issue_names() -> None:
    report = run_eval(OfflineSummarizer(), sessions=5, rounds=2).to_json()
    assert 0 <= report["mean_survival"] <= 1
    assert set(report["kinds"]) == set(PROBE_KINDS)
    assert 0 <= report["budgets"]["0.2"]["mean_survival"] <= 1
    assert 0 <= report["held_out"]["mean_survival"] <= 1
    assert [r["round"] for r in report["per_round"]] == [1, 2]
    assert report["rounds"] == 2
    assert isinstance(report["lost_in_rounds"], list)
    assert report == run_eval(OfflineSummarizer(), sessions=5, rounds=2).to_json()


# --- a user's own session ------------------------------------------------------------------------


def _write_session(path: Path, corpus_index: int = 0) -> list[str]:
    """A session file made of one generated session; returns one probe line per probe."""
    from contextree.session.tree import SessionTree

    session = build_corpus(sessions=corpus_index + 1, rounds=3)[corpus_index]
    tree = SessionTree.open(path)
    for piece in session.slices:
        for message in piece:
            tree.append_message(message)
    return [
        json.dumps({"kind": p.probe.kind, "values": list(p.probe.values)}) for p in session.probes
    ]


def test_a_users_session_and_probes_file_are_scored(tmp_path: Path) -> None:
    lines = _write_session(tmp_path / "s.jsonl")
    (tmp_path / "p.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = _cli(
        "eval",
        "--session",
        str(tmp_path / "s.jsonl"),
        "--probes",
        str(tmp_path / "p.jsonl"),
        "--rounds",
        "3",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["sessions"] == 1 and report["probes"] == len(lines)
    assert 0 <= report["mean_survival"] <= 1


def test_a_share_of_nothing_scored_is_null_not_one(tmp_path: Path) -> None:
    # A user's probes have no held-out phrasings: that split scores 0 of 0.
    lines = _write_session(tmp_path / "s.jsonl")
    (tmp_path / "p.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ["--session", str(tmp_path / "s.jsonl"), "--probes", str(tmp_path / "p.jsonl")]
    result = _cli("eval", *args, "--rounds", "3", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["held_out"] == {"mean_survival": None, "kept": 0, "scored": 0}
    assert report["tuning"]["scored"] > 0 and report["tuning"]["mean_survival"] is not None
    assert Survival(0, 0).to_json() == {"survival": None, "kept": 0, "scored": 0}
    assert Survival(1, 2).to_json() == {"survival": 0.5, "kept": 1, "scored": 2}


def test_a_bad_probes_line_is_one_error_naming_file_line_and_field(tmp_path: Path) -> None:
    lines = _write_session(tmp_path / "s.jsonl")
    probes = tmp_path / "p.jsonl"
    probes.write_text(lines[0] + '\n{"kind": "fact", "values": "x"}\n', encoding="utf-8")
    result = _cli("eval", "--session", str(tmp_path / "s.jsonl"), "--probes", str(probes))
    assert result.exit_code == 1
    assert f'{probes}:2: field "values": expected a non-empty list of strings' in result.stderr
    assert "Traceback" not in result.output


def test_session_without_probes_is_a_usage_error(tmp_path: Path) -> None:
    result = _cli("eval", "--session", str(tmp_path / "s.jsonl"))
    assert result.exit_code == 2
    assert "--session and --probes go together" in result.stderr


def test_the_text_report_is_a_table_of_kinds_and_splits() -> None:
    result = _cli("eval", "--sessions", "5", "--rounds", "2")
    assert result.exit_code == 0, result.output
    for word in ("fact", "question", "held-out phrasings", "0.2 of original", "Per round"):
        assert word in result.stdout


def _cli(*args: str) -> Any:
    from typer.testing import CliRunner

    from contextree.cli.app import app

    return CliRunner().invoke(app, list(args))


class _ForgetfulModel:
    """A model client that answers every summary request with the same two lines."""

    name = "forgetful"

    async def complete(self, request: Any) -> Any:
        from contextree.llm.base import Completion, make_usage

        return Completion(
            content=[{"type": "text", "text": "## Goal\nKeep going."}],
            usage=make_usage(input=1, output=1),
            stop_reason="stop",
            model="forgetful",
        )


def test_a_model_summarizer_runs_through_the_prompt_path_with_recorded_facts() -> None:
    # The model forgets everything; the recorded facts appended to its summary (hybrid) keep
    # what the offline summary would (issue 25 item 8), preferences included.
    report = run_eval(_ForgetfulModel(), sessions=5, rounds=2, ratios=(None,)).to_json()  # type: ignore[arg-type]
    assert report["model"] == "forgetful"
    assert report["kinds"]["constraint"]["survival"] > 0
    assert report["kinds"]["preference"]["survival"] > 0
    assert report["mean_survival"] >= 0.9


def test_a_probes_ask_is_read_and_must_be_a_string() -> None:
    from contextree.eval.probes_file import ProbesFileError, probe_from_object

    probe = probe_from_object(
        {"kind": "fact", "values": ["8472"], "ask": "which port was it again?"}, "p", default_id="a"
    )
    assert probe.ask == "which port was it again?"
    assert probe_from_object({"kind": "fact", "values": ["x"]}, "p", default_id="b").ask == ""
    with pytest.raises(ProbesFileError, match='p: field "ask": expected a string'):
        probe_from_object({"kind": "fact", "values": ["x"], "ask": 3}, "p", default_id="c")


def test_the_users_own_question_brings_the_value_back(tmp_path: Path) -> None:
    from contextree.eval.probes import Probe
    from contextree.eval.recall_check import visible_or_asked
    from recall.recall_session import TOOL_DETAIL, compacted_file

    tree = compacted_file(tmp_path / "s.jsonl")
    probe = Probe(id="r", kind="fact", values=("retries = 7",), text=f"{TOOL_DETAIL} is 7")
    assert not visible_or_asked(probe, tree)  # no question written: only what is visible
    asked = Probe(id="r", kind="fact", values=("retries = 7",), ask=f"what's {TOOL_DETAIL} at?")
    assert visible_or_asked(asked, tree)
