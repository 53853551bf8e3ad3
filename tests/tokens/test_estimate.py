"""pi's token estimator, JS string length and JSON.stringify (pi-behaviour.md §4.1)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextree.tokens.estimate import (
    PiEstimator,
    TokenEstimator,
    Utf8Estimator,
    estimate_tokens,
    get_estimator,
    js_object_entries,
    js_stringify,
    utf16_len,
)
from pi_fixtures import pi_fixture


def _fixture(name: str) -> Path:
    return pi_fixture(name)


def _message_entries(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        entries = [json.loads(line) for line in lines if line.strip()]
    return [entry["message"] for entry in entries if entry.get("type") == "message"]


# --- utf16_len ------------------------------------------------------------------------------


def test_utf16_len_ascii_is_len() -> None:
    assert utf16_len("hello world") == 11
    assert utf16_len("") == 0


def test_utf16_len_counts_emoji_as_two_units() -> None:
    assert utf16_len("😀") == 2
    assert utf16_len("a😀b") == 4


def test_utf16_len_counts_cjk_and_accents_as_one_unit() -> None:
    assert utf16_len("中文字") == 3
    assert utf16_len("é") == 1


def test_utf16_len_counts_a_lone_surrogate_as_one_unit() -> None:
    assert utf16_len("a\ud83d") == 2


# --- js_stringify ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "1"),
        (100.0, "100"),
        (-0.0, "0"),
        (0.0, "0"),
        (0.1, "0.1"),
        (-2.5, "-2.5"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (1e20, "100000000000000000000"),
        (123456789012345680000.0, "123456789012345680000"),
        (123456789012345680000, "123456789012345680000"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (0.000001234, "0.000001234"),
        (1.23e-18, "1.23e-18"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (2**53, "9007199254740992"),
        (2**53 + 1, "9007199254740992"),  # a JS number is a double
        (10**21, "1e+21"),
        (math.nan, "null"),
        (math.inf, "null"),
        (-math.inf, "null"),
        (10**400, "null"),
        (42, "42"),
        (-7, "-7"),
    ],
)
def test_js_stringify_formats_numbers_as_javascript(value: float, expected: str) -> None:
    assert js_stringify(value) == expected


def test_js_stringify_literals() -> None:
    assert js_stringify(None) == "null"
    assert js_stringify(True) == "true"
    assert js_stringify(False) == "false"


def test_js_stringify_is_compact_and_keeps_non_ascii() -> None:
    value = {"a": [1, 2.5, "é中😀"], "b": {"c": None}, "d": []}
    assert js_stringify(value) == '{"a":[1,2.5,"é中😀"],"b":{"c":null},"d":[]}'


def test_js_stringify_escapes_strings_as_javascript() -> None:
    assert js_stringify('q"b\\') == '"q\\"b\\\\"'
    assert js_stringify("\b\f\n\r\t") == '"\\b\\f\\n\\r\\t"'
    assert js_stringify("\x00\x01\x1f") == '"\\u0000\\u0001\\u001f"'
    assert js_stringify("\x1b") == '"\\u001b"'  # lowercase hex
    # DEL and the line/paragraph separators are not escaped.
    assert js_stringify("\x7f\u2028\u2029") == '"\x7f\u2028\u2029"'


def test_js_stringify_escapes_lone_surrogates_only() -> None:
    assert js_stringify("a\ud800b") == '"a\\ud800b"'
    assert js_stringify("\udc00") == '"\\udc00"'
    assert js_stringify("\udbff\ud800") == '"\\udbff\\ud800"'
    # Two code points forming a valid pair are a character in JavaScript: kept.
    assert js_stringify("\ud83d\ude00") == '"\ud83d\ude00"'
    assert js_stringify("😀") == '"😀"'


def test_js_stringify_orders_array_index_keys_first() -> None:
    value = {"b": 1, "2": 2, "1": 3, "01": 4, "-1": 5, "4294967295": 6, "4294967294": 7}
    assert js_stringify(value) == (
        '{"1":3,"2":2,"4294967294":7,"b":1,"01":4,"-1":5,"4294967295":6}'
    )


def test_js_object_entries_keeps_insertion_order_without_index_keys() -> None:
    assert js_object_entries({"z": 1, "a": 2}) == [("z", 1), ("a", 2)]
    assert js_object_entries({"z": 1, "10": 2, "9": 3}) == [("9", 3), ("10", 2), ("z", 1)]


def test_js_stringify_accepts_tuples_as_arrays() -> None:
    assert js_stringify((1, "a")) == '[1,"a"]'


@pytest.mark.parametrize("value", [{1, 2}, object(), b"bytes", {1: "int key"}])
def test_js_stringify_rejects_non_json_values(value: object) -> None:
    with pytest.raises(TypeError):
        js_stringify(value)


def test_js_stringify_rejects_cycles() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(TypeError):
        js_stringify(loop)


def test_js_stringify_allows_shared_non_cyclic_values() -> None:
    shared = [1]
    assert js_stringify([shared, shared]) == "[[1],[1]]"


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=30,
)


def _js_parse_int(text: str) -> int | float:
    # JSON.parse reads every number as a double; exact ints stay ints here.
    number = int(text)
    return number if abs(number) <= 2**53 else float(text)


@given(json_values)
def test_js_stringify_parses_back_to_an_equal_value(value: object) -> None:
    assert json.loads(js_stringify(value), parse_int=_js_parse_int) == value


plain_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**53), max_value=2**53) | st.text(),
    lambda children: (
        st.lists(children) | st.dictionaries(st.text().filter(lambda k: not k.isdigit()), children)
    ),
    max_leaves=30,
)


@given(plain_values)
def test_js_stringify_matches_compact_json_dumps_without_floats(value: object) -> None:
    # Without floats, index-like keys and lone surrogates both serializers agree.
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert js_stringify(value) == expected


flat_arguments = st.dictionaries(
    st.text() | st.sampled_from(["0", "1", "10", "01", "4294967295", "2a", "\u0663"]),
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.sampled_from(["a\ud800b", "\udc00", "\ud83d\ude00", "\x00\x1f\u2028"])
    | st.lists(st.integers(), max_size=2),
    max_size=6,
)


@given(flat_arguments)
def test_js_stringify_of_flat_arguments_matches_the_general_writer(value: dict[str, Any]) -> None:
    # Flat objects of plain values take a C fast path; it must write what _write writes.
    from contextree.tokens.estimate import _write

    parts: list[str] = []
    _write(value, parts, set())
    assert js_stringify(value) == "".join(parts)


# --- estimate_tokens: one rule per role -----------------------------------------------------


def test_user_string_content_is_chars_over_four_rounded_up() -> None:
    assert estimate_tokens({"role": "user", "content": "12345"}) == 2
    assert estimate_tokens({"role": "user", "content": "1234"}) == 1
    assert estimate_tokens({"role": "user", "content": ""}) == 0


def test_user_counts_text_blocks_only() -> None:
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "abcd"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "text", "text": "efgh"},
        ],
    }
    assert estimate_tokens(message) == 2


def test_user_counts_utf16_units() -> None:
    assert estimate_tokens({"role": "user", "content": "😀😀"}) == 1  # 4 units
    assert estimate_tokens({"role": "user", "content": "😀😀😀"}) == 2  # 6 units
    assert estimate_tokens({"role": "user", "content": "中文中文中"}) == 2  # 5 units


def test_assistant_counts_text_thinking_and_tool_calls() -> None:
    arguments = {"path": "a.ts", "offset": 2.0}
    message = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "Let me read"},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": arguments},
        ],
    }
    # '{"path":"a.ts","offset":2}' is 26 chars
    chars = 3 + 11 + 4 + len('{"path":"a.ts","offset":2}')
    assert estimate_tokens(message) == math.ceil(chars / 4)


def test_assistant_ignores_other_blocks() -> None:
    message = {"role": "assistant", "content": [{"type": "redactedThinking", "data": "x" * 40}]}
    assert estimate_tokens(message) == 0


def test_tool_result_counts_text_plus_4800_per_image() -> None:
    message = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": [
            {"type": "text", "text": "abcde"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        ],
        "isError": False,
    }
    assert estimate_tokens(message) == math.ceil((5 + 4800) / 4)


def test_tool_result_string_content() -> None:
    assert estimate_tokens({"role": "toolResult", "content": "abcdefgh"}) == 2


def test_custom_is_counted_like_a_tool_result() -> None:
    # DESIGN decision 7: pi counts custom messages (the fork counts 0).
    assert estimate_tokens({"role": "custom", "content": "abcdefgh", "display": True}) == 2
    blocks = [{"type": "text", "text": "ab"}, {"type": "image", "data": "", "mimeType": "x"}]
    assert estimate_tokens({"role": "custom", "content": blocks}) == math.ceil(4802 / 4)


def test_hook_message_is_counted_like_custom() -> None:
    assert estimate_tokens({"role": "hookMessage", "content": "abcdefgh"}) == 2


def test_bash_execution_counts_command_and_output() -> None:
    message = {"role": "bashExecution", "command": "ls -la", "output": "a\nb\n", "exitCode": 0}
    assert estimate_tokens(message) == math.ceil((6 + 4) / 4)


@pytest.mark.parametrize("role", ["branchSummary", "compactionSummary"])
def test_summaries_count_their_summary(role: str) -> None:
    assert estimate_tokens({"role": role, "summary": "x" * 9, "tokensBefore": 5}) == 3


@pytest.mark.parametrize(
    "role", ["developer", "pythonExecution", "fileMention", "somethingNew", None]
)
def test_other_roles_count_zero(role: str | None) -> None:
    assert estimate_tokens({"role": role, "content": "x" * 100, "summary": "y" * 100}) == 0


@pytest.mark.parametrize(
    "message",
    [
        {},
        {"role": "user"},
        {"role": "user", "content": 42},
        {"role": "user", "content": [None, 3, "text", {"type": "text", "text": None}]},
        {"role": "assistant", "content": "not a list"},
        {"role": "assistant", "content": [{"type": "toolCall"}]},
        {"role": "assistant", "content": [{"type": "text", "text": 5}]},
        {"role": "toolResult", "content": None},
        {"role": "bashExecution", "command": None, "output": 3},
        {"role": "compactionSummary", "summary": ["x"]},
    ],
)
def test_malformed_messages_count_zero(message: dict[str, Any]) -> None:
    assert estimate_tokens(message) == 0


def test_non_dict_message_counts_zero() -> None:
    assert estimate_tokens("user") == 0  # type: ignore[arg-type]


def test_tool_call_with_unstringifiable_arguments_counts_its_name() -> None:
    message = {
        "role": "assistant",
        "content": [{"type": "toolCall", "name": "abcd", "arguments": {"x": object()}}],
    }
    assert estimate_tokens(message) == 1


def test_tool_call_null_arguments_count_as_in_javascript() -> None:
    # JSON.stringify(null) is "null"
    message = {
        "role": "assistant",
        "content": [{"type": "toolCall", "name": "", "arguments": None}],
    }
    assert estimate_tokens(message) == 1


messages = st.fixed_dictionaries(
    {
        "role": st.sampled_from(
            [
                *("user", "assistant", "toolResult", "custom", "hookMessage", "bashExecution"),
                *("branchSummary", "compactionSummary", "developer", "other"),
            ]
        )
    },
    optional={
        "content": json_values
        | st.lists(
            st.fixed_dictionaries(
                {"type": st.sampled_from(["text", "image", "thinking", "toolCall"])},
                optional={
                    "text": json_values,
                    "thinking": json_values,
                    "name": json_values,
                    "arguments": json_values,
                },
            )
        ),
        "command": json_values,
        "output": json_values,
        "summary": json_values,
    },
)


@given(messages)
def test_estimates_are_non_negative_and_never_raise(message: dict[str, Any]) -> None:
    for estimator in (PiEstimator(), Utf8Estimator()):
        assert estimator.estimate(message) >= 0


# --- estimators -----------------------------------------------------------------------------


def test_utf8_estimator_counts_utf8_bytes() -> None:
    utf8 = Utf8Estimator()
    assert utf8.estimate({"role": "user", "content": "中文"}) == 2  # 6 bytes
    assert estimate_tokens({"role": "user", "content": "中文"}) == 1  # 2 units
    assert utf8.estimate({"role": "user", "content": "😀"}) == 1  # 4 bytes
    assert utf8.count_text("abcde") == 2


def test_utf8_estimator_charges_images_like_pi() -> None:
    message = {"role": "toolResult", "content": [{"type": "image", "data": "", "mimeType": "x"}]}
    assert Utf8Estimator().estimate(message) == 1200


def test_pi_estimator_count_text() -> None:
    assert PiEstimator().count_text("😀😀😀") == 2
    assert PiEstimator().count_text("") == 0


def test_get_estimator_by_name() -> None:
    pi: TokenEstimator = get_estimator("pi")
    utf8: TokenEstimator = get_estimator("utf8")
    assert (pi.name, utf8.name) == ("pi", "utf8")
    assert isinstance(pi, PiEstimator)
    assert isinstance(utf8, Utf8Estimator)


def test_get_estimator_unknown_name_lists_the_choices() -> None:
    with pytest.raises(ValueError, match='"pi", "utf8"'):
        get_estimator("tiktoken-ish")


def test_estimate_does_not_modify_the_message() -> None:
    message = {"role": "assistant", "content": [{"type": "toolCall", "name": "x", "arguments": {}}]}
    before = json.dumps(message)
    estimate_tokens(message)
    assert json.dumps(message) == before


# --- golden values computed with pi 0.73.1 (pi-behaviour.md §13.1) -------------------------


@pytest.mark.parametrize(
    ("name", "expected"), [("large-session.jsonl", 124661), ("before-compaction.jsonl", 375427)]
)
def test_sum_of_estimates_matches_pi_on_fixtures(name: str, expected: int) -> None:
    messages = _message_entries(_fixture(name))
    assert sum(estimate_tokens(message) for message in messages) == expected
