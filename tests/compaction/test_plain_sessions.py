"""Sessions of plain talk and service tools (a trip, a household budget, a support desk): what
the offline summarizer keeps of what people say without keywords or values, of what other
tools return, and of a system message.

Found with the blind sessions of ``bench/blind`` (the ``dev`` split); the sentences here are
our own, none is from those sessions (``tests/eval/test_blind.py`` checks the ``test`` split).
"""

from __future__ import annotations

import pytest

from contextree.compaction.offline import OfflineSummarizer
from contextree.compaction.offline.digest import Digest
from contextree.compaction.offline.previous import digest_summary
from contextree.compaction.offline.render import render_digest
from contextree.compaction.offline.tool_results import result_facts, spoken_words
from contextree.text.surrogates import well_formed
from summary_messages import Message, _call, _developer, _result, _say, _user
from summary_sections import offline_summary as _summary
from summary_sections import section as _section


def _one_call(ask: str, tool: str, result: str, reply: str = "OK.") -> str:
    """The offline summary of a user's ask, one call of ``tool`` and its ``result``."""
    call = _say("", _call(tool, q=1))
    return _summary([_user(ask), call, _result(result, tool=tool), _say(reply)])


def test_a_plain_statement_without_values_is_kept_as_a_fact() -> None:
    summary = _summary(
        [
            _user("Help me plan the garden for this spring."),
            _say("Sure. What do you grow now?"),
            _user("mostly herbs. my neighbour's cat digs up anything near the fence though"),
            _say("Then raised beds away from the fence."),
            _user("ok"),
            _say("I'll sketch a layout."),
        ]
    )
    facts = _section(summary, "## Key Facts")
    assert "my neighbour's cat digs up anything near the fence though" in facts
    assert "- ok\n" not in summary  # an acknowledgement says nothing


def test_a_plain_statement_ranks_below_one_with_values() -> None:
    # With room for one fact only, the one that pins something down stays.
    statements = [
        "the shed roof leaks a little when it rains hard",
        "the shed is 2.4 m by 1.8 m, bought in 2019",
    ]
    messages: list[Message] = [_user("Plan the garden.")]
    for statement in statements:
        messages += [_user(statement), _say("Noted.")]
    summary = _summary(messages, budget_tokens=70)
    assert "2.4 m by 1.8 m" in summary
    assert "leaks a little" not in summary
    assert "1 of the user's statements left out for the budget" in summary


def test_a_system_message_is_read_for_rules_and_facts_but_is_not_the_goal() -> None:
    summary = _summary(
        [
            _developer(
                "You answer for Harbor Water Utility.\n"
                "1. Never disclose another customer's usage.\n"
                "2. Leak credits are capped at 60 dollars a bill."
            ),
            _user("my water bill doubled this month, can you check why"),
            _say("Let me look."),
        ]
    )
    goal = _section(summary, "## Goal")
    assert goal.startswith("my water bill doubled this month")
    assert "Harbor Water" not in goal
    assert "Never disclose another customer's usage." in _section(
        summary, "## Constraints & Preferences"
    )
    assert "capped at 60 dollars a bill" in summary
    assert "[System]" not in summary


def test_what_a_service_tool_returns_is_noted_and_the_call_is_work_done() -> None:
    summary = _summary(
        [
            _user("Book the 9:10 ferry to Vashon for two on Friday."),
            _say("Booking it.", _call("ferry_booking", sailing="Fri 09:10", passengers=2)),
            _result("CONFIRMED. Reservation VX-20931, 2 adults, Fri 09:10.", tool="ferry_booking"),
            _say("Done."),
        ]
    )
    assert "`ferry_booking` returned: CONFIRMED. Reservation VX-20931" in summary
    done = _section(summary, "### Done")
    assert "Called `ferry_booking`: sailing=Fri 09:10, passengers=2" in done


def test_a_long_service_result_keeps_its_most_specific_lines() -> None:
    lines = ["Nothing unusual in the readings of this period."] * 30
    lines.insert(12, "Meter MTR-55120 read 48213 gallons on 2026-02-03 at 14:05.")
    summary = _one_call("Why is my bill so high?", "meter_history", "\n".join(lines))
    assert "Meter MTR-55120 read 48213 gallons on 2026-02-03 at 14:05." in summary
    assert "Nothing unusual in the readings" not in summary


def test_a_number_named_by_what_it_opens_counts_as_an_identifier() -> None:
    lines = [f"The {n}th of the month is a Saturday as usual this year." for n in range(10, 28)]
    lines.insert(5, "The new key safe is by the vestry door, code 4417.")
    summary = _one_call("Read Margaret's mail", "email_read", "\n".join(lines))
    assert "code 4417" in summary


def test_a_row_split_at_a_question_mark_is_not_noted_again_in_pieces() -> None:
    rows = [f"Helper {n:<3} | desk, tea and cake  | yes | yes | brings urn {n}" for n in range(14)]
    rows[6] = "Ian Fraser | welcome desk (NEW) | yes | ? | first time - shadow Rosa on 20 Sep"
    table = "\n".join(["Name | Role | Sep 20 | Oct 18 | Notes", *rows])
    summary = _one_call("Who can come?", "sheet_read", table)
    assert summary.count("Ian Fraser") == 1


def test_a_line_ending_in_a_colon_that_holds_a_value_is_noted() -> None:
    lines = [f"The {n}th of the month is a Saturday as usual this year." for n in range(10, 28)]
    lines.insert(5, "Your booking ref is QX7731, details below:")
    summary = _one_call("Book the hall", "booking", "\n".join(lines))
    assert "QX7731" in summary


