"""Where a lazily built record index reads a session's bytes from: a buffer already in memory,
or a file read by range as the index steps back from its end.

Reading a 141 MB session whole costs about 0.1 s and its size in memory before anything is
decoded; its context usually lies in the last few megabytes. A :class:`FileBytes` keeps the file
open and reads only the ranges asked for, all from the one open file: a rewrite by rename
leaves that file as it was, and an append only adds after the size it was opened at.
"""

from __future__ import annotations

import os
from typing import BinaryIO, Final, Protocol, runtime_checkable

from contextree.errors import SessionFileError

__all__ = ["BufferBytes", "ByteSource", "FileBytes", "OpensBytes", "RangeBytes"]

_COUNT_BLOCK: Final = 8 << 20
"""How much :meth:`FileBytes.count_newlines` reads at a time."""


class ByteSource(Protocol):
    """The bytes ``[0, size)`` of a session's stored content, by range."""

    def region(self, start: int, end: int) -> tuple[bytes, int]:
        """A buffer holding the bytes ``[start, end)``, and the offset in the content of the
        buffer's first byte (positions in the buffer are content positions minus that)."""
        ...

    def count_newlines(self, start: int, end: int) -> int:
        """How many newlines the bytes ``[start, end)`` hold."""
        ...

    def close(self) -> None:
        """Let go of what the source holds (nothing is read after this)."""
        ...


class RangeBytes(ByteSource, Protocol):
    """A :class:`ByteSource` over stored content that is read as it is asked for."""

    size: int
    """The size of the content when it was opened (what is read never goes past it)."""

    def read(self, start: int, end: int) -> bytes:
        """Exactly the bytes ``[start, end)``."""
        ...


@runtime_checkable
class OpensBytes(Protocol):
    """A store whose content can be read by range (a file, an SQLite database)."""

    def open_bytes(self) -> RangeBytes | None:
        """The content as it is now, to be read by range; ``None`` when there is none."""
        ...


class BufferBytes:
    """Content already in memory: every region is the buffer itself (no copy)."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def region(self, start: int, end: int) -> tuple[bytes, int]:
        return self._data, 0

    def count_newlines(self, start: int, end: int) -> int:
        return self._data.count(b"\n", start, end)

    def close(self) -> None:
        self._data = b""


class FileBytes:
    """An open session file, read by range up to the size it had when opened."""

    def __init__(self, handle: BinaryIO, name: str, size: int) -> None:
        """Read ``handle`` (open for reading, owned from now on) up to ``size`` bytes."""
        self._handle: BinaryIO | None = handle
        self._name = name
        self.size = size

    def region(self, start: int, end: int) -> tuple[bytes, int]:
        return self.read(start, end), start

    def read(self, start: int, end: int) -> bytes:
        """The bytes ``[start, end)``; :class:`SessionFileError` when the file no longer holds
        them (another program cut it short in place since it was opened)."""
        handle = self._handle
        if handle is None:
            raise RuntimeError("the session file was closed")
        fd = handle.fileno()
        pieces: list[bytes] = []
        offset = start
        while offset < end:
            piece = os.pread(fd, end - offset, offset)
            if not piece:
                raise SessionFileError(
                    self._name,
                    "was cut short by another program while it was being read; open it again",
                )
            pieces.append(piece)
            offset += len(piece)
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    def count_newlines(self, start: int, end: int) -> int:
        count = 0
        for block in range(start, end, _COUNT_BLOCK):
            count += self.read(block, min(end, block + _COUNT_BLOCK)).count(b"\n")
        return count

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            handle.close()

    def __del__(self) -> None:
        self.close()
