"""The offline summarizer: planted facts survive, updates merge, the budget holds."""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import pytest

from contextree.compaction.offline import (
    SUMMARY_KINDS,
    OfflineSummarizer,
    SummaryKind,
    parse_summary_prompt,
)
from contextree.compaction.prompt_templates import load_prompt
from contextree.compaction.serialize import serialize_conversation
from contextree.context.convert import compaction_summary_text, convert_to_llm
from contextree.llm.base import Completion, CompletionRequest, ModelClient
from pi_fixtures import pi_fixture
from summary_messages import _call, _result, _say, _user
from summary_sections import BRANCH_SECTIONS, OFFLINE_SECTIONS, assert_sections_in_order

Message = dict[str, Any]

QUESTION = "Should I implement `_retry` with exponential backoff, or keep a fixed delay?"
ERROR = "AttributeError: 'Client' object has no attribute '_retry'"
CONSTRAINT = "Never touch the migrations folder."


# --- building conversations ---------------------------------------------------------------------


def _bash_execution(command: str, output: str, exit_code: int) -> Message:
    return {
        "role": "bashExecution",
        "command": command,
        "output": output,
        "exitCode": exit_code,
        "cancelled": False,
        "truncated": False,
    }


def _serialize(messages: list[Message]) -> str:
    return serialize_conversation(convert_to_llm(messages))


def _planted_messages() -> list[Message]:
    return [
        _user(
            "Add retry support to the HTTP client in src/app/client.py. "
            f"{CONSTRAINT} Use httpx, not requests."
        ),
        _say(
            "I'll read the client and its config first.",
            _call("read", path="src/app/client.py"),
            _call("read", path="src/app/config.py"),
        ),
        _result("import httpx\n\n\nclass Client:\n    def get(self, url):\n", tool="read"),
        _result("TIMEOUT = 5\n", tool="read"),
        _say(
            "I'll wrap requests in a retry helper instead of sleeping inline because the "
            "server rate limits bursts.",
            _call("edit", path="src/app/client.py", oldText="a", newText="b"),
            _call("write", path="tests/test_retry.py", content="def test():\n    pass\n"),
        ),
        _result("Successfully replaced text in src/app/client.py.", tool="edit"),
        _result("Successfully wrote 24 bytes to tests/test_retry.py", tool="write"),
        _say("", _call("bash", command="pytest tests/test_retry.py -q")),
        _result(f"F\nE   {ERROR}\n1 failed in 0.12s\n\n\nCommand exited with code 1"),
        _bash_execution("make lint", "All checks passed\n", 0),
        _say(f"The test fails with {ERROR}.\n\n{QUESTION}"),
    ]


def _summarizer(**options: Any) -> OfflineSummarizer:
    return OfflineSummarizer(**options)


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _section(summary: str, heading: str) -> str:
    start = summary.index(heading + "\n") + len(heading) + 1
    following = [
        summary.find("\n" + other + "\n", start)
        for other in (
            *OFFLINE_SECTIONS,
            "### Open TODOs",
            "## Original Request",
            "## Early Progress",
        )
    ]
    ends = [position for position in following if position >= 0]
    return summary[start : min(ends)] if ends else summary[start:]


# --- the summary keeps what was planted ----------------------------------------------------------


def test_initial_summary_keeps_every_planted_fact() -> None:
    summary = _summarizer().summarize(_serialize(_planted_messages()))

    for path in ("src/app/client.py", "src/app/config.py", "tests/test_retry.py"):
        assert f"`{path}`" in summary
    assert "Modified `src/app/client.py` (edit)" in summary
    assert "Modified `tests/test_retry.py` (write)" in summary
    assert "Read `src/app/config.py`" in summary
    blocked = _section(summary, "### Blocked")
    # The latest outcome as the run reported it (issue 25 item 4).
    assert "`pytest tests/test_retry.py -q` failed (exit 1; 1 failed in 0.12s)" in blocked
    assert ERROR in blocked
    assert CONSTRAINT in _section(summary, "## Constraints & Preferences")
    assert "Use httpx, not requests." in summary
    assert f"**Pending question to the user** (verbatim): {QUESTION}" in summary
    assert summary.startswith("## Goal\nAdd retry support to the HTTP client")