def test_a_sentence_past_where_a_flagged_line_is_cut_is_noted() -> None:
    flagged = (
        "Please note: the hall's side door sticks in wet weather and needs a firm shove. The "
        "heating is on a timer that the caretaker sets on Friday afternoons. The kitchen urn "
        "must be switched off at the wall after use. The alarm panel code is 9021."
    )
    lines = [f"Filler line {n} about the hall with nothing much to keep." for n in range(20)]
    lines.insert(3, flagged)
    summary = _one_call("Anything I should know?", "hall_info", "\n".join(lines))
    assert "The alarm panel code is 9021." in summary
    assert summary.count("side door sticks") == 1


def test_a_threads_message_headers_are_not_noted() -> None:
    chat = "A message about the day with nothing in it to keep, just chat and thanks."
    messages = [(f"[{n}] Sophie Turner, {n} Jun:", chat) for n in range(1, 7)]
    thread = "\n".join(line for pair in messages for line in pair)
    thread += "\n[7] Sophie Turner, 8 Jul:\nPlease can we have no strobes at all, nan has epilepsy."
    summary = _one_call("Read Sophie's thread", "email_read_thread", thread)
    assert "please can we have no strobes at all" in summary.lower()
    assert "[1] Sophie Turner" not in summary


def test_a_tables_row_that_stands_out_is_noted_before_the_most_specific_lines() -> None:
    rows = [
        f"CB-{30900 + n}  patient {n:<3}  crown UL{n % 8 + 1}  2026-10-{n + 1:02d}  "
        f"2026-11-{n + 1:02d}  received  14:{n:02d}"
        for n in range(20)
    ]
    rows[13] = "CB-30981  patient 13   crown UL6  overdue  chase the lab  -  -"
    table = "\n".join(["Case  Patient  Item  Sent  Due  Status  Time", *rows])
    summary = _one_call("Any crowns late from the lab?", "lab_tracker", table)
    assert "CB-30981 patient 13 crown UL6 overdue" in summary


def test_a_service_tool_failure_is_an_error_with_its_details_noted() -> None:
    summary = _summary(
        [
            _user("Send the invoice to the client."),
            _say("", _call("send_email", to="ap@northwind.example")),
            _result(
                "UNDELIVERABLE: mailbox ap@northwind.example unknown\n"
                "Remote server: mx2.northwind.example replied 550 at 2026-03-02 09:14",
                tool="send_email",
            ),
            _say("The email bounced."),
        ]
    )
    assert "**Error**: UNDELIVERABLE: mailbox ap@northwind.example unknown" in summary
    assert "mx2.northwind.example replied 550 at 2026-03-02 09:14" in summary
    assert "Called `send_email`" not in summary  # a failed call is not work done


def test_a_refusal_in_a_service_s_words_is_a_failure() -> None:
    for first_line in (
        "PAYMENT DECLINED by issuer",
        "NO MATCH: no record for 55-1",
        "Request timed out",
    ):
        summary = _summary(
            [
                _user("Go ahead."),
                _say("", _call("pay", amount=12)),
                _result(first_line, tool="pay"),
                _say("Hm."),
            ]
        )
        assert f"**Error**: {first_line}" in summary, first_line


def test_a_file_listing_tool_is_not_noted() -> None:
    summary = _summary(
        [
            _user("Find the config."),
            _say("", _call("find", pattern="*.toml")),
            _result("pyproject.toml\nsrc/app/settings-v2.toml", tool="find"),
            _say("Found it."),
        ]
    )
    assert "`find` returned" not in summary and "Called `find`" not in summary


def test_the_budget_makes_room_for_what_the_user_wrote() -> None:
    # Thirty plain statements, little else: at a fifth of the conversation they would not
    # fit; the user's own words are not scaled down.
    messages: list[Message] = [_user("Help me get the flat ready for the new tenant.")]
    for n in range(30):
        messages += [
            _user(f"item {n}: the cupboard door in room {n} sticks when it is humid"),
            _say("OK."),
        ]
    summary = OfflineSummarizer().summarize_messages(messages)  # type: ignore[arg-type]
    for n in range(30):
        assert f"the cupboard door in room {n} sticks" in summary
    assert "left out for the budget" not in summary


def test_the_left_out_note_is_not_read_back_into_the_goal() -> None:
    written = (
        "## Goal\nFix the heating schedule\n_3 of the user's statements left out for the budget._"
        "\n\n## Key Facts\n- the boiler is a Vaillant ecoTEC from 2015\n"
    )
    digest = digest_summary(written)
    assert digest.goal == "Fix the heating schedule"
    assert digest.left_out == 3
    # What an earlier release wrote: the notes joined to the goal, one more each round, each
    # with the count of its own round.
    joined = (
        "## Goal\nFix the heating schedule _3 of the user's statements left out for the "
        "budget._ _5 of the user's statements left out for the budget._\n"
    )
    digest = digest_summary(joined)
    assert digest.goal == "Fix the heating schedule"
    assert digest.left_out == 8  # each counted its own round


def test_a_split_turn_keeps_the_users_statements_as_facts_for_the_next_round() -> None:
    turn = [
        _user("also the piano can't go up the stairs, it has to come in through the garden"),
        _say("", _call("movers_quote", rooms=3)),
        _result("Quote Q-7731: 3 rooms, 1,450 EUR.", tool="movers_quote"),
    ]
    prefix = OfflineSummarizer().summarize_messages(turn, kind="turn_prefix")  # type: ignore[arg-type]
    digest = digest_summary(prefix)
    assert any("the piano can't go up the stairs" in fact for fact in digest.facts)
    assert any("Quote Q-7731" in note for note in digest.noted)


