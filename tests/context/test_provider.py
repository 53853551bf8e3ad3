"""provider_messages: convert_to_llm output as a list OpenAI and Anthropic accept."""

from __future__ import annotations

import copy
from typing import Any

from contextree.context import MISSING_RESULT_TEXT, provider_messages

Json = dict[str, Any]
TS = 1_700_000_000_000


def _user(text: str = "go") -> Json:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": TS}


def _call(call_id: str, name: str = "read") -> Json:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": {"path": call_id}}


def _reply(*calls: str, stop: str | None = None, text: str = "", thinking: bool = False) -> Json:
    content: list[Json] = []
    if thinking:
        content.append({"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"})
    if text:
        content.append({"type": "text", "text": text})
    content.extend(_call(c) for c in calls)
    return {
        "role": "assistant",
        "content": content,
        "provider": "anthropic",
        "stopReason": stop or ("toolUse" if calls else "stop"),
        "timestamp": TS + 1,
    }


def _result(call_id: str, text: str = "out") -> Json:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "read",
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": TS + 2,
    }


def _shape(messages: list[Json]) -> list[str]:
    """``user``, ``assistant:a,b`` (its call ids), ``result:a`` per message."""
    shape = []
    for message in messages:
        role = message["role"]
        if role == "assistant":
            ids = [b["id"] for b in message["content"] if b["type"] == "toolCall"]
            shape.append("assistant" + (":" + ",".join(ids) if ids else ""))
        elif role == "toolResult":
            shape.append(f"result:{message['toolCallId']}")
        else:
            shape.append(role)
    return shape


# -- rule 1: failed replies -----------------------------------------------------------------------


def test_error_and_aborted_replies_are_dropped_with_their_results() -> None:
    messages = [
        _user(),
        _reply("a", stop="aborted"),
        _result("a"),
        _reply(stop="error", text="partial"),
        _reply("b"),
        _result("b"),
        _reply(text="done"),
    ]
    assert _shape(provider_messages(messages)) == ["user", "assistant:b", "result:b", "assistant"]


def test_messages_after_a_dropped_reply_are_kept() -> None:
    messages = [_user("one"), _reply("a", stop="error"), _result("a"), _user("two")]
    out = provider_messages(messages)
    assert out == [messages[0], messages[3]]


def test_other_stop_reasons_are_kept() -> None:
    messages = [_user(), _reply(stop="length", text="cut"), _user(), _reply(text="ok")]
    assert provider_messages(messages) == messages


# -- rule 2: every call answered ------------------------------------------------------------------


def test_a_call_without_a_result_gets_a_synthetic_error_result() -> None:
    reply = _reply("a", "b", thinking=True, text="reading")
    messages = [_user(), reply, _result("b"), _user("next")]
    out = provider_messages(messages)
    assert _shape(out) == ["user", "assistant:a,b", "result:a", "result:b", "user"]
    # The assistant message is sent whole: thinking, text and calls together, unmodified.
    assert out[1] is reply
    assert out[2] == {
        "role": "toolResult",
        "toolCallId": "a",
        "toolName": "read",
        "content": [{"type": "text", "text": MISSING_RESULT_TEXT}],
        "isError": True,
        "timestamp": TS + 1,
        "synthetic": True,
    }
    assert out[3] is messages[2]


def test_a_trailing_call_without_a_result_is_answered() -> None:
    out = provider_messages([_user(), _reply("a")])
    assert _shape(out) == ["user", "assistant:a", "result:a"]
    assert out[2]["isError"] is True


def test_results_follow_in_call_order() -> None:
    messages = [_user(), _reply("a", "b", "c"), _result("c"), _result("a"), _result("b")]
    out = provider_messages(messages)
    assert _shape(out) == ["user", "assistant:a,b,c", "result:a", "result:b", "result:c"]


def test_a_result_after_the_next_assistant_message_does_not_count() -> None:
    messages = [_user(), _reply("a"), _reply(text="later"), _result("a")]
    out = provider_messages(messages)
    assert _shape(out) == ["user", "assistant:a", "result:a", "assistant"]
    assert out[2].get("synthetic") is True


# -- rule 3: orphan results -----------------------------------------------------------------------


