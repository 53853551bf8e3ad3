"""MemoizedEstimator: the base estimator's answers, each message object estimated once."""

from __future__ import annotations

import gc
from typing import Any

from contextree.tokens.estimate import PiEstimator
from contextree.tokens.memo import MemoizedEstimator


class _Counting(PiEstimator):
    def __init__(self) -> None:
        self.calls = 0

    def estimate(self, message: Any) -> int:
        self.calls += 1
        return super().estimate(message)


def _result(text: str) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": "c", "content": [{"type": "text", "text": text}]}


def test_answers_are_the_base_estimators_and_each_object_is_estimated_once() -> None:
    base = _Counting()
    memo = MemoizedEstimator(base)
    messages = [_result("x" * n) for n in (4, 40, 400)]
    first = [memo.estimate(m) for m in messages]
    assert first == [PiEstimator().estimate(m) for m in messages]
    assert [memo.estimate(m) for m in messages] == first
    assert base.calls == 3
    assert memo.name == "pi" and memo.count_text("abcdefgh") == 2


def test_an_equal_but_new_object_is_estimated_anew() -> None:
    # A rewrite (pruning) stores new dicts: those are estimated, not looked up by value.
    base = _Counting()
    memo = MemoizedEstimator(base)
    message = _result("a" * 100)
    memo.estimate(message)
    changed = {**message, "content": [{"type": "text", "text": "short"}]}
    assert memo.estimate(changed) == PiEstimator().estimate(changed)
    assert base.calls == 2


def test_a_freed_objects_id_is_never_taken_for_another_object() -> None:
    memo = MemoizedEstimator(PiEstimator())
    for n in range(200):
        # Each message dies after its turn, so CPython reuses ids; the memo holds the object
        # it remembered, so a reused id cannot hand one message's estimate to another.
        message = _result("y" * (n * 8))
        assert memo.estimate(message) == PiEstimator().estimate(message)
        del message
        gc.collect()


def test_what_two_generations_did_not_ask_for_is_forgotten() -> None:
    base = _Counting()
    memo = MemoizedEstimator(base)
    kept, dropped = _result("kept" * 10), _result("dropped" * 10)
    memo.estimate(kept)
    memo.estimate(dropped)
    memo.next_generation()
    memo.estimate(kept)  # still known from the generation before
    assert base.calls == 2
    memo.next_generation()
    memo.estimate(kept)
    memo.estimate(dropped)  # not asked for during the last generation: estimated again
    assert base.calls == 3
