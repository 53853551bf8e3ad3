"""``serialize_conversation`` on hand-made LLM message lists, against pi 0.73.1's
``serializeConversation`` run on the very same lists: the corners of JavaScript's string
lengths, slicing, number formatting and key order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contextree.compaction.serialize import serialize_conversation
from differential.installs import Install

pytestmark = pytest.mark.differential

Json = dict[str, Any]


def _text(text: str) -> Json:
    return {"type": "text", "text": text}


def _result(text: str) -> Json:
    return {"role": "toolResult", "toolCallId": "c", "toolName": "bash", "content": [_text(text)]}


def _call(arguments: Json, name: str = "tool") -> Json:
    return {"type": "toolCall", "id": "c", "name": name, "arguments": arguments}


CASES: dict[str, list[Json]] = {
    "empty": [],
    "user string and blocks": [
        {"role": "user", "content": "plain string"},
        {"role": "user", "content": [_text("a"), {"type": "image"}, _text("b")]},
        {"role": "user", "content": [{"type": "image", "data": "x", "mimeType": "image/png"}]},
        {"role": "user", "content": ""},
    ],
    "assistant parts in pi's order": [
        {
            "role": "assistant",
            "content": [
                _text("first"),
                {"type": "thinking", "thinking": "hmm"},
                _call({"path": "a.py"}, "read"),
                _text(""),
                {"type": "thinking", "thinking": ""},
                _call({}, "noargs"),
            ],
        },
        {"role": "assistant", "content": []},
        {"role": "assistant", "content": [_text("")]},
    ],
    "numbers as JavaScript prints them": [
        {
            "role": "assistant",
            "content": [
                _call(
                    {
                        "ints": [0, -0.0, 1.0, 100, 2**53, 10**21, -(10**22)],
                        "floats": [0.1 + 0.2, 1e21, 1e-7, 1.5e-6, 123456789.125, 5e-324],
                        "big": 1.7976931348623157e308,
                    }
                )
            ],
        }
    ],
    "integer-like keys first, then insertion order": [
        {
            "role": "assistant",
            "content": [
                _call(
                    {
                        "b": 1,
                        "10": "ten",
                        "a": {"z": 1, "2": 2, "1": 1},
                        "2": "two",
                        "01": "not an index",
                        "-1": "nor this",
                        "4294967295": "too big",
                        "4294967294": "largest index",
                    }
                )
            ],
        }
    ],
    "strings JSON.stringify escapes": [
        {
            "role": "assistant",
            "content": [
                _call({"s": 'quote " backslash \\ newline \n tab \t bell \x07 del \x7f é 😀'}),
                _call({"lone": "\ud83d", "line sep": "\u2028\u2029"}),
            ],
        }
    ],
    "tool results at the 2000-unit cut": [
        _result("x" * 2000),
        _result("x" * 2001),
        _result("😀" * 1000),  # 2000 UTF-16 units: not cut
        _result("a" + "😀" * 1000),  # the cut splits a surrogate pair
        _result("é" * 2500),
        _result(""),
        {"role": "toolResult", "content": [{"type": "image"}]},
    ],
    "roles pi skips": [
        {"role": "developer", "content": "internal"},
        {"role": "custom", "content": "not converted"},
        {"role": "user", "content": "kept"},
    ],
}


def test_serialize_conversation_equals_pi_on_edge_cases(pi: Install, tmp_path: Path) -> None:
    (answer,) = pi.run(
        [
            {
                "file": str(tmp_path / "none.jsonl"),
                "leaves": [],
                "serializeInputs": list(CASES.values()),
            }
        ],
        tmp_path / "home",
    )
    for (name, messages), theirs in zip(CASES.items(), answer["serializeInputs"], strict=True):
        assert serialize_conversation(messages) == theirs, name


def test_tool_call_arguments_that_are_no_object_differ_from_pi_as_documented(
    pi: Install, tmp_path: Path
) -> None:
    """pi lists a string's or an array's indices (``Object.entries``) and fails on ``null``; we
    write empty parentheses for every argument value that is not an object."""
    lists = [
        [{"role": "assistant", "content": [_call("ab")]}],  # type: ignore[arg-type]
        [{"role": "assistant", "content": [_call([1, 2])]}],  # type: ignore[arg-type]
    ]
    (answer,) = pi.run(
        [{"file": str(tmp_path / "none.jsonl"), "leaves": [], "serializeInputs": lists}],
        tmp_path / "home",
    )
    assert answer["serializeInputs"] == [
        '[Assistant tool calls]: tool(0="a", 1="b")',
        "[Assistant tool calls]: tool(0=1, 1=2)",
    ]
    assert [serialize_conversation(m) for m in lists] == ["[Assistant tool calls]: tool()"] * 2
