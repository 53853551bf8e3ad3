"""Conversion between OpenAI Agents SDK items and pi messages (integrations.openai_agents)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from agents.models.chatcmpl_converter import Converter
from hypothesis import given, settings
from hypothesis import strategies as st

from contextree.context import convert_to_llm, provider_messages
from contextree.integrations.openai_agents import (
    UnsupportedItemError,
    items_to_messages,
    messages_to_items,
)
from contextree.integrations.openai_agents.convert import FAKE_ITEM_ID, ItemCache, usage_from_sdk
from contextree.llm.openai_compat import to_openai_messages
from provider_conversations import from_messages, from_tree, message_ops, tree_ops
from provider_rules import openai_problems

Json = dict[str, Any]

_clock = itertools.count(1_765_000_000_000)


def now() -> int:
    return next(_clock)


def to_pi(items: list[Json], **options: Any) -> list[Json]:
    return items_to_messages(items, now=now, **options)


def chat_messages(items: list[Json]) -> list[Json]:
    """What the SDK's own chat-completions converter sends for ``items``."""
    return [dict(m) for m in Converter.items_to_messages(items)]  # type: ignore[arg-type]


# -- SDK items -> pi --------------------------------------------------------------------------


def test_a_turn_of_the_sdk_becomes_user_assistant_and_tool_result_messages() -> None:
    items = [
        {"role": "user", "content": "add 1 and 2"},
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "I should add."}],
            "encrypted_content": "gAAA",
        },
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_1",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Adding.", "annotations": []}],
        },
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "add",
            "arguments": '{"a": 1, "b": 2}',
            "id": "fc_1",
            "provider_data": {"model": "gpt-4o-mini", "response_id": "resp_1"},
        },
        {"type": "function_call_output", "call_id": "c1", "output": "3"},
    ]

    user, assistant, result = to_pi(items, usage=usage_from_sdk(120, 30, cached_tokens=20))

    assert user == {"role": "user", "content": "add 1 and 2", "timestamp": user["timestamp"]}
    thinking, text, call = assistant["content"]
    assert thinking["thinking"] == "I should add."
    assert json.loads(thinking["thinkingSignature"]) == items[1]
    assert text == {"type": "text", "text": "Adding.", "textSignature": "msg_1"}
    assert call == {
        "type": "toolCall",
        "id": "c1",
        "name": "add",
        "arguments": {"a": 1, "b": 2},
        "itemId": "fc_1",
    }
    assert assistant["stopReason"] == "toolUse"
    assert assistant["model"] == "gpt-4o-mini"  # from the SDK's provider_data
    assert (assistant["provider"], assistant["api"]) == ("openai", "openai-responses")
    assert assistant["usage"]["input"] == 100 and assistant["usage"]["cacheRead"] == 20
    assert assistant["usage"]["output"] == 30 and assistant["usage"]["totalTokens"] == 150
    assert result["role"] == "toolResult" and result["toolName"] == "add"
    assert result["toolCallId"] == "c1" and result["content"] == [{"type": "text", "text": "3"}]
    assert result["isError"] is False


def test_placeholder_ids_and_sdk_metadata_are_not_stored() -> None:
    items = [
        {
            "type": "message",
            "role": "assistant",
            "id": FAKE_ITEM_ID,
            "status": "completed",
            "content": [{"type": "output_text", "text": "Hi", "annotations": [], "logprobs": []}],
            "provider_data": {"model": "gpt-4o", "response_id": "chatcmpl-1"},
        },
        {
            "type": "reasoning",
            "id": FAKE_ITEM_ID,
            "summary": [{"type": "summary_text", "text": "t"}],
        },
    ]

    [assistant] = to_pi(items)

    assert assistant["content"] == [
        {"type": "text", "text": "Hi"},
        {"type": "thinking", "thinking": "t"},  # nothing to send back: unsigned
    ]


def test_a_result_whose_call_was_stored_earlier_gets_the_name_given() -> None:
    [result] = to_pi(
        [{"type": "function_call_output", "call_id": "c9", "output": "ok"}],
        tool_names={"c9": "grep"},
    )
    assert result["toolName"] == "grep"


