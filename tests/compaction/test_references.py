"""Reference codes (a ticket, a booking, a permit) outlast the sentences that named them: the
offline summary lists them under "## References", each with the words that introduced it."""

from __future__ import annotations

import pytest

from contextree.compaction.offline.previous import digest_summary
from contextree.compaction.offline.references import (
    MAX_REFERENCES,
    REFERENCES_HEADING,
    add_references,
    merged_references,
    read_reference_line,
    reference_line,
    references_in,
)
from summary_messages import Message, _call, _result, _say, _user
from summary_sections import offline_summary as _summary
from summary_sections import section as _section


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Ticket T-4471903 created for Saturday.", [("T-4471903", "Ticket")]),
        ("UPS return tracking 1Z8V47E20394417728, dropped off", [
            ("1Z8V47E20394417728", "UPS return tracking")
        ]),
        ("your record locator is **QH7T2X**", [("QH7T2X", "your record locator")]),
        ("Quote ref: Q-HW-44190 (valid 30 days)", [("Q-HW-44190", "Quote ref")]),
        ("héllo — permit RA-26-01873", [("RA-26-01873", "permit")]),
        ("PA-417 was the rejection", [("PA-417", "")]),
        ("Booking #QH7T2X confirmed", [("QH7T2X", "Booking")]),
        ("case number is #CS0042917", [("CS0042917", "case number")]),
    ],
)
def test_a_code_is_found_with_the_words_that_introduce_it(
    text: str, found: list[tuple[str, str]]
) -> None:
    assert list(references_in(text)) == found


@pytest.mark.parametrize(
    "text",
    [
        "saved to data/processed/hr_clean_v1.csv",  # a path and a file name
        "see build/X86-64/out",  # a word of a path
        "mail BOB2024@example.com",  # an address
        "host API-v22.example.com",  # a host
        "a 120GB disk and 300MS of lag",  # quantities with their units
        "commit 3fa9c2b1e4 and run 42",  # a lowercase hash, a number
        "paid $4,184.00 on 2026-03-24 at 06:42",  # amounts, dates, times
        "logged at 2024-10-22T07:31:00Z",  # a timestamp
        "GPT4 and B11 and E25",  # too short, or one digit
        "background #2E3440, accent #88C0D0",  # colours
        "const base64Content = encode(x)",  # a name in code
    ],
)
def test_words_that_are_not_codes_are_not_listed(text: str) -> None:
    assert list(references_in(text)) == []


def test_a_listing_of_many_codes_is_not_kept() -> None:
    listing = " ".join(f"CON{n:02d}" for n in range(10, 20))
    found: dict[str, str] = {}
    add_references(found, f"Approved contractors: {listing}")
    assert found == {}
    add_references(found, "Works order WO-55825 raised, task TSK-4410 added")
    assert found == {"WO-55825": "Works order", "TSK-4410": "task"}


def test_a_code_keeps_its_first_label_and_the_latest_named_are_carried() -> None:
    found = {"T-4471903": "Ticket", "QH7T2X": "locator"}
    add_references(found, "about T-4471903 again")
    assert list(found.items()) == [("QH7T2X", "locator"), ("T-4471903", "Ticket")]
    many = {f"WO-{n:05d}": "order" for n in range(MAX_REFERENCES + 5)}
    merged = merged_references({"AB-1234": "", "CD-5678": "claim"}, many)
    assert len(merged) == MAX_REFERENCES
    assert "AB-1234" not in merged and f"WO-{MAX_REFERENCES + 4:05d}" in merged
    assert merged_references({"AB-1234": ""}, {"AB-1234": "booking"}) == {"AB-1234": "booking"}
    # A code named again counts as named last: the claim asked about again stays.
    again = merged_references({"CD-5678": "claim"}, {**many, "CD-5678": "asked again"})
    assert list(again)[-1] == "CD-5678" and again["CD-5678"] == "claim"


