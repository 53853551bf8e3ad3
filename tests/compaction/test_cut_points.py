"""Cut points, turn starts and ``find_cut_point`` (pi-behaviour.md §5.1-5.3, DESIGN decision 2)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from contextree.compaction import cut_points
from contextree.compaction.cut_points import (
    CutPoint,
    find_cut_point,
    find_turn_start_index,
    find_valid_cut_points,
)
from contextree.tokens.estimate import estimate_tokens
from core_helpers import (
    Chain,
    assistant,
    bash_execution,
    chars,
    tool_call,
    tool_result,
    user,
)


def _message(role: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": role,
        "parentId": None,
        "timestamp": "t",
        "message": {"role": role, **fields},
    }


def _entry(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": kind, "parentId": None, "timestamp": "t", **fields}


# --- valid cut points (§5.1) --------------------------------------------------------------------

_CUTS = {
    "user": _message("user", content="u"),
    "assistant": _message("assistant", content=[]),
    "bashExecution": _message("bashExecution", command="ls", output=""),
    "branchSummary": _message("branchSummary", summary="s"),
    "compactionSummary": _message("compactionSummary", summary="s"),
    "custom": _message("custom", content="c"),  # pi counts v3 custom messages as cut points
    "custom_message entry": _entry("custom_message", customType="x", content="c"),
    "branch_summary entry": _entry("branch_summary", fromId="root", summary="s"),
}
_NOT_CUTS = {
    "toolResult": _message("toolResult", toolCallId="c", content=[]),
    "developer": _message("developer", content="d"),
    "pythonExecution": _message("pythonExecution", code="1", output=""),
    "fileMention": _message("fileMention", files=[]),
    "zz_unknown role": _message("zz_unknown"),
    "compaction": _entry("compaction", summary="s", firstKeptEntryId="x", tokensBefore=1),
    "thinking_level_change": _entry("thinking_level_change", thinkingLevel="high"),
    "model_change": _entry("model_change", provider="p", modelId="m"),
    "label": _entry("label", targetId="x"),
    "custom entry": _entry("custom", customType="x"),
    "session_info": _entry("session_info", name="n"),
    "zz_unknown type": _entry("zz_unknown"),
}


@pytest.mark.parametrize("entry", _CUTS.values(), ids=_CUTS)
def test_cut_points(entry: dict[str, Any]) -> None:
    assert find_valid_cut_points([entry], 0, 1) == [0]


@pytest.mark.parametrize("entry", _NOT_CUTS.values(), ids=_NOT_CUTS)
def test_not_cut_points(entry: dict[str, Any]) -> None:
    assert find_valid_cut_points([entry], 0, 1) == []


def test_cut_points_are_searched_in_the_given_range_only() -> None:
    entries = [_CUTS["user"], _NOT_CUTS["toolResult"], _CUTS["assistant"], _CUTS["user"]]
    assert find_valid_cut_points(entries, 0, 4) == [0, 2, 3]
    assert find_valid_cut_points(entries, 1, 3) == [2]


# --- turn starts (§5.2) ---------------------------------------------------------------------------


def test_turn_start_is_the_nearest_user_bash_custom_message_or_branch_summary() -> None:
    entries = [
        _CUTS["user"],  # 0
        _CUTS["assistant"],  # 1
        _NOT_CUTS["toolResult"],  # 2
        _CUTS["bashExecution"],  # 3
        _CUTS["assistant"],  # 4
        _CUTS["custom_message entry"],  # 5
        _CUTS["assistant"],  # 6
        _CUTS["branch_summary entry"],  # 7
        _CUTS["assistant"],  # 8
    ]
    assert find_turn_start_index(entries, 2, 0) == 0
    assert find_turn_start_index(entries, 4, 0) == 3
    assert find_turn_start_index(entries, 3, 0) == 3  # inclusive
    assert find_turn_start_index(entries, 6, 0) == 5
    assert find_turn_start_index(entries, 8, 0) == 7
    assert find_turn_start_index(entries, 2, 1) == -1  # never below start
    assert find_turn_start_index([_CUTS["assistant"], _CUTS["custom"]], 1, 0) == -1


# --- find_cut_point (§5.3) ------------------------------------------------------------------------


def _tokens(chain: Chain) -> list[int]:
    return [estimate_tokens(e["message"]) if e["type"] == "message" else 0 for e in chain.entries]


def test_the_seed_example_is_not_a_split_turn_under_decision_2() -> None:
    chain = Chain()
    chain.msg(user(chars(100)))
    chain.msg(assistant(chars(1000)))
    chain.add("thinking_level_change", thinkingLevel="high")
    chain.msg(user(chars(10)))
    chain.msg(assistant(chars(100)))
    assert _tokens(chain) == [100, 1000, 0, 10, 100]
    cut = find_cut_point(chain.entries, 0, 5, keep_recent_tokens=105)
    # pi 0.73.1 returns {firstKept 2, turnStart 0, split true}: the pulled-in thinking change
    # is not a user message, so pi treats the whole previous turn as a "turn prefix" and pays
    # for a second summary of it. Our first kept message (index 3) starts a turn, so the cut
    # is a clean turn boundary (DESIGN decision 2). The first kept entry is the same as pi's.
    assert cut == CutPoint(2, -1, False)


def test_a_cut_at_a_user_message_is_not_split() -> None:
    chain = Chain()
    chain.msg(user(chars(100)))
    chain.msg(assistant(chars(100)))
    chain.msg(user(chars(10)))
    chain.msg(assistant(chars(10)))
    assert find_cut_point(chain.entries, 0, 4, keep_recent_tokens=20) == CutPoint(2, -1, False)


def test_a_cut_inside_a_turn_is_split_with_the_turn_start_at_its_user_message() -> None:
    chain = Chain()
    chain.msg(user(chars(10)))  # 0
    chain.msg(assistant(chars(100), calls=[tool_call("c1")]))  # 1
    chain.msg(tool_result("c1", chars(100)))  # 2
    chain.msg(assistant(chars(10), calls=[tool_call("c2")]))  # 3
    chain.msg(tool_result("c2", chars(10)))  # 4
    chain.msg(assistant(chars(10)))  # 5
    cut = find_cut_point(chain.entries, 0, 6, keep_recent_tokens=35)
    # From the end: 10 + 10 + 12 = 32 < 35; the toolResult at 2 crosses the budget but is no
    # cut point, so the cut moves forward to the assistant at 3, inside the turn begun at 0.
    assert cut == CutPoint(3, 0, True)


def test_metadata_pulled_ahead_of_an_assistant_keeps_the_split() -> None:
    chain = Chain()
    chain.msg(user(chars(10)))  # 0
    chain.msg(assistant(chars(100), calls=[tool_call("c1")]))  # 1
    chain.msg(tool_result("c1", chars(100)))  # 2
    chain.add("model_change", provider="p", modelId="m")  # 3
    chain.add("label", targetId="e001", label="x")  # 4
    chain.msg(assistant(chars(50)))  # 5
    cut = find_cut_point(chain.entries, 0, 6, keep_recent_tokens=50)
    assert cut == CutPoint(3, 0, True)


def test_the_walk_stops_pulling_metadata_at_a_compaction_and_at_start() -> None:
    chain = Chain()
    chain.msg(user(chars(100)))  # 0
    chain.add("compaction", summary="s", firstKeptEntryId="e001", tokensBefore=1)  # 1
    chain.add("thinking_level_change", thinkingLevel="low")  # 2
    chain.msg(user(chars(10)))  # 3
    chain.msg(assistant(chars(10)))  # 4
    assert find_cut_point(chain.entries, 0, 5, keep_recent_tokens=15).first_kept_entry_index == 2
    assert find_cut_point(chain.entries, 3, 5, keep_recent_tokens=15).first_kept_entry_index == 3


@pytest.mark.parametrize(
    "turn_start",
    [
        bash_execution("make", chars(40)),
        "custom_message",
        "branch_summary",
    ],
    ids=["bashExecution", "custom_message", "branch_summary"],
)
def test_a_cut_at_another_turn_start_is_not_split(turn_start: Any) -> None:
    chain = Chain()
    chain.msg(user(chars(100)))  # 0
    chain.msg(assistant(chars(100), calls=[tool_call("c1")]))  # 1
    chain.msg(tool_result("c1", chars(100)))  # 2
    if turn_start == "custom_message":
        chain.add("custom_message", customType="x", content=chars(40), display=True)
    elif turn_start == "branch_summary":
        chain.add("branch_summary", fromId="e003", summary=chars(40))
    else:
        chain.msg(turn_start)  # 3
    chain.msg(assistant(chars(10)))  # 4
    cut = find_cut_point(chain.entries, 0, 5, keep_recent_tokens=15)
    # pi finds the cut entry as its own turn start and reports {3, 3, split}, with an empty
    # prefix; we report the clean boundary it really is (decision 2).
    assert cut == CutPoint(3, -1, False)


def test_custom_message_and_branch_summary_entries_are_not_counted() -> None:
    chain = Chain()
    chain.msg(user(chars(10)))  # 0
    chain.add("custom_message", customType="x", content=chars(10_000), display=True)  # 1
    chain.msg(assistant(chars(10)))  # 2
    # Counting only message entries: 10 (asst) then 20 at the user -> cut at the user.
    assert find_cut_point(chain.entries, 0, 3, keep_recent_tokens=15).first_kept_entry_index == 0


def test_a_trailing_huge_tool_result_keeps_everything() -> None:
    chain = Chain()
    chain.msg(user("do it"))
    chain.msg(assistant("", calls=[tool_call("c1", "read", {"path": "big"})]))
    chain.msg(tool_result("c1", "y" * 200_000))
    assert find_cut_point(chain.entries, 0, 3, keep_recent_tokens=20_000) == CutPoint(0, -1, False)


def test_no_cut_points_keeps_everything_from_start() -> None:
    chain = Chain()
    chain.msg(user(chars(100)))
    chain.msg(tool_result("c", chars(100)))
    chain.add("thinking_level_change", thinkingLevel="off")
    chain.msg(tool_result("c", chars(100)))
    assert find_cut_point(chain.entries, 1, 4, keep_recent_tokens=10) == CutPoint(1, -1, False)
    assert find_cut_point(chain.entries, 2, 2, keep_recent_tokens=10) == CutPoint(2, -1, False)


def test_a_budget_never_reached_keeps_from_the_first_cut_point() -> None:
    chain = Chain()
    chain.msg(tool_result("c", chars(5)))  # 0: not a cut point
    chain.msg(user(chars(5)))  # 1
    chain.msg(assistant(chars(5)))  # 2
    assert find_cut_point(chain.entries, 0, 3, keep_recent_tokens=1000) == CutPoint(1, -1, False)


def test_the_budget_is_reached_at_greater_or_equal() -> None:
    chain = Chain()
    chain.msg(user(chars(10)))  # 0
    chain.msg(assistant(chars(10)))  # 1
    chain.msg(user(chars(10)))  # 2
    chain.msg(assistant(chars(10)))  # 3
    assert find_cut_point(chain.entries, 0, 4, keep_recent_tokens=20).first_kept_entry_index == 2
    assert find_cut_point(chain.entries, 0, 4, keep_recent_tokens=21).first_kept_entry_index == 1


def test_the_end_bound_is_respected() -> None:
    chain = Chain()
    chain.msg(user(chars(10)))  # 0
    chain.msg(assistant(chars(10)))  # 1
    chain.msg(user(chars(10)))  # 2
    chain.msg(assistant(chars(1000)))  # 3: outside [0, 3)
    assert find_cut_point(chain.entries, 0, 3, keep_recent_tokens=10) == CutPoint(2, -1, False)



def _cut_from_all_cut_points(
    entries: list[dict[str, Any]], start: int, end: int, keep: int
) -> CutPoint:
    """find_cut_point as it was first written (every valid cut point listed up front): the
    oracle for the version that looks for just the two it needs."""
    place = cut_points._place
    cuts = find_valid_cut_points(entries, start, end)
    if not cuts:
        return CutPoint(start, -1, False)
    cut_index = cuts[0]
    accumulated = 0
    for i in range(end - 1, start - 1, -1):
        if not place(entries[i]).message:
            continue
        message = entries[i].get("message")
        if isinstance(message, dict):
            accumulated += estimate_tokens(message)
        if accumulated >= keep:
            cut_index = next((cut for cut in cuts if cut >= i), cut_index)
            break
    while cut_index > start and not place(entries[cut_index - 1]).stops_pull:
        cut_index -= 1
    first = next((i for i in range(cut_index, end) if place(entries[i]).message_like), cut_index)
    if first < end and place(entries[first]).turn_start:
        return CutPoint(cut_index, -1, False)
    turn_start = find_turn_start_index(entries, cut_index, start)
    return CutPoint(cut_index, turn_start, turn_start != -1)


_KINDS: list[Callable[[int], dict[str, Any]]] = [
    lambda size: _message("user", content=chars(size)),
    lambda size: _message("assistant", content=[{"type": "text", "text": chars(size)}]),
    lambda size: _message("toolResult", content=[{"type": "text", "text": chars(size)}]),
    lambda size: _entry("model_change"),
    lambda size: _entry("compaction", summary="s"),
    lambda size: _entry("branch_summary", summary="s"),
    lambda size: _entry("no_such_type"),
]


@pytest.mark.parametrize("seed", range(300))
def test_the_cut_is_the_one_all_valid_cut_points_give(seed: int) -> None:
    rng = random.Random(seed)
    entries = [rng.choice(_KINDS)(rng.randrange(0, 400)) for _ in range(rng.randrange(1, 30))]
    start = rng.randrange(len(entries))
    end = rng.randrange(start, len(entries)) + 1
    keep = rng.choice([0, 1, 20, 100, 1000])
    expected = _cut_from_all_cut_points(entries, start, end, keep)
    assert find_cut_point(entries, start, end, keep_recent_tokens=keep) == expected
