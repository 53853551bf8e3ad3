"""A recalled reply comes with the user message it answers: the user's own words hold the exact
figure that the reply restated in other words."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from contextree.recall import folded_entry_ids, open_recall_index
from contextree.recall.tool import MAX_RESULT_CHARS, SessionRecall
from contextree.recall.turns import (
    MAX_TURN_STEPS,
    asking_message,
    call_result,
    calling_message,
    reported_result,
    user_answer,
)
from contextree.session.tree import SessionTree
from recall.recall_session import fold_away

_MODEL = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-test"}
BUDGET = "our budget is $38,000 including everything, no exceptions"


def _assistant(text: str, *calls: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}, *calls]
    return {
        "role": "assistant",
        "content": content,
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": 2,
        **_MODEL,
    }


def _result(call_id: str, text: str, tool: str = "ledger") -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": tool,
        "content": [{"type": "text", "text": text}],
        "timestamp": 3,
    }


def _call_and_result(
    tree: SessionTree, text: str, call: dict[str, Any], result: str
) -> tuple[str, str]:
    """Append an assistant message making ``call`` and the call's ``result``; their ids."""
    asking = tree.append_message(_assistant(text, call))
    return asking, tree.append_message(_result(call["id"], result, call["name"]))


def _compacted(tree: SessionTree, tool_results: int = 1) -> SessionTree:
    tree.append_message({"role": "user", "content": BUDGET, "timestamp": 1})
    call = {"type": "toolCall", "id": "c0", "name": "ledger", "arguments": {}}
    tree.append_message(_assistant("Understood: a hard cap, all-in. Noting it.", call))
    for i in range(tool_results):
        tree.append_message(_result(f"c{i}", f"ledger row {i} written: cap recorded"))
        if i + 1 < tool_results:
            more = {"type": "toolCall", "id": f"c{i + 1}", "name": "ledger", "arguments": {}}
            tree.append_message(_assistant(f"step {i}", more))
    return fold_away(tree, "## Goal\nPlan the kitchen.")


def test_a_recalled_reply_shows_the_users_message_it_answers(tmp_path: Path) -> None:
    tree = _compacted(SessionTree.open(tmp_path / "s.jsonl", cwd="/w"))
    recall = SessionRecall(tree)
    text = recall.search_text('"hard cap"')
    assert "Understood: a hard cap" in text and "$38,000" in text
    assert "in reply to [" in text
    # A tool result of the same turn leads back to the same request.
    assert "$38,000" in recall.search_text('"cap recorded"')
    recall.close()


def test_the_request_is_not_repeated_when_it_is_a_hit_itself(tmp_path: Path) -> None:
    tree = _compacted(SessionTree.open(tmp_path / "s.jsonl", cwd="/w"))
    recall = SessionRecall(tree)
    text = recall.search_text("budget cap")
    assert text.count("$38,000") == 1 and "in reply to" not in text
    recall.close()


def test_only_a_folded_request_is_shown(tmp_path: Path) -> None:
    tree = _compacted(SessionTree.open(tmp_path / "s.jsonl", cwd="/w"))
    folded = folded_entry_ids(tree)
    reply = next(e for e in tree.get_entries() if "hard cap" in str(e.get("message")))
    request = str(reply["parentId"])
    assert asking_message(tree, str(reply["id"]), folded) == (request, BUDGET)
    assert asking_message(tree, str(reply["id"]), folded - {request}) is None
    # A user message answers nothing.
    assert asking_message(tree, request, folded) is None


def test_a_turn_longer_than_the_bound_is_shown_without_its_request(tmp_path: Path) -> None:
    tree = _compacted(SessionTree.open(tmp_path / "s.jsonl", cwd="/w"), MAX_TURN_STEPS)
    folded = folded_entry_ids(tree)
    results = [e for e in tree.get_entries() if "ledger row" in str(e.get("message"))]
    first, last = str(results[0]["id"]), str(results[-1]["id"])
    assert asking_message(tree, first, folded) is not None
    assert asking_message(tree, last, folded) is None


def _long_turns(tree: SessionTree, count: int) -> None:
    """``count`` turns: a long user message holding a figure far from the word "ledger", and a
    reply that restates it without the figure."""
    for i in range(count):
        filler = " ".join(["words"] * 400)
        tree.append_message(
            {"role": "user", "content": f"ledger {i}: {filler} figure F-{i:04d}", "timestamp": i}
        )
        tree.append_message(_assistant(f"Noted the ledger entry {i}, with its figure."))