def test_sections_come_in_the_prompt_order() -> None:
    summary = _summarizer().summarize(_serialize(_planted_messages()))
    assert_sections_in_order(summary, OFFLINE_SECTIONS)
    assert "\n### Done\n- [x] " in summary
    assert "\n### In Progress\n- [ ] " in summary
    assert "\n## Next Steps\n1. " in summary


def test_decisions_user_commands_and_next_steps_are_recorded() -> None:
    summary = _summarizer(min_tokens=2000).summarize(_serialize(_planted_messages()))
    # The decision sentence as written, so a search for it finds it (issue 25 item 4).
    assert (
        "- I'll wrap requests in a retry helper instead of sleeping inline because the "
        "server rate limits bursts." in summary
    )
    assert "Ran `make lint` (exit 0)" in summary
    next_steps = _section(summary, "## Next Steps")
    assert "Fix the failure of `pytest tests/test_retry.py -q`" in next_steps
    assert "Wait for the user's answer" in next_steps


def test_empty_sections_are_left_out() -> None:
    summary = _summarizer().summarize(_serialize([_user("Explain the build.")]))
    assert "### Blocked" not in summary
    assert "## Key Decisions" not in summary
    assert "(none)" not in summary
    assert "- [ ] Explain the build." in summary
    assert "1. Respond to the latest user request: Explain the build." in summary


def test_parts_split_only_at_role_markers() -> None:
    conversation = (
        "[User]: First paragraph.\n\nSecond paragraph mentions [Tool result]: inline.\n\n"
        "Never delete `data/raw.csv`.\n\n"
        '[Assistant tool calls]: bash(command="echo \\"a; b\\"; ls -la"); '
        'read(path="notes/a b.md", offset=2)\n\n'
        "[Tool result]: a; b\n\n[Tool result]: hello\n\nworld"
    )
    summary = _summarizer().summarize(conversation)
    assert "Never delete `data/raw.csv`." in summary
    assert "Read `notes/a b.md`" in summary
    assert "First paragraph. Second paragraph mentions [Tool result]: inline." in summary


def test_a_failure_fixed_later_is_not_blocked() -> None:
    messages = [
        _user("Make the tests pass."),
        _say("", _call("bash", command="cd pkg && npm test 2>&1 | tail -5")),
        _result("FAIL src/a.test.ts\n\n\nCommand exited with code 1"),
        _say("", _call("bash", command="npm test")),
        _result("All 12 tests passed"),
        _say("", _call("bash", command='grep -n "TODO" src/a.ts')),
        _result("Command exited with code 1"),
    ]
    summary = _summarizer(min_tokens=2000).summarize(_serialize(messages))
    assert "### Blocked" not in summary
    assert "superseded by a later run" in summary
    assert "Ran `npm test` (exit 0)" in summary
    assert "read-only command (grep)" in summary  # grep's exit 1 means "no match"


def test_a_failed_edit_is_blocked_until_redone() -> None:
    failed = "Could not find the exact text in src/a.py. The old text must match exactly."
    messages = [
        _user("Rename foo to bar in src/a.py."),
        _say("", _call("edit", path="src/a.py", oldText="foo", newText="bar")),
        _result(failed, tool="edit", is_error=True),
    ]
    summarizer = _summarizer()
    summary = summarizer.summarize(_serialize(messages))
    assert f"Editing `src/a.py` failed: {failed}" in _section(summary, "### Blocked")

    messages += [
        _say("", _call("edit", path="src/a.py", oldText="foo()", newText="bar()")),
        _result("Successfully replaced text in src/a.py.", tool="edit"),
    ]
    summary = summarizer.summarize(_serialize(messages))
    assert "### Blocked" not in summary
    assert "Modified `src/a.py` (edit ×2; 1 failed)" in summary


def test_a_multi_line_pending_question_is_quoted_verbatim() -> None:
    question = "Which option do you want?\n1. Keep the cache\n2. Drop it"
    summary = _summarizer().summarize(_serialize([_user("Tune the cache."), _say(question)]))
    assert "  > Which option do you want?\n  > 1. Keep the cache\n  > 2. Drop it" in summary


def test_no_pending_question_once_the_assistant_acts_again() -> None:
    messages = [
        _user("Fix it."),
        _say("Is this the right file?", _call("read", path="a.py")),
        _result("x = 1", tool="read"),
    ]
    summary = _summarizer().summarize(_serialize(messages))
    assert "Pending question" not in summary
    assert "**Last action before the cut**: read `a.py`" in summary


