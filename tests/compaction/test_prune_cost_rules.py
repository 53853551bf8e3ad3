"""Pruning that knows its cost: stale reads first, and the prompt cache respected (issue 30)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextree.compaction.prune import apply_prune, decide_prune, tokens_after
from contextree.context.convert import convert_to_llm
from contextree.context.provider import provider_messages
from contextree.session import SessionTree
from contextree.settings import PruneSettings, load_settings
from contextree.tokens.estimate import get_estimator
from core_helpers import Chain, assistant, chars, tool_call, tool_result, user

NOW = 1_800_000_000_000
RULES = PruneSettings(protect_tokens=100, minimum_savings=10)


def _file_op(chain: Chain, tool: str, path: str, size: int, **arguments: Any) -> dict[str, Any]:
    n = len(chain.entries)
    chain.msg(assistant("", calls=[tool_call(f"c{n}", tool, {"path": path, **arguments})]))
    return chain.msg(tool_result(f"c{n}", chars(size), name=tool))


def _reply(chain: Chain, *, age_ms: int, provider: str = "anthropic") -> None:
    message = assistant("done", provider=provider)
    message["timestamp"] = NOW - age_ms
    chain.msg(message)


def test_a_read_read_again_is_pruned_first_and_names_the_newer_entry() -> None:
    chain = Chain()
    first = _file_op(chain, "read", "a.py", 500)
    second = _file_op(chain, "read", "a.py", 500)
    # read is a protected tool and both sit in the protect window: only the stale one goes.
    decision = decide_prune(chain.entries, PruneSettings(minimum_savings=10), at_ms=NOW)
    assert [(c.entry["id"], c.reason, c.superseded_by) for c in decision.candidates] == [
        (first["id"], "superseded", second["id"])
    ]
    (updated,) = apply_prune(decision)
    text = updated["message"]["content"][0]["text"]
    assert text == f"[Output superseded - file read again in entry {second['id']}; 500 tokens]"
    assert updated["message"]["prunedContent"] == first["message"]["content"]


def test_a_write_or_an_edit_supersedes_earlier_reads() -> None:
    for tool, why in (("write", "written"), ("edit", "edited")):
        chain = Chain()
        read = _file_op(chain, "read", "a.py", 500)
        change = _file_op(chain, tool, "a.py", 30)
        (candidate,) = decide_prune(chain.entries, RULES, at_ms=NOW).candidates
        assert (candidate.entry["id"], candidate.superseded_by, candidate.why) == (
            read["id"],
            change["id"],
            why,
        )


def test_partial_reads_failed_calls_and_other_files_supersede_nothing() -> None:
    chain = Chain()
    _file_op(chain, "read", "a.py", 500)
    _file_op(chain, "read", "a.py", 500, offset=10)  # another part
    _file_op(chain, "read", "b.py", 500)  # another file
    n = len(chain.entries)
    chain.msg(assistant("", calls=[tool_call(f"c{n}", "write", {"path": "a.py"})]))
    chain.msg(tool_result(f"c{n}", "permission denied", name="write", isError=True))
    no_window = PruneSettings(protect_tokens=10**9, minimum_savings=0)
    assert decide_prune(chain.entries, no_window, at_ms=NOW).candidates == []


def test_the_same_partial_read_supersedes_its_twin() -> None:
    chain = Chain()
    old = _file_op(chain, "read", "a.py", 500, offset=10, limit=50)
    _file_op(chain, "read", "a.py", 500, offset=10, limit=50)
    no_window = PruneSettings(protect_tokens=10**9, minimum_savings=0)
    (candidate,) = decide_prune(chain.entries, no_window, at_ms=NOW).candidates
    assert candidate.entry["id"] == old["id"]


def test_superseded_reads_can_be_switched_off() -> None:
    chain = Chain()
    _file_op(chain, "read", "a.py", 500)
    _file_op(chain, "read", "a.py", 500)
    off = PruneSettings(minimum_savings=10, superseded_reads=False)
    assert decide_prune(chain.entries, off, at_ms=NOW).candidates == []


def test_a_warm_cache_keeps_outputs_with_much_after_them() -> None:
    chain = Chain()
    old = _file_op(chain, "bash", "-", 3_000)
    _file_op(chain, "bash", "-", 9_000)  # > 8k tokens after the old one
    _reply(chain, age_ms=60_000)  # a minute ago: the 5-minute cache is warm
    decision = decide_prune(chain.entries, RULES, at_ms=NOW)
    assert decision.candidates == [] and decision.held_for_cache >= 1
    assert decision.cache.warm
    # Expired (6 minutes), or the 1-hour cache with pruning not cache-aware: pruned.
    expired = decide_prune(chain.entries, RULES, at_ms=NOW + 300_000)
    assert old["id"] in [c.entry["id"] for c in expired.candidates]
    unaware = PruneSettings(protect_tokens=100, minimum_savings=10, cache_aware=False)
    assert old["id"] in [c.entry["id"] for c in decide_prune(chain.entries, unaware).candidates]
    hour = PruneSettings(protect_tokens=100, minimum_savings=10, cache_ttl_seconds=3600)
    assert decide_prune(chain.entries, hour, at_ms=NOW + 300_000).candidates == []


def test_a_warm_cache_still_lets_outputs_with_little_after_them_go() -> None:
    chain = Chain()
    old = _file_op(chain, "bash", "-", 3_000)
    _file_op(chain, "bash", "-", 200)
    _reply(chain, age_ms=1_000)
    decision = decide_prune(chain.entries, RULES, at_ms=NOW)
    assert [c.entry["id"] for c in decision.candidates] == [old["id"]]
    assert decision.held_for_cache == 0


def test_without_a_caching_provider_there_is_no_cache_to_keep() -> None:
    chain = Chain()
    old = _file_op(chain, "bash", "-", 3_000)
    _file_op(chain, "bash", "-", 9_000)
    _reply(chain, age_ms=1_000, provider="llamacpp")
    decision = decide_prune(chain.entries, RULES, at_ms=NOW)
    assert not decision.cache.warm
    assert old["id"] in [c.entry["id"] for c in decision.candidates]


def test_the_cache_settings_load_and_are_validated(tmp_path: Any) -> None:
    loaded = load_settings(
        cwd=tmp_path,
        env={
            "HOME": str(tmp_path),
            "CONTEXTREE_PRUNING_CACHE_AWARE": "false",
            "CONTEXTREE_PRUNING_CACHE_TTL_SECONDS": "3600",
            "CONTEXTREE_PRUNING_CACHE_GUARD_TOKENS": "4000",
            "CONTEXTREE_PRUNING_SUPERSEDED_READS": "off",
        },
    ).settings.prune
    assert (loaded.cache_aware, loaded.cache_ttl_seconds, loaded.cache_guard_tokens) == (
        False,
        3600,
        4000,
    )
    assert loaded.superseded_reads is False
    assert PruneSettings().cache_aware and PruneSettings().cache_guard_tokens == 8000


_ops = st.lists(
    st.tuples(
        st.sampled_from(["read", "write", "bash", "reply", "user"]),
        st.sampled_from(["a.py", "b.py"]),
        st.sampled_from([10, 400, 4_000, 12_000]),  # chars
        st.sampled_from([1_000, 600_000]),  # reply age: warm or expired
    ),
    max_size=30,
)


@given(_ops, st.sampled_from([0, 500, 2_000]))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_warm_cache_pruning_keeps_the_prefix_and_every_call_answered(
    ops: list[tuple[str, str, int, int]], guard: int
) -> None:
    tree = SessionTree.in_memory()
    for n, (kind, path, size, age) in enumerate(ops):
        if kind == "user":
            tree.append_message(user("go"))
        elif kind == "reply":
            message = assistant("ok")
            message["timestamp"] = NOW - age
            tree.append_message(message)
        else:
            tree.append_message(assistant("", calls=[tool_call(f"c{n}", kind, {"path": path})]))
            tree.append_message(tool_result(f"c{n}", "x" * size, name=kind))
    rules = PruneSettings(protect_tokens=200, minimum_savings=0, cache_guard_tokens=guard)
    path = tree.get_branch()
    decision = decide_prune(path, rules, at_ms=NOW)
    if decision.cache.warm and decision.candidates:
        after = tokens_after(path, 0, get_estimator("pi").estimate)
        where = {entry["id"]: i for i, entry in enumerate(path)}
        assert all(after[where[c.entry["id"]]] <= guard for c in decision.candidates)
    if decision.candidates:
        tree.rewrite_entries(apply_prune(decision))
    sent = provider_messages(convert_to_llm(tree.build_session_context().messages))
    calls = [
        block["id"]
        for m in sent
        if m["role"] == "assistant"
        for block in m["content"]
        if block.get("type") == "toolCall"
    ]
    answered = [m["toolCallId"] for m in sent if m["role"] == "toolResult"]
    assert sorted(calls) == sorted(answered)


def test_the_decision_as_json_names_each_output_and_its_reason() -> None:
    chain = Chain()
    old = _file_op(chain, "bash", "-", 3_000)
    first = _file_op(chain, "read", "a.py", 500)
    second = _file_op(chain, "read", "a.py", 500)
    _file_op(chain, "bash", "-", 200)
    body = decide_prune(chain.entries, RULES, at_ms=NOW).to_json()
    assert body["entries"] == [
        {
            "entryId": first["id"],
            "toolName": "read",
            "tokens": 500,
            "reason": "superseded",
            "supersededBy": second["id"],
        },
        {
            "entryId": old["id"],
            "toolName": "bash",
            "tokens": 3_000,
            "reason": "old",
            "supersededBy": None,
        },
    ]
    assert body["pruned"] == 2 and body["cacheWarm"] is False