def test_a_request_that_also_states_something_keeps_the_statement() -> None:
    summary = _summary(
        [
            _user("Plan a sailing day for the family."),
            _say("Happy to."),
            _user("book the boat with the cabin. my sister gets seasick on small boats though"),
            _say("Noted."),
        ]
    )
    assert "my sister gets seasick on small boats though" in _section(summary, "## Key Facts")


def test_under_a_short_budget_the_users_facts_outrank_the_assistants_decisions() -> None:
    messages: list[Message] = [_user("Plan the move to the new flat.")]
    for n in range(6):
        messages += [
            _user(f"box {n} holds the winter coats of flat 4B, it weighs 14 kg"),
            _say(f"I decided to label box {n} in green because it goes to the bedroom."),
        ]
    messages.append(_user("go with the Saturday van"))
    summary = _summary(messages, budget_tokens=160)
    assert "User: go with the Saturday van" in summary  # the user's own choice: always kept
    kept_facts = sum(f"box {n} holds the winter coats" in summary for n in range(6))
    kept_decisions = sum(f"label box {n} in green" in summary for n in range(6))
    assert kept_facts > kept_decisions


def test_what_has_never_happened_is_a_fact_not_a_rule() -> None:
    summary = _summary(
        [
            _user("Help me plan the road trip."),
            _say("Sure."),
            _user("my partner can drive, but she's never driven on the left side of the road"),
            _say("Noted."),
            _user("and you should never book toll roads for us"),
            _say("OK."),
        ]
    )
    rules = _section(summary, "## Constraints & Preferences")
    assert "you should never book toll roads" in rules
    assert "never driven on the left" not in rules
    assert "never driven on the left" in _section(summary, "## Key Facts")


@pytest.mark.parametrize("reply", ["sounds good to me, thanks!", "oh yeah go on then"])
def test_an_acknowledgement_is_not_a_fact(reply: str) -> None:
    summary = _summary(
        [
            _user("Plan the garden."),
            _say("Raised beds, then?"),
            _user(reply),
            _say("Great."),
        ]
    )
    facts = _section(summary, "## Key Facts") if "## Key Facts" in summary else ""
    assert reply not in facts


@pytest.mark.parametrize(
    ("result", "noted"),
    [
        ("Sent 21:14 ✓✓", False),
        ("Reply sent 10:31.", False),
        ("Sent 20:52 ✓✓ delivered", False),
        ("Delivered 14:32", True),  # a parcel's delivery: what the lookup found
        ("Saved 1:02:45", True),
        ("Sent 10:14 from becca.thornley@example.org", True),
        ("Delivered 10:09. Ref SMS-881233.", True),
        ("Booked for 14:30", True),
    ],
)
def test_a_result_that_only_says_when_a_message_went_is_not_noted(
    result: str, noted: bool
) -> None:
    summary = _summary(
        [
            _user("Text the plumber that we are in all day."),
            _say("", _call("sms_send", to="plumber", text="We are in all day.")),
            _result(result, tool="sms_send"),
            _say("Done."),
        ]
    )
    assert (f"`sms_send` returned: {result}" in summary) is noted
    assert "Called `sms_send`" in summary  # the call itself is still listed as done


def test_a_search_that_finds_an_error_word_is_not_an_error() -> None:
    for tool, first_line in (
        ("grep", "src/client/http.py:42:    timeout = 30"),
        ("calendar", "Calendar checked: no conflicts found for 2026-05-03"),
        ("booking", "Booking confirmed BK-7731 (seat upgrade unavailable)"),
    ):
        summary = _summary(
            [
                _user("Go on."),
                _say("", _call(tool, q="x")),
                _result(first_line, tool=tool),
                _say("OK."),
            ]
        )
        assert "**Error**" not in summary, tool


def test_a_blank_system_message_leaves_no_marker() -> None:
    for blank in ("", "   "):
        summary = _summary(
            [_developer(blank), _user("Add pagination to the items page please"), _say("Will do.")]
        )
        assert "[System]" not in summary
        assert _section(summary, "## Goal").startswith("Add pagination")


def test_the_budget_counts_the_users_words_after_an_earlier_summary_too() -> None:
    earlier = {
        "role": "branchSummary",
        "summary": "## Goal\nGet the flat ready.",
        "fromId": "x",
        "timestamp": 1,
    }
    messages: list[Message] = [earlier, _user("Help me get the flat ready for the new tenant.")]
    for n in range(30):
        messages += [
            _user(f"item {n}: the cupboard door in room {n} sticks when it is humid"),
            _say("OK."),
        ]
    summary = OfflineSummarizer().summarize_messages(messages)  # type: ignore[arg-type]
    assert "left out for the budget" not in summary
    assert all(f"the cupboard door in room {n} sticks" in summary for n in range(30))


def test_a_split_turns_instruction_is_not_read_back_as_a_fact() -> None:
    written = (
        "## Original Request\nplease also write tests for the pagination\n\n"
        "## Early Progress\n- [x] Read `src/items.py`\n"
    )
    digest = digest_summary(written)
    assert digest.facts == []
    stated = digest_summary("## Original Request\nthe staging box reboots every night at 2\n")
    assert stated.facts == ["the staging box reboots every night at 2"]
    # The same rule as when the message is read live: an instruction that names a value is
    # kept as a fact there, so it is when read back.
    line = "book the 9:10 ferry for the two of us"
    live = _summary([_user("Plan the weekend."), _say("OK."), _user(line), _say("Booking.")])
    assert line in _section(live, "## Key Facts")
    assert digest_summary(f"## Original Request\n{line}\n").facts == [line]


