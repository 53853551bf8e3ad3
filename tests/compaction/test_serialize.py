"""serialize_conversation: the text a summarizer reads (pi-behaviour.md §7.1)."""

from __future__ import annotations

from typing import Any

from contextree.compaction.serialize import TOOL_RESULT_MAX_CHARS, serialize_conversation
from contextree.context.convert import convert_to_llm


def _assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks), "stopReason": "stop"}


def _tool_result(text: str) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": [{"type": "text", "text": text}],
        "isError": False,
    }


def _call(name: str, arguments: object) -> dict[str, Any]:
    return {"type": "toolCall", "id": "c1", "name": name, "arguments": arguments}


def test_matches_the_pi_example() -> None:
    messages = [
        {"role": "user", "content": "Hello there", "timestamp": 1},
        _assistant(
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "Let me read"},
            _call("read", {"path": "a.ts", "offset": 2}),
        ),
        _tool_result("file body"),
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "a\nb",
            "exitCode": 1,
            "cancelled": False,
            "truncated": False,
            "timestamp": 2,
        },
    ]
    expected = (
        "[User]: Hello there\n\n[Assistant thinking]: hmm\n\n[Assistant]: Let me read\n\n"
        '[Assistant tool calls]: read(path="a.ts", offset=2)\n\n[Tool result]: file body\n\n'
        "[User]: Ran `ls`\n```\na\nb\n```\n\nCommand exited with code 1"
    )
    assert serialize_conversation(convert_to_llm(messages)) == expected


def test_long_tool_results_are_truncated() -> None:
    text = serialize_conversation([_tool_result("x" * 5000)])
    assert text == "[Tool result]: " + "x" * 2000 + "\n\n[... 3000 more characters truncated]"


def test_short_tool_results_are_not_truncated() -> None:
    assert serialize_conversation([_tool_result("x" * 100)]) == "[Tool result]: " + "x" * 100
    exact = "y" * TOOL_RESULT_MAX_CHARS
    assert serialize_conversation([_tool_result(exact)]) == "[Tool result]: " + exact


def test_user_and_assistant_text_is_never_truncated() -> None:
    long = "z" * 5000
    messages = [
        {"role": "user", "content": long},
        _assistant({"type": "text", "text": long}, {"type": "thinking", "thinking": long}),
    ]
    text = serialize_conversation(messages)
    assert "truncated" not in text
    assert text.count(long) == 3


def test_truncation_counts_utf16_units_and_may_split_a_pair() -> None:
    # 1999 units, then an emoji (2 units) straddling the cut, then 10 more.
    text = serialize_conversation([_tool_result("a" * 1999 + "😀" + "b" * 10)])
    assert (
        text == "[Tool result]: " + "a" * 1999 + "\ud83d" + "\n\n[... 11 more characters truncated]"
    )


def test_truncation_of_astral_text() -> None:
    text = serialize_conversation([_tool_result("😀" * 1500)])
    assert text == "[Tool result]: " + "😀" * 1000 + "\n\n[... 1000 more characters truncated]"


def test_tool_result_joins_text_blocks_and_ignores_images() -> None:
    message = {
        "role": "toolResult",
        "content": [
            {"type": "text", "text": "a"},
            {"type": "image", "data": "x"},
            {"type": "text", "text": "b"},
        ],
    }
    assert serialize_conversation([message]) == "[Tool result]: ab"


def test_empty_messages_produce_no_part() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": ""},
        {"role": "user", "content": [{"type": "image", "data": "x"}]},
        _tool_result(""),
        _assistant(),
        {"role": "user", "content": "q"},
    ]
    assert serialize_conversation(messages) == "[User]: q"


def test_user_blocks_join_with_nothing() -> None:
    content = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert serialize_conversation([{"role": "user", "content": content}]) == "[User]: ab"


def test_assistant_parts_come_in_fixed_order_and_join_with_newlines() -> None:
    message = _assistant(
        {"type": "text", "text": "t1"},
        _call("ls", {}),
        {"type": "thinking", "thinking": "k1"},
        {"type": "text", "text": "t2"},
        {"type": "thinking", "thinking": "k2"},
        _call("bash", {"command": "make"}),
    )
    assert serialize_conversation([message]) == (
        "[Assistant thinking]: k1\nk2\n\n[Assistant]: t1\nt2\n\n"
        '[Assistant tool calls]: ls(); bash(command="make")'
    )


def test_an_empty_text_block_still_makes_a_part() -> None:
    message = _assistant({"type": "text", "text": ""}, _call("ls", {}))
    assert serialize_conversation([message]) == "[Assistant]: \n\n[Assistant tool calls]: ls()"


def test_tool_call_arguments_are_json_in_javascript_key_order() -> None:
    arguments = {"b": 1.0, "10": [1e21, None], "2": "é\n", "a": {"z": True, "1": 0.5}}
    message = _assistant(_call("edit", arguments))
    assert serialize_conversation([message]) == (
        '[Assistant tool calls]: edit(2="é\\n", 10=[1e+21,null], b=1, a={"1":0.5,"z":true})'
    )


def test_tool_call_without_object_arguments_has_empty_parentheses() -> None:
    message = _assistant(_call("x", None), {"type": "toolCall", "name": "y"})
    assert serialize_conversation([message]) == "[Assistant tool calls]: x(); y()"


def test_other_roles_are_skipped() -> None:
    messages = [
        {"role": "developer", "content": "reminder"},
        {"role": "bashExecution", "command": "ls", "output": "x"},
        {"role": "somethingNew", "content": "x"},
        "not a message",
    ]
    assert serialize_conversation(messages) == ""  # type: ignore[arg-type]


def test_parts_are_separated_by_blank_lines() -> None:
    messages = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    assert serialize_conversation(messages) == "[User]: a\n\n[User]: b"
