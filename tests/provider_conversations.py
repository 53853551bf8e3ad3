"""Generated pi conversations for provider-view properties (hypothesis).

Two generators: message lists made directly (any order: results before their call, results of
failed replies, orphans, reused and empty ids, user messages between a call and its results),
and session trees built with the library (branches, compactions whose kept region starts at a
tool result, ``!bash`` runs, custom messages, branch summaries), read through
``build_session_context`` and ``convert_to_llm``. Used by ``tests/context`` (contextree's own
provider view) and ``tests/integrations`` (the same contexts as each framework's messages).
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import strategies as st

from contextree.context import convert_to_llm
from contextree.session import SessionTree

__all__ = ["from_messages", "from_tree", "message_ops", "tree_ops"]

Json = dict[str, Any]

_ids = st.one_of(
    st.sampled_from(["call_0", "call_1", "a|b", "a_b", "", "call_" + "x" * 70]),
    st.integers(0, 40).map(lambda n: f"call_{n}"),
)
_assistant = st.tuples(
    st.just("assistant"),
    st.sampled_from(["stop", "toolUse", "length", "error", "aborted"]),
    st.lists(_ids, max_size=3),
    st.booleans(),  # signed thinking
    st.booleans(),  # text
    st.sampled_from(["anthropic", "openai"]),
)
_result = st.tuples(
    st.just("result"),
    st.sampled_from(["pending", "pending", "earlier", "orphan"]),
    st.integers(0, 9),
    st.booleans(),  # an image in the result
)
_user = st.tuples(st.just("user"), st.sampled_from(["user", "user", "developer"]))
_message_ops = st.one_of(_user, _assistant, _result, _result, _assistant)
message_ops = st.lists(_message_ops, max_size=30)

_tree_ops = st.one_of(
    _user,
    _assistant,
    _result,
    _result,
    st.tuples(st.just("bash"), st.booleans()),
    st.tuples(st.just("custom_message")),
    st.tuples(st.just("branch"), st.integers(1, 6)),
    st.tuples(st.just("compact"), st.floats(0, 1, exclude_max=True)),
    st.tuples(st.just("branch_summary"), st.integers(1, 4)),
    _assistant,
)
tree_ops = st.lists(_tree_ops, max_size=40)


class _Maker:
    """Turns ops into pi-shaped messages, remembering the calls made so far."""

    def __init__(self) -> None:
        self.last_calls: list[str] = []
        self.all_calls: list[str] = []
        self.clock = itertools.count(1_700_000_000_000, 1000)

    def message(self, op: tuple[Any, ...]) -> Json:
        ts = next(self.clock)
        kind = op[0]
        if kind == "user":
            text_block = {"type": "text", "text": f"say {ts}"}
            return {"role": op[1], "content": [text_block], "timestamp": ts}
        if kind == "assistant":
            _, stop, ids, thinking, text, provider = op
            content: list[Json] = []
            if thinking:
                content.append({"type": "thinking", "thinking": "t", "thinkingSignature": "s"})
            if text:
                content.append({"type": "text", "text": f"reply {ts}"})
            content.extend(
                {"type": "toolCall", "id": i, "name": "read", "arguments": {"n": n}}
                for n, i in enumerate(ids)
            )
            self.last_calls = list(ids)
            self.all_calls.extend(ids)
            return {
                "role": "assistant",
                "content": content,
                "provider": provider,
                "model": "m",
                "stopReason": stop,
                "timestamp": ts,
            }
        _, which, n, image = op
        if which == "pending" and self.last_calls:
            call_id = self.last_calls[n % len(self.last_calls)]
        elif which == "earlier" and self.all_calls:
            call_id = self.all_calls[n % len(self.all_calls)]
        else:
            call_id = f"orphan_{n}"
        blocks: list[Json] = [{"type": "text", "text": f"out {ts}"}]
        if image:
            blocks.append({"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"})
        return {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "read",
            "content": blocks,
            "isError": False,
            "timestamp": ts,
        }


def from_messages(ops: list[tuple[Any, ...]]) -> list[Json]:
    maker = _Maker()
    return [maker.message(op) for op in ops]


def from_tree(ops: list[tuple[Any, ...]]) -> list[Json]:
    tree = SessionTree.in_memory()
    maker = _Maker()
    for op in ops:
        kind = op[0]
        path = tree.get_branch()
        if kind == "bash":
            tree.append_message(
                {
                    "role": "bashExecution",
                    "command": "ls",
                    "output": "a",
                    "exitCode": 0,
                    "cancelled": False,
                    "truncated": False,
                    "excludeFromContext": op[1],
                    "timestamp": next(maker.clock),
                }
            )
        elif kind == "custom_message":
            tree.append_custom_message("note", "a hook's note")
        elif kind == "branch":
            if len(path) > op[1]:
                tree.branch(path[-1 - op[1]]["id"])
        elif kind == "compact":
            if path:
                kept = path[int(op[1] * len(path))]["id"]
                tree.append_compaction("what happened", kept, 100)
        elif kind == "branch_summary":
            if len(path) > op[1]:
                tree.branch_with_summary(path[-1 - op[1]]["id"], "the other branch")
        else:
            tree.append_message(maker.message(op))
    return convert_to_llm(tree.build_session_context().messages)