def test_the_result_stays_within_its_bound_without_cutting_the_last_hit() -> None:
    tree = SessionTree.in_memory()
    _long_turns(tree, 12)
    fold_away(tree, "## Goal\nBooks.")
    recall = SessionRecall(tree)
    for limit in (5, 10):
        text = recall.search_text('"noted the ledger"', limit=limit)
        shown = recall.search_excerpts('"noted the ledger"', limit=limit)
        assert len(text) <= MAX_RESULT_CHARS
        assert text.count("in reply to [") == limit
        assert text.endswith(shown[-1])  # the last request whole, not cut by the bound
    recall.close()


def test_a_users_image_alone_starts_the_turn_and_has_no_words_to_show(tmp_path: Path) -> None:
    tree = SessionTree.open(tmp_path / "s.jsonl", cwd="/w")
    tree.append_message({"role": "user", "content": BUDGET, "timestamp": 1})
    tree.append_message(_assistant("Understood: a hard cap, all-in."))
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    tree.append_message({"role": "user", "content": [image], "timestamp": 2})
    reply = tree.append_message(_assistant("That photo shows a cracked tile."))
    fold_away(tree, "## Goal\nTiles.")
    assert asking_message(tree, reply, folded_entry_ids(tree)) is None


def test_an_index_it_opens_after_its_given_one_was_let_go_is_its_own(tmp_path: Path) -> None:
    tree = _compacted(SessionTree.open(tmp_path / "s.jsonl", cwd="/w"))
    given = open_recall_index(tree)
    recall = SessionRecall(tree, index=given)
    assert "$38,000" in recall.search_text('"hard cap"')
    recall.close()  # the caller's index stays open
    assert "$38,000" in SessionRecall(tree, index=given).search_text('"hard cap"')
    assert "$38,000" in recall.search_text('"hard cap"')  # opens one of its own
    opened = recall._index
    recall.close()
    assert opened is not None and recall._index is None
    with pytest.raises(sqlite3.ProgrammingError):
        opened.search(["cap"], allowed=None, limit=1)
    given.close()


def test_a_recalled_tool_call_shows_what_it_returned(tmp_path: Path) -> None:
    tree = SessionTree.open(tmp_path / "s.jsonl", cwd="/w")
    tree.append_message({"role": "user", "content": "book the plumber for friday", "timestamp": 1})
    call = {"type": "toolCall", "id": "b1", "name": "book", "arguments": {"day": "friday"}}
    booking, _ = _call_and_result(
        tree, "Friday it is. Booking now.", call, "CONFIRMED: job PLB-55120, Fri 08:00-10:00"
    )
    tree.append_message(_assistant("Booked for Friday morning."))
    fold_away(tree, "## Goal\nPlumbing.")
    recall = SessionRecall(tree)
    text = recall.search_text('"booking now"')
    assert "returned [" in text and "PLB-55120" in text
    assert "PLB-55120" in "\n".join(recall.search_excerpts('"booking now"'))
    recall.close()
    folded = folded_entry_ids(tree)
    result_id = str(tree.get_children(booking)[0]["id"])
    assert call_result(tree, booking, folded) == (
        result_id,
        "book\nCONFIRMED: job PLB-55120, Fri 08:00-10:00",
    )
    assert call_result(tree, booking, folded - {result_id}) is None  # still seen: not shown
    no_call = str(tree.get_children(result_id)[0]["id"])
    assert call_result(tree, no_call, folded) is None


def test_a_recalled_question_shows_the_users_answer(tmp_path: Path) -> None:
    tree = SessionTree.open(tmp_path / "s.jsonl", cwd="/w")
    tree.append_message({"role": "user", "content": "tidy up the shared drive", "timestamp": 1})
    question = tree.append_message(_assistant("Should I archive old folders before deleting?"))
    answer = tree.append_message(
        {"role": "user", "content": "yes, always. keep every archive 400 days", "timestamp": 3}
    )
    statement = tree.append_message(_assistant("Archiving the old folders first."))
    tree.append_message({"role": "user", "content": "thanks", "timestamp": 5})
    fold_away(tree, "## Goal\nTidy the drive.")
    recall = SessionRecall(tree)
    shown = "\n".join(recall.search_excerpts("archive old folders deleting"))
    assert "400 days" in shown and "answered by [" in recall.search_text("deleting")
    recall.close()
    folded = folded_entry_ids(tree)
    said = "yes, always. keep every archive 400 days"
    assert user_answer(tree, question, folded) == (answer, said)
    assert user_answer(tree, question, folded - {answer}) is None  # still seen: not shown
    assert user_answer(tree, statement, folded) is None  # no question asked
    assert user_answer(tree, answer, folded) is None  # not an assistant message


