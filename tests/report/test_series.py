"""The report series on a hand-built path with a compaction, a prune and a branch summary."""

from __future__ import annotations

from typing import Any

from contextree.report import build_series
from contextree.tokens.estimate import estimate_tokens


def _msg(entry_id: str, message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "message": message}


def _path() -> list[dict[str, Any]]:
    usage = {"input": 100, "output": 7, "cacheRead": 900, "cacheWrite": 50}
    return [
        _msg("u1", {"role": "user", "content": "x" * 400}),  # 100 tokens
        _msg("a1", {"role": "assistant", "content": [], "usage": usage}),
        _msg(
            "t1",
            {
                "role": "toolResult",
                "toolCallId": "c",
                "toolName": "read",
                "content": [{"type": "text", "text": "y" * 8}],
                "prunedContent": [{"type": "text", "text": "z" * 4008}],
            },
        ),
        {
            "type": "compaction",
            "id": "c1",
            "summary": "s",
            "tokensBefore": 2000,
            "tokensAfter": 300,
        },
        {"type": "branch_summary", "id": "b1", "summary": "w" * 80},
        _msg("a2", {"role": "assistant", "content": []}),
    ]


def test_turns_and_events_have_exact_numbers() -> None:
    series = build_series(_path())
    assert [(p.turn, p.entry_id, p.tokens, p.source) for p in series.turns] == [
        (1, "a1", 1050, "usage"),
        (2, "a2", 300 + 20, "estimate"),
    ]
    kinds = [(e.kind, e.entry_id, e.turn, e.tokens_saved) for e in series.events]
    assert kinds == [
        ("prune", "t1", 2, 1000),
        ("compaction", "c1", 2, 1700),
        ("branchSummary", "b1", 2, 0),
    ]
    assert series.peak_tokens == 1050
    assert series.tokens_saved == 2700


def test_estimate_matches_the_shared_estimator() -> None:
    series = build_series([*_path()[:1], _msg("a", {"role": "assistant", "content": []})])
    assert series.turns[0].tokens == estimate_tokens({"role": "user", "content": "x" * 400})