def test_system_and_developer_items_keep_their_role() -> None:
    items = [
        {"role": "system", "content": "Be terse."},
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "x"}]},
    ]
    system, developer = to_pi(items)
    assert system["role"] == developer["role"] == "developer"
    assert (system["sdkRole"], developer["sdkRole"]) == ("system", "developer")
    assert messages_to_items(convert_to_llm([system, developer])) == [
        {"role": "system", "content": [{"type": "input_text", "text": "Be terse."}]},
        {"role": "developer", "content": [{"type": "input_text", "text": "x"}]},
    ]


def test_images_travel_as_data_urls() -> None:
    item = {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "what is this?"},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0K", "detail": "low"},
        ],
    }
    [user] = to_pi([item])
    assert user["content"][1] == {
        "type": "image",
        "data": "iVBORw0K",
        "mimeType": "image/png",
        "detail": "low",
    }
    assert messages_to_items([user]) == [item]


def test_arguments_that_are_not_a_json_object_are_kept_as_written() -> None:
    item = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "not json"}
    [assistant] = to_pi([item])
    assert assistant["content"][0]["arguments"] == {}
    assert messages_to_items([assistant]) == [item]


def test_a_refusal_is_stored_as_such_and_sent_back_as_text() -> None:
    item = {
        "type": "message",
        "role": "assistant",
        "id": "msg_2",
        "status": "completed",
        "content": [{"type": "refusal", "refusal": "I can't help with that."}],
    }
    [assistant] = to_pi([item])
    assert assistant["content"][0]["refusal"] is True
    [back] = messages_to_items([assistant])
    assert back["content"] == [
        {"type": "output_text", "text": "I can't help with that.", "annotations": []}
    ]
    assert chat_messages([{"role": "user", "content": "q"}, back])[1]["content"]


def test_edited_thinking_wins_over_its_signature() -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "a"}]}
    [assistant] = to_pi([item])
    assistant["content"][0]["thinking"] = "[redacted]"
    [back] = messages_to_items([assistant])
    assert back == {**item, "summary": [{"type": "summary_text", "text": "[redacted]"}]}


@pytest.mark.parametrize(
    ("item", "where"),
    [
        (
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            'item type "web_search_call"',
        ),
        ({"type": "item_reference", "id": "msg_1"}, 'item type "item_reference"'),
        (
            {"role": "user", "content": [{"type": "input_file", "file_id": "file-1"}]},
            'content part of type "input_file"',
        ),
        (
            {"role": "user", "content": [{"type": "input_image", "image_url": "https://x/y.png"}]},
            "not a base64 data: URL",
        ),
        ("just a string", "expected a dict"),
    ],
)
def test_what_pi_cannot_hold_is_refused_with_the_item_named(item: Any, where: str) -> None:
    with pytest.raises(UnsupportedItemError, match=r"^item 1: .*") as raised:
        to_pi([{"role": "user", "content": "first"}, item])
    assert where in str(raised.value)
    assert raised.value.index == 1


def test_text_after_a_call_goes_before_the_calls() -> None:
    call = {"type": "toolCall", "id": "c1", "name": "f", "arguments": {}}
    assistant = {
        "role": "assistant",
        "content": [{"type": "text", "text": "a"}, call, {"type": "text", "text": "b"}],
    }
    items = messages_to_items([assistant])
    assert [item["type"] for item in items] == ["message", "function_call"]
    assert [part["text"] for part in items[0]["content"]] == ["a", "b"]


def test_messages_of_other_roles_are_refused() -> None:
    with pytest.raises(ValueError, match="message 0: role 'compactionSummary'"):
        messages_to_items([{"role": "compactionSummary", "summary": "s"}])


# -- round trips ------------------------------------------------------------------------------

texts = st.text(min_size=0, max_size=20)
ids = st.text(alphabet="abcdefghij0123456789", min_size=1, max_size=6)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
arguments = st.dictionaries(texts, json_values, max_size=3)
images = st.builds(
    lambda data, mime: {"type": "image", "data": data, "mimeType": mime},
    st.text(alphabet="ABCDabcd0123+/=", min_size=1, max_size=12),
    st.sampled_from(["image/png", "image/jpeg"]),
)
text_blocks = st.builds(lambda t: {"type": "text", "text": t}, texts)