def test_a_failure_after_a_blank_line_is_noted_once() -> None:
    summary = _summary(
        [
            _user("Pay the invoice."),
            _say("", _call("pay", amount=12)),
            _result("\n\nPAYMENT DECLINED by issuer\nCard ending 4417, limit reached", tool="pay"),
            _say("It failed."),
        ]
    )
    assert summary.count("PAYMENT DECLINED by issuer") == 1
    assert "Card ending 4417, limit reached" in summary


def test_a_rule_after_a_comma_is_a_constraint() -> None:
    summary = _summary(
        [
            _user("Book the dentist for my son."),
            _say("Which days suit you?"),
            _user("any weekday after 4, never on a thursday. he has swim practice then"),
            _say("Booked for Tuesday at 16:30."),
            _user("just email me the confirmation, don't phone the house"),
            _say("Sure."),
        ]
    )
    rules = _section(summary, "## Constraints & Preferences")
    assert "just email me the confirmation, don't phone the house" in rules
    assert "any weekday after 4, never on a thursday." in rules


@pytest.mark.parametrize(
    "line",
    [
        "tried new paper, don't know why it still jams",
        "we moved in May, don't have a lease for the garage yet",
        "the twins are 4 and 7, always hungry after school",
    ],
)
def test_a_clause_that_states_rather_than_rules_is_a_fact(line: str) -> None:
    summary = _summary(
        [
            _user("The printer jams on every second page."),
            _say("Does it happen with thicker paper?"),
            _user(line),
            _say("Then the rollers may be worn."),
        ]
    )
    assert "## Constraints & Preferences" not in summary
    assert line in _section(summary, "## Key Facts")


@pytest.mark.parametrize(
    "line",
    [
        "when you write anything for the team page, no surnames in anything public",
        "no photos of the kids on the website please",
        "ok and no calls after 8, the baby sleeps",
        "first names only.",
    ],
)
def test_a_rule_without_a_verb_is_a_constraint(line: str) -> None:
    summary = _summary([_user("Thank the donors this week."), _say("Will do."), _user(line)])
    assert line in _section(summary, "## Constraints & Preferences")


@pytest.mark.parametrize(
    "line",
    [
        "no worries, the van can come tomorrow instead",
        "tried the other charger, no luck with the laptop either",
        "checked upstairs, no signal in the hall at all",
        "no, the blue one with the long handle",
    ],
)
def test_a_no_that_reports_or_answers_is_not_a_rule(line: str) -> None:
    summary = _summary([_user("Sort out the move."), _say("Does Tuesday suit?"), _user(line)])
    assert "## Constraints & Preferences" not in summary


@pytest.mark.parametrize("heading", ["Safety:", "Policy:", "Our limits:", "Do's and don'ts:"])
def test_the_items_under_a_safety_or_policy_heading_are_rules(heading: str) -> None:
    policy = (
        f"You help the night shift on ward 7.\n{heading}\n"
        "- Dosing questions go to the on-call pharmacist.\n"
        "- Patient names stay out of email subject lines.\n"
    )
    summary = _summary([_developer(policy), _user("Who is on tonight?"), _say("Checking.")])
    rules = _section(summary, "## Constraints & Preferences")
    assert "Dosing questions go to the on-call pharmacist." in rules
    assert "Patient names stay out of email subject lines." in rules


def test_a_long_policy_item_keeps_the_rule_it_ends_with() -> None:
    policy = (
        "Limits on what you do:\n"
        "1. Privacy: patient names, addresses and medicines are not put in emails to "
        "wholesalers or anyone outside the pharmacy team. On the delivery rota, patients "
        "appear only as initials plus postcode district (e.g. M.K. - E10), and nothing else "
        "about them is written there. Do not confirm or deny to anyone outside the team "
        "whether a particular person is a patient here.\n"
    )
    summary = _summary([_developer(policy), _user("Sort the rota."), _say("On it.")])
    rules = _section(summary, "## Constraints & Preferences")
    assert "Do not confirm or deny to anyone outside the team whether a particular" in rules


@pytest.mark.parametrize(
    "line",
    [
        "can u do it by supplier, my brain works better like that",
        "i'm not a phone person, so text me and nothing before 10 please",
        "one list is easier for me, i read it on the bus",
    ],
)
def test_a_way_of_working_said_of_oneself_is_a_preference(line: str) -> None:
    summary = _summary([_user("Plan the orders."), _say("Sure."), _user(line), _say("OK.")])
    assert line in _section(summary, "## Constraints & Preferences")


def test_a_line_a_service_flags_is_noted_before_the_most_specific_ones() -> None:
    rows = [f"Room 3{n:02d}: twin, 2 beds, EUR 84, breakfast 07:00-09:30" for n in range(30)]
    rows.insert(7, "Please note: our lift will be out of service for refurbishment.")
    summary = _one_call("Is the Prague hotel confirmed?", "email_read", "\n".join(rows))
    assert "Please note: our lift will be out of service for refurbishment." in summary


def test_do_not_after_a_comma_is_a_rule() -> None:
    line = "the spare key is under the mat, do not give it to the cleaner"
    summary = _summary([_user("Help me plan the week."), _say("Sure."), _user(line)])
    assert line in _section(summary, "## Constraints & Preferences")


def test_a_statement_kept_as_a_rule_is_not_repeated_among_the_facts() -> None:
    line = "ok order the blue one. but never ring the bell, the baby sleeps till 3"
    summary = _summary(
        [_user("Get a new sofa delivered."), _say("Two options: blue or grey."), _user(line)]
    )
    assert line in _section(summary, "## Constraints & Preferences")
    assert "## Key Facts" not in summary


