"""PruneDecider gives decide_prune's decision for every path, however the path changed.

Generated sessions grow by tool results of every kind (large, small, already pruned, from a
protected tool), get pruned (new entry objects), compacted (the context region moves) and
checked under changing settings; after every step the decider's decision is compared with a
fresh ``decide_prune`` of the same path.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextree.compaction.prune import apply_prune, decide_prune
from contextree.compaction.prune_decider import PruneDecider
from contextree.session import SessionTree
from contextree.settings.schema import PruneSettings
from contextree.tokens.estimate import PiEstimator

_steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("result"),
            st.sampled_from([2, 40, 400, 4_000, 40_000]),  # chars
            st.sampled_from(["read", "bash", "skill"]),
            st.sampled_from([None, "prunedAt", "prunedContent"]),
        ),
        st.tuples(st.just("user")),
        st.tuples(
            st.just("file"),
            st.sampled_from(["read", "write", "edit"]),
            st.sampled_from(["a.py", "b.py"]),
            st.sampled_from([None, 10]),  # offset
            st.sampled_from([40, 4_000]),  # chars of the result
            st.booleans(),  # isError
        ),
        st.tuples(st.just("reply"), st.sampled_from(["anthropic", "local"]), st.booleans()),
        st.tuples(st.just("prune")),
        st.tuples(st.just("compact"), st.floats(0, 1, exclude_max=True)),
        st.tuples(st.just("branch"), st.integers(1, 5)),
        st.tuples(
            st.just("settings"),
            st.sampled_from([0, 100, 2_000, 40_000]),
            st.sampled_from([0, 500, 20_000]),
            st.sampled_from([(), ("skill",), ("read", "skill")]),
            st.booleans(),  # superseded reads
            st.sampled_from([0, 500, 8_000]),  # cache guard tokens
        ),
    ),
    max_size=60,
)


NOW = 1_800_000_000_000


@given(_steps)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_decider_agrees_with_decide_prune_after_every_step(steps: list[Any]) -> None:
    tree = SessionTree.in_memory()
    clock = itertools.count(1_700_000_000_000, 1000)
    current = PruneSettings(protect_tokens=2_000, minimum_savings=500)
    decider = PruneDecider(PiEstimator())
    for step in steps:
        kind = step[0]
        path = tree.get_branch()
        if kind == "result":
            _, chars, tool, mark = step
            message: dict[str, Any] = {
                "role": "toolResult",
                "toolCallId": f"c{next(clock)}",
                "toolName": tool,
                "content": [{"type": "text", "text": "x" * chars}],
                "isError": False,
                "timestamp": next(clock),
            }
            if mark == "prunedAt":
                message["prunedAt"] = 1
            elif mark == "prunedContent":
                message["prunedContent"] = []
            tree.append_message(message)
        elif kind == "user":
            tree.append_message({"role": "user", "content": "go", "timestamp": next(clock)})
        elif kind == "file":
            _, tool, file, offset, chars, failed = step
            call_id = f"f{next(clock)}"
            arguments: dict[str, Any] = {"path": file}
            if offset is not None:
                arguments["offset"] = offset
            tree.append_message(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "toolCall", "id": call_id, "name": tool, "arguments": arguments}
                    ],
                    "provider": "local",
                    "stopReason": "toolUse",
                    "timestamp": 1,  # long ago: no warm cache
                }
            )
            tree.append_message(
                {
                    "role": "toolResult",
                    "toolCallId": call_id,
                    "toolName": tool,
                    "content": [{"type": "text", "text": "r" * chars}],
                    "isError": failed,
                    "timestamp": next(clock),
                }
            )
        elif kind == "reply":
            _, provider, recent = step
            tree.append_message(
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "done"}],
                    "provider": provider,
                    "stopReason": "stop",
                    "timestamp": NOW - 1_000 if recent else 1,
                }
            )
        elif kind == "prune":
            decision = decide_prune(tree.get_branch_view(), current)
            if decision.candidates:
                tree.rewrite_entries(apply_prune(decision))
        elif kind == "compact" and path:
            tree.append_compaction("so far", path[int(step[1] * len(path))]["id"], 10)
        elif kind == "branch" and len(path) > step[1]:
            tree.branch(path[-1 - step[1]]["id"])
        elif kind == "settings":
            _, protect, minimum, protected, stale, guard = step
            current = PruneSettings(
                protect_tokens=protect,
                minimum_savings=minimum,
                protected_tools=tuple(protected),
                superseded_reads=stale,
                cache_guard_tokens=guard,
            )
        view = tree.get_branch_view()
        expected = decide_prune(view, current, at_ms=NOW)
        got = decider.decide(view, current, at_ms=NOW)
        assert got.tokens_saved == expected.tokens_saved
        assert got.held_for_cache == expected.held_for_cache
        assert got.cache == expected.cache
        assert [(c.entry["id"], c.tokens, c.reason, c.superseded_by) for c in got.candidates] == [
            (c.entry["id"], c.tokens, c.reason, c.superseded_by) for c in expected.candidates
        ]
        pairs = zip(got.candidates, expected.candidates, strict=True)
        assert all(a.entry is b.entry for a, b in pairs)


def test_a_turn_that_prunes_nothing_estimates_only_the_new_result() -> None:
    calls: list[object] = []

    class Counting(PiEstimator):
        def estimate(self, message: Any) -> int:
            calls.append(message)
            return super().estimate(message)

    tree = SessionTree.in_memory()
    for n in range(50):
        tree.append_message(
            {
                "role": "toolResult",
                "toolCallId": f"c{n}",
                "toolName": "read",
                "content": [{"type": "text", "text": "y" * 400}],
                "isError": False,
                "timestamp": n,
            }
        )
    decider = PruneDecider(Counting())
    big = PruneSettings(protect_tokens=10**9)
    assert decider.decide(tree.get_branch_view(), big).pruned_count == 0
    assert len(calls) == 50
    tree.append_message(
        {
            "role": "toolResult",
            "toolCallId": "new",
            "toolName": "read",
            "content": [{"type": "text", "text": "z"}],
            "isError": False,
            "timestamp": 99,
        }
    )
    assert decider.decide(tree.get_branch_view(), big).pruned_count == 0
    assert len(calls) == 51


def _result(n: int, chars: int) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": f"c{n}",
        "toolName": "bash",
        "content": [{"type": "text", "text": "w" * chars}],
        "isError": False,
        "timestamp": n,
    }


def test_going_back_on_the_branch_forgets_the_results_left_behind() -> None:
    # The shorter path's region is a prefix of the longer one's: the sums must not carry the
    # results that are no longer on it.
    tree = SessionTree.in_memory()
    for n in range(6):
        tree.append_message(_result(n, 8_000))
    rules = PruneSettings(protect_tokens=4_000, minimum_savings=100)
    decider = PruneDecider()
    assert decider.decide(tree.get_branch_view(), rules).pruned_count == 4
    tree.branch(tree.get_branch()[2]["id"])
    view = tree.get_branch_view()
    assert decider.decide(view, rules).pruned_count == decide_prune(view, rules).pruned_count == 1
