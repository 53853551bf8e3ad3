"""One ``SummaryOptions`` built from ``Settings`` reaches compactions and branch summaries alike
(issue 12 point 3): the prompts directory, the redaction patterns, the window and the budgets."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from contextree.branching.navigate import navigate_tree
from contextree.compaction.options import SummaryOptions, summary_model, summary_options
from contextree.compaction.run import (
    CompactionOutcome,
    CompactionPlan,
    compact_session,
    plan_compaction,
)
from contextree.llm.scripted import ScriptedClient
from contextree.security.redact import RedactionSettings
from contextree.settings.load import Settings
from contextree.settings.schema import BranchSummarySettings, CompactionSettings
from sample_session import KEEP_CLEAN, build_session, open_session, settings

SECRET = "project-zebra-42"


def _settings(tmp_path: Path) -> Settings:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "initial-summary.md").write_text("OUR OWN INITIAL PROMPT", encoding="utf-8")
    (prompts / "branch-summary.md").write_text("OUR OWN BRANCH PROMPT", encoding="utf-8")
    return Settings(
        compaction=CompactionSettings(summary_tokens=700, record_facts=False),
        branch_summary=BranchSummarySettings(reserve_tokens=1234),
        prompts_dir=str(prompts),
        redaction=RedactionSettings(patterns=(r"project-zebra-\d+",)),
        context_windows={"openai:tiny-model": 50_000},
    )


def test_summary_options_follow_every_relevant_setting(tmp_path: Path) -> None:
    loaded = _settings(tmp_path)
    options = summary_options(
        loaded, model="openai:tiny-model", custom_instructions="focus", environ={}
    )
    assert options.prompts_dir == tmp_path / "prompts"
    assert options.context_window == 50_000
    # the budgets follow the compaction settings the preparation is made with
    assert options.summary_tokens is None and options.record_facts is None
    assert options.summary_budget(loaded.compaction) == 700
    assert options.summary_budget(CompactionSettings(summary_tokens=40_000)) == 50_000 // 4
    assert options.branch_reserve_tokens == 1234
    assert options.custom_instructions == "focus"
    assert options.redactor is not None
    assert SECRET not in options.redactor.redact(f"the code name is {SECRET}")


def test_no_model_means_no_window_and_disabled_redaction_means_no_redactor() -> None:
    loaded = Settings(redaction=RedactionSettings(enabled=False))
    options = summary_options(loaded)
    assert options.context_window is None
    assert options.redactor is None
    assert summary_model(loaded) is None
    assert summary_model(Settings(model="openai:x")) == "openai:x"
    endpoint = Settings(compaction=CompactionSettings(remote_endpoint="http://127.0.0.1:9"))
    assert summary_model(endpoint) == "remote:http://127.0.0.1:9"


def test_a_compaction_uses_the_options_prompts_redactor_and_budget(tmp_path: Path) -> None:
    tree = open_session(tmp_path / "s.jsonl")
    tree.append_message({"role": "user", "content": f"remember {SECRET}", "timestamp": 1})
    tree.append_message(
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "timestamp": 1}
    )
    build_session(tree)
    client = ScriptedClient(default="## Goal\nsummary")
    options = summary_options(_settings(tmp_path), environ={})
    compaction = settings(KEEP_CLEAN, summary_tokens=700)
    outcome = asyncio.run(compact_session(tree, client, settings=compaction, options=options))
    assert isinstance(outcome, CompactionOutcome)
    request = client.requests[0]
    prompt = str(request.messages[0]["content"][0]["text"])
    assert "OUR OWN INITIAL PROMPT" in prompt
    assert request.max_tokens <= 700
    assert "remember [REDACTED" in prompt and SECRET not in prompt


def test_old_keywords_still_apply_over_the_options(tmp_path: Path) -> None:
    tree = open_session(tmp_path / "s.jsonl")
    build_session(tree)
    client = ScriptedClient(default="## Goal\nsummary")
    options = replace(summary_options(_settings(tmp_path), environ={}), summary_tokens=900)
    asyncio.run(
        compact_session(
            tree, client, settings=settings(KEEP_CLEAN), options=options, summary_tokens=300
        )
    )
    assert client.requests[0].max_tokens <= 300


def test_a_branch_summary_uses_the_same_options(tmp_path: Path) -> None:
    tree = open_session(tmp_path / "s.jsonl")
    ids = build_session(tree)
    tree.append_message({"role": "user", "content": f"the code name is {SECRET}", "timestamp": 2})
    client = ScriptedClient(default="branch summary text")
    options = summary_options(_settings(tmp_path), environ={}, custom_instructions="be brief")
    result = asyncio.run(
        navigate_tree(tree, ids["a3"], summarize=True, client=client, options=options)
    )
    assert result.summary_entry is not None
    prompt = str(client.requests[0].messages[0]["content"][0]["text"])
    assert "OUR OWN BRANCH PROMPT" in prompt
    assert "Additional focus: be brief" in prompt
    assert SECRET not in prompt and "[REDACTED" in prompt


def test_default_options_keep_the_built_in_redaction() -> None:
    options = SummaryOptions()
    assert options.redactor is not None
    assert options.short_summary is True


def test_the_dry_run_plan_is_the_run_s_cut_and_budget_and_writes_nothing(tmp_path: Path) -> None:
    from contextree.compaction.budget import summary_token_budget
    from contextree.compaction.prepare import NothingToCompact
    from contextree.compaction.run import CompactionPlan, plan_compaction

    path = tmp_path / "s.jsonl"
    tree = open_session(path)
    build_session(tree)
    before = path.read_bytes()
    compaction = settings(KEEP_CLEAN)
    options = replace(SummaryOptions(), context_window=8_000)
    plan = plan_compaction(tree, settings=compaction, options=options)
    assert isinstance(plan, CompactionPlan)
    assert path.read_bytes() == before
    assert plan.summary_budget == summary_token_budget(compaction, context_window=8_000) == 2000
    assert plan.path[plan.preparation.first_kept_entry_index]["id"] == (
        plan.preparation.first_kept_entry_id
    )
    client = ScriptedClient(default="## Goal\nsummary")
    outcome = asyncio.run(compact_session(tree, client, settings=compaction, options=options))
    assert isinstance(outcome, CompactionOutcome)
    assert outcome.entry["firstKeptEntryId"] == plan.preparation.first_kept_entry_id
    assert client.requests[0].max_tokens <= plan.summary_budget
    again = plan_compaction(tree, settings=compaction, options=options)
    assert isinstance(again, NothingToCompact)


def test_the_tokens_estimator_setting_reaches_the_compaction(tmp_path: Path) -> None:
    # tokens.estimator used to reach only the cost report: compactions measured with pi's.
    assert summary_options(Settings(), environ={}).estimator is not None
    tree = open_session(tmp_path / "session.jsonl")
    build_session(tree)
    tree.append_message({"role": "user", "content": "é" * 4000, "timestamp": 1})
    compaction = settings(KEEP_CLEAN)
    befores = {}
    for name in ("pi", "utf8"):
        options = summary_options(Settings(estimator=name), environ={})
        assert options.estimator is not None and options.estimator.name == name
        plan = plan_compaction(tree, settings=compaction, options=options)
        assert isinstance(plan, CompactionPlan)
        befores[name] = plan.preparation.tokens_before
    # "é" is one UTF-16 unit but two UTF-8 bytes: utf8 counts the 4,000 of them twice.
    assert befores["utf8"] - befores["pi"] >= 1000