def test_focus_is_shown_and_ranks_lines() -> None:
    summary = _summarizer().summarize(
        _serialize(_planted_messages()), focus="retry backoff strategy"
    )
    assert "**Focus** (requested for this summary): retry backoff strategy" in summary


def test_extra_context_goes_to_critical_context() -> None:
    summary = _summarizer().summarize(
        _serialize(_planted_messages()), extra_context=["Branch: feature/retry"]
    )
    assert "- **Context**: Branch: feature/retry" in _section(summary, "## Critical Context")


def test_an_embedded_earlier_summary_is_merged() -> None:
    earlier = _summarizer().summarize(_serialize(_planted_messages()))
    messages = [
        _user(compaction_summary_text(earlier)),
        _user("Now document the retry helper in docs/retry.md."),
        _say("", _call("write", path="docs/retry.md", content="# Retry\n")),
        _result("Successfully wrote 8 bytes to docs/retry.md", tool="write"),
    ]
    summary = _summarizer(min_tokens=2000).summarize(_serialize(messages))
    assert summary.startswith("## Goal\nAdd retry support to the HTTP client")
    assert "Modified `docs/retry.md` (write)" in summary
    assert "Modified `src/app/client.py` (edit)" in summary
    assert CONSTRAINT in summary
    assert "Now document the retry helper in docs/retry.md." in summary


# --- updates ---------------------------------------------------------------------------------


def _second_part() -> list[Message]:
    return [
        _user("Use exponential backoff. Always keep the public API of Client unchanged."),
        _say(
            "Going with exponential backoff because the user asked for it.",
            _call("edit", path="src/app/client.py", oldText="x", newText="y"),
            _call("edit", path="src/app/retry.py", oldText="x", newText="y"),
        ),
        _result("Successfully replaced text in src/app/client.py.", tool="edit"),
        _result("Successfully replaced text in src/app/retry.py.", tool="edit"),
        _say("", _call("bash", command="pytest tests/test_retry.py -q")),
        _result("1 passed in 0.05s"),
    ]


def test_update_keeps_previous_facts_and_adds_new_ones() -> None:
    summarizer = _summarizer(min_tokens=2000)
    previous = summarizer.summarize(_serialize(_planted_messages()))
    summary = summarizer.summarize(
        _serialize(_second_part()), kind="update", previous_summary=previous
    )

    assert summary.startswith("## Goal\nAdd retry support to the HTTP client")
    assert "- Use exponential backoff. Always keep the public API of Client unchanged." in (
        _section(summary, "## Goal")
    )
    constraints = _section(summary, "## Constraints & Preferences")
    assert CONSTRAINT in constraints
    assert "Always keep the public API of Client unchanged." in constraints
    assert constraints.index(CONSTRAINT) < constraints.index("Always keep the public API")
    assert "Modified `src/app/client.py` (edit ×2)" in summary
    assert "Modified `src/app/retry.py` (edit)" in summary
    assert "Modified `tests/test_retry.py` (write)" in summary
    assert "Read `src/app/config.py`" in summary
    assert "Ran `make lint` (exit 0)" in summary
    # The failing run was fixed by the new one; the old request moved to Done.
    assert "### Blocked" not in summary
    assert "Ran `pytest tests/test_retry.py -q` ×2 (exit 0; 1 earlier failure)" in summary
    assert "- [x] Add retry support to the HTTP client" in _section(summary, "### Done")
    assert "- [ ] Use exponential backoff." in _section(summary, "### In Progress")
    decisions = _section(summary, "## Key Decisions")
    assert "I'll wrap requests in a retry helper instead of sleeping inline" in decisions
    assert "Going with exponential backoff because the user asked for it." in decisions
    # Newest state wins: the question was asked before the new messages.
    assert "Pending question" not in summary


def test_updating_twice_is_stable() -> None:
    summarizer = _summarizer(min_tokens=2000)
    first = summarizer.summarize(_serialize(_planted_messages()))
    second = summarizer.summarize(_serialize(_second_part()), previous_summary=first)
    again = summarizer.summarize("", kind="update", previous_summary=second)
    assert again == second


