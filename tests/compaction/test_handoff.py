"""The offline summary as a handoff (issue 10 items 1-3): what a colleague needs to continue is
kept, from the messages themselves, over any number of rounds, within the budget."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextree.compaction.budget import summary_token_budget
from contextree.compaction.offline import (
    RECORDED_FACTS_HEADING,
    OfflineSummarizer,
    extract_facts,
    render_key_facts,
)
from contextree.compaction.prepare import CompactionPreparation, prepare_compaction
from contextree.compaction.run import CompactionOutcome, compact_session
from contextree.compaction.summarize import text_tokens
from contextree.session.tree import SessionTree
from contextree.settings.schema import CompactionSettings
from pi_fixtures import PI_FIXTURES
from summary_messages import Message, _call, _result, _say, _user
from summary_sections import offline_summary as _summary
from summary_sections import section as _section

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "todo-api-session.jsonl"


# --- what the summary keeps ---------------------------------------------------------------------


def test_a_constraint_is_the_users_whole_line_verbatim() -> None:
    line = (
        "Don't change the public response schema. The mobile app parses GET /todos as a plain "
        "array. That has to keep working."
    )
    summary = _summary([_user(f"Add pagination.\n\n{line}"), _say("On it.")])
    assert f"- {line}" in _section(summary, "## Constraints & Preferences")


def test_items_under_a_rules_heading_are_rules_whatever_their_wording() -> None:
    request = (
        "Add pagination to GET /todos.\n\n"
        "Constraints:\n- Tests with pytest, and no new dependencies.\n- Python 3.11 only.\n\n"
        "**Preferences:**\n1. Small commits.\n\n"
        "Thanks!"
    )
    summary = _summary([_user(request), _say("On it.")])
    rules = _section(summary, "## Constraints & Preferences")
    assert "- Tests with pytest, and no new dependencies." in rules
    assert "- Python 3.11 only." in rules
    assert "Small commits." in rules and "Thanks" not in rules
    # The goal is the request; the rules are not cut into it.
    assert _section(summary, "## Goal").strip() == "Add pagination to GET /todos."


def test_a_users_choice_is_a_decision_in_their_words() -> None:
    choice = "Go with limit/offset: total in `X-Total-Count`, prev/next in `Link`. Max 100."
    messages = [_user("Add pagination."), _say("Cursor or offset?"), _user(choice), _say("OK.")]
    summary = _summary(messages)
    assert f"- User: {choice}" in _section(summary, "## Key Decisions")
    # It is carried by later rounds like any decision.
    later = _summary([_user("Now add sorting."), _say("Done.")], previous_summary=summary)
    assert f"User: {choice}" in _section(later, "## Key Decisions")


@pytest.mark.parametrize(
    "correction",
    [
        "No, keep the old flag name: `--dry-run` stays.",
        "nope - the retry belongs in the client, not the handler",
        "No. Leave the migration as it is and add a new one.",
        # A fact the user corrects: the new value supersedes the one said before.
        "oh hang on, correction - the ewe lambed on the 25th, not the 15th",
        "ugh I should have said - Priya has dropped out, so we're five",
        "sorry i meant the blue van, the white one is at the garage",
        "40?? must be a typo, it's 14 tables",
    ],
)
def test_a_users_correction_is_a_decision_in_their_words(correction: str) -> None:
    # Many later requests and a small budget: the correction is kept all the same.
    messages = [_user("Add pagination."), _say("I renamed the flag."), _user(correction)]
    for n in range(40):
        messages += [_user(f"Now also handle case number {n} in the parser, please."), _say("OK.")]
    summary = _summary(messages, budget_tokens=600)
    assert f"- User: {correction}" in _section(summary, "## Key Decisions")


@pytest.mark.parametrize(
    "line",
    [
        "i meant it when i said no weekend calls",
        "the typo checker runs on every commit",
        "i meant to send this yesterday, here's the file",
    ],
)
def test_emphasis_or_talk_of_typos_is_no_correction(line: str) -> None:
    summary = _summary([_user("Plan the week."), _say("Sure."), _user(line), _say("OK.")])
    assert "## Key Decisions" not in summary


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("Saturday 9-1 or 1-5 for the engineer?", "saturday 1-5 then, im on nights friday"),
        ("Which of the three quotes would you like?", "the second one, they start sooner"),
        ("What would you prefer for the deposit?", "bank transfer, cheques take ages to clear"),
    ],
)
def test_a_reply_to_an_offer_of_options_is_a_decision(question: str, reply: str) -> None:
    messages = [_user("Sort out the engineer visit."), _say(question), _user(reply)]
    for n in range(40):
        messages += [_user(f"Now also check item number {n} on the list, please."), _say("OK.")]
    summary = _summary(messages, budget_tokens=600)
    assert f"- User: {reply}" in _section(summary, "## Key Decisions")


@pytest.mark.parametrize(
    "line",
    [
        "oh god yeah the insurance. ok scrap that, give the wash to the other firm instead",
        "hmm fine, we'll take the later train then, the early one is too tight",
        "the hall is booked already so put the quiz on the friday instead",
        "slept on it and rang my brother. i've decided, the agency can do the whole sale",
        "we talked it through, we're going with the smaller van after all",
    ],
)
def test_a_choice_made_within_a_line_is_a_decision(line: str) -> None:
    messages = [_user("Plan the weekend."), _say("Here are the options."), _user(line)]
    summary = _summary(messages)
    assert f"- User: {line}" in _section(summary, "## Key Decisions")


@pytest.mark.parametrize(
    "line",
    [
        "should we do the friday instead?",  # a question
        "she usually goes with her sister to the market",  # "goes with" is no choice
        "ok, i'll take a look at the logs after lunch",
        "so we take the train every day, it's easier",
        "i haven't decided about the van yet",
        "thanks, i'm going with my mum to the hospital on tuesday so i can't do the call",
        "fyi, i have decided nothing yet about the van",
    ],
)
def test_a_question_or_a_plain_statement_is_not_a_choice(line: str) -> None:
    summary = _summary([_user("Plan the weekend."), _say("Here are the options."), _user(line)])
    assert "## Key Decisions" not in summary or f"User: {line}" not in summary


@pytest.mark.parametrize(
    ("line", "todo"),
    [
        (
            "great. i'll ring the centre myself on monday about the shower chair",
            "i'll ring the centre myself on monday about the shower chair",
        ),
        (
            "yeah hold the order. remind me to chase the asbestos survey for block C",
            "remind me to chase the asbestos survey for block C",
        ),
        (
            "i need to ring the garage about the door anyway so i'll do that bit",
            "i need to ring the garage about the door anyway so i'll do that bit",
        ),
    ],
)
def test_what_the_user_will_do_themselves_is_an_open_todo(line: str, todo: str) -> None:
    messages = [_user("Plan the week."), _say("Here it is."), _user(line), _say("OK.")]
    summary = _summary(messages)
    assert f"- User: {todo}" in _section(summary, "### Open TODOs")
    # Carried by the next round until reported done.
    later = _summary([_user("Now the rota."), _say("Done.")], previous_summary=summary)
    assert f"- User: {todo}" in _section(later, "### Open TODOs")


@pytest.mark.parametrize(
    "line",
    [
        "should i ring them myself tomorrow?",
        "she'll ring the garage herself on monday",
        "i'll be at work tomorrow so the afternoon is out",
        "i'll say this, the new van is better anyway",
        "my daughter is ill so we should talk tomorrow",  # "ill" is no "i'll"
        "remind me what port the staging server listens on",  # asks for a fact
    ],
)
def test_a_question_or_someone_elses_plan_is_no_todo_of_the_users(line: str) -> None:
    summary = _summary([_user("Plan the week."), _say("Here it is."), _user(line)])
    assert "### Open TODOs" not in summary or "User: " not in _section(summary, "### Open TODOs")


@pytest.mark.parametrize(
    "reply",
    [
        "no, thanks",
        "No problem, I will wait for it.",
        "no, why not use the cache?",
        "nope, still failing with the same error",  # a report, not a choice
        "No, I haven't tried that yet",
    ],
)
def test_a_no_that_corrects_nothing_is_not_a_decision(reply: str) -> None:
    summary = _summary([_user("Add pagination."), _say("Shall I also add sorting?"), _user(reply)])
    assert "## Key Decisions" not in summary or f"User: {reply}" not in summary


def test_paths_mentioned_are_files_not_dotted_names() -> None:
    text = (
        "The check lives in `errors.py` and `todo_api/models.py`; `TodoCreate.title` and "
        "`os.environ` are attributes, not files."
    )
    summary = _summary([_user("Where is the check?"), _say(text)])
    (line,) = [line for line in summary.splitlines() if "**Paths mentioned**" in line]
    assert "`errors.py`" in line and "`todo_api/models.py`" in line
    assert "TodoCreate" not in line and "os.environ" not in line


def test_pasted_logs_json_and_questions_are_not_constraints() -> None:
    pasted = (
        "Here is the failure:\n"
        '{"error": "you must not send null", "code": 422}\n'
        "2026-01-02 10:00:01 ERROR worker must restart\n"
        "E   AssertionError: must be positive\n"
        "Why don't we just retry the request?"
    )
    summary = _summary([_user("Fix the worker."), _user(pasted), _say("Looking.")])
    assert "## Constraints & Preferences" not in summary


def test_a_mid_session_todo_survives_until_it_is_reported_done() -> None:
    todo = "TODO: still need to migrate the billing fixtures to the new format."
    messages = [
        _user("Port the billing client to httpx."),
        _say(f"I ported the client.\n\n{todo}"),
        _user("Now look at the export module."),
        _say("The export module is fine as it is."),
    ]
    summary = _summary(messages)
    assert todo in _section(summary, "### Open TODOs")
    done = [*messages, _say("I migrated the billing fixtures to the new format; all done.")]
    assert todo not in _summary(done)


def test_a_file_the_assistant_says_it_changed_is_listed_as_modified() -> None:
    summary = _summary(
        [_user("Document the retries."), _say("I updated `docs/retries.md` with the new flags.")]
    )
    assert "Modified `docs/retries.md`" in _section(summary, "### Done")
    facts = extract_facts(
        [_user("Document it."), _say("I also edited src/app/retry.py to log attempts.")]
    )
    assert "src/app/retry.py" in facts.modified_files


def test_near_duplicate_requests_are_grouped_with_a_count_not_dropped() -> None:
    messages = [_user("Set up the project and explain the layout.")]
    endpoints = ("users", "orders", "invoices", "refunds", "coupons", "carts", "reviews")
    for index, name in enumerate(endpoints):
        messages += [
            _user(f"Request number {index}: add a /{name} endpoint with paging."),
            _say("Done."),
        ]
    messages += [_user("run the whole test suite again please"), _say("ok")] * 3
    summary = _summary(messages)
    assert "run the whole test suite again please (asked 3 times)" in summary
    for index in range(len(endpoints)):
        assert f"Request number {index}:" in summary


def test_a_failure_fixed_by_a_later_run_is_not_reported_as_open() -> None:
    long_output = "\n".join(f"tests/test_{n}.py ....." for n in range(400)) + "\n41 passed in 1.2s"
    messages = [
        _user("Make the tests pass."),
        _say("", _call("bash", command=".venv/bin/python -m pytest -q")),
        _result("E   AssertionError: boom\n1 failed, 40 passed\n\nCommand exited with code 1"),
        _say("", _call("edit", path="src/a.py", oldText="x", newText="y")),
        _result("Successfully replaced text in src/a.py.", tool="edit"),
        _say("", _call("bash", command="UPDATE=1 .venv/bin/python -m pytest -q && echo ok")),
        _result(long_output),  # the outcome is past pi's 2,000-character cut
    ]
    summary = _summary(messages)
    assert "### Blocked" not in summary
    assert "AssertionError: boom" not in summary
    assert extract_facts(messages).open_errors == ()


def test_no_section_is_written_empty() -> None:
    summary = _summary([_user("Explain the build."), _say("It uses make.")])
    assert "(none)" not in summary
    # Every heading has content, or a sub-section with content, before the next heading.
    lines = summary.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            following = next((text for text in lines[index + 1 :] if text.strip()), "#")
            deeper = following.startswith("#" * (level + 1) + " ")
            assert deeper or not following.startswith("#"), line


def test_next_steps_are_things_to_do_not_facts_about_the_work() -> None:
    plan = (
        "Here is where we are. Next steps:\n"
        "- The body is still a plain JSON array.\n"
        "- Add the Link header to the response.\n"
        "- Run the full test suite."
    )
    steps = _section(_summary([_user("Add pagination."), _say(plan)]), "## Next Steps")
    assert "Add the Link header" in steps and "Run the full test suite" in steps
    assert "plain JSON array" not in steps


# --- earlier summaries --------------------------------------------------------------------------

FOREIGN_SUMMARY = """# Context Checkpoint

