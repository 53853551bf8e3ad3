"""Summaries a colleague can trust (issue 25): the user's own words, goal and status,
preferences, exact outcomes, order of importance, the focus of custom instructions.

The sentences here are our own; none is a phrasing of the retention eval's held-out split
(``contextree.eval.phrasings.HELD_OUT``), so the eval's held-out figure measures
generalization.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from contextree.compaction.offline import OfflineSummarizer
from contextree.compaction.summarize import text_tokens
from contextree.eval.phrasings import HELD_OUT
from summary_messages import Message, _call, _developer, _result, _say, _user
from summary_sections import offline_summary as _summary
from summary_sections import section as _section


def test_no_sentence_here_is_a_held_out_phrasing() -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    for phrasing in HELD_OUT:
        fixed = re.split(r"\{\w+\}", phrasing.text)
        longest = max(fixed, key=len).strip()
        assert len(longest) < 12 or longest not in source, phrasing.key


# --- 1. the user's words ---------------------------------------------------------------------


def test_a_plain_statement_of_fact_is_kept_verbatim() -> None:
    fact = "The mail relay is smtp-out-3.corp.example and Ayesha Khan manages it."
    summary = _summary([_user("Set up the alerts."), _say("Sure."), _user(fact), _say("OK.")])
    assert f"- {fact}" in _section(summary, "## Key Facts")


def test_a_long_message_keeps_its_sentences_with_values() -> None:
    long = (
        "Some background before you start, it is a long story. " * 6
        + "The ledger service runs on Java 21 behind gw-ledger.internal. "
        + "Anyway, thanks for looking."
    )
    summary = _summary([_user("Look at the ledger."), _say("OK."), _user(long), _say("Noted.")])
    assert "- The ledger service runs on Java 21 behind gw-ledger.internal." in summary
    assert "thanks for looking" not in _section(summary, "## Key Facts")


def test_a_plain_statement_said_in_passing_in_a_long_message_is_kept() -> None:
    passing = "my dad can't manage stairs since his hip op"
    long = (
        "right so the plan for the weekend is the cottage, we drive up friday after work and "
        "the kids are off school so it's a long one, the dog comes too obviously. "
        f"{passing}. anyway can you look for somewhere with parking near the door and a "
        "pub within walking distance, nothing fancy, and check the weather for saturday"
    )
    summary = _summary([_user("Help me plan a weekend away."), _say("Sure."), _user(long)])
    assert len(long) > 300  # kept by its sentences, not whole
    assert f"- {passing}." in _section(summary, "## Key Facts")


def test_a_value_said_inside_a_question_is_kept_after_the_statements() -> None:
    asked = "does the plan cope with him being in lisbon for work 11-15 august?"
    summary = _summary(
        [
            _user("Build Raj a marathon plan, 16 weeks."),
            _say("Here is week one."),
            _user(f"looks decent honestly. q tho - {asked} he can run by the river there"),
            _say("It does."),
        ]
    )
    assert asked in _section(summary, "## Key Facts")


def test_a_developer_message_survives_like_the_users() -> None:
    note = "Deploys happen from the release-2026.4 branch only."
    summary = _summary([_user("Fix the build."), _developer(note), _say("On it.")])
    assert note in summary


def test_the_summary_says_how_many_user_statements_the_budget_left_out() -> None:
    messages: list[Message] = []
    for n in range(40):
        messages += [
            _user(f"Item {n}: the cache key for tenant {n} is tk-{n:04d}-alpha."),
            _say("OK."),
        ]
    summary = _summary(messages, budget_tokens=500)
    assert text_tokens(summary) <= 500
    left = re.search(r"_(\d+) of the user's statements left out for the budget\._", summary)
    assert left is not None and int(left.group(1)) > 0
    # Carried: the next round still says so.
    later = OfflineSummarizer().summarize_messages(
        [_user("Next."), _say("OK.")], previous_summary=summary, budget_tokens=500
    )
    again = re.search(r"_(\d+) of the user's statements left out", later)
    assert again is not None and int(again.group(1)) >= int(left.group(1))


# --- 2. goal and status ----------------------------------------------------------------------


def test_the_latest_status_wins_and_is_carried_over_rounds() -> None:
    first = _summary([_user("Port the billing jobs."), _say("Status: 2 of 6 jobs ported.")])
    assert "**Current status**: Status: 2 of 6 jobs ported." in _section(first, "## Goal")
    later = _summary(
        [_user("Go on."), _say("Status: 5 of 6 jobs ported, next is the refunds job.")],
        previous_summary=first,
    )
    goal = _section(later, "## Goal")
    assert "5 of 6 jobs ported, next is the refunds job" in goal
    assert "2 of 6" not in goal
    quiet = _summary([_user("Any news?"), _say("Still working.")], previous_summary=later)
    assert "5 of 6 jobs ported" in quiet


# --- 3. preferences --------------------------------------------------------------------------


def test_a_preference_of_format_without_a_rule_word_is_kept() -> None:
    summary = _summary(
        [
            _user("Draft the release notes."),
            _say("OK."),
            _user("Replies in Spanish, no emojis, please."),
            _say("Claro."),
        ]
    )
    assert "Replies in Spanish, no emojis, please." in _section(
        summary, "## Constraints & Preferences"
    )


# --- 4. exact outcomes -----------------------------------------------------------------------


def _runs() -> list[Message]:
    return [
        _user("Run the tests."),
        _say("", _call("bash", command="python -m pytest -q")),
        _result("...............\n15 passed in 0.40s"),
        _say("", _call("edit", path="app.py", oldText="a", newText="b")),
        _result("Successfully replaced text in app.py.", tool="edit"),
        _say("", _call("bash", command="python -m pytest -q")),
        _result(
            "F..\nFAILED tests/test_app.py::test_x\n1 failed, 14 passed in 0.50s\n\n"
            "Command exited with code 1"
        ),
        _say("", _call("bash", command="make snapshots && python -m pytest -v")),
        _result("...\n41 passed in 0.93s"),
        _say("All green now."),
    ]


def test_each_command_shows_its_latest_outcome_as_reported() -> None:
    summary = _summary(_runs())
    assert (
        "Ran `python -m pytest -q` ×2 (exit 1; 1 earlier run passed; superseded by a later run): "
        "1 failed, 14 passed in 0.50s"
    ) in summary
    assert "Ran `make snapshots && python -m pytest -v` (exit 0): 41 passed in 0.93s" in summary


def test_the_short_summary_claims_no_error_free_run_when_one_failed() -> None:
    short = _summary(_runs(), kind="short")
    assert "without errors" not in short
    assert "41 passed" in short


def test_a_look_before_acting_is_not_a_decision_and_decisions_stay_as_written() -> None:
    summary = _summary(
        [
            _user("Which store should the cache use?"),
            _say("Let me check the benchmarks first rather than guess."),
            _say("We decided to use Redis for the cache because the team already runs it."),
        ]
    )
    decisions = _section(summary, "## Key Decisions")
    assert "- We decided to use Redis for the cache because the team already runs it." in decisions
    assert "Let me check" not in decisions


def test_a_branch_summary_marks_work_reported_finished_as_done() -> None:
    summary = _summary(
        [_user("Add filtering by tag."), _say("Filtering by tag is in.")], kind="branch"
    )
    assert "### In Progress" not in summary
    assert "Add filtering by tag. (reported done)" in _section(summary, "### Done")


def test_an_open_todo_without_a_keyword_is_kept() -> None:
    summary = _summary(
        [
            _user("Wire up exports."),
            _say("The PDF exporter isn't hooked up yet."),
            _user("Ok."),
            _say("Fine."),
        ]
    )
    assert "The PDF exporter isn't hooked up yet." in _section(summary, "### Open TODOs")


def test_an_open_todo_is_its_sentence_not_the_paragraph_around_it() -> None:
    summary = _summary(
        [
            _user("Order the tiles."),
            _say(
                "Ordered! Confirmation 77-QX went to your inbox and the total is $2,310. "
                "Delivery isn't scheduled yet, the depot calls on Monday."
            ),
            _user("Ok."),
            _say("Fine."),
        ]
    )
    todos = _section(summary, "### Open TODOs")
    assert "Delivery isn't scheduled yet, the depot calls on Monday." in todos
    assert "Ordered!" not in todos


def _tight_summary_with_todos(budget: int) -> str:
    """A session of plain talk: a long request, a preference, then the assistant's states
    said in passing ("... isn't booked yet") and one piece of work named as left to do."""
    messages: list[Message] = [
        _user("Sort out the street party for the 14 June, the road closure and the stalls."),
        _say("On it."),
        _user("Keep the updates to me short, three lines at most, I read them on the bus."),
        _say("Will do."),
    ]
    for n in range(12):
        messages += [
            _user(f"What about stall {n + 1}?"),
            _say(f"Stall {n + 1}'s trader isn't confirmed yet, the council list is long."),
        ]
    messages += [
        _say("I still need to send the road closure form to the council."),
        _user("Ok."),
        _say("Fine."),
    ]
    return _summary(messages, budget_tokens=budget)


def test_a_state_said_as_not_yet_goes_before_the_users_preference_under_a_budget() -> None:
    # Twelve "isn't confirmed yet" lines were must lines: a small budget was spent on them
    # and the user's preference was dropped.
    roomy = _tight_summary_with_todos(4000)
    assert "Stall 3's trader isn't confirmed yet" in _section(roomy, "### Open TODOs")
    tight = _tight_summary_with_todos(230)
    assert "three lines at most" in tight
    assert "Stall 3's trader" not in tight
    # Work named as left to do survives whatever the budget.
    assert "I still need to send the road closure form to the council." in tight


@pytest.mark.parametrize(
    "todo", ["1. TODO: write the migration", "I haven't migrated the billing tables yet."]
)
def test_work_named_as_left_to_do_stays_a_must_line(todo: str) -> None:
    from contextree.compaction.offline.digest import Digest
    from contextree.compaction.offline.items import build_items

    items = build_items(Digest(todos=[todo]))["todos"]
    assert items[0].must


def test_comfort_is_not_an_open_todo() -> None:
    summary = _summary(
        [
            _user("I forgot to pay the estate agent's invoice and now there's a late fee."),
            _say("These things happen, you haven't done anything wrong by asking."),
            _user("Ok."),
            _say("Fine."),
        ]
    )
    assert "### Open TODOs" not in summary


def test_an_unanswered_question_stays_open_and_an_answered_one_does_not() -> None:
    messages = [
        _user("Clean up the dashboards."),
        _say("Should I delete the orphaned panels too?"),
        _user("Yes, delete them."),
        _say("Done. Do you want the weekly digest at 09:00 or 17:00?"),
        _user("Now rename the folders."),
        _say("Renamed."),
    ]
    first = _summary(messages)
    questions = _section(first, "## Open Questions")
    assert "09:00 or 17:00" in questions
    assert "orphaned panels" not in questions
    # Carried until a later message takes it up.
    later = _summary([_user("Keep going."), _say("OK.")], previous_summary=first)
    assert "09:00 or 17:00" in later
    closed = _summary(
        [_user("Send the weekly digest at 17:00."), _say("OK.")], previous_summary=first
    )
    assert "Unanswered question" not in closed


def test_a_question_in_a_quoted_draft_is_not_one_to_the_user() -> None:
    draft = (
        "Here's the message for the caterer:\n\n"
        "> Hi Joan,\n>\n> We're 40 on the night. Could the vegan option be the default?\n"
        "> Best, Sam\n\nIt leaves the guest names out."
    )
    for messages in (
        [_user("Write to the caterer about numbers."), _say(draft)],
        [_user("Write to the caterer."), _say(draft), _user("The bus is late."), _say("Ok.")],
    ):
        summary = _summary(messages)
        assert "## Open Questions" not in summary, summary


def _asked_and_answered(question: str, reply: str) -> str:
    """The summary of a question of the assistant's and the user's next message."""
    return _summary(
        [_user("Sort out my order."), _say(question), _user(reply), _say("Thanks, noted.")]
    )


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        # A number first is no answer to a question that asks for none.
        ("Should I email the landlord when the deposit arrives?", "2 boxes left to pack, then bed"),
        ("How long is your mom staying?", "not sure, maybe 3 weeks"),
        # "not sure" puts it off; "A or B?" wants more than a yes; a reply about another thing.
        ("Were runs 1 and 2 from the same clutch?", "not sure, i'd have to check my notebook"),
        ("Do you want it on the card or as store credit?", "ugh, whatever is fine, no rush"),
        ("Shall I book it?", "2 boxes left to pack, then bed"),
        # A "no" or a "fine" inside a clause is no answer.
        ("Shall I also update the README?", "the build fails now, no module named requests"),
        ("Shall I also update the README?", "the page loads fine on chrome, not on safari"),
    ],
)
def test_a_reply_that_answers_nothing_asked_leaves_the_question_open(
    question: str, reply: str
) -> None:
    summary = _asked_and_answered(question, reply)
    assert "Unanswered question" in summary


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("Which of the two layouts do you like?", "the second one."),
        ("What time should the standup move to?", "half past nine"),
        (
            "Can you send me the order number and the billing postcode?",
            "48-7731-20, postcode N4 2PL",
        ),
        # A longer first clause: a value, in one of the question's own words.
        ("What is the booking reference on your confirmation?", "the reference is QX-48213"),
        ("Which one do you like?", "oh, the second one"),
        ("Should we meet today or tomorrow?", "tomorrow"),
        # A number, a date or a time first, to a question that asks for one; a hedge's
        # question mark does not make it a question back.
        ("How long is your mom staying?", "she's here may 2 to may 30. she has asthma"),
        ("How many people will be at the dinner?", "like 15? grandma's friends come too"),
        ("And when do you need the van?", "the 18th, early"),
        # A yes or a no anywhere in the first sentence answers a question that asks for one.
        ("Did you move?", "oh for gods sake yes we moved in august, its NN12 8XT now"),
        ("Shall I send?", "pat's a bloke, no kiss for pat lol. rest fine"),
        (
            "Before I add the line, do you want to change any prices?",
            "oh yeah put the restyle up, £42",
        ),
        ("Want me to reply with a polite no?", "ugh its good money but no, i mean it"),
        # A reply that takes up the question's words: "price" takes up "prices", "moved"
        # takes up "move".
        ("Should I change the prices?", "the price changes went out last week"),
        ("When do you move the server?", "the server moved in march, it's done"),
    ],
)
def test_a_short_answer_a_value_or_a_yes_or_no_closes_the_question(
    question: str, reply: str
) -> None:
    summary = _asked_and_answered(question, reply)
    assert "Unanswered question" not in summary


@pytest.mark.parametrize(
    "reply",
    [
        "not sure, I'd have to look at the invoice",
        "hmm, let me think about it",
        "is that the cheaper one?",
        "Greta runs the Tuesday payroll; ping her about access.",
        "let me see what she says",
        "hang on",
        "thanks!",
        "by the way, the courier came",
    ],
)
def test_a_reply_that_asks_back_puts_off_or_moves_on_leaves_the_question_open(
    reply: str,
) -> None:
    summary = _summary(
        [
            _user("Sort out my order."),
            _say("Should the refund go to the card or to store credit?"),
            _user(reply),
            _say("Understood."),
        ]
    )
    assert "card or to store credit" in _section(summary, "## Open Questions")


# --- 5. order of importance; 6. the focus ----------------------------------------------------


def test_what_matters_most_comes_first_in_the_text() -> None:
    summary = _summary(
        [
            _user("Migrate the reports. Never email customers from staging."),
            _user("The reporting database is MariaDB 10.11 on rep-db-2."),
            *_runs()[1:],
            _say("Should the export run nightly or hourly?"),
        ]
    )
    order = [
        summary.index(h)
        for h in (
            "## Goal",
            "## Constraints & Preferences",
            "## Key Facts",
            "## Open Questions",
            "## Progress",
        )
    ]
    assert order == sorted(order)


def test_items_matching_the_instructions_come_first_and_whole() -> None:
    long_fact = "The payment gateway is pay-gw-7.internal on version 4.2.1, " + "x" * 250
    messages = [
        _user("The search index is idx-12.internal."),
        _say("OK."),
        _user(long_fact),
        _say("OK."),
    ]
    summary = _summary(messages, focus="payment gateway")
    facts = _section(summary, "## Key Facts")
    assert facts.startswith(f"- {long_fact}")


def test_a_count_before_a_cut_in_the_output_is_not_the_outcome() -> None:
    output = ".\n1 passed in 0.44s\n" + "x" * 50 + "\n[... 3000 more characters truncated]\n"
    summary = _summary(
        [
            _user("Test."),
            _say("", _call("bash", command="make check")),
            _result(output),
            _say("Ran it."),
        ]
    )
    assert "1 passed" not in _section(summary, "### Done")


def test_a_models_summary_gets_the_users_facts_status_and_open_questions_recorded() -> None:
    from contextree.compaction.offline import extract_facts, render_key_facts

    messages = [
        _user("The archive bucket is s3://acme-archive-eu and it is read-only."),
        _say("Status: 1 of 3 buckets moved. Should the logs go to Glacier or stay in S3?"),
        _user("Move the next bucket."),
        _say("Moving."),
    ]
    recorded = render_key_facts(extract_facts(messages), budget_tokens=1000)
    assert "s3://acme-archive-eu" in recorded
    assert "1 of 3 buckets moved" in recorded
    assert "Glacier or stay in S3?" in recorded
    # A model forgot them all; the next round still has them from the recorded section.
    later = OfflineSummarizer().summarize_messages(
        [_user("Go on."), _say("OK.")], previous_summary="## Goal\nMove buckets.\n\n" + recorded
    )
    for text in ("s3://acme-archive-eu", "1 of 3 buckets moved", "Glacier or stay in S3?"):
        assert text in later


def test_the_users_own_status_is_the_latest_status() -> None:
    first = _summary(
        [_user("Progress so far: the parser is done, the printer remains."), _say("OK.")]
    )
    assert "**Current status**: Progress so far: the parser is done" in _section(first, "## Goal")
    later = _summary(
        [_user("Go on."), _say("Status: the printer is half done.")], previous_summary=first
    )
    assert "**Current status**: Status: the printer is half done." in later


def test_a_long_request_on_the_focus_is_kept_whole() -> None:
    request = "Rework the invoice exporter so that " + "it handles every edge case, " * 12 + "ok."
    messages = [_user("Start."), _say("OK."), _user(request), _say("OK.")]
    assert request in _summary(messages, focus="invoice exporter")
    assert request not in _summary(messages)


def test_a_summary_written_before_issue_25_is_still_read() -> None:
    old = (
        "## Goal\nShip it.\n\n## Key Decisions\n- **Use nom**: zero-copy parsing\n\n"
        "## Critical Context\n- **Pending question to the user** (verbatim): Tabs or spaces?\n"
    )
    summary = OfflineSummarizer().summarize_messages([], kind="update", previous_summary=old)
    assert "- **Use nom**: zero-copy parsing" in _section(summary, "## Key Decisions")
    assert "Tabs or spaces?" in _section(summary, "## Open Questions")


def test_an_open_todo_under_a_bold_label_keeps_the_label_without_its_marks() -> None:
    summary = _summary(
        [
            _user("Where are we with the trip money?"),
            _say("- **Deposits:** 21 paid, and the same 4 families haven't paid anything yet."),
        ]
    )
    todos = _section(summary, "### Open TODOs")
    assert "- Deposits: 21 paid, and the same 4 families haven't paid anything yet." in todos
    assert "**" not in todos
