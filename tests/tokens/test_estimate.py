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
    utf16_len,
)
from json_strategies import json_values
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
