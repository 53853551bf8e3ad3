"""``prepare_compaction`` (§5.4): golden values on pi's fixtures (§13.1) and DESIGN decisions."""

from __future__ import annotations

import math
from typing import Any

import pytest

from contextree.compaction.cut_points import CutPoint, find_cut_point
from contextree.compaction.file_ops import compute_file_lists
from contextree.compaction.prepare import (
    CompactionPreparation,
    NothingToCompact,
    prepare_compaction,
)
from contextree.context.build import build_context_from_path, message_from_entry
from contextree.entries.types import Entry
from contextree.session import SessionTree
from contextree.settings import CompactionSettings
from contextree.tokens.estimate import PiEstimator, estimate_tokens
from contextree.tokens.usage import calculate_prompt_tokens, get_last_assistant_usage
from core_helpers import (
    BEFORE_COMPACTION,
    LARGE_SESSION,
    Chain,
    assistant,
    chars,
    roles,
    tool_call,
    tool_result,
    user,
)

PI_0_73 = CompactionSettings(adjust_keep_recent_by_usage=False)
"""pi 0.73.1 keeps keepRecentTokens as configured (§4.4)."""


@pytest.fixture(scope="module")
def large() -> list[Entry]:
    return SessionTree.in_memory(LARGE_SESSION.read_bytes()).get_branch()


@pytest.fixture(scope="module")
def before() -> list[Entry]:
    return SessionTree.in_memory(BEFORE_COMPACTION.read_bytes()).get_branch()


def _prepare(path: list[Entry], settings: CompactionSettings = PI_0_73) -> CompactionPreparation:
    result = prepare_compaction(path, settings)
    assert isinstance(result, CompactionPreparation), result
    return result


def _cut_of(prep: CompactionPreparation) -> CutPoint:
    """Where the preparation cuts, in :func:`find_cut_point`'s terms."""
    return CutPoint(prep.first_kept_entry_index, prep.turn_start_index, prep.is_split_turn)


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"][0]["text"] if m.get("content") else m.get("summary", "") for m in messages]


# --- golden values (pi 0.73.1 on the fixtures, pi-behaviour.md §13.1) ---------------------------


def test_fixture_paths_are_the_whole_files(large: list[Entry], before: list[Entry]) -> None:
    assert (len(large), len(before)) == (1018, 1002)


def test_golden_context_of_the_fixtures(large: list[Entry], before: list[Entry]) -> None:
    context = build_context_from_path(large)
    assert len(context.messages) == 914
    assert context.model is not None
    assert context.model.spec == "anthropic/claude-sonnet-4-5"
    context = build_context_from_path(before)
    assert len(context.messages) == 446
    assert context.messages[0]["role"] == "compactionSummary"


def test_golden_estimate_sums(large: list[Entry], before: list[Entry]) -> None:
    for path, expected in ((large, 124_661), (before, 375_427)):
        assert sum(estimate_tokens(e["message"]) for e in path if e["type"] == "message") == (
            expected
        )


def test_golden_cut_points(large: list[Entry], before: list[Entry]) -> None:
    cut = find_cut_point(large, 0, len(large), keep_recent_tokens=20_000)
    assert cut == CutPoint(837, 834, True)
    assert large[837]["message"]["role"] == "assistant"
    assert find_cut_point(before, 0, len(before), keep_recent_tokens=20_000) == CutPoint(
        946, 939, True
    )


def test_golden_migration_of_legacy_compactions(before: list[Entry]) -> None:
    index_of = {entry["id"]: i for i, entry in enumerate(before)}
    compactions = [(i, e) for i, e in enumerate(before) if e["type"] == "compaction"]
    assert [i for i, _ in compactions] == [358, 627]
    assert [index_of[e["firstKeptEntryId"]] for _, e in compactions] == [292, 550]
    assert [e["tokensBefore"] for _, e in compactions] == [175_004, 185_014]


