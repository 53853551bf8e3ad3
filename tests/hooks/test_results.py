"""Hook results are read in one place: dicts by pi's camelCase keys, objects by snake_case."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from contextree.hooks.events import BeforeTreeResult, CompactingResult
from contextree.hooks.results import (
    before_compact_result,
    before_tree_result,
    compacting_result,
    hook_compaction,
    hook_field,
    hook_summary,
)


def test_a_dict_is_read_by_camel_case_and_an_object_by_snake_case() -> None:
    assert hook_field({"firstKeptEntryId": "e1"}, "firstKeptEntryId") == "e1"
    assert hook_field(SimpleNamespace(first_kept_entry_id="e2"), "firstKeptEntryId") == "e2"
    # one spelling per form: a dict's snake_case key is not pi's and is not read
    assert hook_field({"first_kept_entry_id": "e3"}, "firstKeptEntryId") is None


def test_a_hook_compaction_from_a_dict_and_from_an_object() -> None:
    given = hook_compaction(
        {"summary": "S", "firstKeptEntryId": "e1", "tokensBefore": "12", "shortSummary": "s"}
    )
    assert (given.summary, given.first_kept_entry_id, given.tokens_before) == ("S", "e1", 12)
    assert given.short_summary == "s" and given.preserve_data is None
    obj = hook_compaction(SimpleNamespace(summary="T", preserve_data={"k": 1}))
    assert obj.summary == "T" and obj.preserve_data == {"k": 1} and obj.first_kept_entry_id is None
    with pytest.raises(TypeError, match="string summary"):
        hook_compaction({"summary": 3})


def test_before_compact_and_compacting_results() -> None:
    assert before_compact_result({"cancel": True}).cancel is True
    assert before_compact_result({"compaction": {"summary": "x"}}).compaction == {"summary": "x"}
    steering = compacting_result({"context": ["a", 2], "prompt": "P", "preserveData": {"z": 1}})
    assert steering == CompactingResult(context=["a", "2"], prompt="P", preserve_data={"z": 1})
    same = CompactingResult(context=["x"])
    assert compacting_result(same) is same


def test_a_tree_result_tells_not_given_from_cleared() -> None:
    assert before_tree_result({}) == BeforeTreeResult()
    cleared = before_tree_result({"customInstructions": None, "label": None})
    assert cleared.custom_instructions == "" and cleared.label == ""
    assert cleared.replace_instructions is None
    set_ = before_tree_result({"customInstructions": "focus", "replaceInstructions": 1})
    assert set_.custom_instructions == "focus" and set_.replace_instructions is True
    obj = before_tree_result(SimpleNamespace(label="L", cancel=False))
    assert obj.label == "L" and obj.custom_instructions is None


def test_a_tree_summary_is_a_string_or_has_one() -> None:
    assert hook_summary("text").summary == "text"
    assert hook_summary({"summary": "s", "details": {"a": 1}}).details == {"a": 1}
    with pytest.raises(TypeError):
        hook_summary({"details": {}})
