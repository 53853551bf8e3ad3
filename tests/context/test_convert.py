"""convert_to_llm: session messages -> model messages (pi-behaviour.md §3.2)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from contextree.context.convert import (
    PRUNED_OUTPUT_PLACEHOLDER,
    bash_execution_to_text,
    branch_summary_text,
    compaction_summary_text,
    convert_to_llm,
)

TS = 1_700_000_000_000


def _bash(**fields: Any) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "bashExecution",
        "command": "ls",
        "output": "a\nb",
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": TS,
    }
    message.update(fields)
    return message


def _text_of(message: dict[str, Any]) -> str:
    [block] = message["content"]
    assert block["type"] == "text"
    text: str = block["text"]
    return text


@pytest.mark.parametrize("role", ["user", "assistant", "developer"])
def test_model_roles_pass_through_unchanged(role: str) -> None:
    message = {"role": role, "content": [{"type": "text", "text": "hi"}], "timestamp": TS}
    assert convert_to_llm([message]) == [message]


def test_tool_result_passes_through_unchanged() -> None:
    message = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": [{"type": "text", "text": "body"}, {"type": "image", "data": "x"}],
        "isError": False,
        "timestamp": TS,
    }
    assert convert_to_llm([message]) == [message]


def test_pruned_tool_result_keeps_only_its_text() -> None:
    message = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": [
            {"type": "text", "text": "[pruned "},
            {"type": "image", "data": "x", "mimeType": "image/png"},
            {"type": "text", "text": "output]"},
        ],
        "isError": False,
        "prunedAt": TS,
        "prunedContent": [{"type": "text", "text": "the original output"}],
        "timestamp": TS,
    }
    [converted] = convert_to_llm([message])
    assert converted["content"] == [{"type": "text", "text": "[pruned output]"}]
    assert "prunedContent" not in converted
    assert converted["toolCallId"] == "c1"
    assert converted["prunedAt"] == TS
    assert converted["timestamp"] == TS


def test_pruned_tool_result_without_text_gets_a_placeholder() -> None:
    message = {
        "role": "toolResult",
        "content": [{"type": "image", "data": "x", "mimeType": "image/png"}],
        "prunedAt": TS,
    }
    [converted] = convert_to_llm([message])
    assert converted["content"] == [{"type": "text", "text": PRUNED_OUTPUT_PLACEHOLDER}]
    assert PRUNED_OUTPUT_PLACEHOLDER == "[Output truncated]"


def test_tool_result_with_null_pruned_at_is_not_pruned() -> None:
    message = {"role": "toolResult", "content": [{"type": "image", "data": "x"}], "prunedAt": None}
    assert convert_to_llm([message]) == [message]


@pytest.mark.parametrize("role", ["custom", "hookMessage"])
def test_custom_string_content_becomes_one_user_text_block(role: str) -> None:
    message = {"role": role, "customType": "note", "content": "hello", "display": True}
    message["timestamp"] = TS
    assert convert_to_llm([message]) == [
        {"role": "user", "content": [{"type": "text", "text": "hello"}], "timestamp": TS}
    ]


def test_custom_block_content_is_kept() -> None:
    blocks = [{"type": "text", "text": "a"}, {"type": "image", "data": "x", "mimeType": "m"}]
    message = {"role": "custom", "customType": "note", "content": blocks, "timestamp": TS}
    [converted] = convert_to_llm([message])
    assert converted == {"role": "user", "content": blocks, "timestamp": TS}
    assert converted["content"] is not blocks


def test_custom_with_malformed_content_gets_empty_content() -> None:
    message = {"role": "custom", "content": None, "timestamp": TS}
    assert convert_to_llm([message]) == [{"role": "user", "content": [], "timestamp": TS}]


def test_bash_execution_becomes_user_text() -> None:
    assert convert_to_llm([_bash()]) == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Ran `ls`\n```\na\nb\n```"}],
            "timestamp": TS,
        }
    ]


def test_excluded_bash_execution_is_dropped() -> None:
    assert convert_to_llm([_bash(excludeFromContext=True)]) == []


def test_bash_text_without_output() -> None:
    assert bash_execution_to_text(_bash(output="")) == "Ran `ls`\n(no output)"


def test_bash_text_cancelled_wins_over_exit_code() -> None:
    text = bash_execution_to_text(_bash(cancelled=True, exitCode=130))
    assert text == "Ran `ls`\n```\na\nb\n```\n\n(command cancelled)"


def test_bash_text_reports_a_non_zero_exit_code() -> None:
    text = bash_execution_to_text(_bash(exitCode=1))
    assert text == "Ran `ls`\n```\na\nb\n```\n\nCommand exited with code 1"


@pytest.mark.parametrize("exit_code", [0, None])
def test_bash_text_is_silent_about_success_or_unknown_exit(exit_code: int | None) -> None:
    assert bash_execution_to_text(_bash(exitCode=exit_code)) == "Ran `ls`\n```\na\nb\n```"


def test_bash_text_without_exit_code_field() -> None:
    message = _bash()
    del message["exitCode"]
    assert bash_execution_to_text(message) == "Ran `ls`\n```\na\nb\n```"


def test_bash_text_names_the_full_output_file_when_truncated() -> None:
    text = bash_execution_to_text(_bash(truncated=True, fullOutputPath="/tmp/out.txt", exitCode=2))
    assert text == (
        "Ran `ls`\n```\na\nb\n```\n\nCommand exited with code 2"
        "\n\n[Output truncated. Full output: /tmp/out.txt]"
    )


def test_bash_text_truncated_without_path_has_no_suffix() -> None:
    assert bash_execution_to_text(_bash(truncated=True)) == "Ran `ls`\n```\na\nb\n```"


def test_compaction_summary_becomes_wrapped_user_text() -> None:
    message = {"role": "compactionSummary", "summary": "S", "tokensBefore": 9, "timestamp": TS}
    [converted] = convert_to_llm([message])
    assert converted["role"] == "user"
    assert converted["timestamp"] == TS
    assert _text_of(converted) == compaction_summary_text("S")


def test_branch_summary_becomes_wrapped_user_text() -> None:
    message = {"role": "branchSummary", "summary": "B", "fromId": "abcd1234", "timestamp": TS}
    [converted] = convert_to_llm([message])
    assert converted["role"] == "user"
    assert converted["timestamp"] == TS
    assert _text_of(converted) == branch_summary_text("B")


def test_summary_wrappers_put_the_summary_in_summary_tags() -> None:
    for wrap in (compaction_summary_text, branch_summary_text):
        text = wrap("line 1\nline 2")
        preamble, tagged = text.split("\n\n", 1)
        assert tagged == "<summary>\nline 1\nline 2\n</summary>"
        assert "summary" in preamble.lower()
    assert "branch" in branch_summary_text("x").lower()
    assert "earlier" in compaction_summary_text("x").lower()
    # Our own wording, not pi's sentences.
    assert "was compacted into the following summary" not in compaction_summary_text("x")
    assert "summary of a branch that this conversation came back from" not in (
        branch_summary_text("x")
    )


def test_summary_that_is_not_text_is_wrapped_empty() -> None:
    [converted] = convert_to_llm([{"role": "compactionSummary", "summary": None}])
    assert _text_of(converted) == compaction_summary_text("")
    assert "timestamp" not in converted


@pytest.mark.parametrize("role", ["pythonExecution", "fileMention", "somethingNew", None])
def test_unknown_roles_are_dropped(role: str | None) -> None:
    assert convert_to_llm([{"role": role, "content": "x"}]) == []


def test_non_dict_messages_are_dropped() -> None:
    assert convert_to_llm([None, "user", 3]) == []  # type: ignore[list-item]


def test_order_is_kept() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "q"},
        {"role": "somethingNew"},
        {"role": "assistant", "content": []},
        _bash(),
    ]
    roles = [message["role"] for message in convert_to_llm(messages)]
    assert roles == ["user", "assistant", "user"]


def test_input_messages_are_not_modified() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "toolResult", "content": [{"type": "text", "text": "t"}], "prunedAt": TS},
        {"role": "custom", "content": [{"type": "text", "text": "c"}]},
        _bash(),
        {"role": "branchSummary", "summary": "b"},
    ]
    before = copy.deepcopy(messages)
    convert_to_llm(messages)
    assert messages == before


# --- context_json: what `contextree context --format json` prints ---------------------------


def test_context_json_gives_each_sent_message_its_entry_id() -> None:
    from contextree.context.build import ModelRef, SessionContext
    from contextree.context.convert import context_json

    bash = {"role": "bashExecution", "command": "ls", "output": "", "excludeFromContext": True}
    summary = {"role": "compactionSummary", "summary": "S", "tokensBefore": 9, "timestamp": 1}
    hello = {"role": "user", "content": "hello", "timestamp": 2}
    context = SessionContext(
        messages=[summary, bash, hello],
        thinking_level="high",
        model=ModelRef("anthropic", "claude-sonnet-4-5"),
        entry_ids=["c0ffee00", "ba5e0000", "0000abcd"],
    )
    payload = context_json(context)
    assert payload["thinkingLevel"] == "high"
    assert payload["model"] == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}
    # The excluded command is not sent, so it has no line; entryId comes first.
    assert [m["entryId"] for m in payload["messages"]] == ["c0ffee00", "0000abcd"]
    assert list(payload["messages"][1]) == ["entryId", "role", "content", "timestamp"]
    assert payload["messages"][1]["content"] == "hello"
    assert context_json(SessionContext())["model"] is None
