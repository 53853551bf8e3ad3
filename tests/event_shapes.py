"""Checks an agent event's data against its declared shape (``EVENT_DATA``)."""

from __future__ import annotations

from typing import Any

from contextree.runtime import events


def check_event_data(kind: str, data: dict[str, Any]) -> None:
    """Fail when ``data`` does not fit the ``TypedDict`` declared for ``kind``."""
    assert kind in events.EVENT_TYPES, f"undeclared event type {kind!r}"
    shape: Any = events.EVENT_DATA[kind]
    required, optional = set(shape.__required_keys__), set(shape.__optional_keys__)
    keys = set(data)
    assert required <= keys, f"{kind}: missing {sorted(required - keys)}"
    assert keys <= required | optional, f"{kind}: undeclared {sorted(keys - required - optional)}"