def test_update_keeps_a_model_written_summary_verbatim() -> None:
    previous = (
        "## Goal\nPort the parser to Rust.\n\n"
        "## Constraints & Preferences\n- Keep `parse_header` signature stable\n\n"
        "## Progress\n### Done\n- [x] Ported `lexer.rs`\n### In Progress\n- [ ] Port `ast.rs`\n"
        "### Blocked\n- Waiting for the grammar spec from the user\n\n"
        "## Key Decisions\n- **Use nom**: zero-copy parsing\n\n"
        "## Next Steps\n1. Finish `ast.rs`\n\n"
        "## Critical Context\n- Benchmarks live in `bench/parse.rs`\n\n"
        "<read-files>\nsrc/grammar.txt\n</read-files>\n\n<modified-files>\nsrc/lexer.rs\n"
        "</modified-files>"
    )
    conversation = _serialize(
        [_say("", _call("edit", path="src/ast.rs", oldText="a", newText="b"))]
    )
    summary = _summarizer(min_tokens=2000).summarize(
        conversation, kind="update", previous_summary=previous
    )
    for line in (
        "## Goal\nPort the parser to Rust.",
        "- Keep `parse_header` signature stable",
        "- [x] Ported `lexer.rs`",
        "- [ ] Port `ast.rs`",
        "- Waiting for the grammar spec from the user",
        "- **Use nom**: zero-copy parsing",
        "- Benchmarks live in `bench/parse.rs`",
        "Modified `src/ast.rs` (edit)",
        "Modified `src/lexer.rs`",
        "Read `src/grammar.txt`",
    ):
        assert line in summary
    assert "<read-files>" not in summary  # the caller appends file tags itself


def test_update_reads_back_a_split_turn_summary() -> None:
    summarizer = _summarizer(min_tokens=2000)
    history = summarizer.summarize(_serialize([_user("Start the retry work."), _say("Sure.")]))
    prefix = summarizer.summarize(_serialize(_planted_messages()), kind="turn_prefix")
    # compact() joins the two like this for a split turn (pi-behaviour.md §7.5).
    previous = f"{history}\n\n---\n\n**Turn Context (split turn):**\n\n{prefix}"
    summary = summarizer.summarize(
        _serialize(_second_part()), kind="update", previous_summary=previous
    )
    constraints = _section(summary, "## Constraints & Preferences")
    assert CONSTRAINT in constraints
    assert "Use httpx, not requests." in constraints
    assert "Modified `tests/test_retry.py` (write)" in summary
    assert "I'll wrap requests in a retry helper instead of sleeping inline" in summary
    assert "Turn Context" not in summary
    assert "Wait for the user's answer" not in summary  # stale steps are replaced


# --- budget --------------------------------------------------------------------------------------


