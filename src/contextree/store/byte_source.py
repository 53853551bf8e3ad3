"""Where a lazily built record index reads a session's bytes from: a buffer already in memory,
or a file read by range as the index steps back from its end.

Reading a 141 MB session whole costs about 0.1 s and its size in memory before anything is
decoded; its context usually lies in the last few megabytes. A :class:`FileBytes` keeps the file
open and reads only the ranges asked for, all from the one open file: a rewrite by rename
leaves that file as it was, and an append only adds after the size it was opened at.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import sys
import threading
from typing import BinaryIO, Final, Protocol, TypeAlias, runtime_checkable

from contextree.errors import SessionFileError

__all__ = [
    "Buffer",
    "BufferBytes",
    "ByteSource",
    "FileBytes",
    "OpensBytes",
    "RangeBytes",
    "ReadsAhead",
]

_COUNT_BLOCK: Final = 8 << 20
"""How much :meth:`FileBytes.count_newlines` reads at a time."""

_HUGE_PAGE_READ: Final = 2 << 20
"""A region of at least this many bytes is read into memory of its own in huge pages (see
:func:`_read_region`); one huge page is 2 MB."""

Buffer: TypeAlias = bytes | mmap.mmap
"""Bytes of a session as a region holds them: ``bytes``, or (a large region of a file) an
anonymous memory map, which reads like ``bytes`` (``find``, indexing, slices are ``bytes``);
nothing writes to it once read."""


class ByteSource(Protocol):
    """The bytes ``[0, size)`` of a session's stored content, by range."""

    def region(self, start: int, end: int) -> tuple[Buffer, int]:
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
class ReadsAhead(Protocol):
    """A :class:`ByteSource` that can start reading a range before it is asked for."""

    def read_ahead(self, start: int, end: int) -> None:
        """Start reading the bytes ``[start, end)`` in the background; a later
        ``region(start, end)`` takes them (any other range is read as usual)."""
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

    def region(self, start: int, end: int) -> tuple[Buffer, int]:
        return self._data, 0

    def count_newlines(self, start: int, end: int) -> int:
        return self._data.count(b"\n", start, end)

    def close(self) -> None:
        self._data = b""


