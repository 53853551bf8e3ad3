"""Every event the runtime tests see is checked against its declared shape
(``contextree.runtime.events.EVENT_DATA``): one spelling, no undeclared or missing keys."""

from __future__ import annotations

from typing import Any

import pytest

from contextree.runtime import events
from event_shapes import check_event_data


@pytest.fixture(autouse=True)
def _events_fit_their_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    real = events.EventHub.emit

    async def checked(self: events.EventHub, kind: str, **data: Any) -> None:
        check_event_data(kind, data)
        await real(self, kind, **data)

    monkeypatch.setattr(events.EventHub, "emit", checked)