def _large_session_conversation() -> tuple[str, list[str]]:
    messages: list[Message] = []
    with pi_fixture("large-session.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            entry = json.loads(line)
            if entry.get("type") == "message":
                messages.append(entry["message"])
    modified: dict[str, None] = {}
    for message in messages:
        for block in message.get("content") or []:
            is_call = isinstance(block, dict) and block.get("type") == "toolCall"
            if is_call and block["name"] in ("edit", "write"):
                modified.setdefault(block["arguments"]["path"], None)
    return _serialize(messages), list(modified)


def test_budget_holds_on_a_large_real_session() -> None:
    conversation, modified = _large_session_conversation()
    summarizer = _summarizer()
    summary = summarizer.summarize(conversation)

    limit = min(8192, math.floor(0.2 * _tokens(conversation)))
    assert _tokens(conversation) > 100_000
    assert _tokens(summary) <= limit
    assert _tokens(summary) > limit // 2  # the room is used, not wasted
    for path in modified:
        assert f"`{path}`" in summary
    assert_sections_in_order(summary, [h for h in OFFLINE_SECTIONS if f"{h}\n" in summary])


def test_a_smaller_cap_drops_detail_but_keeps_essentials() -> None:
    conversation, modified = _large_session_conversation()
    summary = _summarizer(max_tokens_cap=1500).summarize(conversation)
    assert _tokens(summary) <= 1500
    for path in modified:
        assert f"`{path}`" in summary
    assert summary.startswith("## Goal\nread packages/coding-agent/docs/theme.md")
    assert "invalid themes must NEVER explode" in summary  # a user constraint


def test_budget_is_a_fraction_of_the_input_with_a_floor() -> None:
    messages = _planted_messages() * 20
    conversation = _serialize(messages)
    summary = _summarizer().summarize(conversation)
    assert _tokens(summary) <= max(400, math.floor(0.2 * _tokens(conversation)))

    tiny = _summarizer().summarize(_serialize(_planted_messages()))
    assert _tokens(tiny) <= 400
    assert QUESTION in tiny and CONSTRAINT in tiny


def test_budget_tokens_lowers_the_budget() -> None:
    conversation, _ = _large_session_conversation()
    summary = _summarizer().summarize(conversation, budget_tokens=2000)
    assert _tokens(summary) <= 2000


def test_the_previous_summary_is_carried_at_its_own_size() -> None:
    summarizer = _summarizer()
    conversation, _ = _large_session_conversation()
    previous = summarizer.summarize(conversation)
    summary = summarizer.summarize(
        _serialize(_second_part()), kind="update", previous_summary=previous
    )
    # A small new part does not force the earlier facts out.
    assert _tokens(summary) > _tokens(previous) * 0.9
    assert "Modified `src/app/retry.py` (edit)" in summary


# --- determinism ---------------------------------------------------------------------------------


def test_output_is_deterministic() -> None:
    conversation, _ = _large_session_conversation()
    first = OfflineSummarizer().summarize(conversation, focus="theme")
    second = OfflineSummarizer().summarize(conversation, focus="theme")
    assert first == second
    planted = _serialize(_planted_messages())
    for kind in SUMMARY_KINDS:
        assert _summarizer().summarize(planted, kind=kind) == _summarizer().summarize(
            planted, kind=kind
        )


# --- other kinds ---------------------------------------------------------------------------------


def test_turn_prefix_summary_has_its_three_sections() -> None:
    summary = _summarizer().summarize(_serialize(_planted_messages()), kind="turn_prefix")
    assert summary.startswith("## Original Request\nAdd retry support")
    early = _section(summary, "## Early Progress")
    assert "Modified `src/app/client.py` (edit)" in early
    assert "`pytest tests/test_retry.py -q` failed (exit 1; 1 failed in 0.12s)" in early
    suffix = _section(summary, "## Context for Suffix")
    assert CONSTRAINT in suffix
    assert QUESTION in suffix
    assert "## Goal" not in summary


def test_short_summary_is_a_few_first_person_sentences() -> None:
    summary = _summarizer().summarize(_serialize(_planted_messages()), kind="short")
    assert summary.startswith("I modified `src/app/client.py` and `tests/test_retry.py`.")
    assert "I ran `pytest tests/test_retry.py -q` (exit 1), which still fails." in summary
    assert summary.count(". ") + 1 <= 3
    assert "\n" not in summary


def test_short_summary_uses_the_previous_summary_too() -> None:
    previous = _summarizer().summarize(_serialize(_planted_messages()))
    summary = _summarizer().summarize(
        _serialize([_user("ok"), _say("Done.")]), kind="short", previous_summary=previous
    )
    assert "`src/app/client.py`" in summary


def test_branch_summary_has_the_branch_sections_and_keeps_the_question() -> None:
    summary = _summarizer().summarize(_serialize(_planted_messages()), kind="branch")
    for heading in BRANCH_SECTIONS:
        assert heading + "\n" in summary
    assert "## Critical Context" not in summary
    assert QUESTION in _section(summary, "## Next Steps")
    assert ERROR in summary


def test_an_unknown_kind_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown summary kind"):
        _summarizer().summarize("", kind="history")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "options",
    [{"max_fraction": 0}, {"max_fraction": 1.5}, {"max_tokens_cap": 0}, {"min_tokens": 0}],
)
def test_invalid_options_are_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        OfflineSummarizer(**options)


# --- the prompt and the protocol -----------------------------------------------------------------


def _prompt(
    conversation: str,
    instructions: str,
    *,
    previous: str | None = None,
    extra: list[str] | None = None,
    focus: str | None = None,
) -> str:
    text = f"<conversation>\n{conversation}\n</conversation>\n\n"
    if previous is not None:
        text += f"<previous-summary>\n{previous}\n</previous-summary>\n\n"
    if extra:
        lines = "\n".join(f"- {line}" for line in extra)
        text += f"<additional-context>\n{lines}\n</additional-context>\n\n"
    text += instructions
    if focus:
        text += f"\n\nAdditional focus: {focus}"
    return text


