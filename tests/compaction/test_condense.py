"""A tight budget cuts the user's long lines to the sentences that carry them before it drops
lines, and keeps the value said last in a line rather than the talk before it."""

from __future__ import annotations

import pytest

from contextree.compaction.offline.condense import condensed, without_shortened_copies
from summary_messages import Message, _say, _user
from summary_sections import offline_summary as _summary
from summary_sections import section as _section

_BUDGET_LINE = (
    "38k. and that's a real ceiling, not a soft one, my partner will kill me. honestly it "
    "has been a long week. like $38,000 including everything, permits, appliances, the works"
)


def test_a_line_keeps_its_value_and_rule_sentences_and_marks_the_gaps() -> None:
    short = condensed(_BUDGET_LINE, 120)
    assert len(short) <= 120
    assert "38k." in short and "$38,000 including" in short  # the last cut, not passed over
    assert "long week" not in short  # talk goes first
    assert "[…]" in short


def test_a_condensed_line_keeps_a_preference_before_a_plain_statement() -> None:
    line = (
        "right, two things about the van. never book it in on a monday. "
        "the garage is the one by the roundabout near the old cinema. "
        "and i can't stand waiting rooms so book a drop-off slot."
    )
    short = condensed(line, 110)
    assert "never book it in on a monday." in short
    assert "i can't stand waiting rooms" in short
    assert "roundabout" not in short


def test_a_line_that_fits_is_whole_and_one_sentence_is_cut_at_its_head() -> None:
    assert condensed("book the 9:40 ferry", 120) == "book the 9:40 ferry"
    one = "the ferry " * 30
    assert condensed(one, 60).startswith("the ferry the ferry")
    assert condensed(one, 60).endswith("[…]") and len(condensed(one, 60)) <= 60


def test_sentences_of_talk_alone_fall_back_to_a_head_cut() -> None:
    talk = "ugh. lol. ok. " * 20
    assert condensed(talk, 30).startswith("ugh. lol.")


@pytest.mark.parametrize("limit", [20, 40, 80, 120, 200])
def test_a_condensed_line_never_exceeds_its_limit(limit: int) -> None:
    assert len(condensed(_BUDGET_LINE, limit)) <= limit


def test_a_shortened_copy_of_a_line_given_whole_is_left_out() -> None:
    whole = "Julia has celiac. the dinner place has to be safe for that. dinner is on the 20th"
    cut = "[…] the dinner place has to be safe for that. […]"
    assert without_shortened_copies([cut, whole]) == [whole]
    assert without_shortened_copies([cut], [whole]) == []
    # A cut line whose pieces are not all in another stays.
    other = "[…] the hotel has to be step-free […]"
    assert without_shortened_copies([other, whole]) == [other, whole]


def test_under_a_tight_budget_long_statements_are_cut_before_they_are_dropped() -> None:
    messages: list[Message] = [_user("Help me get the flats ready for the new tenants.")]
    for n in range(12):
        messages += [
            _user(
                "ugh, this is so annoying honestly, I can't believe we are still at it. "
                f"the boiler in flat {n} was serviced on 2026-03-{n + 10} by Hartmann"
            ),
            _say("OK."),
        ]
    summary = _summary(messages, budget_tokens=250)
    kept = [n for n in range(12) if f"flat {n} was serviced on 2026-03-{n + 10}" in summary]
    # Whole, six of the twelve lines fit; cut to their values, all of them do.
    assert len(kept) == 12, kept
    assert "- […] the boiler in flat 0 was serviced" in summary


def test_a_rule_cut_for_the_essentials_keeps_its_value_said_last() -> None:
    messages = [_user("Plan the kitchen remodel."), _user(_BUDGET_LINE), _say("Noted.")]
    rules = _section(_summary(messages, budget_tokens=60), "## Constraints & Preferences")
    assert "$38,000" in rules


def test_long_notes_of_the_work_are_cut_before_they_are_dropped() -> None:
    from summary_messages import _call, _result

    filler = (
        "Lookup complete, and nothing else of interest was found in the registry today, "
        "so the rest of the shelf list is as it was when the last audit went through. "
    )
    messages: list[Message] = [_user("Check the crates for the loan.")]
    # Crate numbers without letters: a code ("CR-5500") would also be listed under
    # "## References" (test_references.py), and this is about the notes alone.
    for n in range(12):
        # Two tools in turn: a run of one tool's notes would share one label (next test).
        tool = "crates" if n % 2 else "shelves"
        messages += [
            _say("Looking.", _call(tool, crate=n)),
            _result(f"{filler}Crate no. {5500 + n} measures {200 + n} x 168 x 42 cm.", tool=tool),
            _say("Noted."),
        ]
    summary = _summary(messages, budget_tokens=500)
    kept = [n for n in range(12) if f"no. {5500 + n} measures {200 + n} x 168 x 42" in summary]
    # Whole, six of the notes fit; cut (their label kept), eight do.
    assert len(kept) >= 8, kept
    assert "- `crates` returned: […] Crate no. 5505 measures" in summary


def test_a_run_of_one_tools_notes_shares_its_label_and_keeps_more() -> None:
    from summary_messages import _call, _result

    messages: list[Message] = [_user("Check the crates for the loan.")]
    for n in range(12):
        messages += [
            _say("Looking.", _call("crates", crate=n)),
            _result(f"Crate CR-{5500 + n} left the store on {10 + n} June.", tool="crates"),
            _say("Noted."),
        ]

    def kept(budget: int) -> list[int]:
        summary = _summary(messages, budget_tokens=budget)
        return [n for n in range(12) if f"CR-{5500 + n} left the store on {10 + n}" in summary]

    summary = _summary(messages, budget_tokens=2000)
    assert "- `crates` returned:\n  - Crate CR-5500 left the store on 10 June.\n" in summary
    assert summary.count("`crates` returned") == 1
    # A budget that held 8 of them with the label on each line holds 11.
    assert len(kept(200)) >= 10, kept(200)
    # Read back by the next compaction, each is a note of its own again, with its label.
    from contextree.compaction.offline.previous import digest_summary

    noted = digest_summary(summary).noted
    assert "`crates` returned: Crate CR-5503 left the store on 13 June." in noted
    assert len([note for note in noted if "left the store" in note]) == 12


