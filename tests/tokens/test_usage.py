"""Usage arithmetic (pi-behaviour.md §4.2)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contextree.tokens.estimate import Utf8Estimator, estimate_tokens
from contextree.tokens.usage import (
    ContextEstimate,
    calculate_context_tokens,
    calculate_prompt_tokens,
    estimate_context_tokens,
    get_last_assistant_usage,
    get_last_assistant_usage_index,
)
from pi_fixtures import pi_fixture


def _usage(
    input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0, **extra: Any
) -> dict[str, Any]:
    return {
        "input": input,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        **extra,
    }


def _assistant(usage: dict[str, Any] | None, stop_reason: str = "stop") -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": "ok"}],
        "stopReason": stop_reason,
    }
    if usage is not None:
        message["usage"] = usage
    return message


def _entry(message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": "00000000", "parentId": None, "message": message}


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


# --- calculate_context_tokens / calculate_prompt_tokens -------------------------------------


def test_context_tokens_sum_the_parts() -> None:
    assert calculate_context_tokens(_usage(1000, 500, 200, 100)) == 1800


def test_context_tokens_prefer_total_tokens() -> None:
    assert calculate_context_tokens(_usage(1, 2, 3, 4, totalTokens=99)) == 99


def test_context_tokens_fall_back_when_total_is_zero() -> None:
    assert calculate_context_tokens(_usage(1, 2, 3, 4, totalTokens=0)) == 10


def test_context_tokens_missing_fields_count_zero() -> None:
    assert calculate_context_tokens({"output": 7}) == 7
    assert calculate_context_tokens({}) == 0
    assert calculate_context_tokens({"input": "12", "output": None, "cacheRead": True}) == 0


def test_prompt_tokens_leave_out_the_output() -> None:
    assert calculate_prompt_tokens(_usage(1000, 500, 200, 100)) == 1300


def test_prompt_tokens_fall_back_to_context_tokens() -> None:
    assert calculate_prompt_tokens(_usage(0, 53, 0, 0)) == 53
    assert calculate_prompt_tokens(_usage(0, 0, 0, 0, totalTokens=77)) == 77


# --- get_last_assistant_usage ---------------------------------------------------------------


def test_last_usage_is_the_last_assistant_usage() -> None:
    first, last = _usage(1), _usage(2)
    entries = [_entry(_assistant(first)), _entry(_user("hi")), _entry(_assistant(last))]
    assert get_last_assistant_usage(entries) is last


@pytest.mark.parametrize("stop_reason", ["aborted", "error"])
def test_last_usage_skips_aborted_and_failed_replies(stop_reason: str) -> None:
    good = _usage(5)
    entries = [_entry(_assistant(good)), _entry(_assistant(_usage(9), stop_reason))]
    assert get_last_assistant_usage(entries) is good


def test_last_usage_is_none_without_assistant_usage() -> None:
    entries = [_entry(_user("hi")), _entry(_assistant(None))]
    assert get_last_assistant_usage(entries) is None
    assert get_last_assistant_usage([]) is None


def test_last_usage_reads_message_entries_only() -> None:
    usage = _usage(3)
    other = {"type": "custom_message", "message": _assistant(_usage(8))}
    entries = [_entry(_assistant(usage)), other, {"type": "label"}]
    assert get_last_assistant_usage(entries) is usage


def test_last_usage_ignores_a_usage_that_is_not_an_object() -> None:
    good = _usage(4)
    entries = [_entry(_assistant(good)), _entry({"role": "assistant", "usage": 12})]
    assert get_last_assistant_usage(entries) is good


def test_last_usage_index() -> None:
    messages = [_assistant(_usage(1)), _user("a"), _assistant(_usage(2), "aborted"), _user("b")]
    assert get_last_assistant_usage_index(messages) == 0
    assert get_last_assistant_usage_index([_user("a")]) is None


# --- estimate_context_tokens ----------------------------------------------------------------


def test_context_estimate_is_usage_plus_trailing_estimates() -> None:
    trailing = [_user("x" * 40), {"role": "toolResult", "content": "y" * 8}]
    messages = [_user("z" * 400), _assistant(_usage(100, 20)), *trailing]
    result = estimate_context_tokens(messages)
    assert result == ContextEstimate(
        tokens=120 + 12, usage_tokens=120, trailing_tokens=12, last_usage_index=1
    )


def test_context_estimate_without_usage_estimates_everything() -> None:
    messages = [_user("x" * 40), _assistant(None), _assistant(_usage(50), "error")]
    expected = sum(estimate_tokens(message) for message in messages)
    assert estimate_context_tokens(messages) == ContextEstimate(expected, 0, expected, None)


def test_context_estimate_of_nothing_is_zero() -> None:
    assert estimate_context_tokens([]) == ContextEstimate(0, 0, 0, None)


def test_context_estimate_uses_the_given_estimator() -> None:
    messages = [_assistant(_usage(10)), _user("中文")]
    assert estimate_context_tokens(messages).trailing_tokens == 1
    assert estimate_context_tokens(messages, Utf8Estimator()).trailing_tokens == 2


def test_context_estimate_is_frozen() -> None:
    result = estimate_context_tokens([])
    with pytest.raises(AttributeError):
        result.tokens = 5  # type: ignore[misc]


def test_last_usage_of_large_fixture_matches_pi() -> None:
    # pi-behaviour.md §13.1: {input 0, output 53, cacheRead 176585, cacheWrite 1019} -> 177 657
    path = pi_fixture("large-session.jsonl")
    with path.open(encoding="utf-8") as lines:
        entries = [json.loads(line) for line in lines if line.strip()]
    usage = get_last_assistant_usage(entries)
    assert usage is not None
    assert calculate_context_tokens(usage) == 177657
    messages = [entry["message"] for entry in entries if entry.get("type") == "message"]
    assert estimate_context_tokens(messages).tokens == 177657