def test_a_code_inside_a_longer_one_is_not_shown_by_it() -> None:
    messages: list[Message] = [_user("Help me chase the two invoices.")]
    messages += [
        _say("", _call("invoices.find", month="march")),
        _result("Invoice INV-1001 is overdue by 12 days.", tool="invoices.find"),
    ]
    for n in range(10):
        messages += [_talk(n), _say("Noted.")]
    # A rule (never left out) that names a longer code.
    messages += [_user("never pay INV-10012 before the 30th"), _say("Noted.")]
    summary = _summary(messages, budget_tokens=170)
    assert "INV-1001 is overdue" not in summary  # the March sentence went ...
    assert "- INV-1001 (Invoice)" in _section(summary, REFERENCES_HEADING)  # ... its code not


def test_a_models_own_references_section_is_carried_as_it_wrote_it() -> None:
    previous = "## Goal\nShip it.\n\n## References\n- RFC 9110 (HTTP semantics)\n- docs/api.md\n"
    digest = digest_summary(previous)
    assert digest.carried == [(REFERENCES_HEADING, "- RFC 9110 (HTTP semantics)\n- docs/api.md")]
    assert digest_summary("## References\n- T-4471903 (ticket)\n").references == {
        "T-4471903": "ticket"
    }


def test_a_reference_line_reads_back() -> None:
    assert read_reference_line(reference_line("QH7T2X", "record locator")) == (
        "QH7T2X",
        "record locator",
    )
    assert read_reference_line(reference_line("PA-417", "")) == ("PA-417", "")
    assert read_reference_line("call the plumber back") is None


def _talk(n: int) -> Message:
    return _user(
        f"note {n}: the contractor said the kitchen wall is load bearing after all, so the "
        "opening needs a steel beam and an engineer's sign-off before anything is cut"
    )


def _session_with_a_code() -> list[Message]:
    messages: list[Message] = [
        _user("Help me get the kitchen remodel permitted."),
        _say("", _call("permits.apply", address="12 Elm St")),
        _result(
            "Application received. Your permit application number is RA-26-01873; a plan "
            "reviewer will be assigned within 10 business days.",
            tool="permits.apply",
        ),
        _say("Applied."),
    ]
    for n in range(10):
        messages += [_talk(n), _say("Noted.")]
    return messages


def test_under_a_tight_budget_a_code_outlasts_its_sentence() -> None:
    summary = _summary(_session_with_a_code(), budget_tokens=200)
    assert "a plan reviewer will be assigned" not in summary  # the sentence went
    references = _section(summary, REFERENCES_HEADING)
    assert "- RA-26-01873 (permit application number)" in references


def test_a_code_a_kept_line_shows_is_not_listed_again() -> None:
    summary = _summary(_session_with_a_code(), budget_tokens=4000)
    assert "a plan reviewer will be assigned" in summary
    assert summary.count("RA-26-01873") == 1
    assert REFERENCES_HEADING not in summary


def test_the_next_compaction_keeps_a_code_whose_line_it_drops() -> None:
    first = _summary(_session_with_a_code(), budget_tokens=4000)
    assert REFERENCES_HEADING not in first  # the code is in a note's line
    # Read back, the code is known from the line that holds it ...
    assert digest_summary(first).references == {
        "RA-26-01873": "permit application number"
    }
    later: list[Message] = []
    for n in range(10, 30):
        later += [_talk(n), _say("Noted.")]
    second = _summary(later, previous_summary=first, budget_tokens=250)
    # ... so when the next summary drops the line, the code stays.
    assert "a plan reviewer will be assigned" not in second
    assert "RA-26-01873" in _section(second, REFERENCES_HEADING)
    assert digest_summary(second).references == {
        "RA-26-01873": "permit application number"
    }


def test_a_model_summary_gets_the_codes_its_text_does_not_hold() -> None:
    from contextree.compaction.offline import record_facts

    messages = _session_with_a_code()
    # A budget that drops the note of the permit's result: the code stands on its own.
    said = "We applied for a permit."
    silent = record_facts(messages, budget_tokens=200, said=said)  # type: ignore[arg-type]
    assert "a plan reviewer will be assigned" not in silent
    assert "- RA-26-01873 (permit application number)" in silent
    # The code in the model's words: not recorded again (its label is ours, not the model's).
    said = "Applied for the permit (RA-26-01873); waiting for a reviewer."
    assert "RA-26-01873" not in record_facts(messages, budget_tokens=200, said=said)  # type: ignore[arg-type]
