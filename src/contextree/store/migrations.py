"""Format migrations v1 -> v2 -> v3 (pi-behaviour.md §1.8), applied in memory on load.

Each step is a small named function over the parsed session; ``MIGRATIONS`` lists them in order.
Changed records drop their stored bytes, so the next write of the session becomes an atomic
full rewrite (as the fork does; pi rewrites at once, we never write on a plain read).
"""

from __future__ import annotations

from collections.abc import Callable

from contextree.entries.codec import encode_line
from contextree.entries.ids import derived_entry_id
from contextree.entries.types import CURRENT_SESSION_VERSION
from contextree.store.index import ParsedSession, Record

__all__ = ["MIGRATIONS", "migrate"]


def _digest(data: bytes) -> bytes:
    import hashlib  # only v1 files need it; every open imports this module

    return hashlib.blake2b(data, digest_size=16).digest()


def _v1_to_v2(session: ParsedSession) -> None:
    """Give every entry an 8-hex id and chain them; map ``firstKeptEntryIndex`` to an id.

    pi draws the ids at random; ours are derived from the session id and the entry's line (its
    bytes, and how many identical lines came before it), so every open of the same file, in any
    process, gives the same ids, and an id printed by one command works in the next. They are
    what the migration's rewrite later stores. Removing another line (``check --repair``) does
    not change an entry's id. A derived id that is already taken (by an earlier entry, or by an
    ``id`` some v1 line carries) is skipped for the next one derived from the same line.
    """
    records = [item for item in session.items if isinstance(item, Record)]
    session_key = _digest(str(session.header.get("id")).encode("utf-8", "surrogatepass"))
    # Ids some lines already carry are replaced below, like pi does; none is handed out again.
    taken = {record.id for record in records if record.id}
    used: set[str] = set()

    def exists(candidate: str) -> bool:
        return candidate in used or candidate in taken

    occurrences: dict[bytes, int] = {}
    previous: str | None = None
    for record in records:
        raw = record.raw
        content = _digest(raw if raw is not None else encode_line(record.entry))
        occurrence = occurrences.get(content, 0)
        occurrences[content] = occurrence + 1
        entry_id = derived_entry_id(session_key + content + occurrence.to_bytes(8, "big"), exists)
        used.add(entry_id)
        entry = record.entry
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
