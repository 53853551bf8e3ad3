"""Copy a session between stores byte for byte: ``contextree import`` and ``export``.

Every line travels unchanged (bad lines, blank lines, oh-my-pi's title slot, a torn last line,
invalid UTF-8): the target holds exactly the source's bytes, which is checked by reading them
back. The write is one transaction of the target store (an atomic rename for a file, one
database transaction otherwise), so a crash leaves the old state or the complete copy.

The bytes are streamed: read, written and checked (by length and SHA-256) a piece at a time,
so a copy holds about a megabyte of the session in memory, not the whole of it. A file target
that is a symbolic link is refused unless ``follow_symlinks``: writing would create or replace
the file the link points to, which is rarely what an export to that name means.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from contextree.errors import SessionFileError
from contextree.store.base import SessionStore, StoreTransaction
from contextree.store.index import SessionHead, parse_head
from contextree.store.missing import missing_session
from contextree.store.url import is_store_url, open_store

__all__ = ["Transfer", "copy_session", "read_chunks", "write_file"]

_HEAD_LIMIT: Final = 16 << 20
"""How far into the source the header is looked for (leading junk lines included)."""


@dataclass(frozen=True)
class Transfer:
    """What :func:`copy_session` copied."""

    source: str
    target: str
    lines: int
    bytes: int
    replaced: bool
    """Whether the target held a session that the copy replaced (``overwrite=True``)."""


class _Tally:
    """Length, line count and SHA-256 of the bytes that pass through :meth:`count`."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.size = 0
        self.newlines = 0
        self.last = b""

    def count(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            self.digest.update(chunk)
            self.size += len(chunk)
            self.newlines += chunk.count(b"\n")
            if chunk:
                self.last = chunk[-1:]
            yield chunk

    @property
    def lines(self) -> int:
        return self.newlines + (1 if self.size and self.last != b"\n" else 0)

    def same(self, other: _Tally) -> bool:
        return self.size == other.size and self.digest.digest() == other.digest.digest()


def read_chunks(store: SessionStore) -> Generator[bytes, None, None]:
    """The bytes of ``store`` in pieces cut after newlines (the whole, for a store that cannot
    stream). Raises ``FileNotFoundError`` when nothing is stored."""
    pieces = getattr(store, "read_chunks", None)
    if pieces is not None:
        yield from pieces()
    else:
        yield store.read()


def _replace(txn: StoreTransaction, chunks: Iterable[bytes]) -> None:
    streaming = getattr(txn, "replace_chunks", None)
    if streaming is not None:
        streaming(chunks)
    else:
        txn.replace(b"".join(chunks))


def _head(chunks: Iterator[bytes], name: str) -> tuple[SessionHead, list[bytes]]:
    """The session header, and the pieces read to find it (to be written first)."""
    read: list[bytes] = []
    size = 0
    for chunk in chunks:
        read.append(chunk)
        size += len(chunk)
        try:
            return parse_head(b"".join(read), name), read
        except SessionFileError:
            if size >= _HEAD_LIMIT:
                raise
    return parse_head(b"".join(read), name), read  # no header at all: raises


def _refuse_symlink(target: str | Path) -> None:
    if is_store_url(target) or not os.path.islink(target):
        return
    points_to = os.readlink(target)
    dangling = "" if os.path.exists(target) else ", which does not exist"
    raise SessionFileError(
        str(target),
        f"is a symbolic link to {points_to}{dangling}; nothing was written (pass "
        "--follow-symlinks to write through it)",
    )


def write_file(
    target: str | Path, data: bytes, *, overwrite: bool = False, follow_symlinks: bool = False
) -> Path:
    """Write ``data`` to the file ``target`` atomically (a temporary file in the same folder,
    fsynced, renamed over it), as ``export`` writes a session: an existing file is replaced
    only with ``overwrite``, a symbolic link is refused unless ``follow_symlinks`` (then its
    target is written). Returns the path written; raises
    :class:`~contextree.errors.SessionFileError` saying why nothing was written."""
    import tempfile

    from contextree.store.jsonl import fsync_dir

    if not follow_symlinks:
        _refuse_symlink(target)
    path = Path(os.path.realpath(target)) if follow_symlinks else Path(target)
    if path.is_dir():
        raise SessionFileError(str(target), "is a directory; nothing was written")
    if path.exists() and not overwrite:
        raise SessionFileError(
            str(target), "exists; nothing was written (pass --force to replace it)"
        )
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise SessionFileError(str(target), f"cannot write here: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    fsync_dir(folder)
    return path


def copy_session(
    source: str | Path,
    target: str | Path,
    *,
    overwrite: bool = False,
    fsync: bool = True,
    follow_symlinks: bool = False,
) -> Transfer:
    """Copy the session at ``source`` to ``target`` (files or store URLs).

    A target URL without ``#SESSION`` takes the session's id from its header. A target that
    already holds something is refused unless ``overwrite``; a file target that is a symbolic
    link unless ``follow_symlinks``. Raises :class:`~contextree.errors.SessionFileError` when
    the source is not a session.
    """
    if not follow_symlinks:
        _refuse_symlink(target)
    reader = open_store(source)
    if not reader.exists():
        raise missing_session(source)
    pieces = read_chunks(reader)
    try:
        try:
            head, first = _head(pieces, reader.name)
        except FileNotFoundError:  # removed since the check
            raise missing_session(source) from None
        session_id = head.header.get("id")
        writer = open_store(
            target,
            fsync=fsync,
            default_session=session_id if isinstance(session_id, str) else None,
        )
        if writer.name == reader.name:
            raise SessionFileError(writer.name, "is the source itself; give another target")
        written = _Tally()
        existed = writer.exists()
        try:
            with writer.transaction() as txn:
                if txn.size and not overwrite:
                    raise SessionFileError(
                        writer.name,
                        "already holds a session; choose another target or pass --force to "
                        "replace it",
                    )
                _replace(txn, written.count(itertools.chain(first, pieces)))
            copied = _reread(writer)
        finally:
            _close(writer)
    finally:
        pieces.close()
        _close(reader)
    if not copied.same(written):
        raise SessionFileError(
            writer.name, f"the copy differs from {reader.name} when read back; do not use it"
        )
    return Transfer(reader.name, writer.name, written.lines, written.size, existed and overwrite)


def _reread(store: SessionStore) -> _Tally:
    # A fresh store: the one that wrote may keep state that a reader would not have.
    _close(store)
    tally = _Tally()
    for _ in tally.count(read_chunks(store)):
        pass
    return tally


def _close(store: SessionStore) -> None:
    close = getattr(store, "close", None)
    if close is not None:
        close()
