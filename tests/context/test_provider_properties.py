"""The provider view over generated contexts (hypothesis): whatever a session holds, the request
passes OpenAI's and Anthropic's rules once mapped, and nothing else is lost.

The contexts come from ``tests/provider_conversations.py``: message lists made directly and
session trees built with the library.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from contextree.context import (
    DROPPED_STOP_REASONS,
    convert_to_llm,
    provider_messages,
)
from contextree.context.provider import ProviderView
from contextree.llm.anthropic import to_anthropic_messages
from contextree.llm.openai_compat import to_openai_messages
from provider_conversations import from_messages, from_tree, message_ops, tree_ops
from provider_rules import anthropic_problems, openai_problems

Json = dict[str, Any]

_examples = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


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


@given(message_ops)
@_examples
def test_any_message_list_becomes_a_valid_request(ops: list[tuple[Any, ...]]) -> None:
    _check(from_messages(ops))


@given(tree_ops)
@_examples
def test_any_session_context_becomes_a_valid_request(ops: list[tuple[Any, ...]]) -> None:
    _check(from_tree(ops))


def test_the_checks_catch_what_providers_reject() -> None:
    # The raw context of a session with a dangling call, an orphan and a failed reply.
    messages = from_messages(
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


@given(message_ops, _changes)
@_examples
# Found by hypothesis: the assistant message that closed the settled part is replaced by a
# user message, and a later result then answers a call of the settled part.
@example(
    ops=[
        ("user", "user"),
        ("user", "user"),
        ("user", "user"),
        ("assistant", "stop", ["call_0"], False, False, "anthropic"),
        ("assistant", "stop", [], False, False, "anthropic"),
        ("result", "earlier", 0, False),
        ("user", "user"),
    ],
    changes=[("grow", 2), ("grow", 3), ("replace", 0.875, False), ("grow", 1)],
)
def test_the_view_of_a_growing_context_is_the_whole_view(
    ops: list[tuple[Any, ...]], changes: list[tuple[Any, ...]]
) -> None:
    # ProviderView works out only the last batch again; whatever the context went through,
    # its answer is provider_messages(convert_to_llm(context)), message for message.
    pool = from_messages(ops)
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