def test_a_rule_in_a_split_turns_context_is_read_back_as_a_rule() -> None:
    earlier = (
        "## Goal\nGet a new sofa delivered.\n\n---\n\n**Turn Context (split turn):**\n\n"
        "## Original Request\n- order it\n\n## Context for Suffix\n"
        "- ok order the blue one. but never ring the bell, the baby sleeps till 3\n"
    )
    digest = digest_summary(earlier)
    rule = "ok order the blue one. but never ring the bell, the baby sleeps till 3"
    assert rule in digest.constraints and rule not in digest.critical


def test_under_a_short_budget_an_error_outlasts_plain_remarks() -> None:
    # What went wrong (a declined card, a bounced mail) is what a colleague must not repeat:
    # it is kept before plain remarks without a value when the budget runs short.
    remarks = [
        "the kids get seasick on small boats",
        "my sister hates early mornings",
        "we would rather sit inside than on deck",
        "the dog travels with us this time",
        "grandpa walks slowly with his cane",
        "we always forget the snacks somehow",
    ]
    messages: list[Message] = [
        _user("Book the ferry for the four of us."),
        _say("", _call("book_ferry", sailing=3, seats=4)),
        _result("PAYMENT DECLINED: card ending 5521 over its limit", tool="book_ferry"),
        _say("The card was declined."),
    ]
    for remark in remarks:
        messages += [_user(remark), _say("Noted.")]
    summary = _summary(messages, budget_tokens=120)
    assert "PAYMENT DECLINED: card ending 5521 over its limit" in summary
    assert sum(remark in summary for remark in remarks) < len(remarks)


def test_a_rule_after_words_of_talk_is_a_constraint() -> None:
    line = "ok book it. oh and never call the landline, it wakes the baby"
    summary = _summary(
        [_user("Find a plumber for the leak."), _say("Two are free on Monday."), _user(line)]
    )
    assert line in _section(summary, "## Constraints & Preferences")


def test_never_mind_is_not_a_rule() -> None:
    summary = _summary(
        [
            _user("Find a plumber for the leak under the sink."),
            _say("Should I also ask about the boiler?"),
            _user("ok never mind the boiler, it was serviced in march by the landlord"),
            _say("Noted."),
        ]
    )
    assert "## Constraints & Preferences" not in summary


@pytest.mark.parametrize(
    "line",
    [
        "we can spend maybe 900 on the venue, no more than that",
        "the essay can't be over 2,000 words with the footnotes",
        "the 14th is a hard deadline for the printer",
        "the ramp has to be at the side door for my dad's chair",
        "we can't spend more than 900 on the flowers",
        "the speeches shouldn't run longer than ten minutes each",
        "oh and don\u2019t seat the cousins together",
    ],
)
def test_a_limit_said_plainly_is_a_constraint(line: str) -> None:
    summary = _summary([_user("Help me plan the open day."), _say("Sure."), _user(line)])
    assert line in _section(summary, "## Constraints & Preferences")


def test_a_need_given_with_a_request_is_not_a_rule() -> None:
    line = "also can you check the calendar, we need to book the piano tuner this month"
    summary = _summary([_user("Help me plan the recital."), _say("Sure."), _user(line)])
    assert "## Constraints & Preferences" not in summary


def test_what_would_still_be_needed_is_not_an_open_todo() -> None:
    summary = _summary(
        [
            _user("Should I ask for an extension on the grant report?"),
            _say(
                "An extension moves the report, but without it you'd still need to send the "
                "budget sheet by May 1."
            ),
        ]
    )
    assert "### Open TODOs" not in summary


def test_a_goal_said_in_passing_stays_with_the_goal_under_a_short_budget() -> None:
    goal = "btw the whole point of this trip is to be at my dad's 70th in Lyon on the 9th"
    remarks = [f"remark {n}: the hotel near the station had loud trams at night" for n in range(8)]
    messages: list[Message] = [
        _user("Find me train tickets for next month."),
        _say("Which dates?"),
        _user(goal),
        _say("Noted."),
    ]
    for remark in remarks:
        messages += [_user(remark), _say("Noted.")]
    summary = _summary(messages, budget_tokens=80)
    assert goal in _section(summary, "## Goal")
    assert sum(remark in summary for remark in remarks) < len(remarks)
    # Read back by the next compaction as the goal's, not as a second goal line.
    digest = digest_summary(summary)
    assert digest.goal == "Find me train tickets for next month."
    assert digest.goal_notes == [goal]


def test_the_goal_sentence_of_a_long_first_message_outlasts_its_shortened_line() -> None:
    first = (
        "hi. I run the allotment society's newsletter and the printer we used closed, so I "
        "have to find a new one, compare prices and paper, and sort out delivery to the "
        "hall; getting issue 12 out before the AGM on 3 March, that's the main goal."
    )
    summary = _summary(_with_notes_after(first, 6), budget_tokens=70)
    assert "before the AGM on 3 March" in summary


def _with_notes_after(first: str, notes: int) -> list[Message]:
    """``first``, then ``notes`` short remarks that compete with it for the budget."""
    messages: list[Message] = [_user(first), _say("Sure.")]
    for n in range(notes):
        messages += [_user(f"note {n}: the hall's side door sticks in wet weather"), _say("Ok.")]
    return messages


def test_a_long_first_message_keeps_its_weightiest_sentence_not_its_greeting() -> None:
    # No "the goal is" to find: the sentence that names what is wanted (a value) is kept
    # and the greeting goes (cut at its head, the line was the greeting and the mood).
    first = (
        "hey. moving week and honestly everything is chaos. i'm on nights at the hospital "
        "and this is my first move on my own. i want the 1,450 deposit back from the old "
        "landlord and the utilities at the new flat on before the 1st"
    )
    summary = _summary(_with_notes_after(first, 8), budget_tokens=60)
    goal = _section(summary, "## Goal")
    assert "1,450 deposit back" in goal and "before the 1st" in goal
    assert "hey." not in goal


