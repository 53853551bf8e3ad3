"""A goal said as what matters to the speaker is the goal's; a question typed without its
question mark is not a fact."""

from __future__ import annotations

import pytest

from contextree.compaction.offline.previous import digest_summary
from summary_messages import _say, _user
from summary_sections import offline_summary as _summary
from summary_sections import section as _section


@pytest.mark.parametrize(
    "line",
    [
        "honestly what we really care about is that every puppy goes to a good home",
        "what i'd love by the weekend is a stall layout nobody has to argue about",
        "all I want is the garage cleared without a fight with my brother",
        "our main aim is to get the choir to the festival on one coach",
        "the big thing is the deposit, the landlord wants it back in full",
        "the committee wants 200 members by spring, that is the target",
        "honestly I just want everyone fed and home by ten without a scene",
        "ok and the main thing for me this season is a team that still enjoys it in june",
    ],
)
def test_a_goal_said_as_what_matters_stays_with_the_goal(line: str) -> None:
    summary = _summary([_user("Help me sort this out."), _say("Sure."), _user(line)])
    assert line in _section(summary, "## Goal")
    assert digest_summary(summary).goal_notes == [line]


@pytest.mark.parametrize(
    "line",
    [
        "what I need is the invoice from last week",
        "the only thing is the hall is a bit far",
        "I want to check the invoice first",
        "I just want to confirm the date",
    ],
)
def test_a_request_or_a_caveat_is_not_the_goal(line: str) -> None:
    summary = _summary([_user("Help me sort this out."), _say("Sure."), _user(line)])
    assert digest_summary(summary).goal_notes == []


@pytest.mark.parametrize(
    "line",
    [
        "how many bookings is that for saturday in total",
        "like is anything double booked",
        "whats the latest on the van",
        "any news from the florist",
    ],
)
def test_a_question_without_its_mark_is_not_a_fact(line: str) -> None:
    summary = _summary([_user("Help me run the shop."), _say("Sure."), _user(line)])
    assert "## Key Facts" not in summary or line not in _section(summary, "## Key Facts")
    assert line in summary  # still the request in progress


def test_a_statement_that_opens_like_a_question_word_is_still_a_fact() -> None:
    line = "what happened last time was the caterer arrived two hours late"
    summary = _summary([_user("Help me plan the party."), _say("Sure."), _user(line)])
    assert line in _section(summary, "## Key Facts")
