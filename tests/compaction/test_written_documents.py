"""What a service tool that writes was given to write (a checklist line, a price list's new
price, an aftercare email) is noted as the document's new words: the service's answer
("Updated 1 line.") does not hold them."""

from __future__ import annotations

from contextree.compaction.offline import OfflineSummarizer
from contextree.compaction.offline.parts import ToolCall
from contextree.compaction.offline.previous import digest_summary
from contextree.compaction.offline.written import writes, written_by, written_text
from summary_messages import Message, _call, _result, _say, _user
from summary_sections import offline_summary as _summary


def _tool(name: str, **arguments: object) -> ToolCall:
    return ToolCall(name, arguments)


def test_only_the_new_words_are_written_text() -> None:
    call = _tool(
        "docs_update",
        title="Joseph - my checklist",
        find="[ ] Referee 2 - British person",
        replace="[x] Referee 2 - Dave next door said YES",
    )
    assert written_text(call) == "replace: [x] Referee 2 - Dave next door said YES"
    assert written_by(call) == "`docs_update` wrote (Joseph - my checklist)"


def test_replace_beside_with_names_the_old_words() -> None:
    call = _tool(
        "doc_update",
        doc="Price list 2024",
        changes=[
            {"replace": "Restyle cut & finish £38", "with": "Restyle cut & finish £42"},
            {"append": "Cancellations: less than 24 hours' notice - £10 charge"},
        ],
        action="edit",
    )
    text = written_text(call)
    assert "£42" in text and "Cancellations" in text
    assert "£38" not in text and "edit" not in text and "Price list" not in text


def test_a_long_value_is_written_text_without_its_name() -> None:
    body = "Subject: Looking after your new tattoo\n" + "Wash gently twice a day. " * 10
    assert written_text(_tool("docs_create", title="Aftercare", content=body)) == body.strip()


def test_a_tool_that_does_not_write_has_no_written_text() -> None:
    assert not writes(_tool("email_search", query="referee"))
    assert written_text(_tool("email_search", query="referee")) == ""
    assert writes(_tool("sheetUpdate")) and writes(_tool("calendar.add"))


def test_a_documents_new_words_are_noted_not_the_call_or_the_old_words() -> None:
    summary = _summary(
        [
            _user("tick dave on my checklist, he said yes to be my referee"),
            _say(
                "",
                _call(
                    "docs_update",
                    title="Joseph - my checklist",
                    find="[ ] Referee 2 - British person, 25 or older",
                    replace="[x] Referee 2 - Dave next door said YES (knows me 6 years)",
                ),
            ),
            _result("Updated 1 line.", tool="docs_update"),
            _say("Both referees are ticked on your checklist."),
        ]
    )
    assert (
        "`docs_update` wrote (Joseph - my checklist): replace: [x] Referee 2 - Dave next door "
        "said YES (knows me 6 years)"
    ) in summary
    assert "British person, 25 or older" not in summary
    assert "Called `docs_update`" not in summary
    # The next compaction reads the note back as a note.
    assert any("Dave next door said YES" in note for note in digest_summary(summary).noted)


def test_the_budget_counts_a_documents_new_words_as_the_users() -> None:
    # Twelve short documents written one after another: each one's new words are what the
    # user asked for, and the budget makes room for them as for the user's own words.
    messages: list[Message] = [_user("Update the menu cards for the week, one a day.")]
    for n in range(12):
        messages += [
            _say(
                "",
                _call(
                    "docs_update",
                    title=f"Menu card {n}",
                    content=f"Card {n}: soup of the day is parsnip and apple number {n}, "
                    f"served with sourdough from the Elm Street bakery, £{n + 4}.50",
                ),
            ),
            _result("Saved.", tool="docs_update"),
            _say("Saved."),
        ]
    summary = OfflineSummarizer().summarize_messages(messages)  # type: ignore[arg-type]
    for n in range(12):
        assert f"parsnip and apple number {n}," in summary