def test_golden_prepare_large_session(large: list[Entry]) -> None:
    prep = _prepare(large)
    assert _cut_of(prep) == CutPoint(837, 834, True)
    assert prep.first_kept_entry_id == large[837]["id"]
    assert len(prep.messages_to_summarize) == 730
    assert len(prep.turn_prefix_messages) == 3
    assert prep.tokens_before == 177_657
    assert prep.previous_summary is None
    assert prep.boundary_start == 0
    read_files, modified_files = compute_file_lists(prep.file_ops)
    assert (len(read_files), len(modified_files)) == (7, 20)


def test_golden_prepare_before_compaction(before: list[Entry]) -> None:
    prep = _prepare(before)
    assert prep.boundary_start == 550  # the previous compaction's firstKept (decision 1)
    assert _cut_of(prep) == CutPoint(946, 939, True)
    assert len(prep.messages_to_summarize) == 383
    assert len(prep.turn_prefix_messages) == 7
    assert prep.tokens_before == 180_820
    assert prep.previous_summary == before[627]["summary"]
    assert prep.previous_summary
    read_files, modified_files = compute_file_lists(prep.file_ops)
    assert (len(read_files), len(modified_files)) == (2, 12)


def test_measured_usage_adjustment_on_large_session(large: list[Entry]) -> None:
    # The fork's arithmetic (§4.4, §13.1 "OMP-13"): prompt 0 + 176585 + 1019 = 177604 tokens
    # measured against 124661 estimated -> ratio 1.4247 -> keep floor(20000 / ratio) = 14038.
    usage = get_last_assistant_usage(large)
    assert usage is not None
    assert calculate_prompt_tokens(usage) == 177_604
    assert math.floor(20_000 / (177_604 / 124_661)) == 14_038
    prep = _prepare(large, CompactionSettings())
    assert prep.keep_recent_tokens == 14_038
    assert _cut_of(prep) == CutPoint(899, 896, True)
    assert prep.tokens_before == 177_657


def test_measured_usage_adjustment_on_before_compaction(before: list[Entry]) -> None:
    # Regression values: our boundary is 550 (decision 1), not the fork's 628, so the numbers
    # differ from §13.1's "OMP-13" ones. Estimated over entries [550, end): 138516 tokens; the
    # last usage's prompt is 10 + 0 + 167978 = 167988; ratio 1.21277 -> keep 16491.
    usage = get_last_assistant_usage(before)
    assert usage is not None
    assert calculate_prompt_tokens(usage) == 167_988
    estimated = sum(
        estimate_tokens(message_from_entry(e, for_context=False) or {})
        for e in before[550:]
        if e["type"] in ("message", "custom_message", "branch_summary")
    )
    assert estimated == 138_516
    assert math.floor(20_000 / (167_988 / estimated)) == 16_491
    prep = _prepare(before, CompactionSettings())
    assert prep.keep_recent_tokens == 16_491
    assert _cut_of(prep) == CutPoint(966, 957, True)
    assert prep.boundary_start == 550


# --- small sessions --------------------------------------------------------------------------


def _usage(prompt: int, total: int | None = None) -> dict[str, Any]:
    usage = {"input": 0, "output": 0, "cacheRead": prompt, "cacheWrite": 0}
    if total is not None:
        usage["totalTokens"] = total
    return usage


def test_the_keep_budget_shrinks_only_when_measured_exceeds_estimated() -> None:
    chain = Chain()
    chain.msg(user(chars(50)))
    chain.msg(assistant(chars(50)))
    chain.msg(user(chars(10)))
    chain.msg(assistant(chars(10), usage=_usage(240)))  # 120 estimated, 240 measured
    prep = prepare_compaction(chain.entries, CompactionSettings(keep_recent_tokens=40))
    assert isinstance(prep, CompactionPreparation)
    assert prep.keep_recent_tokens == 20
    chain.entries[3]["message"]["usage"] = _usage(60)  # ratio below 1: unchanged
    prep = prepare_compaction(chain.entries, CompactionSettings(keep_recent_tokens=40))
    assert isinstance(prep, CompactionPreparation)
    assert prep.keep_recent_tokens == 40


