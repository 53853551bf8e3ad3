"""Format migrations v1 -> v2 -> v3 (pi-behaviour.md §1.8), applied in memory on load.

Each step is a small named function over the parsed session; ``MIGRATIONS`` lists them in order.
Changed records drop their stored bytes, so the next write of the session becomes an atomic
full rewrite (as the fork does; pi rewrites at once, we never write on a plain read).
"""

from __future__ import annotations

from collections.abc import Callable

from contextree.entries.ids import new_entry_id
from contextree.entries.types import CURRENT_SESSION_VERSION
from contextree.store.index import ParsedSession, Record

__all__ = ["MIGRATIONS", "migrate"]


def _v1_to_v2(session: ParsedSession) -> None:
    """Give every entry an 8-hex id and chain them; map ``firstKeptEntryIndex`` to an id."""
    records = [item for item in session.items if isinstance(item, Record)]
    used: set[str] = set()
    previous: str | None = None
    for record in records:
        entry = record.entry
        entry_id = new_entry_id(used.__contains__)
        used.add(entry_id)
        entry["id"] = entry_id
        entry["parentId"] = previous
        record.id = entry_id
        record.parent_id = previous
        record.mark_changed()
        previous = entry_id
    for record in records:
        if record.type != "compaction":
            continue
        entry = record.entry
        index = entry.get("firstKeptEntryIndex")
        if isinstance(index, int) and not isinstance(index, bool):
            # The index counts parsed lines with the header at 0 (pi's fileEntries array).
            if 1 <= index <= len(records):
                entry["firstKeptEntryId"] = records[index - 1].id
            del entry["firstKeptEntryIndex"]


def _v2_to_v3(session: ParsedSession) -> None:
    """Rename the message role ``hookMessage`` to ``custom``."""
    for item in session.items:
        if isinstance(item, Record) and item.type == "message":
            message = item.entry.get("message")
            if isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"
                item.mark_changed()


MIGRATIONS: list[tuple[int, Callable[[ParsedSession], None]]] = [
    (1, _v1_to_v2),
    (2, _v2_to_v3),
]
"""``(from_version, step)`` pairs, applied in order while the version is at ``from_version``."""


def migrate(session: ParsedSession) -> bool:
    """Bring ``session`` to the current version in memory; return whether anything changed."""
    start = session.version
    if start >= CURRENT_SESSION_VERSION:
        return False
    for from_version, step in MIGRATIONS:
        if session.version == from_version:
            step(session)
            session.version = from_version + 1
    session.header["version"] = CURRENT_SESSION_VERSION
    session.header_raw = None
    session.report.migrated_from = start
    return True
