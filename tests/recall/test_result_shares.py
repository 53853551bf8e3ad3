"""How the recall tool shares its bound between hits: a short hit leaves room to a long one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contextree.recall.tool import MAX_RESULT_CHARS, SessionRecall, fill
from contextree.session.tree import SessionTree
from core_helpers import tool_result
from recall.recall_session import fold_away

_MODEL = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-test"}
_VALUE = "07700 900431"


def _roster() -> str:
    # About 2,200 characters: more than an equal fifth of the bound, less than the bound. The
    # row that matters holds none of the search's words and stands out from nothing.
    rows = [
        f"{n:2}. Volunteer {n:02} - mobile 07700 9001{n:02} - shift {n % 3 + 1}" for n in range(40)
    ]
    rows[31] = f"31. Volunteer 31 - mobile {_VALUE} - shift 2"
    return "Harbour rota, safety boats:\n" + "\n".join(rows)


def _assistant(text: str, *calls: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}, *calls],
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": 2,
        **_MODEL,
    }


def _session(tmp_path: Path, *, asked_first: bool = True) -> SessionTree:
    tree = SessionTree.open(tmp_path / "s.jsonl", cwd="/w")
    for n in range(3 if asked_first else 0):
        tree.append_message({"role": "user", "content": f"harbour rota point {n}", "timestamp": 1})
        tree.append_message(_assistant(f"Noted ({n})."))
    tree.append_message({"role": "user", "content": "read me the harbour rota", "timestamp": 1})
    call = {"type": "toolCall", "id": "c0", "name": "sheet", "arguments": {}}
    tree.append_message(_assistant("Reading.", call))
    tree.append_message(tool_result("c0", _roster(), name="sheet", timestamp=3))
    return fold_away(tree, "## Goal\nRun the regatta.")


def test_short_hits_leave_their_room_to_a_long_result(tmp_path: Path) -> None:
    recall = SessionRecall(_session(tmp_path))
    text = recall.search_text("harbour rota", limit=5)
    assert len(_roster()) > MAX_RESULT_CHARS // 5
    # Four short requests and the sheet: the sheet is shown whole, within the bound.
    assert _VALUE in text
    assert len(text) <= MAX_RESULT_CHARS


def test_a_short_message_leaves_its_room_to_the_result_its_call_returned(tmp_path: Path) -> None:
    # The call ("Reading.") is what the search finds; the result comes with it, and has more
    # than a third of the hit's share when the message is short.
    tree = _session(tmp_path, asked_first=False)
    recall = SessionRecall(tree)
    shown = recall.search_text("reading sheet", limit=1)
    assert "returned [" in shown
    assert _VALUE in shown
    assert len(shown) <= MAX_RESULT_CHARS


def test_fill_gives_each_what_it_needs_up_to_one_level() -> None:
    assert fill([100, 100], 1000) == [100, 100]
    assert fill([100, 5000, 5000], 1000) == [100, 450, 450]
    assert fill([5000, 10], 100) == [90, 10]
    assert fill([], 100) == []
    assert sum(fill([300, 700, 2000, 50], 1000)) <= 1000