def test_a_task_somebody_has_to_do_is_not_a_rule() -> None:
    line = "before the weekend somebody has to renew the venue insurance for the fair"
    summary = _summary([_user("Help me plan the craft fair."), _say("Sure."), _user(line)])
    assert "## Constraints & Preferences" not in summary


def test_a_document_a_service_tool_wrote_is_listed_as_saved_and_outlasts_call_notes() -> None:
    messages: list[Message] = [
        _user("Draft the parents' letter for the school trip."),
        _say("", _call("docs.write", path="letters/trip_letter_2027_v2.docx", body="Dear...")),
        _result("Saved. 1 page.", tool="docs.write"),
        _say("", _call("docs.read", path="letters/old_letter.docx")),
        _result("Dear parents, last year's trip...", tool="docs.read"),
    ]
    for n in range(8):
        messages += [
            _say("", _call("calendar.add", title=f"Reminder {n} for the coach booking")),
            _result(f"Event created: reminder {n}", tool="calendar.add"),
        ]
    summary = _summary(messages, budget_tokens=150)
    done = _section(summary, "### Done")
    assert "[x] Saved `letters/trip_letter_2027_v2.docx` (docs.write)" in done
    assert "old_letter.docx` (docs.read)" not in summary  # read, not written
    assert "Reminder 0 for the coach booking" not in summary  # an older call note went first
    # The next compaction reads it back as a saved document, not as a note of a call.
    assert digest_summary(summary).saved == {"letters/trip_letter_2027_v2.docx": "docs.write"}


@pytest.mark.parametrize(
    "line",
    [
        "it has to be the router, nothing else changed that week",
        "there has to be a better way to sort these receipts",
        "it's no more than a scratch on the bumper, honestly",
        "ok don't worry about it, I found the receipt in the car",
        "oh don't bother, my sister already called the venue",
    ],
)
def test_a_guess_a_fact_or_a_dont_worry_is_not_a_rule(line: str) -> None:
    summary = _summary([_user("Help me sort out the car repair."), _say("Sure."), _user(line)])
    assert "## Constraints & Preferences" not in summary


def test_what_the_assistant_would_still_need_to_do_is_an_open_todo() -> None:
    summary = _summary(
        [
            _user("Book the hall for the quiz night."),
            _say(
                "I've held the hall for the 12th. I'd still need to confirm it with the caretaker."
            ),
        ]
    )
    assert "I'd still need to confirm it with the caretaker." in _section(summary, "### Open TODOs")


@pytest.mark.parametrize(
    "line",
    [
        "that's the point where the printer jams every time",
        "what I'm trying to say is the printer is broken again",
        "I missed the whole point of that meeting, sorry",
        "our goal keeper was injured on saturday",
    ],
)
def test_talk_about_a_point_or_a_goal_is_not_the_goal(line: str) -> None:
    summary = _summary([_user("Fix the office printer."), _say("Sure."), _user(line)])
    assert line not in _section(summary, "## Goal")
    assert digest_summary(summary).goal_notes == []


def test_a_goal_said_with_a_rule_is_kept_as_the_rule() -> None:
    line = "the whole point of this is the party, so never tell grandma anything"
    summary = _summary([_user("Plan the birthday."), _say("Sure."), _user(line)])
    assert line in _section(summary, "## Constraints & Preferences")
    assert digest_summary(summary).goal_notes == []


def test_a_system_message_states_no_goal_of_the_users() -> None:
    summary = _summary(
        [
            _developer(
                "You answer for Harbor Water.\nThe goal is to resolve each bill in one reply."
            ),
            _user("my water bill doubled this month, can you check why"),
            _say("Let me look."),
        ]
    )
    assert "The goal is to resolve" not in _section(summary, "## Goal")


def test_the_goal_clause_of_a_first_message_is_not_repeated_when_the_goal_fits() -> None:
    first = (
        "hi. I run the allotment society's newsletter and the printer we used closed, so I "
        "have to find a new one, compare prices and paper, and sort out delivery to the "
        "hall - getting issue 12 out before the AGM on 3 March, that's the main goal."
    )
    summary = _summary([_user(first), _say("Sure.")])
    assert _section(summary, "## Goal").count("before the AGM on 3 March") == 1
    short = _summary(
        [_user(first), _say("Sure.")] + [_user(f"note {n}: x") for n in range(9)], budget_tokens=60
    )
    # Shortened: its start and the clause, without the dash that introduced it.
    assert "[…] getting issue 12 out before the AGM on 3 March" in short


def test_a_models_goal_in_paragraphs_is_read_back_as_one_goal() -> None:
    earlier = (
        "## Goal\nMove the shop's bookings to the new calendar.\n\n"
        "Constraints mentioned by the user: budget under 400 GBP.\n"
    )
    digest = digest_summary(earlier)
    assert digest.goal_notes == []
    assert "budget under 400 GBP" in digest.goal


def test_a_goal_said_first_after_an_earlier_summary_is_a_goal_note() -> None:
    earlier = "## Goal\nBook the trip to Lyon.\n"
    line = "the whole point of this trip is my dad's 70th on the 9th"
    summary = _summary([_user(line), _say("Noted.")], kind="update", previous_summary=earlier)
    assert digest_summary(summary).goal_notes == [line]


