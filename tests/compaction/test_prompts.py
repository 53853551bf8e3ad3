"""Prompt templates: package data, overrides, and the structure each summary prompt asks for."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from contextree.compaction.prompt_templates import PROMPT_NAMES, load_prompt
from summary_sections import (
    BRANCH_SECTIONS,
    FULL_SECTIONS,
    TURN_PREFIX_SECTIONS,
    assert_sections_in_order,
)


@pytest.mark.parametrize("name", PROMPT_NAMES)
def test_every_prompt_loads_without_trailing_newline(name: str) -> None:
    text = load_prompt(name)
    assert text.strip()
    assert not text.endswith("\n")


def test_prompt_names_match_the_packaged_files() -> None:
    directory = resources.files("contextree.compaction").joinpath("prompts")
    packaged = sorted(
        entry.name.removesuffix(".md")
        for entry in directory.iterdir()
        if entry.name.endswith(".md")
    )
    assert packaged == sorted(PROMPT_NAMES)


@pytest.mark.parametrize("name", ["initial-summary", "update-summary"])
def test_history_prompts_ask_for_every_section_in_order(name: str) -> None:
    text = load_prompt(name)
    assert_sections_in_order(text, FULL_SECTIONS)
    assert "- [x]" in text and "- [ ]" in text
    assert "- **Decision**:" in text
    assert "1. " in text


def test_branch_prompt_asks_for_the_branch_sections() -> None:
    text = load_prompt("branch-summary")
    assert_sections_in_order(text, BRANCH_SECTIONS)
    assert "## Critical Context" not in text


def test_turn_prefix_prompt_asks_for_its_three_sections() -> None:
    text = load_prompt("turn-prefix")
    assert_sections_in_order(text, TURN_PREFIX_SECTIONS)


def test_prompts_ask_to_keep_identifiers_and_the_pending_question() -> None:
    for name in ("initial-summary", "update-summary", "branch-summary"):
        text = load_prompt(name)
        assert "file paths" in text
        assert "error messages" in text
        assert "word for word" in text
    assert "<previous-summary>" in load_prompt("update-summary")


def test_short_summary_prompt_asks_for_first_person_sentences() -> None:
    text = load_prompt("short-summary")
    assert "two or three sentences" in text
    assert "first person" in text


def test_system_prompt_forbids_continuing_the_conversation() -> None:
    text = load_prompt("system")
    assert "do not continue it" in text
    assert "summary alone" in text


def test_branch_preamble_is_one_line() -> None:
    assert "\n" not in load_prompt("branch-preamble")


def test_prompts_are_not_pi_prose() -> None:
    # DESIGN "Borrowed prose": facts carry over, pi's wording does not.
    pi_phrases = (
        "context summarization assistant",
        "structured context checkpoint",
        "This is the PREFIX of a turn that was too large to keep",
        "The user explored a different conversation branch before returning here",
        "Summary of that exploration",
        "Use this EXACT format",
    )
    for name in PROMPT_NAMES:
        text = load_prompt(name)
        for phrase in pi_phrases:
            assert phrase.lower() not in text.lower(), (name, phrase)


def test_an_override_file_wins(tmp_path: Path) -> None:
    (tmp_path / "system.md").write_text("Summarize tersely.\n\n", encoding="utf-8")
    assert load_prompt("system", overrides_dir=tmp_path) == "Summarize tersely."


def test_a_missing_override_falls_back_to_the_builtin(tmp_path: Path) -> None:
    assert load_prompt("turn-prefix", overrides_dir=tmp_path) == load_prompt("turn-prefix")


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown prompt") as caught:
        load_prompt("compaction-summary")
    for name in PROMPT_NAMES:
        assert name in str(caught.value)