@pytest.mark.parametrize(
    ("template", "kind"),
    [
        ("initial-summary", "initial"),
        ("update-summary", "update"),
        ("turn-prefix", "turn_prefix"),
        ("short-summary", "short"),
        ("branch-summary", "branch"),
    ],
)
def test_the_kind_is_read_from_our_templates(template: str, kind: SummaryKind) -> None:
    parsed = parse_summary_prompt(_prompt("[User]: hi", load_prompt(template)))
    assert parsed.kind == kind


@pytest.mark.parametrize(
    ("instructions", "has_previous", "kind"),
    [
        ("This is the PREFIX of a turn. Use ## Original Request ...", False, "turn_prefix"),
        ("Write 2-3 sentences in the first person.", True, "short"),
        ("Summarize the conversation branch for context when returning.", False, "branch"),
        ("Summarize. Keep repository state (branch, ...). ## Critical Context", False, "initial"),
        ("Merge the new messages.", True, "update"),
        ("Anything else.", False, "initial"),
    ],
)
def test_the_kind_of_foreign_prompts_is_guessed(
    instructions: str, has_previous: bool, kind: SummaryKind
) -> None:
    previous = "## Goal\nx" if has_previous else None
    parsed = parse_summary_prompt(_prompt("[User]: hi", instructions, previous=previous))
    assert parsed.kind == kind


def test_the_prompt_blocks_are_taken_apart() -> None:
    conversation = "[User]: quote </conversation> here\n\n[Assistant]: ok"
    text = _prompt(
        conversation,
        load_prompt("update-summary"),
        previous="## Goal\nold goal",
        extra=["Branch: main", "Uncommitted: 2 files"],
        focus="the parser",
    )
    parsed = parse_summary_prompt(text)
    assert parsed.conversation == conversation
    assert parsed.previous_summary == "## Goal\nold goal"
    assert parsed.extra_context == ("Branch: main", "Uncommitted: 2 files")
    assert parsed.instructions == load_prompt("update-summary")
    assert parsed.focus == "the parser"
    assert parsed.kind == "update"


def test_a_prompt_without_blocks_is_read_as_the_conversation() -> None:
    parsed = parse_summary_prompt("[User]: just this")
    assert parsed.conversation == "[User]: just this"
    assert parsed.kind == "initial"


def test_complete_follows_the_model_client_protocol() -> None:
    summarizer = OfflineSummarizer()
    assert isinstance(summarizer, ModelClient)
    assert summarizer.name == "offline"
    previous = summarizer.summarize(_serialize(_planted_messages()))
    prompt = _prompt(
        _serialize(_second_part()),
        load_prompt("update-summary"),
        previous=previous,
        extra=["Branch: feature/retry"],
        focus="backoff",
    )
    request = CompletionRequest(
        system_prompt=load_prompt("system"),
        messages=[{"role": "user", "content": [{"type": "text", "text": prompt}]}],
        max_tokens=13_107,
    )
    completion = asyncio.run(summarizer.complete(request))

    assert isinstance(completion, Completion)
    assert completion.stop_reason == "stop"
    assert completion.error_message is None
    assert completion.model == "offline"
    text = completion.text
    assert text == summarizer.summarize(
        _serialize(_second_part()),
        kind="update",
        previous_summary=previous,
        extra_context=["Branch: feature/retry"],
        focus="backoff",
    )
    assert CONSTRAINT in text and "Modified `src/app/retry.py` (edit)" in text
    assert "**Focus** (requested for this summary): backoff" in text
    assert "- **Context**: Branch: feature/retry" in text
    usage = completion.usage
    assert usage["input"] == _tokens(request.system_prompt) + _tokens(prompt)
    assert usage["output"] == _tokens(text)
    assert usage["totalTokens"] == usage["input"] + usage["output"]


def test_complete_honours_max_tokens() -> None:
    conversation, _ = _large_session_conversation()
    request = CompletionRequest(
        system_prompt="",
        messages=[_user(_prompt(conversation, load_prompt("initial-summary")))],
        max_tokens=1200,
    )
    completion = asyncio.run(OfflineSummarizer().complete(request))
    assert _tokens(completion.text) <= 1200
