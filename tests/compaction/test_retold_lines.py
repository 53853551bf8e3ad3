"""The lines of a long tool result that the assistant's reply retells in its own words are
noted with their exact values (``compaction/offline/echoes.py``)."""

from __future__ import annotations

from contextree.compaction.offline.conversation import digest_conversation
from contextree.compaction.offline.echoes import retold_lines
from contextree.compaction.offline.text import split_sentences
from contextree.compaction.serialize import serialize_conversation
from contextree.context.convert import convert_to_llm
from summary_messages import _call, _result, _say, _user
from summary_sections import offline_summary as _summary

_WORKSHOP = "\n".join(
    [
        "Job     Customer        Bike                 In        Promised  State",
        "WS-4410  A. Marsh        Gazelle Orange C7    02-Mar    05-Mar    READY",
        "WS-4412  P. Okonjo       Brompton M6L         02-Mar    06-Mar    READY",
        "WS-4415  L. Duarte       Trek FX 2            03-Mar    06-Mar    IN REPAIR",
        "WS-4417  K. Brandt       Cube Touring Hybrid  03-Mar    07-Mar    IN REPAIR",
        "WS-4419  R. Feeney       Raleigh Motus        04-Mar    07-Mar    WAITING PARTS",
        "WS-4421  S. Whitcombe    Dawes Galaxy         04-Mar    08-Mar    IN REPAIR",
        "WS-4424  J. Halloran     Specialized Sirrus   05-Mar    08-Mar    READY",
        "WS-4426  M. Oyelaran     Giant Escape 3       05-Mar    09-Mar    IN REPAIR",
    ]
)


def test_the_row_the_reply_retells_is_chosen_by_its_rarer_words() -> None:
    reply = "Mr Feeney's Raleigh is stuck waiting for parts; everything else is on track."
    assert retold_lines(_WORKSHOP, reply, 240) == [
        "WS-4419 R. Feeney Raleigh Motus 04-Mar 07-Mar WAITING PARTS"
    ]


def test_a_word_every_row_shares_retells_nothing() -> None:
    # "Mar" and "repair" are in most rows: they tie the reply to no row in particular.
    assert retold_lines(_WORKSHOP, "Several bikes are in repair this March.", 240) == []


def test_at_most_three_lines_are_retold_and_only_those_with_a_value() -> None:
    result = "\n".join(
        [
            "The harbour office opens at dawn for the crews.",
            "Crane hire for the slipway costs 85 euros an hour, booked by phone.",
            "Harbour dues for visiting crews are 12 euros a night.",
            "The fuel berth closes at 18:00 on Sundays.",
            "Showers for visiting crews take tokens from the office, 2 euros each.",
        ]
    )
    reply = (
        "The harbour office opens early for crews; crane hire for the slipway is booked by "
        "phone, visiting crews pay harbour dues nightly, the fuel berth shuts early on "
        "Sundays and the showers take tokens."
    )
    retold = retold_lines(result, reply, 240)
    assert len(retold) == 3
    assert all(any(ch.isdigit() for ch in line) for line in retold)
    assert "The harbour office opens at dawn for the crews." not in retold


def test_a_long_retold_line_keeps_the_value_it_states_last() -> None:
    paragraph = (
        "Thanks for getting in touch about the frame, which we inspected on the stand this "
        "morning with the owner present. The crack runs along the weld under the bottom "
        "bracket, so the frame cannot be repaired safely, and the manufacturer has agreed to "
        "replace it under warranty. The replacement frame is due on 19 March, claim "
        "GW-88120."
    )
    result = f"{paragraph}\nRegards,\nThe workshop team at 14 Mill Lane"
    reply = (
        "The crack under the bottom bracket can't be repaired safely, so the manufacturer "
        "will replace the frame under warranty."
    )
    (line,) = retold_lines(result, reply, 160)
    assert len(line) <= 160
    assert "19 March" in line and "GW-88120" in line


def _filler(n: int) -> str:
    return f"Order SO-{7100 + n} for ref {n:03d}-B, 2026-02-{n + 1:02d}, v{n}.2 dispatched"


def test_the_summary_notes_a_retold_line_the_most_specific_lines_would_have_left_out() -> None:
    # Ten lines naming three kinds of value each outrank, by their values alone, the line
    # the assistant retells; the retelling brings it in with its number.
    lines = [_filler(n) for n in range(10)]
    lines.insert(4, "Returns of damaged goods are handled by the claims desk on 0800 316 4471.")
    summary = _summary(
        [
            _user("Where do I send the broken lamp back?"),
            _say("", _call("orders_lookup", account="K-2231")),
            _result("\n".join(lines), tool="orders_lookup"),
            _say("Damaged goods go back through their claims desk; you can ring them."),
        ]
    )
    assert "0800 316 4471" in summary


def test_an_initial_does_not_end_a_sentence() -> None:
    assert split_sentences("Case CB-1 D. Hollis overdue. Next line.") == (
        "Case CB-1 D. Hollis overdue.",
        "Next line.",
    )


def test_a_retold_line_ranks_above_the_lines_the_reply_passed_over() -> None:
    messages = [
        _user("Any bikes held up?"),
        _say("", _call("workshop_jobs", day="today")),
        _result(_WORKSHOP, tool="workshop_jobs"),
        _say("Only the Raleigh: Mr Feeney's bike is waiting for parts."),
    ]
    digest = digest_conversation(serialize_conversation(convert_to_llm(messages)), focus=None)
    retold = [note for note in digest.noted if digest.noted_weight.get(note, 0) > 0]
    row = "WS-4419 R. Feeney Raleigh Motus 04-Mar 07-Mar WAITING PARTS"
    assert retold == [f"`workshop_jobs` returned: {row}"]
    assert all(digest.noted_weight.get(note, 0) == 0 for note in digest.noted if row not in note)


def test_retold_lines_take_the_place_of_the_least_specific_ones() -> None:
    lines = [_filler(n) for n in range(10)]
    lines.insert(4, "Returns of damaged goods are handled by the claims desk on 0800 316 4471.")
    messages = [
        _user("Where do I send the broken lamp back?"),
        _say("", _call("orders_lookup", account="K-2231")),
        _result("\n".join(lines), tool="orders_lookup"),
        _say("Damaged goods go back through their claims desk; you can ring them."),
    ]
    digest = digest_conversation(serialize_conversation(convert_to_llm(messages)), focus=None)
    noted = [note for note in digest.noted if note.startswith("`orders_lookup` returned:")]
    assert len(noted) == 6  # as many as the result's most specific lines alone
    assert any("0800 316 4471" in note for note in noted)


def test_a_result_the_user_answers_first_keeps_its_most_specific_lines() -> None:
    lines = [_filler(n) for n in range(14)]
    messages = [
        _user("Any orders out this month?"),
        _say("", _call("orders_lookup", account="K-2231")),
        _result("\n".join(lines), tool="orders_lookup"),
        _user("never mind, I found it"),
    ]
    digest = digest_conversation(serialize_conversation(convert_to_llm(messages)), focus=None)
    assert len([note for note in digest.noted if "orders_lookup" in note]) == 6