def test_a_sentence_a_url_or_a_source_is_not_a_saved_document() -> None:
    summary = _summary(
        [
            _user("Send the minutes and tidy the files."),
            _say("", _call("gmail.create_draft", body="Hi Ann, minutes attached as m_march.docx")),
            _result("Draft saved.", tool="gmail.create_draft"),
            _say("", _call("web.export", url="https://example.org/report.pdf")),
            _result("Exported.", tool="web.export"),
            _say("", _call("files.rename", **{"from": "budget_old.xlsx", "to": "budget_27.xlsx"})),
            _result("Renamed.", tool="files.rename"),
        ]
    )
    assert "Saved `budget_27.xlsx` (files.rename)" in summary
    assert "Saved `budget_old.xlsx`" not in summary and "Saved `https" not in summary
    assert "Saved `Hi Ann" not in summary


def test_a_long_request_keeps_its_head_where_it_says_what_to_do() -> None:
    line = (
        "please move the invoices into the new shared folder and tell the accountant, the old "
        "one is a complete mess and nobody can find anything in it any more. "
        + "the april ones are INV-2291, INV-2292 and INV-2293 from 2026-04-03 at 14:05, "
        "v2.1 of the sheet, https://files.example.com/acc/2026/04 and /srv/acc/april.xlsx. " * 3
    )
    later = [_user("thanks. now book the dentist for friday"), _say("Booked.")]
    summary = _summary([_user("Tidy the accounts."), _say("OK."), _user(line), _say("OK."), *later])
    assert "please move the invoices into the new shared folder" in summary


def test_a_mails_frame_is_noted_after_what_the_mail_says() -> None:
    mail = "\n".join(
        [
            "From: Hollowmere Bookings <bookings@hollowmere.example>",
            "To: Miss Carter <carter@staidans.example>",
            "Date: 6 Mar 2026",
            "Subject: booking 18-21 May - confirmation and next steps",
            "Dear Miss Carter,",
            "Thank you for confirming booking HOL/27/0518 for 31 people.",
            "Cancellation terms for pupil fees:",
            "- full refund until 1 April 2026",
            "- 50% refund until 1 May 2026",
            *(f"Activity {n}: {n * 10} minutes, kit list on page {n}." for n in range(3, 9)),
            "Kind regards, the Hollowmere team",
        ]
    )
    summary = _one_call("Did the centre confirm?", "email_read", mail)
    assert "50% refund until 1 May 2026" in summary
    assert "From: Hollowmere Bookings" not in summary


def test_the_other_rows_of_a_table_with_a_row_that_stands_out_are_not_noted() -> None:
    rows = [
        f"Stall {n:<3} {'Pottery' if n % 2 else 'Bread':<9} paid   2026-03-{n + 1:02d}  {n * 7} GBP"
        for n in range(24)
    ]
    rows[5] = "Stall 5   Pottery   REFUNDED - trader withdrew   2026-03-06  35 GBP"
    table = "\n".join(["Stall     Trade     Status   Booked      Fee", *rows])
    summary = _one_call("Who is still trading at the fair?", "stall_bookings", table)
    assert "Stall 5 Pottery REFUNDED - trader withdrew" in summary
    assert "Stall 3 Pottery paid" not in summary


def test_what_a_mail_asks_of_the_reader_is_noted_beside_its_values() -> None:
    chat = [
        "Priya: lovely to hear from you again, it has been far too long since the last one",
        "Priya: the weather looks kind for the weekend so far, fingers crossed it holds up",
        "Priya: my sister says hello and hopes the new kitchen is treating you well",
    ] * 4
    thread = [
        *chat[:5],
        "Priya: the deposit of 300 GBP arrived, thank you.",
        "Priya: and please can you keep the dogs out of the marquee while we set up.",
        *chat[5:],
        "Priya: we arrive at 07:30 with two vans.",
    ]
    summary = _one_call("What did the caterer say?", "mail_thread", "\n".join(thread))
    assert "please can you keep the dogs out of the marquee" in summary
    assert "deposit of 300 GBP" in summary


_PITCHES = [f"Pitch {n} is Stall {n}, van {n} at {n + 2} m." for n in range(1, 15)]
_FEES = (
    "From this season all pitch fees are paid by bank transfer on the Wednesday before - "
    "cash on the day will not be accepted."
)


def test_a_results_sentence_the_assistant_speaks_of_is_noted_beyond_the_most_specific() -> None:
    result = "\n".join([*_PITCHES[:7], _FEES, *_PITCHES[7:]])
    said = spoken_words("Heads up: the pitch fees go by bank transfer now.")
    spoken = result_facts("email_read", result, said)
    unspoken = result_facts("email_read", result, spoken_words("Here is the pitch list."))
    assert [fact.spoken for fact in spoken if "cash on the day" in fact.text] == [True]
    assert not any("cash on the day" in fact.text for fact in unspoken)
    assert len(spoken) == len(unspoken) + 1


def test_what_the_assistant_says_of_a_result_keeps_the_results_own_words() -> None:
    # The assistant's words leave the rule's detail out; the result's sentence holds it.
    result = "\n".join([*_PITCHES[:7], _FEES, *_PITCHES[7:]])
    reply = "Your pitch is confirmed. Heads up: the fees now go by bank transfer, in advance."
    summary = _one_call("Read Denise's market email", "email_read", result, reply)
    assert "cash on the day will not be accepted" in summary
    assert "cash on the day" not in _one_call(
        "Read Denise's market email", "email_read", result, "Your pitch is confirmed."
    )


def test_under_a_tight_budget_a_result_line_the_assistant_spoke_of_outlasts_others() -> (
    None
):
    noted = [f"`booking` returned: Room {n} is free on Friday {n} May." for n in range(1, 9)]
    digest = Digest(goal="Find a room.", noted=noted, spoken={noted[0]: None})
    text = render_digest(digest, kind="full", budget_tokens=90)
    assert "Room 1 is free" in text
    assert "Room 2 is free" not in text


