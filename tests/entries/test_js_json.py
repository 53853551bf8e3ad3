"""JavaScript's JSON.stringify (pi-behaviour.md §4.1): numbers, escapes, key order, errors."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextree.entries.js_json import js_object_entries, js_stringify
from json_strategies import json_values

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
    from contextree.entries.js_json import _write

    parts: list[str] = []
    _write(value, parts, set())
    assert js_stringify(value) == "".join(parts)