@st.composite
def assistant_blocks(draw: st.DrawFn) -> list[Json]:
    blocks: list[Json] = []
    for kind in draw(
        st.lists(st.sampled_from(["text", "thinking", "call"]), min_size=1, max_size=5)
    ):
        if kind == "text":
            block: Json = {"type": "text", "text": draw(texts)}
            signature = draw(st.none() | ids.map(lambda i: f"msg_{i}"))
            if signature is not None:
                block["textSignature"] = signature
            if draw(st.booleans()):
                block["annotations"] = [{"type": "url_citation", "url": "https://example.com"}]
        elif kind == "thinking":
            text = draw(texts)
            block = {"type": "thinking", "thinking": text}
            if draw(st.booleans()):
                signed = {
                    "type": "reasoning",
                    "id": f"rs_{draw(ids)}",
                    "summary": [{"type": "summary_text", "text": text}] if text else [],
                    "encrypted_content": draw(texts),
                }
                block["thinkingSignature"] = json.dumps(signed, ensure_ascii=False)
        else:
            block = {
                "type": "toolCall",
                "id": f"call_{draw(ids)}",
                "name": draw(st.sampled_from(["read", "bash", "edit"])),
                "arguments": draw(arguments),
            }
            if draw(st.booleans()):
                block["itemId"] = f"fc_{draw(ids)}"
        if block["type"] == "text" and any(b["type"] == "toolCall" for b in blocks):
            continue  # text after a call goes before the calls (tested on its own)
        blocks.append(block)
    return blocks


@st.composite
def conversations(draw: st.DrawFn) -> list[Json]:
    """pi LLM messages in what both sides express; no two assistant messages in a row (the
    SDK has no boundary between them: they become one)."""
    messages: list[Json] = []
    for role in draw(
        st.lists(st.sampled_from(["user", "developer", "assistant", "tool"]), max_size=8)
    ):
        if role == "assistant" and messages and messages[-1]["role"] == "assistant":
            continue
        if role == "user":
            content = draw(texts | st.lists(text_blocks | images, min_size=1, max_size=3))
            messages.append({"role": "user", "content": content})
        elif role == "developer":
            sdk_role = draw(st.sampled_from(["system", "developer"]))
            content = draw(st.lists(text_blocks, min_size=1, max_size=2))
            messages.append({"role": "developer", "content": content, "sdkRole": sdk_role})
        elif role == "assistant":
            messages.append({"role": "assistant", "content": draw(assistant_blocks())})
        else:
            content = draw(st.lists(text_blocks | images, min_size=1, max_size=2))
            messages.append(
                {"role": "toolResult", "toolCallId": f"call_{draw(ids)}", "content": content}
            )
    return messages


def essentials(messages: list[Json]) -> list[Json]:
    keep = ("role", "content", "toolCallId", "sdkRole")
    return [{key: m[key] for key in keep if key in m} for m in messages]


@settings(max_examples=300, deadline=None)
@given(conversations())
def test_pi_to_items_to_pi_keeps_everything_both_sides_express(messages: list[Json]) -> None:
    back = to_pi(messages_to_items(messages))
    assert essentials(back) == essentials(messages)


@settings(max_examples=300, deadline=None)
@given(conversations())
def test_items_to_pi_to_items_is_stable(messages: list[Json]) -> None:
    items = messages_to_items(messages)
    assert messages_to_items(to_pi(items)) == items


@settings(max_examples=200, deadline=None)
@given(conversations(), st.data())
def test_the_provider_view_converts_to_valid_chat_requests(
    messages: list[Json], data: st.DataObject
) -> None:
    """Whatever the stored history (calls without results, results without calls, a cut that
    starts after a call), the provider view as SDK items is valid once the SDK's own
    chat-completions converter turns it into a request."""
    start = data.draw(st.integers(0, len(messages)))
    stamped = [
        {
            **m,
            "timestamp": 1,
            **(
                {
                    "api": "openai-responses",
                    "provider": "openai",
                    "model": "m",
                    "stopReason": "stop",
                }
                if m["role"] == "assistant"
                else {}
            ),
            **({"toolName": "read", "isError": False} if m["role"] == "toolResult" else {}),
        }
        for m in messages[start:]
    ]
    items = messages_to_items(provider_messages(convert_to_llm(stamped)))
    assert openai_problems(chat_messages(items)) == []