def test_a_parent_heading_with_no_subsection_to_show_is_not_written() -> None:
    from contextree.compaction.offline.items import Item
    from contextree.compaction.offline.render import FULL_LAYOUT, fit_layout

    items = {
        "goal": [Item("Plan the trip.", 100, 1, must=True, plain=True)],
        "errors": [Item("**Error**: the booking site timed out", 70, 2)],
    }
    text = fit_layout(FULL_LAYOUT, items, 1000)
    assert "## Progress" not in text
    assert "## Critical Context\n- **Error**: the booking site timed out" in text
    items["done"] = [Item("[x] Booked the ferry", 45, 3)]
    assert "## Progress\n### Done\n- [x] Booked the ferry" in fit_layout(FULL_LAYOUT, items, 1000)


def test_the_sentence_that_sets_a_rule_outranks_a_long_reason_full_of_values() -> None:
    line = (
        "Don't change the public response schema. The web and mobile clients generate their "
        "types from `openapi.json`, and app versions 4.2.1 and 4.3.0 parse `GET /todos` as a "
        "plain JSON array. That has to keep working."
    )
    short = condensed(line, 120)
    assert short.startswith("Don't change the public response schema.")
    assert len(short) <= 120


def test_blank_or_one_piece_text_is_cut_at_its_head() -> None:
    assert len(condensed(" " * 300, 40)) <= 40
    assert condensed("x" * 300, 40).endswith("[…]")


def test_one_long_sentence_is_cut_by_its_clauses_so_its_last_value_stays() -> None:
    rule = (
        "4. Fridges: if a logged temperature falls outside 2-8 °C, the staff member "
        "quarantines the fridge stock and phones the superintendent pharmacist, Anjali Rao, "
        "on 07700 914 322, at any hour, before doing anything else."
    )
    short = condensed(rule, 160)
    assert "07700 914 322" in short and "2-8 °C" in short and len(short) <= 160
    assert not short.startswith("4.")  # a list's number says nothing once cut


def test_a_period_after_an_abbreviation_does_not_end_the_sentence() -> None:
    from contextree.compaction.offline.text import split_sentences

    text = "Amoxicillin: BACKORDER at AAH - est. 19/06. Mr. Lowe rang, e.g. about vans. Done."
    assert split_sentences(text) == (
        "Amoxicillin: BACKORDER at AAH - est. 19/06.",
        "Mr. Lowe rang, e.g. about vans.",
    )  # ("Done." is shorter than a sentence the readers keep)


def test_an_initial_does_not_end_a_sentence() -> None:
    from contextree.compaction.offline.text import split_sentences

    assert split_sentences("Case CB-1 D. Hollis overdue. Next line here.") == (
        "Case CB-1 D. Hollis overdue.",
        "Next line here.",
    )


def test_dot_leaders_do_not_end_a_sentence() -> None:
    from contextree.compaction.offline.text import split_sentences

    assert split_sentences("Labour (5.5 hrs) ........ £181.50\nWait... then go. Next one.") == (
        "Labour (5.5 hrs) ........ £181.50",
        "Wait... then go.",
        "Next one.",
    )


def test_no_before_a_number_does_not_end_a_sentence() -> None:
    from contextree.compaction.offline.text import split_sentences

    text = "Insured: the club (affiliation no. 4417). The answer is no. Then go."
    assert split_sentences(text) == (
        "Insured: the club (affiliation no. 4417).",
        "The answer is no.",
        "Then go.",
    )


def test_a_cut_line_splits_its_sentences_as_the_readers_do() -> None:
    line = "Amoxicillin BACKORDER at AAH - est. 19/06 for the 500mg caps from the Leyton depot."
    assert "est. 19/06" in condensed(line, 60)


def test_grouped_notes_read_back_stay_as_they_were_over_rounds() -> None:
    from contextree.compaction.offline.previous import digest_summary
    from contextree.compaction.offline.render import render_digest

    # A model's summary with tool lines among its facts, and our noted lines beside them.
    text = (
        "## Key Facts\n- `search` returned: BA117 leaves 10:40\n"
        "- `search` returned: VS3 leaves 11:05\n\nNoted during the work:\n"
        "- `search` returned: AA100 leaves 12:15\n- `search` returned: AA101 leaves 13:30\n"
        "- `todo` returned: [x] Pay invoice 4411\n- `todo` returned: [ ] Post the forms\n"
    )
    rounds = []
    for _ in range(3):
        digest = digest_summary(text)
        rounds.append((list(digest.facts), list(digest.noted)))
        text = render_digest(digest, kind="full", budget_tokens=4000)
    assert rounds[0] == rounds[1] == rounds[2]
    facts, noted = rounds[0]
    assert facts == ["`search` returned: BA117 leaves 10:40", "`search` returned: VS3 leaves 11:05"]
    assert noted == [
        "`search` returned: AA100 leaves 12:15",
        "`search` returned: AA101 leaves 13:30",
        "`todo` returned: [x] Pay invoice 4411",
        "`todo` returned: [ ] Post the forms",
    ]
    # Only the noted lines share a label: the facts above them are the user's lines.
    assert "Noted during the work:\n- `search` returned:\n  - AA100" in text
    assert "- `search` returned: BA117 leaves 10:40\n- `search` returned: VS3" in text