def test_tokens_before_is_the_last_usage_plus_later_estimates() -> None:
    chain = Chain()
    chain.msg(user(chars(100)))
    chain.msg(assistant(chars(100), usage=_usage(900, total=1000)))
    chain.msg(assistant(chars(5), usage=_usage(5000, total=5000), stop="aborted"))  # skipped
    chain.msg(user(chars(10)))
    prep = _prepare(
        chain.entries, CompactionSettings(keep_recent_tokens=5, adjust_keep_recent_by_usage=False)
    )
    assert prep.tokens_before == 1000 + 5 + 10


def test_recent_messages_are_the_kept_region() -> None:
    chain = Chain()
    chain.msg(user(chars(100)))
    chain.msg(assistant(chars(100)))
    chain.add("thinking_level_change", thinkingLevel="low")
    chain.msg(user(chars(10)))
    chain.msg(assistant(chars(10)))
    prep = _prepare(
        chain.entries, CompactionSettings(keep_recent_tokens=15, adjust_keep_recent_by_usage=False)
    )
    assert prep.first_kept_entry_index == 2
    assert prep.first_kept_entry_id == "e003"
    assert not prep.is_split_turn
    assert _texts(prep.messages_to_summarize) == [chars(100), chars(100)]
    assert prep.turn_prefix_messages == []
    assert _texts(prep.recent_messages) == [chars(10), chars(10)]


# --- decision 1: the next boundary is the previous compaction's first kept entry --------------


def _twice_compacted() -> Chain:
    chain = Chain()
    chain.msg(user("u1 " + chars(100)))  # 0
    chain.msg(assistant("a1 " + chars(100)))  # 1
    chain.msg(user("u2"))  # 2: kept by the first compaction
    chain.msg(assistant("a2"))  # 3: kept by the first compaction
    chain.add(
        "compaction",
        summary="S1",
        firstKeptEntryId="e003",
        tokensBefore=1,
        details={"readFiles": [], "modifiedFiles": []},
        fromHook=False,
    )  # 4
    chain.msg(user("u3 " + chars(100)))  # 5
    chain.msg(assistant("a3 " + chars(100)))  # 6
    chain.msg(user("u4 " + chars(10)))  # 7
    chain.msg(assistant("a4 " + chars(10)))  # 8
    return chain


def test_messages_kept_by_the_previous_compaction_are_summarized_by_the_next() -> None:
    chain = _twice_compacted()
    path = chain.entries
    settings = CompactionSettings(keep_recent_tokens=20, adjust_keep_recent_by_usage=False)
    prep = _prepare(path, settings)
    assert prep.boundary_start == 2
    assert prep.first_kept_entry_index == 7
    summarized = [t.split()[0] for t in _texts(prep.messages_to_summarize)]
    assert summarized == ["u2", "a2", "u3", "a3"]
    assert prep.previous_summary == "S1"

    # The seed's rule (boundary right after the previous compaction) plans the same cut but
    # summarizes only u3 and a3: u2 and a2 are then in neither the summary nor the kept part.
    seed_cut = find_cut_point(path, 5, len(path), keep_recent_tokens=20)
    assert seed_cut.first_kept_entry_index == 7
    seed_summarized = [message_from_entry(e) for e in path[5:7]]
    seed_seen = _texts([m for m in seed_summarized if m]) + _texts(
        [m for e in path[7:] if (m := message_from_entry(e))]
    )
    assert not any(t.startswith(("u2", "a2")) for t in seed_seen)

    # Ours: nothing the current context shows is dropped; it is summarized or kept.
    context = build_context_from_path(path).messages
    assert roles(context)[0] == "compactionSummary"
    planned = prep.messages_to_summarize + prep.turn_prefix_messages + prep.recent_messages
    assert planned == context[1:]


