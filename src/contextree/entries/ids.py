"""Entry ids, session ids and timestamps in pi's formats (pi-behaviour.md §1.3-1.4)."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

__all__ = [
    "derived_entry_id",
    "iso_now",
    "iso_to_ms",
    "ms_to_iso",
    "new_entry_id",
    "new_session_id",
    "now_ms",
]

_MAX_TRIES = 100
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def new_entry_id(exists: Callable[[str], bool] = lambda _id: False) -> str:
    """Return 8 lowercase hex characters not yet used, as pi does (full UUID after 100 tries)."""
    for _ in range(_MAX_TRIES):
        candidate = os.urandom(4).hex()
        if not exists(candidate):
            return candidate
    return str(uuid.uuid4())


def derived_entry_id(seed: bytes, exists: Callable[[str], bool] = lambda _id: False) -> str:
    """Return 8 lowercase hex characters derived from ``seed``: the same seed, the same id.

    Like :func:`new_entry_id`, but reproducible in every run and process (ids given to entries
    that had none, such as v1 migrations). A candidate for which ``exists`` is true is skipped
    for the next one derived from ``seed``; after 100 a 128-bit one in UUID form follows.
    """
    import hashlib  # here: _hashlib's import is 5 ms of every CLI call that never derives an id

    for attempt in range(_MAX_TRIES):
        digest = hashlib.blake2b(attempt.to_bytes(2, "big") + seed, digest_size=4)
        candidate = digest.hexdigest()
        if not exists(candidate):
            return candidate
    return str(uuid.UUID(bytes=hashlib.blake2b(b"uuid" + seed, digest_size=16).digest()))


def new_session_id() -> str:
    """Return a UUIDv7 string (time-ordered), the session id format of pi 0.73."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    rand_a = (rand >> 62) & 0xFFF
    rand_b = rand & ((1 << 62) - 1)
    value = ((ms & ((1 << 48) - 1)) << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
    return str(uuid.UUID(int=value))


def now_ms() -> int:
    """Milliseconds since the epoch, the unit of message timestamps."""
    return time.time_ns() // 1_000_000


def ms_to_iso(ms: int | float) -> str:
    """Format epoch milliseconds like JavaScript's ``Date.prototype.toISOString``."""
    dt = datetime.fromtimestamp(int(ms) // 1000, tz=UTC)
    return (
        f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:"
        f"{dt.second:02d}.{int(ms) % 1000:03d}Z"
    )


def iso_now() -> str:
    """The current time as ``2026-02-16T10:20:30.123Z``."""
    return ms_to_iso(now_ms())


def iso_to_ms(value: object) -> int:
    """Parse an ISO timestamp to epoch ms; 0 when it is missing or unparseable."""
    if not isinstance(value, str) or not value:
        return 0
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return 0
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH) // timedelta(milliseconds=1)
