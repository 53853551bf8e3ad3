"""Invariants over generated session trees (hypothesis).

Sessions are built the way a well-behaved agent builds them: a turn is a user message followed
by assistant steps, and every tool call is answered by its tool result right after the assistant
message that made it. Between turns the generator branches, resets the leaf, changes metadata,
runs ``!bash``, adds custom messages and branch summaries, and compacts with our own
``prepare_compaction``. pi guarantees no more than that on such paths: the kept region starts
at a valid cut point, never at a tool result, so every kept tool result still has its call.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextree.compaction.cut_points import find_cut_point, find_valid_cut_points
from contextree.compaction.prepare import CompactionPreparation, prepare_compaction
from contextree.context.build import build_session_context, message_from_entry
from contextree.entries.types import Entry
from contextree.session import SessionTree
from contextree.settings import CompactionSettings
from contextree.store import MemoryStore, record_index
from contextree.tokens.estimate import estimate_tokens, get_estimator
from core_helpers import (
    assistant,
    bash_execution,
    det_tree,
    header,
    iso,
    jsonl,
    tool_call,
    tool_result,
    user,
    walk,
)

# Text sizes in characters and keep budgets in tokens on a coarse scale, so that even short
# generated sessions reach budgets, split turns and repeated compactions.
_sizes = st.sampled_from([4, 40, 200, 800, 2400])
_keeps = st.sampled_from([1, 20, 100, 300, 800, 2000])
_fraction = st.floats(min_value=0, max_value=1, exclude_max=True)
_turns = st.tuples(
    st.just("turn"),
    _sizes,
    st.lists(st.tuples(st.integers(0, 2), _sizes, _sizes), min_size=1, max_size=3),
)
_compactions = st.tuples(st.just("compact"), _keeps)
# Hypothesis draws the first and the last alternative of ``one_of`` more often than the others,
# so those two are harmless ones (a turn, a metadata change).
_ops = st.one_of(
    _turns,
    _compactions,
    _turns,
    st.tuples(st.just("bash"), _sizes),
    st.tuples(st.just("custom_message"), _sizes),
    # Step back along the path; rarely (n == 7) reset the leaf to start a new root.
    st.tuples(st.just("branch"), _fraction, st.integers(min_value=0, max_value=15)),
    st.tuples(st.just("branch_summary"), _fraction),
    _compactions,
    _turns,
    st.tuples(st.just("meta"), st.sampled_from(["thinking", "model", "label", "custom"])),
)
_sessions = st.lists(_ops, min_size=12, max_size=40)


def _build(ops: list[tuple[Any, ...]]) -> SessionTree:
    tree = det_tree()
    calls = itertools.count(1)

    def pick(fraction: float) -> str | None:
        # Step back at most 12 entries along the current path, so branches stay long.
        path = tree.get_branch() or tree.get_entries()
        if not path:
            return None
        return str(path[-1 - int(fraction * min(len(path), 12))]["id"])

    for op in ops:
        kind = op[0]
        if kind == "turn":
            _, ask, steps = op
            tree.append_message(user("u" * ask))
            for n_calls, text, output in steps:
                ids = [f"call-{next(calls)}" for _ in range(n_calls)]
                made = [tool_call(i, "read", {"path": f"f{i}.py"}) for i in ids]
                tree.append_message(assistant("a" * text, calls=made))
                for call_id in ids:
                    tree.append_message(tool_result(call_id, "r" * output, name="read"))
        elif kind == "branch":
            target = pick(op[1])
            if op[2] == 7:
                tree.reset_leaf()
            elif target is not None:
                tree.branch(target)
        elif kind == "meta":
            if op[1] == "thinking":
                tree.append_thinking_level_change("high")
            elif op[1] == "model":
                tree.append_model_change("openai", "gpt-4o")
            elif op[1] == "label" and tree.leaf_id is not None:
                tree.append_label(tree.leaf_id, "mark")
            else:
                tree.append_custom("ext.state", {"n": 1})
        elif kind == "bash":
            tree.append_message(bash_execution("make", "o" * op[1]))
        elif kind == "custom_message":
            tree.append_custom_message("ext.note", "c" * op[1])
        elif kind == "branch_summary":
            tree.branch_with_summary(pick(op[1]), "what the abandoned branch did")
        elif kind == "compact":
            plan = prepare_compaction(tree.get_branch(), _settings(op[1]))
            if isinstance(plan, CompactionPreparation):
                tree.append_compaction("summary", plan.first_kept_entry_id, plan.tokens_before)
    return tree


def _settings(keep: int) -> CompactionSettings:
    return CompactionSettings(keep_recent_tokens=keep, adjust_keep_recent_by_usage=False)


def _role(entry: Entry) -> str | None:
    message = entry.get("message")
    if entry.get("type") != "message" or not isinstance(message, dict):
        return None
    return str(message.get("role"))


def _call_ids(messages: list[dict[str, Any]]) -> set[str]:
    return {
        block["id"]
        for m in messages
        if m.get("role") == "assistant"
        for block in m.get("content", [])
        if block.get("type") == "toolCall"
    }


def _assert_results_follow_their_calls(messages: list[dict[str, Any]]) -> None:
    seen: set[str] = set()
    for message in messages:
        if message.get("role") == "assistant":
            seen |= _call_ids([message])
        elif message.get("role") == "toolResult":
            assert message["toolCallId"] in seen, message["toolCallId"]


def _assert_valid_cut(path: list[Entry], start: int, end: int, first_kept: int) -> None:
    """The first kept entry is a cut point, metadata pulled in just ahead of one, or start."""
    cuts = set(find_valid_cut_points(path, start, end))
    if first_kept in cuts or (not cuts and first_kept == start):
        return
    j = first_kept
    while j < end and j not in cuts:
        assert path[j]["type"] not in ("message", "compaction"), (first_kept, j)
        j += 1
    assert j < end, "pulled-in metadata must precede a cut point"


_examples = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@given(_sessions)
@_examples
def test_the_context_of_a_generated_session_is_well_formed(ops: list[tuple[Any, ...]]) -> None:
    tree = _build(ops)
    messages = tree.build_session_context().messages
    if messages:
        assert messages[0]["role"] != "toolResult"
        if messages[0]["role"] == "compactionSummary" and len(messages) > 1:
            assert messages[1]["role"] != "toolResult"
    assert messages[1:] == [m for m in messages[1:] if m["role"] != "compactionSummary"]
    _assert_results_follow_their_calls(messages)
    utf8 = get_estimator("utf8")
    for entry in tree.get_entries():
        message = message_from_entry(entry, for_context=False)
        if message is not None:
            assert estimate_tokens(message) >= 0
            assert utf8.estimate(message) >= estimate_tokens(message)  # ASCII: equal; never less


@given(_sessions, st.integers(min_value=1, max_value=3000))
@_examples
def test_the_context_read_lazily_from_the_file_equals_the_context_of_the_whole_path(
    ops: list[tuple[Any, ...]], chunk: int
) -> None:
    tree = _build(ops)
    assert isinstance(tree.store, MemoryStore)
    data = tree.store.getvalue()
    entries = tree.get_entries()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(record_index, "FIRST_CHUNK_BYTES", chunk)
        for entry in entries:
            lazy = SessionTree.in_memory(data)
            assert lazy.build_session_context(entry["id"]) == build_session_context(
                entries, entry["id"]
            )


@given(_sessions, _keeps)
@_examples
def test_a_compaction_plan_keeps_tool_results_with_their_calls(
    ops: list[tuple[Any, ...]], keep: int
) -> None:
    tree = _build(ops)
    path = tree.get_branch()
    plan = prepare_compaction(path, _settings(keep))
    if not isinstance(plan, CompactionPreparation):
        return
    first = plan.first_kept_entry_index
    assert path[first]["id"] == plan.first_kept_entry_id
    assert plan.boundary_start <= first < len(path)
    _assert_valid_cut(path, plan.boundary_start, len(path), first)
    kept = path[first:]
    kept_messages = [m for e in kept if (m := message_from_entry(e, for_context=False))]
    assert _role(path[first]) != "toolResult"
    if kept_messages:
        assert kept_messages[0]["role"] != "toolResult"
    calls = _call_ids(kept_messages) | _call_ids(plan.turn_prefix_messages)
    for message in kept_messages:
        if message["role"] == "toolResult":
            assert message["toolCallId"] in calls
    if plan.is_split_turn:
        assert plan.boundary_start <= plan.turn_start_index < first
        assert plan.turn_prefix_messages
    else:
        assert plan.turn_start_index == -1
        assert plan.turn_prefix_messages == []
    # Decision 1: whatever the current context shows is summarized or kept, nothing dropped.
    context = tree.build_session_context().messages
    shown = context[1:] if context and context[0]["role"] == "compactionSummary" else context
    planned = plan.messages_to_summarize + plan.turn_prefix_messages + plan.recent_messages
    assert planned == shown


@given(
    _sessions,
    _fraction,
    st.integers(min_value=0, max_value=4000),
)
@_examples
def test_find_cut_point_returns_a_valid_cut(
    ops: list[tuple[Any, ...]], start_fraction: float, keep: int
) -> None:
    path = _build(ops).get_branch()
    start = int(start_fraction * (len(path) + 1))
    cut = find_cut_point(path, start, len(path), keep_recent_tokens=keep)
    if start == len(path):
        assert (cut.first_kept_entry_index, cut.turn_start_index) == (start, -1)
        return
    assert start <= cut.first_kept_entry_index < len(path)
    _assert_valid_cut(path, start, len(path), cut.first_kept_entry_index)
    if find_valid_cut_points(path, start, len(path)):
        # Without any cut point the result is ``start`` itself, whatever entry that is.
        assert _role(path[cut.first_kept_entry_index]) != "toolResult"
    assert cut.is_split_turn == (cut.turn_start_index != -1)
    if cut.is_split_turn:
        assert start <= cut.turn_start_index < cut.first_kept_entry_index


@st.composite
def _tangled_sessions(draw: st.DrawFn) -> list[Entry]:
    """Entries with arbitrary parent links: cycles, self-parents, missing parents."""
    count = draw(st.integers(min_value=1, max_value=12))
    ids = [f"n{i:02d}" for i in range(count)]
    entries = []
    for i, entry_id in enumerate(ids):
        parent = draw(st.one_of(st.none(), st.just("missing"), st.sampled_from(ids)))
        entries.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": iso(i),
                "message": user(entry_id),
            }
        )
    return entries


@given(_tangled_sessions())
@settings(max_examples=200)
def test_paths_and_trees_terminate_on_any_parent_links(entries: list[Entry]) -> None:
    tree = SessionTree.in_memory(jsonl(header(), *entries))
    for entry in entries:
        path = tree.get_branch(entry["id"])
        ids = [e["id"] for e in path]
        assert ids[-1] == entry["id"]
        assert len(set(ids)) == len(ids)
        for parent, child in itertools.pairwise(path):
            assert child["parentId"] == parent["id"]
        # The walk stopped for a reason: no parent, a missing one, or a cycle.
        top = path[0]["parentId"]
        assert top is None or top == "missing" or top in ids
    placed = [node.entry["id"] for node in walk(tree.get_tree())]
    assert sorted(placed) == sorted(e["id"] for e in entries)
    context = build_session_context(entries)
    assert len(context.messages) <= len(entries)
    assert tree.build_session_context().messages == context.messages