def test_orphan_results_are_dropped() -> None:
    messages = [
        _result("gone"),  # its call was compacted away
        _user(),
        _result("gone"),
        _reply("a"),
        _result("a"),
        _result("a"),  # a duplicate
        _result("x"),  # no such call in this batch
        _user("more"),
        _result("a"),
    ]
    assert _shape(provider_messages(messages)) == ["user", "assistant:a", "result:a", "user"]


# -- rule 4: interleaved messages -----------------------------------------------------------------


def test_messages_between_a_call_and_its_results_move_after_the_results() -> None:
    steer = _user("also check b")
    messages = [_user(), _reply("a", "b"), _result("a"), steer, _result("b")]
    out = provider_messages(messages)
    assert _shape(out) == ["user", "assistant:a,b", "result:a", "result:b", "user"]
    assert out[4] is steer


# -- rule 5: unique ids ---------------------------------------------------------------------------


def test_an_id_reused_by_a_later_reply_is_renamed_with_its_result() -> None:
    messages = [_user(), _reply("call_0"), _result("call_0"), _reply("call_0"), _result("call_0")]
    out = provider_messages(messages)
    assert _shape(out) == [
        "user",
        "assistant:call_0",
        "result:call_0",
        "assistant:call_0_1",
        "result:call_0_1",
    ]
    assert out[4]["content"] == [{"type": "text", "text": "out"}]
    # Copies are changed, never the input.
    assert messages[3]["content"][0]["id"] == "call_0"
    assert messages[4]["toolCallId"] == "call_0"


def test_the_same_id_twice_in_one_message_pairs_results_in_order() -> None:
    messages = [_user(), _reply("a", "a"), _result("a", "first"), _result("a", "second")]
    out = provider_messages(messages)
    assert _shape(out) == ["user", "assistant:a,a_1", "result:a", "result:a_1"]
    assert [m["content"][0]["text"] for m in out[2:]] == ["first", "second"]


def test_ids_equal_after_anthropics_rewrite_count_as_the_same() -> None:
    messages = [_user(), _reply("a|b", "a_b"), _result("a|b"), _result("a_b")]
    out = provider_messages(messages)
    assert _shape(out)[1:] == ["assistant:a|b,a_b_1", "result:a|b", "result:a_b_1"]


def test_an_empty_id_gets_a_fresh_one() -> None:
    out = provider_messages([_user(), _reply(""), _result("")])
    assert _shape(out) == ["user", "assistant:tool_call_1", "result:tool_call_1"]


def test_long_unique_ids_are_kept_and_renamed_ids_stay_short() -> None:
    long_id = "call_" + "x" * 400  # OpenAI Responses ids run to hundreds of characters
    out = provider_messages([_user(), _reply(long_id), _result(long_id), _reply(long_id)])
    assert out[1]["content"][0]["id"] == long_id
    renamed = out[3]["content"][0]["id"]
    assert renamed != long_id
    assert len(renamed) <= 64
    assert out[4]["toolCallId"] == renamed


# -- general --------------------------------------------------------------------------------------


def test_a_valid_list_comes_back_as_it_is() -> None:
    messages = [
        _user(),
        _reply("a", "b", thinking=True),
        _result("a"),
        _result("b"),
        _reply(text="done"),
        {"role": "developer", "content": "note", "timestamp": TS},
        _user("again"),
    ]
    out = provider_messages(messages)
    assert out == messages
    assert all(o is m for o, m in zip(out, messages, strict=True))


def test_the_input_is_never_modified() -> None:
    messages = [
        _result("orphan"),
        _user(),
        _reply("a", "a", "b"),
        _user("steer"),
        _result("a"),
        _reply("a", stop="aborted"),
        _result("a"),
        _reply("b"),
    ]
    before = copy.deepcopy(messages)
    provider_messages(messages)
    assert messages == before


def test_the_view_is_idempotent() -> None:
    messages = [_user(), _reply("a", "a"), _user("x"), _result("a"), _reply("a"), _result("q")]
    once = provider_messages(messages)
    assert provider_messages(once) == once


def test_empty_and_odd_shapes() -> None:
    assert provider_messages([]) == []
    odd = {"role": "assistant", "content": "plain text", "stopReason": "stop"}
    assert provider_messages([_user(), odd]) == [_user(), odd]