## Branch
`refactor` in `/work/app`

## Goal
Split the session code into modules.

## Completed Work Packages

| WP | Description | Status |
|----|-------------|--------|
| WP1 | executor | done |
| WP2 | session | done |

## Key Decisions Made
1. **Keep the old code for reference** - new files beside the old ones

## Next Steps

### WP3: Create the new entry point (NEXT)
- Copy `main.ts` to `main-new.ts`
- Remove the old single-shot mode
"""


def test_a_foreign_summary_is_carried_section_by_section() -> None:
    summary = _summary(
        [_user("Go on with WP3."), _say("Copying main.ts now.")],
        kind="update",
        previous_summary=FOREIGN_SUMMARY,
    )
    # Sections we do not know stay whole under their own heading (the table stays a table).
    assert "## Branch\n`refactor` in `/work/app`" in summary
    assert "| WP1 | executor | done |\n| WP2 | session | done |" in summary
    assert "Keep the old code for reference" in _section(summary, "## Key Decisions")
    # A sub-section of a known section is one item, not a bullet per line.
    steps = _section(summary, "## Next Steps")
    assert "WP3: Create the new entry point (NEXT)" in steps
    assert "# Context Checkpoint" not in summary


def test_an_earlier_plan_is_dropped_once_the_user_has_moved_on_to_other_work() -> None:
    asks = ["Rename the CLI flags.", "Now fix the flaky test.", "Bump the version to 2.1.",
            "Write the release notes please."]  # fmt: skip
    messages = [m for ask in asks for m in (_user(ask), _say("Done."))]
    summary = _summary(messages, kind="update", previous_summary=FOREIGN_SUMMARY)
    assert "WP3: Create the new entry point" not in summary
    # What the earlier summary recorded as decided is still there.
    assert "Keep the old code for reference" in _section(summary, "## Key Decisions")


@pytest.mark.skipif(not PI_FIXTURES.is_dir(), reason="../shared/pi-fixtures is not beside the repo")
def test_pis_own_summary_keeps_its_sections_on_the_before_compaction_fixture() -> None:
    tree = SessionTree.open(PI_FIXTURES / "before-compaction.jsonl")
    prep = prepare_compaction(tree.get_branch_view())
    assert isinstance(prep, CompactionPreparation) and prep.previous_summary
    summary = _summary(
        prep.messages_to_summarize,
        kind="update",
        previous_summary=prep.previous_summary,
        budget_tokens=8000,
    )
    # pi's LLM wrote headings of its own: each section is carried whole, not as bullets.
    for heading in (
        "## Branch",
        "## Completed Work (WP1-WP16)",
        "## Current Task: File Reorganization",
        "### Agreed Structure",
    ):
        assert f"\n{heading}\n" in summary
    assert "\n- `bash-executor.ts` created (`src/core/bash-executor.ts`)\n" in summary
    assert text_tokens(summary) <= 8000


# --- rounds and budgets ------------------------------------------------------------------------

_MODULES = ("billing", "auth", "search", "export", "audit", "quota")


def _round(
    index: int, constraint: bool, todo: bool, decision: bool
) -> tuple[list[Message], dict[str, str]]:
    module = _MODULES[index % len(_MODULES)]
    planted: dict[str, str] = {}
    request = f"Add retry handling to the {module} client, part {index}."
    if constraint:
        planted["constraint"] = f"Never change the signature of `{module}_{index}.fetch()`."
        request += "\n" + planted["constraint"]
    if decision:
        planted["decision"] = f"We decided to use tenacity for {module} {index} instead of a loop."
    path = f"src/{module}_{index}.py"
    planted["file"] = path
    text = "Edited it. " + (planted.get("decision", ""))
    if todo:
        planted["todo"] = f"TODO: still need to document the {module} {index} retry limits."
        text += "\n\n" + planted["todo"]
    messages = [
        _user(request),
        _say("", _call("read", path=path)),
        _result("def fetch(): ...\n" * 40, tool="read"),
        _say("", _call("edit", path=path, oldText="...", newText="retry()")),
        _result(f"Successfully replaced text in {path}.", tool="edit"),
        _say(text),
    ]
    return messages, planted


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=10, max_size=10),
    st.integers(min_value=1200, max_value=4000),
)
def test_ten_rounds_keep_every_planted_fact_within_the_budget(
    plan: list[tuple[bool, bool, bool]], budget: int
) -> None:
    summarizer = OfflineSummarizer()
    previous: str | None = None
    planted: list[tuple[str, str]] = []
    for index, (constraint, todo, decision) in enumerate(plan):
        messages, facts = _round(index, constraint, todo, decision)
        planted += list(facts.items())
        previous = summarizer.summarize_messages(
            messages,
            kind="update" if previous else "initial",
            previous_summary=previous,
            budget_tokens=budget,
        )
        assert text_tokens(previous) <= budget
    assert previous is not None
    for kind, fact in planted:
        assert fact in previous, f"{kind} lost: {fact}"


@settings(max_examples=40, deadline=None)
@given(
    st.integers(min_value=1, max_value=300),
    st.sampled_from(["initial", "turn_prefix", "branch", "short"]),
)
def test_the_budget_holds_for_every_kind_even_when_tiny(budget: int, kind: str) -> None:
    messages, _ = _round(1, True, True, True)
    messages = messages * 5
    text = OfflineSummarizer().summarize_messages(messages, kind=kind, budget_tokens=budget)  # type: ignore[arg-type]
    assert text_tokens(text) <= budget


def test_recorded_facts_are_carried_through_a_model_summary_that_forgot_them() -> None:
    messages, planted = _round(0, True, True, True)
    first = render_key_facts(extract_facts(messages), budget_tokens=1000)
    assert first.startswith(RECORDED_FACTS_HEADING)
    # The next round: a model wrote a summary without the facts; ours still has them.
    previous = "## Goal\nRetries.\n\n" + first
    later, _ = _round(1, False, False, False)
    again = render_key_facts(extract_facts(later, previous_summary=previous), budget_tokens=1000)
    for kind in ("constraint", "todo", "decision"):
        assert planted[kind] in again, kind
    assert again.count(RECORDED_FACTS_HEADING) == 1


# --- the whole pipeline on the shipped example ---------------------------------------------------


def test_the_readme_demo_summary_is_a_correct_handoff(tmp_path: Path) -> None:
    path = tmp_path / "demo.jsonl"
    shutil.copyfile(EXAMPLE, path)
    outcome = asyncio.run(compact_session(SessionTree.open(path), OfflineSummarizer()))
    assert isinstance(outcome, CompactionOutcome)
    summary = outcome.result.summary
    # pytest failed, then passed (41 passed): not open, not blocked.
    assert "### Blocked" not in summary and "still fail" not in summary
    assert "still fail" not in (outcome.result.short_summary or "")
    constraints = _section(summary, "## Constraints & Preferences")
    assert "Never touch anything under `migrations/`. Those files are applied to production" in (
        constraints
    )
    assert "\n- That has to keep working." not in constraints
    # The user's follow-up opens the kept turn: the next step is to answer it.
    steps = _section(summary, "## Next Steps")
    assert steps.startswith("1. Respond to the latest user request: Looks good. Two questions")
    assert outcome.result.method == "offline"
    assert text_tokens(summary) <= summary_token_budget(CompactionSettings())
    # Exact outcomes (issue 25 item 4): the first pytest run passed, the second failed, the
    # chained run at the cut passed 41 tests; "Let me ask ..." is not a decision.
    assert "Ran `.venv/bin/python -m pytest -q` ×2 (exit 1; 1 earlier run passed;" in summary
    assert "pytest -v` (exit 0): 41 passed in 1.22s" in summary
    assert "Let me ask the app directly" not in _section(summary, "## Key Decisions")
    assert "without errors" not in (outcome.result.short_summary or "")


def test_the_readme_demo_branch_summary_marks_sorting_done(tmp_path: Path) -> None:
    from contextree.branching.navigate import navigate_tree

    path = tmp_path / "demo.jsonl"
    shutil.copyfile(EXAMPLE, path)
    tree = SessionTree.open(path)
    # Leave the sorting branch (its last message: "Sorting is in. ...") for the point before it.
    result = asyncio.run(
        navigate_tree(tree, "5c25a1ca", summarize=True, client=OfflineSummarizer())
    )
    entry = result.summary_entry
    assert entry is not None
    summary = str(entry.get("summary"))
    assert "sorting" in _section(summary, "### Done")
    assert "sorting" not in _section(summary, "### In Progress")
