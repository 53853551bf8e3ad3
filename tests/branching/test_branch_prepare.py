"""prepare_branch_entries (pi-behaviour.md §9.2)."""

from __future__ import annotations

from typing import Any

from branch_builders import assistant, tool_result, user

from contextree.branching import prepare_branch_entries
from contextree.compaction.file_ops import FileOps
from contextree.entries.types import Entry
from contextree.tokens.estimate import estimate_tokens

_TS = "2026-01-01T00:00:00.000Z"


def _entry(kind: str, entry_id: str, **fields: Any) -> Entry:
    return {"type": kind, "id": entry_id, "parentId": None, "timestamp": _TS, **fields}


def _message(entry_id: str, message: dict[str, Any]) -> Entry:
    return _entry("message", entry_id, message=message)


def _compaction(entry_id: str, summary: str, **fields: Any) -> Entry:
    return _entry(
        "compaction", entry_id, summary=summary, firstKeptEntryId="x", tokensBefore=900, **fields
    )


def _branch_summary(entry_id: str, summary: str, **fields: Any) -> Entry:
    return _entry("branch_summary", entry_id, fromId="x", summary=summary, **fields)


def _mixed_entries() -> list[Entry]:
    return [
        _compaction("c1", "earlier work", shortSummary="short"),
        _message("u1", user("read the file")),
        _message("a1", assistant("", ("read", {"path": "a.py"}))),
        _message("t1", tool_result("file body")),
        _entry("custom_message", "cm", customType="ext", content="note", display=True),
        _branch_summary("b1", "other branch"),
        _entry("label", "l1", targetId="u1", label="x"),
        _entry("custom", "cu", customType="ext", data={}),
        _entry("model_change", "mc", provider="openai", modelId="gpt-4o"),
        _entry("thinking_level_change", "th", thinkingLevel="high"),
    ]


def test_entries_become_messages_oldest_first_and_pis_selection_leaves_tool_results_out() -> None:
    prep = prepare_branch_entries(_mixed_entries(), tool_result_chars=0)
    assert [m["role"] for m in prep.messages] == [
        "compactionSummary",
        "user",
        "assistant",
        "custom",
        "branchSummary",
    ]
    compaction = prep.messages[0]
    assert compaction["summary"] == "earlier work"
    assert compaction["tokensBefore"] == 900
    assert compaction["shortSummary"] == "short"
    assert prep.messages[3]["content"] == "note"
    assert prep.messages[4] == {
        "role": "branchSummary",
        "summary": "other branch",
        "fromId": "x",
        "timestamp": prep.messages[4]["timestamp"],
    }
    assert prep.total_tokens == sum(estimate_tokens(m) for m in prep.messages)
    assert prep.file_ops == FileOps(read={"a.py"})


def test_an_empty_branch_summary_still_counts_as_a_message() -> None:
    prep = prepare_branch_entries([_branch_summary("b1", "")])
    assert [m["role"] for m in prep.messages] == ["branchSummary"]


def test_a_budget_keeps_the_newest_messages() -> None:
    entries = [_message(f"u{i}", user(f"message {i} " + "x" * 390)) for i in range(10)]
    each = estimate_tokens(entries[0]["message"])
    prep = prepare_branch_entries(entries, each * 3 + 1)
    assert [m["content"][0]["text"][:9] for m in prep.messages] == [
        "message 7",
        "message 8",
        "message 9",
    ]
    assert prep.total_tokens == each * 3


def test_no_budget_or_a_negative_one_keeps_everything() -> None:
    entries = [_message(f"u{i}", user("x" * 4000)) for i in range(5)]
    assert len(prepare_branch_entries(entries, 0).messages) == 5
    assert len(prepare_branch_entries(entries, -10).messages) == 5


def test_an_overflowing_summary_entry_goes_in_while_under_90_percent_of_the_budget() -> None:
    # 100-token budget; the newest message uses 80 (< 90) so the big compaction still goes in.
    entries = [
        _message("u0", user("old message")),
        _compaction("c1", "s" * 400),
        _message("u1", user("y" * 320)),
    ]
    prep = prepare_branch_entries(entries, 100)
    assert [m["role"] for m in prep.messages] == ["compactionSummary", "user"]
    assert prep.total_tokens == 80 + 100
    # The same for a branch summary.
    entries[1] = _branch_summary("b1", "s" * 400)
    prep = prepare_branch_entries(entries, 100)
    assert [m["role"] for m in prep.messages] == ["branchSummary", "user"]


def test_an_overflowing_summary_entry_is_dropped_at_90_percent_of_the_budget() -> None:
    entries = [_compaction("c1", "s" * 400), _message("u1", user("y" * 360))]
    prep = prepare_branch_entries(entries, 100)
    assert [m["role"] for m in prep.messages] == ["user"]
    assert prep.total_tokens == 90


def test_an_overflowing_plain_message_is_never_squeezed_in() -> None:
    entries = [_message("u0", user("z" * 400)), _message("u1", user("y" * 40))]
    prep = prepare_branch_entries(entries, 100)
    assert [m["content"][0]["text"][0] for m in prep.messages] == ["y"]


def test_the_message_that_overflows_still_contributes_its_file_operations() -> None:
    entries = [
        _message("a0", assistant("", ("read", {"path": "old.py"}))),
        _message("a1", assistant("w" * 400, ("write", {"path": "big.py"}))),
        _message("u1", user("y" * 40)),
    ]
    prep = prepare_branch_entries(entries, 50)
    assert [m["role"] for m in prep.messages] == ["user"]
    # The walk stops at the overflow: a0 is never reached.
    assert prep.file_ops == FileOps(written={"big.py"})


def test_file_operations_are_seeded_from_generated_branch_summaries_only() -> None:
    details = {"readFiles": ["r.md"], "modifiedFiles": ["m.py"]}
    entries = [
        _message("u0", user("y" * 4000)),
        _branch_summary("b1", "mine", details=details, fromHook=False, fromExtension=False),
        _branch_summary("b2", "hook", details={"readFiles": ["hook.md"]}, fromHook=True),
        _branch_summary("b3", "fork hook", details={"readFiles": ["ext.md"]}, fromExtension=True),
        _compaction("c1", "compacted", details={"readFiles": ["compaction.md"]}),
    ]
    prep = prepare_branch_entries(entries, 10)
    # Seeding happens before the budget walk, so even summaries left out count.
    assert prep.file_ops == FileOps(read={"r.md"}, edited={"m.py"})


def test_tool_results_with_their_call_are_kept_cut_to_a_bounded_length() -> None:
    # A deliberate difference from pi (docs/compatibility.md): a branch summary can say what
    # the tests printed. Each result is cut to 2,000 characters, as oh-my-pi does.
    entries = [
        _message("u1", user("run it")),
        _message("a1", assistant("", ("bash", {"command": "pytest"}))),
        _message("t1", tool_result("x" * 5000 + "41 passed", name="bash")),
    ]
    (result,) = [m for m in prepare_branch_entries(entries).messages if m["role"] == "toolResult"]
    text = result["content"][0]["text"]
    assert text.startswith("x" * 2000) and text.endswith("[... 3009 more characters cut]")
    assert entries[2]["message"]["content"][0]["text"].endswith("41 passed")  # not mutated
    default_roles = [m["role"] for m in prepare_branch_entries(_mixed_entries()).messages]
    assert default_roles[3] == "toolResult"


def test_a_tool_result_without_its_call_in_the_branch_is_left_out() -> None:
    entries = [_message("u1", user("hi")), _message("t1", tool_result("orphan output"))]
    assert [m["role"] for m in prepare_branch_entries(entries).messages] == ["user"]
