"""generate_branch_summary (pi-behaviour.md §9.3, §7.2)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from branch_builders import assistant, run, tool_result, user

from contextree.branching import BranchSummaryResult, generate_branch_summary
from contextree.compaction.prompt_templates import load_prompt
from contextree.compaction.serialize import serialize_conversation
from contextree.context.convert import convert_to_llm
from contextree.entries.types import Entry
from contextree.errors import ModelHTTPError
from contextree.llm.base import Completion
from contextree.llm.scripted import ScriptedClient

_TS = "2026-01-01T00:00:00.000Z"


def _message(entry_id: str, message: dict[str, Any]) -> Entry:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": None,
        "timestamp": _TS,
        "message": message,
    }


def _branch() -> list[Entry]:
    return [
        _message("u1", user("Fix the parser")),
        _message("a1", assistant("Looking.", ("read", {"path": "src/p.py"}))),
        _message("t1", tool_result("def parse(): ...")),
        _message("a2", assistant("Fixed.", ("edit", {"path": "src/p.py"}))),
    ]


def _prompt(client: ScriptedClient, index: int = 0) -> str:
    request = client.requests[index]
    assert len(request.messages) == 1
    (block,) = request.messages[0]["content"]
    return str(block["text"])


def test_the_request_is_the_conversation_then_the_branch_prompt() -> None:
    client = ScriptedClient(default="## Goal\nFix the parser")
    entries = _branch()
    run(generate_branch_summary(entries, client, context_window=128_000))
    request = client.requests[0]
    messages = [e["message"] for e in entries]
    conversation = serialize_conversation(convert_to_llm(messages))
    assert _prompt(client) == (
        f"<conversation>\n{conversation}\n</conversation>\n\n{load_prompt('branch-summary')}"
    )
    # Unlike pi, the summarizer sees tool results (cut to 2,000 characters).
    assert "[Tool result]: def parse(): ..." in _prompt(client)
    assert request.max_tokens == 2048
    assert request.reasoning is None
    assert request.tools == []
    assert request.system_prompt == load_prompt("system")


def test_custom_instructions_are_appended_as_additional_focus() -> None:
    client = ScriptedClient(default="ok")
    run(
        generate_branch_summary(
            _branch(), client, context_window=128_000, custom_instructions="only the parser"
        )
    )
    assert _prompt(client).endswith(
        f"</conversation>\n\n{load_prompt('branch-summary')}\n\nAdditional focus: only the parser"
    )


def test_replace_instructions_sends_the_custom_text_instead_of_the_prompt() -> None:
    client = ScriptedClient(default="ok")
    run(
        generate_branch_summary(
            _branch(),
            client,
            context_window=128_000,
            custom_instructions="One line, under 20 words.",
            replace_instructions=True,
        )
    )
    assert _prompt(client).endswith("</conversation>\n\nOne line, under 20 words.")
    assert load_prompt("branch-summary") not in _prompt(client)


def test_replace_instructions_without_custom_text_keeps_the_prompt() -> None:
    client = ScriptedClient(default="ok")
    run(
        generate_branch_summary(
            _branch(), client, context_window=128_000, replace_instructions=True
        )
    )
    assert _prompt(client).endswith(f"</conversation>\n\n{load_prompt('branch-summary')}")


def test_the_summary_is_preamble_blank_line_text_then_file_tags() -> None:
    client = ScriptedClient(default="## Goal\nFix the parser")
    entries = [
        *_branch(),
        _message("a3", assistant("", ("read", {"path": "README.md"}), ("write", {"path": "n.py"}))),
    ]
    result = run(generate_branch_summary(entries, client, context_window=128_000))
    assert result.summary == (
        f"{load_prompt('branch-preamble')}\n\n## Goal\nFix the parser\n\n"
        "<read-files>\nREADME.md\n</read-files>\n\n"
        "<modified-files>\nn.py\nsrc/p.py\n</modified-files>"
    )
    assert result.read_files == ["README.md"]
    assert result.modified_files == ["n.py", "src/p.py"]
    assert result.details == {"readFiles": ["README.md"], "modifiedFiles": ["n.py", "src/p.py"]}
    assert not result.aborted and result.error is None


def test_text_blocks_are_joined_with_newlines_and_thinking_is_ignored() -> None:
    client = ScriptedClient()
    client.enqueue(
        Completion(
            content=[
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "first"},
                {"type": "text", "text": "second"},
            ]
        )
    )
    result = run(generate_branch_summary(_branch()[:1], client, context_window=128_000))
    assert result.summary == f"{load_prompt('branch-preamble')}\n\nfirst\nsecond"


def test_an_empty_answer_is_stored_as_no_summary_generated() -> None:
    client = ScriptedClient(default="  ")
    result = run(generate_branch_summary(_branch()[:1], client, context_window=128_000))
    assert result.summary == f"{load_prompt('branch-preamble')}\n\nNo summary generated"


def test_nothing_to_summarize_makes_no_call() -> None:
    client = ScriptedClient()
    entries = [_message("t1", tool_result("only a tool result"))]
    result = run(generate_branch_summary(entries, client, context_window=128_000))
    assert result == BranchSummaryResult(summary="No content to summarize")
    assert client.requests == []


def test_an_aborted_answer_is_reported_not_raised() -> None:
    client = ScriptedClient()
    client.enqueue(Completion(content=[], stop_reason="aborted", error_message="stopped"))
    result = run(generate_branch_summary(_branch(), client, context_window=128_000))
    assert result == BranchSummaryResult(aborted=True)


@pytest.mark.parametrize(
    ("message", "expected"), [("rate limited", "rate limited"), (None, "Summarization failed")]
)
def test_an_error_answer_is_reported_not_raised(message: str | None, expected: str) -> None:
    client = ScriptedClient()
    client.enqueue(Completion(content=[], stop_reason="error", error_message=message))
    result = run(generate_branch_summary(_branch(), client, context_window=128_000))
    assert result == BranchSummaryResult(error=expected)


def test_a_model_error_is_reported_not_raised() -> None:
    client = ScriptedClient()
    client.enqueue_error(ModelHTTPError("scripted", "HTTP 500 from scripted", status=500))
    result = run(generate_branch_summary(_branch(), client, context_window=128_000))
    assert result.error == "HTTP 500 from scripted"
    assert result.summary is None


def test_the_budget_is_the_window_minus_the_reserve() -> None:
    entries = [_message(f"u{i}", user(f"m{i} " + "x" * 397)) for i in range(10)]  # 100 each
    client = ScriptedClient(default="ok")
    run(generate_branch_summary(entries, client, context_window=1300, reserve_tokens=1000))
    prompt = _prompt(client)
    assert "m6 " not in prompt
    assert all(f"m{i} " in prompt for i in (7, 8, 9))


def test_a_zero_window_means_128k() -> None:
    entries = [_message(f"u{i}", user(f"m{i} " + "x" * 39_997)) for i in range(12)]  # 10k each
    client = ScriptedClient(default="ok")
    run(generate_branch_summary(entries, client, context_window=0, reserve_tokens=16384))
    prompt = _prompt(client)
    # 128000 - 16384 = 111616 tokens: the newest 11 messages fit, the oldest does not.
    assert "m0 " not in prompt
    assert "m1 " in prompt


def test_cancelling_the_task_propagates() -> None:
    async def scenario() -> None:
        gate = asyncio.Event()
        client = ScriptedClient(gate=gate, default="never")
        task = asyncio.create_task(
            generate_branch_summary(_branch(), client, context_window=128_000)
        )
        while not client.requests:
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(scenario())


def test_a_prompts_dir_overrides_the_branch_prompt_and_preamble(tmp_path: Any) -> None:
    (tmp_path / "branch-summary.md").write_text("Summarize briefly.\n")
    (tmp_path / "branch-preamble.md").write_text("")
    client = ScriptedClient(default="short")
    result = run(
        generate_branch_summary(_branch()[:1], client, context_window=128_000, prompts_dir=tmp_path)
    )
    assert _prompt(client).endswith("</conversation>\n\nSummarize briefly.")
    assert result.summary == "short"