class FileBytes:
    """An open session file, read by range up to the size it had when opened.

    A range can be read ahead in a thread (:meth:`read_ahead`): ``os.pread`` lets go of the
    GIL, so the index reads the next chunk back while it decodes this one (the reads of a
    141 MB session took 0.08 s of the 0.3 s of indexing it).
    """

    def __init__(self, handle: BinaryIO, name: str, size: int) -> None:
        """Read ``handle`` (open for reading, owned from now on) up to ``size`` bytes."""
        self._handle: BinaryIO | None = handle
        self._name = name
        self.size = size
        self._ahead: _Reading | None = None

    def region(self, start: int, end: int) -> tuple[Buffer, int]:
        ahead = self._ahead
        if ahead is not None and (ahead.start, ahead.end) == (start, end):
            self._ahead = None
            data = ahead.result()
            if data is not None:
                return data, start
        return self.read_region(start, end), start

    def read_ahead(self, start: int, end: int) -> None:
        self._wait_ahead()
        handle = self._handle
        if handle is None:
            return  # (closed: region() raises as it would have)
        # No thread can be started (a process limit): region() reads as before.
        with contextlib.suppress(RuntimeError):
            self._ahead = _Reading(handle, self._name, start, end)

    def read(self, start: int, end: int) -> bytes:
        """The bytes ``[start, end)``; :class:`SessionFileError` when the file no longer holds
        them (another program cut it short in place since it was opened)."""
        handle = self._handle
        if handle is None:
            raise RuntimeError("the session file was closed")
        return _pread(handle, self._name, start, end)

    def read_region(self, start: int, end: int) -> Buffer:
        """The bytes ``[start, end)`` as :meth:`read` gives them, a large range in memory of its
        own (see :func:`_read_region`): for a region, not for callers that need ``bytes``."""
        handle = self._handle
        if handle is None:
            raise RuntimeError("the session file was closed")
        return _read_region(handle, self._name, start, end)

    def count_newlines(self, start: int, end: int) -> int:
        count = 0
        for block in range(start, end, _COUNT_BLOCK):
            count += self.read(block, min(end, block + _COUNT_BLOCK)).count(b"\n")
        return count

    def _wait_ahead(self) -> None:
        """Let a read ahead finish (its bytes, or its error, are dropped)."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead.wait()

    def close(self) -> None:
        # A read ahead still running reads from the handle: the file is closed after it.
        self._wait_ahead()
        handle, self._handle = self._handle, None
        if handle is not None:
            handle.close()

    def __del__(self) -> None:
        if sys.is_finalizing():
            # No thread runs again now, so a read ahead would never be waited out: the file
            # is closed under it, and what it read (or the error it gets) is dropped.
            self._ahead = None
        self.close()


def _pread(handle: BinaryIO, name: str, start: int, end: int) -> bytes:
    fd = handle.fileno()
    pieces: list[bytes] = []
    offset = start
    while offset < end:
        piece = os.pread(fd, end - offset, offset)
        if not piece:
            raise SessionFileError(
                name, "was cut short by another program while it was being read; open it again"
            )
        pieces.append(piece)
        offset += len(piece)
    return pieces[0] if len(pieces) == 1 else b"".join(pieces)


def _huge_page_memory(size: int) -> mmap.mmap | None:
    """``size`` bytes of anonymous memory the kernel is asked to back with huge pages, or
    ``None`` where that cannot be asked (not Linux) or the memory cannot be had."""
    if size < _HUGE_PAGE_READ or not hasattr(mmap, "MADV_HUGEPAGE"):
        return None
    try:
        memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except (OSError, ValueError):
        return None
    # Refused (no transparent huge pages in this kernel): still memory to read into.
    with contextlib.suppress(OSError):
        memory.madvise(mmap.MADV_HUGEPAGE)
    return memory


def _read_region(handle: BinaryIO, name: str, start: int, end: int) -> Buffer:
    """The bytes ``[start, end)`` as :func:`_pread` reads them, a large range into huge pages.

    A fresh ``bytes`` of several megabytes is memory the kernel maps one 4 kB page at a time
    as the read fills it: half the time of reading 141 MB (90 ms, against 40 ms into memory
    already mapped). Memory asked for in huge pages is mapped 2 MB at a time, and the read
    costs what it does into memory already mapped (64 MB: 41 -> 17 ms). The memory is
    private and anonymous (not a map of the file: a file cut short in place cannot fault it).
    """
    memory = _huge_page_memory(end - start)
    if memory is None:
        return _pread(handle, name, start, end)
    fd = handle.fileno()
    size = end - start
    done = 0
    with memoryview(memory) as view:
        while done < size:
            with view[done:] as rest:
                read = os.preadv(fd, [rest], start + done)
            if not read:
                raise SessionFileError(
                    name,
                    "was cut short by another program while it was being read; open it again",
                )
            done += read
    return memory


class _Reading:
    """The bytes ``[start, end)`` of an open file, read in a thread of their own (holding
    the handle, not the :class:`FileBytes`: no cycle keeps that from closing when dropped)."""

    __slots__ = ("_data", "_error", "_thread", "end", "start")

    def __init__(self, handle: BinaryIO, name: str, start: int, end: int) -> None:
        self.start = start
        self.end = end
        self._data: Buffer | None = None
        self._error: BaseException | None = None
        # A daemon: a process that ends (os._exit after a command) does not wait for it.
        self._thread = threading.Thread(
            target=self._run, args=(handle, name), name="contextree-read", daemon=True
        )
        self._thread.start()

    def _run(self, handle: BinaryIO, name: str) -> None:
        try:
            self._data = _read_region(handle, name, self.start, self.end)
        except BaseException as exc:  # raised where the bytes are taken, as a read there would
            self._error = exc

    def wait(self) -> None:
        # (A collection that runs in this thread may drop the FileBytes: never wait on itself.)
        if self._thread is not threading.current_thread():
            self._thread.join()

    def result(self) -> Buffer | None:
        """The bytes read, the error the read raised, or ``None`` when the thread never read
        them: in a child forked while it ran (the thread is not there), so the caller reads
        them itself."""
        self.wait()
        if self._error is not None:
            raise self._error
        return self._data
