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


def test_a_value_is_named_as_its_argument_is_written() -> None:
    # The names are compared without case, spaces or accents ("Chèvre" -> "chvre"), but a
    # reader needs them as the document has them.
    call = _tool(
        "doc_update",
        doc="Price list - market",
        changes={"Raw goat milk 1L": "£3.00", "Chèvre plain 120g": "£4.50"},
        version_note="March 2025 rise",
    )
    assert written_text(call).splitlines() == [
        "Raw goat milk 1L: £3.00",
        "Chèvre plain 120g: £4.50",
        "version_note: March 2025 rise",
    ]


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
                    f"with sourdough, £{n + 4}.50",
                ),
            ),
            _result("Saved.", tool="docs_update"),
            _say("Saved."),
        ]
    summary = OfflineSummarizer().summarize_messages(messages)  # type: ignore[arg-type]
    for n in range(12):
        assert f"parsnip and apple number {n}," in summary


def test_numbers_and_yes_or_no_are_new_words() -> None:
    text = written_text(_tool("budget_set", category="food", amount=250, shared=True))
    assert text.splitlines() == ["category: food", "amount: 250", "shared: yes"]
    values = written_text(_tool("sheets_update", values=[[12, 40.5], ["Fuel", 60]]))
    assert values.splitlines() == ["values: 12", "values: 40.5", "values: Fuel", "values: 60"]


def test_old_words_are_left_out_however_they_are_spelled() -> None:
    old = "Saturday 14 June: Sam opens, alarm code 1990."
    new = "Saturday 14 June: Ali opens, alarm code 2024."
    for arguments in (
        {"old_str": old, "new_str": new},
        {"oldString": old, "newString": new},
        {"containsText": {"text": old, "matchCase": True}, "replaceText": new},
        {"replace": old, "by": new},
    ):
        text = written_text(_tool("doc_edit", doc="Weekend rota", **arguments))
        assert "1990" not in text and "2024" in text, arguments


def test_a_body_with_a_link_in_it_is_still_written_text() -> None:
    body = "Full care guide here: https://studio.example/care\nKeep it wrapped 3 hours."
    text = written_text(_tool("email_draft", to="jo@example.com", subject="Care", body=body))
    assert "Keep it wrapped 3 hours." in text and "jo@example.com" not in text
    assert written_text(_tool("doc_save", url="https://studio.example/care")) == ""


def test_who_a_rota_moves_a_shift_from_and_to_is_written_text() -> None:
    call = _tool("rota_update", shift="Sat close", **{"from": "Sam", "to": "Ali"})
    assert written_text(call).splitlines() == ["shift: Sat close", "from: Sam", "to: Ali"]
    assert written_by(call) == "`rota_update` wrote"


def test_a_tool_that_reads_is_no_writer_whatever_verb_follows() -> None:
    for name in ("get_draft", "check_for_update", "upload_status", "getUploadUrl", "list_edits"):
        assert not writes(_tool(name)), name


def test_a_deeply_nested_argument_is_walked_without_recursion_and_cut() -> None:
    value: object = ["x" * 50] * 100_000
    for _ in range(2_000):
        value = {"rows": value}
    text = written_text(_tool("docs_update", content=value))
    assert 0 < len(text) <= 20_000


def test_a_written_notes_label_survives_a_cut_and_names_no_backtick() -> None:
    from contextree.compaction.offline.render import _cut

    call = _tool("docs_update", title="Mum`s care plan (v2)", content="x")
    assert written_by(call) == "`docs_update` wrote (Mum's care plan [v2])"
    body = " ".join(f"Carers visit at {n} o'clock on day {n} of the rota." for n in range(1, 30))
    cut = _cut(f"`docs_update` wrote (Care plan): {body}")
    assert cut.startswith("`docs_update` wrote (Care plan): ") and len(cut) < len(body)
    # The next compaction reads a run of one document's notes back one by one.
    noted = [f"`docs_update` wrote (Care plan): line {n} of the plan, at {n} pm" for n in (1, 2)]
    from contextree.compaction.offline.digest import Digest
    from contextree.compaction.offline.render import render_digest

    text = render_digest(Digest(goal="Care plan.", noted=noted), kind="full", budget_tokens=400)
    assert "- `docs_update` wrote (Care plan):\n  - line 1" in text
    assert digest_summary(text).noted == noted