def test_a_previous_first_kept_id_not_on_the_path_falls_back_to_after_the_compaction() -> None:
    chain = _twice_compacted()
    chain.entries[4]["firstKeptEntryId"] = "not-on-this-path"
    settings = CompactionSettings(keep_recent_tokens=20, adjust_keep_recent_by_usage=False)
    prep = _prepare(chain.entries, settings)
    assert prep.boundary_start == 5
    assert [t.split()[0] for t in _texts(prep.messages_to_summarize)] == ["u3", "a3"]


# --- decision 4 and the other refusals ---------------------------------------------------------


def test_nothing_to_summarize_is_nothing_to_compact() -> None:
    chain = Chain()
    chain.msg(user("short"))
    chain.msg(assistant("session"))
    result = prepare_compaction(chain.entries, PI_0_73)
    # pi 0.73.1 would return a preparation with empty lists and summarize nothing.
    # pi 0.73.1 says "session too small"; we say why: the keep budget covers everything.
    assert result == NothingToCompact(
        "nothing_to_compact",
        f"Nothing to compact: with a keep budget of {PI_0_73.keep_recent_tokens:,} tokens every "
        "message in the context would be kept verbatim",
    )


def test_nothing_new_since_the_last_compaction_is_nothing_to_compact() -> None:
    chain = Chain()
    chain.msg(user("u1"))
    chain.msg(assistant("a1"))
    chain.add("compaction", summary="S", firstKeptEntryId="e001", tokensBefore=1)
    chain.msg(user("u2"))
    result = prepare_compaction(chain.entries, PI_0_73)
    assert isinstance(result, NothingToCompact)
    assert result.reason == "nothing_to_compact"


def test_an_empty_path_is_nothing_to_compact() -> None:
    result = prepare_compaction([], PI_0_73)
    assert isinstance(result, NothingToCompact)
    assert result.reason == "nothing_to_compact"


def test_a_path_ending_in_a_compaction_is_already_compacted() -> None:
    chain = _twice_compacted()
    chain.add("compaction", summary="S2", firstKeptEntryId="e008", tokensBefore=1)
    assert prepare_compaction(chain.entries, PI_0_73) == NothingToCompact(
        "already_compacted", "Already compacted"
    )


def test_a_first_kept_entry_without_id_needs_migration() -> None:
    entries = [
        {"type": "message", "message": user(chars(100))},
        {"type": "message", "message": assistant(chars(100))},
        {"type": "message", "message": user(chars(10))},
    ]
    result = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=5))
    assert isinstance(result, NothingToCompact)
    assert result.reason == "needs_migration"
    assert "migration" in result.message


# --- file operations -----------------------------------------------------------------------------


def _with_file_ops(**flags: Any) -> list[Entry]:
    chain = Chain()
    chain.msg(user("u0"))  # 0
    chain.msg(assistant("a0", calls=[tool_call("c0", "read", {"path": "before-boundary.py"})]))
    chain.add(
        "compaction",
        summary="S",
        firstKeptEntryId="e004",
        tokensBefore=1,
        details={"readFiles": ["seed-read.py"], "modifiedFiles": ["seed-mod.py"]},
        **flags,
    )  # 2
    chain.msg(user(chars(10)))  # 3 (e004)
    chain.msg(assistant(chars(100), calls=[tool_call("c1", "edit", {"path": "edited.py"})]))
    chain.msg(tool_result("c1", chars(100)))  # 5
    chain.msg(user(chars(10)))  # 6
    chain.msg(assistant(chars(10), calls=[tool_call("c2", "read", {"path": "kept.py"})]))
    chain.msg(tool_result("c2", chars(10)))  # 8
    return chain.entries


_KEEP_30 = CompactionSettings(keep_recent_tokens=30, adjust_keep_recent_by_usage=False)


@pytest.mark.parametrize(
    "flags",
    [{"fromHook": False, "fromExtension": False}, {"fromHook": False}, {}],
    ids=["both-false", "pi-fromHook-false", "no-flags"],
)
def test_file_ops_are_seeded_from_a_pi_made_previous_compaction(flags: dict[str, Any]) -> None:
    prep = _prepare(_with_file_ops(**flags), _KEEP_30)
    assert prep.first_kept_entry_index == 6
    assert not prep.is_split_turn
    # Kept messages (the read of kept.py) are not scanned; entries before the boundary neither.
    assert compute_file_lists(prep.file_ops) == (["seed-read.py"], ["edited.py", "seed-mod.py"])


