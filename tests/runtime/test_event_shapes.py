"""The declared event shapes themselves: the checker used for every runtime test can fail."""

from __future__ import annotations

import pytest

from contextree.hooks.registry import COMPACTION_EVENTS, EVENTS
from contextree.runtime.events import AUTO_COMPACTION_END, EVENT_DATA, EVENT_TYPES, PRUNE
from event_shapes import check_event_data


def test_every_event_type_has_a_shape() -> None:
    assert set(EVENT_DATA) == set(EVENT_TYPES)


def test_the_compaction_events_are_the_ones_agents_emit_and_hooks_watch() -> None:
    # Written once (hooks.registry.COMPACTION_EVENTS); both sets must hold them.
    assert EVENT_TYPES & EVENTS == COMPACTION_EVENTS
    assert {"compaction_start", "auto_compaction_end"} <= COMPACTION_EVENTS


def test_the_checker_rejects_a_second_spelling_and_missing_keys() -> None:
    check_event_data(PRUNE, {"prunedCount": 1, "tokensSaved": 10})
    with pytest.raises(AssertionError, match="undeclared"):
        check_event_data(PRUNE, {"prunedCount": 1, "tokensSaved": 10, "tokens_saved": 10})
    with pytest.raises(AssertionError, match="missing"):
        check_event_data(AUTO_COMPACTION_END, {"result": None, "aborted": False})