def test_a_lone_surrogate_in_messages_built_in_memory_is_read_as_a_replacement_character() -> None:
    # A string built in memory can hold one (a file's never does); the word automata encode
    # their text to UTF-8 and raised UnicodeEncodeError.
    summary = _summary([_user("book the hall for the 12th \ud800 ref HX-2231"), _say("Booked.")])
    assert "book the hall for the 12th \ufffd ref HX-2231" in summary
    text = "[User]: book the hall \udc80 for the 12th"
    assert "book the hall \ufffd for the 12th" in OfflineSummarizer().summarize(text)


def test_well_formed_replaces_lone_surrogates_in_nested_values() -> None:
    value = {"k\ud800": ["a\udfff", ("b", 3)], "n": None}
    assert well_formed(value) == {"k\ufffd": ["a\ufffd", ("b", 3)], "n": None}
    assert well_formed("plain \U0001f600") == "plain \U0001f600"  # a pair is no lone surrogate


def test_what_the_assistant_said_as_it_made_the_call_ties_a_results_sentence_to_the_work() -> (
    None
):
    # No words of the assistant follow the result (the user answers at once); its words as it
    # made the call said what it looked for.
    result = "\n".join([*_PITCHES[:7], _FEES, *_PITCHES[7:]])
    asked = "Let me read Denise's email for how the pitch fees are paid now."

    def summary(said: str) -> str:
        return _summary(
            [
                _user("Read Denise's market email"),
                _say(said, _call("email_read", sender="Denise")),
                _result(result, tool="email_read"),
                _user("ok thanks, and what about parking?"),
            ]
        )

    assert "cash on the day will not be accepted" in summary(asked)
    assert "cash on the day" not in summary("Reading it.")


def _survey_weekend() -> list[Message]:
    """A rule in the oldest of seven short results of one tool, then six plain facts."""
    messages = [
        _user("Plan the club's survey weekend on the island, the counts and the minibus."),
        _say("", _call("site_notes", site="Gull Island")),
        _result(
            "Gull Island access: never cross the causeway after 14:30 on Saturday 12 April, "
            "the tide cuts it off.",
            tool="site_notes",
        ),
    ]
    for topic, note in [
        ("Minibus", "reg KX19 ABD, 16 seats, keys at the Red Lion from 08:15"),
        ("Hide 3", "closed from 1 April for repairs, use hide 5 instead"),
        ("Count sheet", "version 7 dated 3 March, columns for 41 species"),
        ("Permit", "ref NE-20931 valid 10-13 April"),
        ("Car park", "pay and display, £6.50 a day, card only"),
        ("Tide table", "high water 16:48 on Sat 12 April, 5.9 m"),
    ]:
        messages += [
            _user(f"what about the {topic.lower()}?"),
            _say("", _call("site_notes", site=topic)),
            _result(f"{topic}: {note}.", tool="site_notes"),
        ]
    return [*messages, _say("That's everything for the weekend."), _user("ok thanks")]


def test_under_a_tight_budget_a_result_line_that_sets_a_rule_outlasts_plain_facts() -> None:
    # Oldest, it went first; a colleague who loses it may strand a group on the island.
    summary = _summary(_survey_weekend(), budget_tokens=200)
    assert "never cross the causeway after 14:30" in summary
    facts = ["KX19", "hide 5", "41 species", "NE-20931", "£6.50", "16:48"]
    assert sum(fact in summary for fact in facts) == 5


def test_the_items_of_a_list_the_user_typed_are_kept_whatever_their_words() -> None:
    todo = "scan the watercolour textures at the library, their scanner is better than mine"
    summary = _summary(
        [
            _user("Help me plan the picture book's last month, the roughs and the cover."),
            _say("Sure."),
            _user(
                "right, sorry, the flu knocked me out for a week and the editor has been very "
                "patient, so i want this week to count. ok this week, my list:\n"
                "- finish spread 9\n- fix the collar on spread 6\n"
                f"- {todo}\n- chase the publisher again\n"
                "and i'm at my sister's all saturday so that's gone"
            ),
            _say("Got it."),
        ]
    )
    assert f"- {todo}" in _section(summary, "## Key Facts")
    # A long list is a paste, not a list typed item by item: its items are not facts one by one.
    sections = "red blue green amber grey white black pink brown olive teal navy gold plum"
    pasted = "\n".join(f"- add the {name} section to the form" for name in sections.split())
    long = _summary(
        [_user("Fill in the form."), _say("Sure."), _user("here:\n" + pasted), _say("Ok.")]
    )
    assert "the olive section" not in long


def test_a_list_of_rules_in_a_document_is_noted_with_its_heading() -> None:
    policy = "\n".join(
        [
            "Community hall hire - conditions 2026",
            *(f"{n}. The hall opens at 0{n}:00 on weekday {n} of the month." for n in range(1, 9)),
            "EXCLUDED ACTIVITIES - NOT COVERED UNDER ANY CIRCUMSTANCES",
            "- bouncy castles (any size)",
            "- open flames, candles included",
            "- bringing alcohol without a licence",
            *(f"Room {n} seats {20 + n} people and has {n} tables." for n in range(1, 9)),
        ]
    )
    summary = _summary(
        [
            _user("Check what the hall's policy says before I book the party."),
            _say("", _call("doc_read", doc="Hall hire policy")),
            _result(policy, tool="doc_read"),
            _say("I've read the policy."),
            _user("ok"),
        ]
    )
    assert "NOT COVERED UNDER ANY CIRCUMSTANCES: bouncy castles (any size);" in summary
    # Only a heading that sets rules makes its list one: a plain list stays as it was.
    assert result_facts("doc_read", "Kit list:\n- rope\n- torch\n" + "x " * 400) == []
