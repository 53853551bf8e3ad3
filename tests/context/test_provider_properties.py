"""The provider view over generated contexts (hypothesis): whatever a session holds, the request
passes OpenAI's and Anthropic's rules once mapped, and nothing else is lost.

Two generators: message lists made directly (any order: results before their call, results of
failed replies, orphans, reused and empty ids, user messages between a call and its results),
and session trees built with the library (branches, compactions whose kept region starts at a
tool result, ``!bash`` runs, custom messages, branch summaries), read through
``build_session_context`` and ``convert_to_llm``.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextree.context import (
    DROPPED_STOP_REASONS,
    convert_to_llm,
    provider_messages,
)
from contextree.context.provider import ProviderView
from contextree.llm.anthropic import to_anthropic_messages
from contextree.llm.openai_compat import to_openai_messages
from contextree.session import SessionTree
from provider_rules import anthropic_problems, openai_problems

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
_messages = st.lists(_message_ops, max_size=30)

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
_trees = st.lists(_tree_ops, max_size=40)

_examples = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


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


def _from_messages(ops: list[tuple[Any, ...]]) -> list[Json]:
    maker = _Maker()
    return [maker.message(op) for op in ops]


def _from_tree(ops: list[tuple[Any, ...]]) -> list[Json]:
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


def _check(messages: list[Json]) -> None:
    before = copy.deepcopy(messages)
    view = provider_messages(messages)
    assert messages == before, "the input was modified"

    assert openai_problems(to_openai_messages("", view)) == []
    assert anthropic_problems(to_anthropic_messages(view)) == []
    assert provider_messages(view) == view

    # Kept: every reply that did not fail (whole, blocks in order) and every other message.
    kept = [
        m
        for m in messages
        if m["role"] == "assistant" and m.get("stopReason") not in DROPPED_STOP_REASONS
    ]
    sent = [m for m in view if m["role"] == "assistant"]
    assert [[b["type"] for b in m["content"]] for m in sent] == [
        [b["type"] for b in m["content"]] for m in kept
    ]
    assert [m["timestamp"] for m in sent] == [m["timestamp"] for m in kept]
    others = [m for m in messages if m["role"] not in ("assistant", "toolResult")]
    assert [m for m in view if m["role"] not in ("assistant", "toolResult")] == others
    # A real result is only ever sent as the answer to a call (never invented text).
    for message in view:
        if message["role"] == "toolResult" and not message.get("synthetic"):
            assert any(message["content"] == m["content"] for m in messages)


@given(_messages)
@_examples
def test_any_message_list_becomes_a_valid_request(ops: list[tuple[Any, ...]]) -> None:
    _check(_from_messages(ops))


@given(_trees)
@_examples
def test_any_session_context_becomes_a_valid_request(ops: list[tuple[Any, ...]]) -> None:
    _check(_from_tree(ops))


def test_the_checks_catch_what_providers_reject() -> None:
    # The raw context of a session with a dangling call, an orphan and a failed reply.
    messages = _from_messages(
        [
            ("user", "user"),
            ("assistant", "toolUse", ["a"], False, True, "anthropic"),
            ("user", "user"),
            ("result", "orphan", 1, False),
            ("assistant", "aborted", ["a"], False, False, "anthropic"),
        ]
    )
    assert openai_problems(to_openai_messages("", messages))
    assert anthropic_problems(to_anthropic_messages(messages))
    _check(messages)


# What happens to a context between two requests: it grows (by up to three messages), a
# message in it is replaced by an equal copy or another message (a pruned result, a
# rewrite), it is cut short (a compaction, another branch) or stays as it is.
_changes = st.lists(
    st.one_of(
        st.tuples(st.just("grow"), st.integers(1, 3)),
        st.tuples(st.just("replace"), st.floats(0, 1, exclude_max=True), st.booleans()),
        st.tuples(st.just("cut"), st.floats(0, 1)),
        st.tuples(st.just("same")),
    ),
    max_size=25,
)


@given(_messages, _changes)
@_examples
def test_the_view_of_a_growing_context_is_the_whole_view(
    ops: list[tuple[Any, ...]], changes: list[tuple[Any, ...]]
) -> None:
    # ProviderView works out only the last batch again; whatever the context went through,
    # its answer is provider_messages(convert_to_llm(context)), message for message.
    pool = _from_messages(ops)
    view = ProviderView()
    context: list[Json] = []
    taken = 0
    for change in changes:
        if change[0] == "grow":
            context = [*context, *pool[taken : taken + change[1]]]
            taken += change[1]
        elif change[0] == "replace" and context:
            at = int(change[1] * len(context))
            other = copy.deepcopy(context[at]) if change[2] else pool[(at * 7) % len(pool)]
            context = [*context[:at], other, *context[at + 1 :]]
        elif change[0] == "cut":
            context = context[: int(change[1] * len(context))]
        assert view.messages(context) == provider_messages(convert_to_llm(context))