@pytest.mark.parametrize(
    "flags",
    [{"fromExtension": True}, {"fromHook": True}, {"fromHook": True, "fromExtension": True}],
)
def test_file_ops_are_not_seeded_from_a_hook_made_compaction(flags: dict[str, Any]) -> None:
    prep = _prepare(_with_file_ops(**flags), _KEEP_30)
    assert compute_file_lists(prep.file_ops) == ([], ["edited.py"])


def test_the_turn_prefix_is_scanned_for_file_ops() -> None:
    chain = Chain()
    chain.msg(user(chars(10)))  # 0
    chain.msg(assistant(chars(100), calls=[tool_call("c1", "write", {"path": "prefix.py"})]))
    chain.msg(tool_result("c1", chars(100)))  # 2
    chain.msg(assistant(chars(10), calls=[tool_call("c2", "read", {"path": "kept.py"})]))  # 3
    chain.msg(tool_result("c2", chars(10)))  # 4
    prep = _prepare(
        chain.entries, CompactionSettings(keep_recent_tokens=25, adjust_keep_recent_by_usage=False)
    )
    assert _cut_of(prep) == CutPoint(3, 0, True)
    assert prep.messages_to_summarize == []
    assert roles(prep.turn_prefix_messages) == ["user", "assistant", "toolResult"]
    assert compute_file_lists(prep.file_ops) == ([], ["prefix.py"])


def test_previous_preserve_data_is_passed_on() -> None:
    chain = _twice_compacted()
    chain.entries[4]["preserveData"] = {"openaiRemoteCompaction": {"provider": "openai"}}
    prep = _prepare(
        chain.entries, CompactionSettings(keep_recent_tokens=20, adjust_keep_recent_by_usage=False)
    )
    assert prep.previous_preserve_data == {"openaiRemoteCompaction": {"provider": "openai"}}


class _CountingEstimator:
    """pi's estimator, counting the messages it is asked about."""

    name = "counting"

    def __init__(self) -> None:
        self.calls = 0
        self._pi = PiEstimator()

    def estimate(self, message: Any) -> int:
        self.calls += 1
        return self._pi.estimate(message)

    def count_text(self, text: str) -> int:
        return self._pi.count_text(text)


def _estimates_made(entries: list[Entry], settings: CompactionSettings) -> tuple[int, int]:
    counting = _CountingEstimator()
    prep = prepare_compaction(entries, settings, estimator=counting)
    assert isinstance(prep, CompactionPreparation)
    return counting.calls, prep.keep_recent_tokens


@pytest.mark.parametrize(
    ("measured", "adjust_estimates", "keep"),
    [
        (60, 6, 40),  # 10 tokens a message: the 6th reaches 60, the ratio is <= 1 from there
        (200, 20, 40),  # exactly the estimate: ratio 1, unchanged
        (400, 20, 20),  # twice the estimate: every message estimated, the budget halved
    ],
)
def test_the_usage_adjustment_estimates_only_until_it_reaches_the_measured_count(
    measured: int, adjust_estimates: int, keep: int
) -> None:
    chain = Chain()
    for turn in range(10):
        chain.msg(user(chars(10)))
        usage = _usage(measured) if turn == 9 else None
        chain.msg(assistant(chars(10), usage=usage) if usage else assistant(chars(10)))
    fixed = CompactionSettings(keep_recent_tokens=40, adjust_keep_recent_by_usage=False)
    without, unchanged = _estimates_made(chain.entries, fixed)
    assert unchanged == 40
    calls, adjusted = _estimates_made(chain.entries, CompactionSettings(keep_recent_tokens=40))
    assert adjusted == keep
    if keep == 40:
        assert calls == without + adjust_estimates