def test_a_recalled_result_shows_the_call_that_asked_for_it(tmp_path: Path) -> None:
    tree = SessionTree.open(tmp_path / "s.jsonl", cwd="/w")
    tree.append_message({"role": "user", "content": "update the club handbook", "timestamp": 1})
    call = {
        "type": "toolCall",
        "id": "w1",
        "name": "docs.write",
        "arguments": {"path": "Handbook_2027_v3.docx"},
    }
    asking, result = _call_and_result(
        tree, "Writing it.", call, "Saved v3 with the new safety chapter."
    )
    tree.append_message(_assistant("Done."))
    fold_away(tree, "## Goal\nHandbook.")
    recall = SessionRecall(tree)
    shown = "\n".join(recall.search_excerpts("saved safety chapter"))
    assert "Handbook_2027_v3.docx" in shown and "called by [" in recall.search_text("chapter")
    recall.close()
    folded = folded_entry_ids(tree)
    text = 'docs.write {"path":"Handbook_2027_v3.docx"}'
    assert calling_message(tree, result, folded) == (asking, text)
    assert calling_message(tree, result, folded - {asking}) is None  # still seen: not shown
    assert calling_message(tree, asking, folded) is None  # not a tool result


def test_each_result_of_a_message_with_two_calls_shows_its_own_call(tmp_path: Path) -> None:
    tree = SessionTree.open(tmp_path / "s.jsonl", cwd="/w")
    tree.append_message({"role": "user", "content": "write both letters", "timestamp": 1})
    calls = [
        {"type": "toolCall", "id": f"w{n}", "name": "docs.write", "arguments": {"path": name}}
        for n, name in enumerate(["Letter_Ames_v2.docx", "Letter_Brook_v2.docx"])
    ]
    tree.append_message(_assistant("Writing both.", *calls))
    for call in calls:
        tree.append_message(_result(call["id"], "Saved v2 of the letter.", call["name"]))
    tree.append_message(_assistant("Both saved."))
    fold_away(tree, "## Goal\nLetters.")
    recall = SessionRecall(tree)
    shown = "\n".join(recall.search_excerpts('"saved v2"'))
    recall.close()
    assert "Letter_Ames_v2.docx" in shown and "Letter_Brook_v2.docx" in shown


def test_a_recalled_report_shows_the_result_it_reports_on(tmp_path: Path) -> None:
    tree = SessionTree.open(tmp_path / "s.jsonl", cwd="/w")
    tree.append_message({"role": "user", "content": "tides for saturday please", "timestamp": 1})
    call = {"type": "toolCall", "id": "t1", "name": "tides", "arguments": {"day": "sat"}}
    asking, result = _call_and_result(
        tree,
        "Looking them up.",
        call,
        "HW 07:31 +142\nLW 13:40 -139\nSlack water (approx.): Sat 07:35, 13:52, 19:55",
    )
    # The assistant says it in its own words; the exact time is only in the result.
    report = tree.append_message(_assistant("Slack water comes early in the afternoon."))
    tree.append_message({"role": "user", "content": "ok thanks", "timestamp": 5})
    fold_away(tree, "## Goal\nRegatta.")
    recall = SessionRecall(tree)
    assert "13:52" in "\n".join(recall.search_excerpts("afternoon slack"))
    assert "after result [" in recall.search_text("afternoon")
    recall.close()
    folded = folded_entry_ids(tree)
    found = reported_result(tree, report, folded)
    assert found is not None and found[0] == result and "13:52" in found[1]
    assert reported_result(tree, report, folded - {result}) is None  # still seen: not shown
    assert reported_result(tree, asking, folded) is None  # it makes a call: not a report
    assert reported_result(tree, result, folded) is None  # not an assistant message