@settings(max_examples=200, deadline=None)
@given(st.lists(conversations(), min_size=1, max_size=5), st.data())
def test_the_item_cache_gives_what_a_fresh_conversion_gives(
    turns: list[list[Json]], data: st.DataObject
) -> None:
    # A context that grows turn by turn, sometimes with a message replaced by an equal copy or
    # by another one (a pruned result is a new dict), or cut short (a compaction).
    cache = ItemCache()
    context: list[Json] = []
    for turn in turns:
        context = context + turn
        if context and data.draw(st.booleans()):
            at = data.draw(st.integers(0, len(context) - 1))
            context[at] = json.loads(json.dumps(context[at]))
        if data.draw(st.booleans()):
            context = context[: data.draw(st.integers(0, len(context)))]
        assert cache.items(context) == messages_to_items(context)


def test_the_item_cache_converts_each_message_object_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import contextree.integrations.openai_agents.convert as convert

    converted: list[object] = []
    original = convert._message_items

    def counting(message: Json, index: int) -> list[Json]:
        converted.append(message)
        return original(message, index)

    monkeypatch.setattr(convert, "_message_items", counting)
    cache = ItemCache()
    context = [{"role": "user", "content": f"question {n}"} for n in range(5)]
    cache.items(context)
    cache.items([*context, {"role": "user", "content": "one more"}])
    assert len(converted) == 6
    with pytest.raises(ValueError, match="message 0: role 'custom'"):
        cache.items([{"role": "custom", "content": "x"}])


# -- tool-call pairing over generated sessions ------------------------------------------------

_pairing = settings(max_examples=200, deadline=None)


@given(message_ops)
@_pairing
def test_any_provider_view_becomes_items_the_sdk_sends_validly(
    ops: list[tuple[Any, ...]],
) -> None:
    view = provider_messages(convert_to_llm(from_messages(ops)))
    assert openai_problems(chat_messages(messages_to_items(view))) == []


@given(tree_ops)
@_pairing
def test_any_session_context_becomes_items_the_sdk_sends_validly(
    ops: list[tuple[Any, ...]],
) -> None:
    view = provider_messages(from_tree(ops))  # compactions cutting turns, branches, !bash
    assert openai_problems(chat_messages(messages_to_items(view))) == []


@st.composite
def runner_items(draw: st.DrawFn) -> list[Json]:
    """Items the runner hands ``add_items``: a user input, then per model call an optional
    reasoning item and message, its function calls (ids unique in the session), and their
    outputs in any order."""
    items: list[Json] = []
    calls = 0
    for run in range(draw(st.integers(1, 3))):
        items.append({"role": "user", "content": draw(texts)})
        for step in range(draw(st.integers(0, 3))):
            if draw(st.booleans()):
                summary = [{"type": "summary_text", "text": draw(texts)}]
                items.append({"type": "reasoning", "id": f"rs_{run}_{step}", "summary": summary})
            if draw(st.booleans()):
                items.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "id": f"msg_{run}_{step}",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": draw(texts)}],
                    }
                )
            count = draw(st.integers(0, 3))
            ids = [f"call_{calls + n}" for n in range(count)]
            calls += count
            items.extend(
                {"type": "function_call", "call_id": i, "name": "read", "arguments": "{}"}
                for i in ids
            )
            items.extend(
                {"type": "function_call_output", "call_id": i, "output": draw(texts)}
                for i in draw(st.permutations(ids))
            )
    return items


@given(runner_items())
@_pairing
def test_paired_runner_items_stay_paired_in_pi(items: list[Json]) -> None:
    assert openai_problems(chat_messages(items)) == []  # valid as the SDK sends them
    llm = convert_to_llm(to_pi(items, model="gpt-4o"))
    # Paired as stored: nothing for the provider view to repair (results may only be put in
    # the order of their calls), and every result is kept.
    assert openai_problems(to_openai_messages("", llm)) == []
    view = provider_messages(llm)
    assert not any(message.get("synthetic") for message in view)
    assert sorted(map(repr, view)) == sorted(map(repr, llm))
    assert openai_problems(chat_messages(messages_to_items(view))) == []
