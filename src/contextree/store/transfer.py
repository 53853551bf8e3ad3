"""Copy a session between stores byte for byte: ``contextree import`` and ``export``.

Every line travels unchanged (bad lines, blank lines, oh-my-pi's title slot, a torn last line,
invalid UTF-8): the target holds exactly the source's bytes, which is checked by reading them
back. The write is one transaction of the target store (an atomic rename for a file, one
database transaction otherwise), so a crash leaves the old state or the complete copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from contextree.errors import SessionFileError
from contextree.store.base import SessionStore
from contextree.store.index import parse_head
from contextree.store.missing import missing_session
from contextree.store.url import open_store

__all__ = ["Transfer", "copy_session"]


@dataclass(frozen=True)
class Transfer:
    """What :func:`copy_session` copied."""

    source: str
    target: str
    lines: int
    bytes: int
    replaced: bool
    """Whether the target held a session that the copy replaced (``overwrite=True``)."""


def _lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def copy_session(
    source: str | Path, target: str | Path, *, overwrite: bool = False, fsync: bool = True
) -> Transfer:
    """Copy the session at ``source`` to ``target`` (files or store URLs).

    A target URL without ``#SESSION`` takes the session's id from its header. A target that
    already holds something is refused unless ``overwrite``. Raises
    :class:`~contextree.errors.SessionFileError` when the source is not a session.
    """
    reader = open_store(source)
    if not reader.exists():
        raise missing_session(source)
    try:
        data = reader.read()
    except FileNotFoundError:  # removed since the check
        raise missing_session(source) from None
    head = parse_head(data, reader.name)  # not a session (no header): refused, nothing written
    session_id = head.header.get("id")
    writer = open_store(
        target, fsync=fsync, default_session=session_id if isinstance(session_id, str) else None
    )
    if writer.name == reader.name:
        raise SessionFileError(writer.name, "is the source itself; give another target")
    existed = writer.exists()
    try:
        with writer.transaction() as txn:
            if txn.size and not overwrite:
                raise SessionFileError(
                    writer.name,
                    "already holds a session; choose another target or pass --force to replace it",
                )
            txn.replace(data)
        copied = _reread(writer)
    finally:
        _close(reader)
        _close(writer)
    if copied != data:
        raise SessionFileError(
            writer.name, f"the copy differs from {reader.name} when read back; do not use it"
        )
    return Transfer(reader.name, writer.name, _lines(data), len(data), existed and overwrite)


def _reread(store: SessionStore) -> bytes:
    # A fresh store: the one that wrote may keep state that a reader would not have.
    close = getattr(store, "close", None)
    if close is not None:
        close()
    return store.read()


def _close(store: SessionStore) -> None:
    close = getattr(store, "close", None)
    if close is not None:
        close()
