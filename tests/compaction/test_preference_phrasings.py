"""Soft preferences said plainly are preferences (kept above plain facts); a hedged one is not
made a rule."""

from __future__ import annotations

import pytest

from contextree.compaction.offline.conversation import digest_conversation
from contextree.compaction.offline.digest import Digest
from contextree.compaction.serialize import serialize_conversation
from contextree.context.convert import convert_to_llm
from summary_messages import _say, _user


def _digest(line: str) -> Digest:
    messages = [_user("Help me with the bakery."), _say("Sure."), _user(line)]
    return digest_conversation(serialize_conversation(convert_to_llm(messages)), focus=None)


@pytest.mark.parametrize(
    "line",
    [
        "sounds fine. I'm hopeless before 9 so no calls at dawn please",
        "I'm actually colour-blind so the chart colours matter",
        "I like my invoices numbered by month, it keeps the accountant happy",
        "I hate it when the orders come in as one long paragraph",
        "I'd lean towards the smaller oven, the big one eats the whole kitchen",
        "honestly I don't want anything that needs a monthly subscription",
        "and when you write to them keep it short, they read on their phones",
        "thanks. Email the supplier, not the driver, he never checks it",
        "draft a note for the regulars? warm, not like a bank letter",
        "yes post it, keep it chatty, not like a council notice",
        "and i can't stand invoices with the VAT hidden at the bottom",
        "I really cannot bear hold music, book online if you can",
        "ugh i loathe ringing round suppliers, email them if you can",
        "put it in the newsletter, i hate phoning people who never asked",
        "print the rotas on paper, none of this shared-drive nonsense",
        "im not a fan of group chats, one email a week is plenty",
        "honestly im sick of long emails from the committee",
        "i cant be doing with video calls, phone me",
        "it drives me mad when they reply-all to the whole club",
        "i really dislike the new logo, keep the old one on the flyers",
    ],
)
def test_a_preference_said_plainly_is_a_preference(line: str) -> None:
    digest = _digest(line)
    assert line in digest.preferences + digest.constraints


@pytest.mark.parametrize(
    "line",
    [
        "we tried the new flour, not much luck so far",
        "it's fine, not a problem at all",
        "I like it",
        "I can't stand up the new cluster until ops approve the quota",
        "we cannot stand by this estimate any more",
        "honestly I hate everything about this oven",
        "the kids were tired of walking by the end",
        "she is sick of the rain up there",
        "I'm sick with a cold so slow replies this week",
        "I hate asking but could you check the invoice",
    ],
)
def test_talk_is_not_a_preference(line: str) -> None:
    digest = _digest(line)
    assert line not in digest.preferences + digest.constraints


def test_a_hedged_preference_against_its_alternative_is_not_a_rule() -> None:
    line = "I'd lean toward the quieter street, not the market square"
    digest = _digest(line)
    assert line in digest.preferences
    assert line not in digest.constraints


def test_a_preference_against_its_alternative_is_a_rule() -> None:
    line = "Email the supplier, not the driver"
    assert line in _digest(line).constraints


@pytest.mark.parametrize(
    "line",
    [
        "the parish council said if it goes over 400 they won't fund the marquee",
        "the landlord is really strict that nothing gets pinned to the walls",
        "this grant is it, there's no more where that came from",
        "the vet says she cant be left on her own longer than three hours at a time",
        "sam says we're not spending more than two hundred quid on the signage",
        "we won't be paying over £40 a head for the buffet",
        "the drawings need to be with the printer by the 3rd whatever happens",
        # A rule someone else set, reported.
        "the landlord wont allow candles in the flat",
        "apparently dogs arent allowed in the tearoom",
        "the insurer says the trailer cant be parked on the road overnight",
        "my partner says no presents over twenty quid",
        "the council told us nothing can go up before 6pm",
        "the school wont let us use the field after 4",
        "I'd love a dog but the landlord won't let.",
    ],
)
def test_a_limit_said_as_what_happens_past_it_is_a_rule(line: str) -> None:
    assert line in _digest(line).constraints


@pytest.mark.parametrize(
    "line",
    [
        "the van went past the bakery twice this morning",
        "the driver was not going over the bridge in that wind",
        "i cant be sure the order was more than ten trays",
        "i cant be bothered with the long form tbh",
        "the supplier said no to the smaller order",
        "she said no problem, it can wait",
        # Reports, not rules.
        "the update cannot be installed on this laptop",
        "the checker says no errors in the file",
        "the vet said nothing can be done for the old ewe",
        "no matter what I do the printer jams",
        "we're not going past one of those big farms",
    ],
)
def test_a_plain_report_past_a_place_is_not_a_rule(line: str) -> None:
    assert line not in _digest(line).constraints
