"""What the recall tool shows of a long hit: the stretch where the words of the search meet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contextree.recall.excerpt import excerpt
from contextree.recall.tool import SessionRecall
from contextree.session.tree import SessionTree
from recall.recall_session import fold_away

_MODEL = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-test"}


def _long_result() -> str:
    # Longer than the whole result's bound: the tool must choose what to show.
    rows = [
        f"INV-{1000 + n}  catering supplies  paid  2026-03-{n % 28 + 1:02d}" for n in range(150)
    ]
    rows.insert(101, "INV-2291  caterer's deposit invoice for the gala  open  due 14 May")
    return "Invoices on the caterer account (newest last):\n" + "\n".join(rows)


def _session(tmp_path: Path) -> SessionTree:
    tree = SessionTree.open(tmp_path / "s.jsonl", cwd="/w")
    tree.append_message({"role": "user", "content": "list the open invoices", "timestamp": 1})
    call = {"type": "toolCall", "id": "c0", "name": "ledger", "arguments": {}}
    assistant: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": "Looking."}, call],
        "stopReason": "toolUse",
        "timestamp": 2,
        **_MODEL,
    }
    tree.append_message(assistant)
    tree.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c0",
            "toolName": "ledger",
            "content": [{"type": "text", "text": _long_result()}],
            "timestamp": 3,
        }
    )
    return fold_away(tree, "## Goal\nPay the gala's suppliers.")


def test_a_long_hit_is_shown_where_the_search_words_meet(tmp_path: Path) -> None:
    recall = SessionRecall(_session(tmp_path))
    shown = "\n".join(recall.search_excerpts("caterer deposit invoice", limit=5))
    assert len(_long_result()) > 4000
    # "caterer" first occurs in the heading, 100 rows before the row that holds all three.
    assert "INV-2291" in shown and "due 14 May" in shown


def test_an_excerpt_stays_within_its_share(tmp_path: Path) -> None:
    recall = SessionRecall(_session(tmp_path))
    text = recall.search_text("caterer deposit invoice", limit=10)
    assert len(text) <= 4000
    assert "INV-2291" in text


def test_the_line_after_the_best_match_comes_with_it() -> None:
    from contextree.recall.excerpt import excerpt

    lines = [f"{n}. Claims line for region {n}: 0300 000 {1000 + n}" for n in range(30)]
    lines[17] = "17. Eligibility checks by phone"
    lines[18] = "For identity or eligibility rejections, call provider services on 0345 600 2217."
    text = "\n".join(lines)
    shown = excerpt(text, ["eligibility", "rejections", "phone"], 200)
    assert "0345 600 2217" in shown and "Eligibility checks by phone" in shown
    assert len(shown) <= 200 and shown.startswith("…")


def test_an_excerpt_keeps_the_texts_order_and_marks_what_it_leaves_out() -> None:
    from contextree.recall.excerpt import excerpt

    text = "\n".join(
        ["alpha beta", *(f"filler line {n}" for n in range(40)), "gamma alpha", "last line"]
    )
    shown = excerpt(text, ["alpha", "gamma"], 60)
    # The best segment ("gamma alpha") and the first ("alpha beta") in the text's order, the
    # rows between them left out and marked.
    assert shown.index("alpha beta") < shown.index("gamma alpha")
    assert " … " in shown and "filler line 20" not in shown
    assert excerpt("short text", ["alpha"], 60) == "short text"
    assert excerpt(text, ["nowhere"], 40).startswith("alpha beta")  # no match: the start


def test_the_line_after_a_label_outranks_weaker_matches() -> None:
    from contextree.recall.excerpt import excerpt

    lines = [f"invoice INV-{1000 + n} catering supplies" for n in range(60)]
    lines[30:30] = ["Deposit invoice INV-2291 for the gala", "Amount due: 4,300 EUR by 14 May"]
    shown = excerpt("\n".join(lines), ["deposit", "invoice"], 300)
    assert "INV-2291" in shown and "4,300 EUR" in shown


def test_words_match_as_the_index_matches_them() -> None:
    from contextree.recall.excerpt import excerpt

    rows = [f"row {n}: nothing here" for n in range(50)]
    text = "\n".join([*rows, "Booked: Café Müller, table for 6, ref CM-7781", *rows])
    # Accents and case ignored, punctuation around a word dropped, a phrase's words one by one.
    for terms in (["cafe", "muller"], ['"deposit,"', "CM-7781"], ['"table for"']):
        assert "CM-7781" in excerpt(text, terms, 120), terms


@pytest.mark.parametrize("room", [1, 2, 3, 5, 40, 41, 120])
def test_an_excerpt_never_exceeds_its_room(room: int) -> None:
    from contextree.recall.excerpt import excerpt

    phrase = "a" * 60
    for text in ("hello world " * 20, "q" * 300 + f" {phrase} tail", "x\n" * 500 + "world"):
        # A match longer than the room (a long quoted phrase) once ran past its list's end.
        assert len(excerpt(text, ["world", phrase], room)) <= room


def test_a_sentence_with_the_rarer_search_words_comes_before_common_ones() -> None:
    # "opening night" is in every message of the thread; "lanterns" and "chimney" only in
    # the one that says what was agreed.
    thread = "\n".join(
        [
            "[1] Ada, 2 May: Hello! Questions about the opening night below, long list sorry.",
            "[2] Ben, 3 May: Happy to help with the opening night, ask away and I will check.",
            "[3] Ada, 5 May: Still deciding the running order for the opening night, more soon.",
            "[4] Ada, 9 May: Right, the opening night is settled in my head at last, here goes. "
            "Please hang the paper lanterns but keep them well away from the chimney breast, "
            "the insurer was clear about it. Drinks from seven, speeches at eight, band at nine.",
            "[5] Ben, 10 May: Lovely, all noted for the opening night, see you on the day then.",
        ]
    )
    shown = excerpt(thread, ["opening", "night", "lanterns", "chimney"], 200)
    assert "well away from the chimney breast" in shown


def test_a_possessive_is_its_word_not_every_word_starting_with_s() -> None:
    # "transit's" is the tokens "transit" and "s": as a word's start, "s" held every line
    # with a "service" or a "sheet", and such a line tied with the one naming the Transit.
    lines = [f"{2010 + n} - PASS - {90_000 + 1000 * n} miles" for n in range(40)]
    lines[5] = "MOT history: see the service sheet, stamped in the logbook"
    lines[30] = "Transit WK17 MOT: valid until 29 Jul 2025"
    shown = excerpt("\n".join(lines), ["transit's", "mot"], 150)
    assert "29 Jul 2025" in shown


def test_room_the_matching_lines_leave_goes_to_the_lines_around_them() -> None:
    # The search's words are in the mail's subject; the answer is four lines below it. The
    # matching line and its neighbours take a fraction of the room: the lines nearest them
    # fill the rest, instead of the room going unused.
    filler = [f"Line {n} of the council's notes on parking and bins." for n in range(40)]
    mail = [
        "Subject: summer pitch allocations",
        "Dear traders,",
        "Thank you for coming back this year.",
        "The list is below; payment rules have changed.",
        "Tull Hill Honey: stall 17, under the clock tower.",
    ]
    text = "\n".join([*filler[:20], *mail, *filler[20:]])
    shown = excerpt(text, ["pitch", "allocations"], 600)
    assert "stall 17" in shown
    assert len(shown) <= 600
