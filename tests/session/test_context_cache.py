"""The context a ``SessionTree`` keeps for its leaf is always the one a fresh build gives.

``build_session_context`` and ``latest_compaction`` remember their answer for the leaf last
asked for and carry it over the tree's own appends; anything else (a rewrite, another
writer's lines, a move of the leaf) makes them work it out again. Generated sequences of
operations check both against a build from the whole path after every step.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextree.context.build import SessionContext, appended_context, build_context_from_path
from contextree.session import SessionTree

Json = dict[str, Any]

_ops = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["user", "assistant", "result", "result", "assistant"])),
        st.tuples(st.just("model_change")),
        st.tuples(st.just("thinking"), st.sampled_from(["high", "", "off"])),
        st.tuples(st.just("custom_message")),
        st.tuples(st.just("label")),
        st.tuples(st.just("branch"), st.integers(1, 6)),
        st.tuples(st.just("compact"), st.floats(0, 1, exclude_max=True)),
        st.tuples(st.just("branch_summary"), st.integers(1, 4)),
        st.tuples(st.just("reset_boundary")),
        st.tuples(st.just("rewrite")),
        st.tuples(st.just("foreign")),
        st.tuples(st.just("foreign_duplicate"), st.integers(0, 10)),
        st.tuples(st.just("bulk"), st.integers(1, 20)),
        st.tuples(st.just("other_leaf"), st.integers(0, 50)),
    ),
    max_size=40,
)


class _Session:
    """A session file, a tree on it and a second writer appending behind its back."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tree = SessionTree.open(path)
        self.clock = itertools.count(1_700_000_000_000, 1000)
        self.calls = itertools.count()

    def message(self, role: str) -> Json:
        ts = next(self.clock)
        if role == "user":
            return {
                "role": "user",
                "content": [{"type": "text", "text": f"go {ts}"}],
                "timestamp": ts,
            }
        if role == "assistant":
            return {
                "role": "assistant",
                "content": [
                    {
                        "type": "toolCall",
                        "id": f"c{next(self.calls)}",
                        "name": "read",
                        "arguments": {},
                    }
                ],
                "provider": "openai",
                "model": f"m{ts % 3}",
                "stopReason": "toolUse",
                "timestamp": ts,
            }
        return {
            "role": "toolResult",
            "toolCallId": f"c{next(self.calls)}",
            "toolName": "read",
            "content": [{"type": "text", "text": f"out {ts} " * 20}],
            "isError": False,
            "timestamp": ts,
        }

    def apply(self, op: tuple[Any, ...]) -> None:
        tree, kind = self.tree, op[0]
        path = tree.get_branch()
        if kind in ("user", "assistant", "result"):
            tree.append_message(self.message(kind))
        elif kind == "model_change":
            tree.append_model_change("anthropic", f"claude-{next(self.clock) % 5}")
        elif kind == "thinking":
            tree.append_thinking_level_change(op[1])
        elif kind == "custom_message":
            tree.append_custom_message("note", "a hook's note")
        elif kind == "label" and path:
            tree.append_label(path[0]["id"], "start")
        elif kind == "branch" and len(path) > op[1]:
            tree.branch(path[-1 - op[1]]["id"])
        elif kind == "compact" and path:
            tree.append_compaction("what happened", path[int(op[1] * len(path))]["id"], 100)
        elif kind == "branch_summary" and len(path) > op[1]:
            tree.branch_with_summary(path[-1 - op[1]]["id"], "the other branch")
        elif kind == "reset_boundary":
            tree.append_entry(
                {
                    "type": "reset_boundary",
                    "id": f"reset{next(self.clock)}",
                    "parentId": tree.leaf_id,
                    "timestamp": "2026-12-03T00:00:00.000Z",
                }
            )
        elif kind == "rewrite":
            results = [e for e in path if e.get("message", {}).get("role") == "toolResult"]
            if results:
                changed = {**results[0], "message": {**results[0]["message"], "content": []}}
                tree.rewrite_entries([changed])
        elif kind == "foreign" and tree.leaf_id is not None:
            # Another writer (pi, say) appends to our leaf; we take it in on our next append.
            other = SessionTree.open(self.path)
            other.branch(tree.leaf_id)
            other.append_message(self.message("user"))
            tree.refresh()
        elif kind == "foreign_duplicate" and path:
            # Another writer's line repeats the id of an entry on our path: the last line with
            # an id wins, so our leaf's context changes although nothing of ours was written.
            entry = path[-1 - op[1] % len(path)]
            if entry["type"] == "message":
                again = {**entry, "message": self.message("user")}
                with self.path.open("ab") as file:
                    file.write(json.dumps(again).encode() + b"\n")
                tree.refresh()
        elif kind == "bulk":
            for _ in range(op[1]):
                tree.append_message(self.message("user"))

    def check(self, op: tuple[Any, ...]) -> None:
        tree = self.tree
        if op[0] == "other_leaf":
            # Asking about another entry must not disturb what is known of the leaf.
            entries = tree.get_entries()
            if entries:
                target = entries[op[1] % len(entries)]["id"]
                assert tree.build_session_context(target) == _fresh(tree, target)
        leaf = tree.leaf_id
        context = tree.build_session_context()
        assert context == _fresh(tree, leaf)
        scanned = [e for e in tree.get_branch() if e["type"] == "compaction"]
        assert tree.latest_compaction() == (scanned[-1] if scanned else None)
        # What a caller does with the lists it got never reaches the next answer.
        context.messages.append({"role": "user", "content": "changed"})
        context.entry_ids.append("changed")
        assert tree.build_session_context() == _fresh(tree, leaf)


def _fresh(tree: SessionTree, leaf: str | None) -> SessionContext:
    return build_context_from_path(tree.get_branch(leaf)) if leaf is not None else SessionContext()


@given(_ops)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_kept_context_is_always_the_fresh_one(ops: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        session = _Session(Path(folder) / "session.jsonl")
        for op in ops:
            session.apply(op)
            session.check(op)
        # And a session opened anew agrees with the one that carried its context along.
        again = SessionTree.open(session.path)
        if session.tree.leaf_id is not None and again.leaf_id == session.tree.leaf_id:
            assert again.build_session_context() == session.tree.build_session_context()


def test_appended_context_needs_a_rebuild_for_a_compaction_or_a_reset() -> None:
    start = SessionContext()
    for kind in ("compaction", "reset_boundary"):
        assert appended_context(start, {"type": kind, "id": "x", "parentId": None}) is None
    label = appended_context(start, {"type": "label", "id": "x", "parentId": None})
    assert label == start and label is not start


def test_appends_extend_the_kept_context_instead_of_reading_the_path_again() -> None:
    tree = SessionTree.in_memory()
    tree.append_message({"role": "user", "content": "hello", "timestamp": 1})
    tree.build_session_context()
    walked: list[str] = []
    original = tree._context_records

    def counting(start: str) -> Any:
        walked.append(start)
        return original(start)

    tree._context_records = counting  # type: ignore[method-assign]
    for n in range(5):
        tree.append_message({"role": "user", "content": f"more {n}", "timestamp": 2 + n})
        assert len(tree.build_session_context().messages) == 2 + n
    assert walked == []
    tree.branch(tree.get_branch()[0]["id"])  # another leaf: worked out from its path
    assert len(tree.build_session_context().messages) == 1
    assert len(walked) == 1
