"""The JSONL session file store: locked appends, atomic rewrites, 0600 files.

Appends reserve their bytes with one ``os.write`` of a blank line as long as the lines (spaces,
then a newline) on an ``O_APPEND`` descriptor under ``flock``, then fill the lines in with
``pwrite`` on a second descriptor opened without ``O_APPEND`` (on Linux ``pwrite`` on an
``O_APPEND`` descriptor appends). A kill at any point therefore leaves either a prefix of spaces
(which pi's ``JSON.parse`` and our reader skip, so pi's next line, appended without ending ours
first, still parses) or a newline-terminated line, never an unfinished line that begins with
part of an entry (issue 15 item 8).

Rewrites write a temp file in the same directory, fsync it and rename it over the session
(DESIGN decision 6: a file is never truncated or replaced except by an atomic rewrite). The lock
is taken on the session file itself; because a rewrite swaps the inode, every transaction checks
after locking that its descriptor still names the file at ``path`` and reopens it if not.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import glob
import os
import re
import stat
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Final

from contextree.errors import SessionFileError, SessionLockedError
from contextree.store.byte_source import FileBytes
from contextree.store.open_writers import count_write_only_holders

__all__ = ["JsonlFileStore", "fsync_dir", "make_dirs", "remove_stale_temps"]

_FILE_MODE = 0o600
_CHUNK: Final = 1 << 20
"""How much :meth:`JsonlFileStore.read_chunks` reads at a time."""
_DIR_MODE = 0o700
_LOCK_POLL_S = 0.002
_TEMP_NAME = re.compile(r"[0-9a-f]{8}\.tmp")
"""What follows ``.<name>.`` in the name of a rewrite's temporary copy."""


class _FileTransaction:
    def __init__(self, store: JsonlFileStore, fd: int, replaced: bool, size: int) -> None:
        self._store = store
        self._fd = fd
        self._replaced = replaced
        self._closed = False
        # Nobody else can write while we hold the lock, so the size only changes through us.
        self._size = size

    @property
    def size(self) -> int:
        return self._size

    @property
    def replaced(self) -> bool:
        return self._replaced

    def read_from(self, offset: int) -> bytes:
        size = self.size
        chunks: list[bytes] = []
        while offset < size:
            chunk = os.pread(self._fd, size - offset, offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
        return b"".join(chunks)

    def append(self, data: bytes) -> None:
        self._check_open()
        size = self._size
        lead = b""
        if size and os.pread(self._fd, 1, size - 1) != b"\n":
            # A crash left a torn last line: end it so our line stays a line of its own.
            lead = b"\n"
        self._size = size + self._store._append_lines(self._fd, lead, data)
        if self._store.fsync:
            os.fsync(self._fd)

    def replace(self, data: bytes, *, keep_from: int | None = None) -> None:
        self._check_open()
        read_up_to = self._size if keep_from is None else keep_from
        self._store._replace_with(self._fd, (data,), read_up_to=read_up_to)
        self._closed = True

    def replace_chunks(self, chunks: Iterable[bytes]) -> None:
        """:meth:`replace` with the new content given piece by piece (an import of a large
        session holds one piece in memory, not the whole)."""
        self._check_open()
        self._store._replace_with(self._fd, chunks, read_up_to=self._size)
        self._closed = True

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this transaction already replaced the file; start a new one")


class JsonlFileStore:
    """A session stored as a JSONL file at ``path``."""

    def __init__(
        self, path: str | Path, *, fsync: bool = False, lock_timeout: float = 30.0
    ) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self.lock_timeout = lock_timeout
        self._fd: int | None = None
        self._fill_fd: int | None = None
        """The same file opened without ``O_APPEND``, for filling in reserved lines."""
        self._identity: tuple[int, int] | None = None
        self._cleaned = False
        self.stale_temps_removed: list[Path] = []
        """Temporary copies of killed rewrites that the first write under the lock removed."""

    @property
    def name(self) -> str:
        return str(self.path)

    def exists(self) -> bool:
        return self.path.exists()

    def read(self) -> bytes:
        with self._open_for_reading() as handle:
            return handle.read()

    def open_bytes(self) -> FileBytes:
        """The file as it is now, open to be read by range (see :class:`FileBytes`)."""
        handle = self._open_for_reading()
        try:
            size = os.fstat(handle.fileno()).st_size
        except BaseException:
            handle.close()
            raise
        return FileBytes(handle, self.name, size)

    def read_chunks(self, size: int = _CHUNK) -> Iterator[bytes]:
        """The stored bytes in pieces of about ``size`` bytes, each cut after a newline (the
        last may end with a torn line), read as they are consumed."""
        with self._open_for_reading() as handle:
            rest: list[bytes] = []  # the start of a line longer than a block, kept as pieces
            while block := handle.read(size):
                cut = block.rfind(b"\n") + 1
                if not cut:
                    rest.append(block)
                    continue
                yield b"".join([*rest, block[:cut]])
                rest = [block[cut:]]
            if any(rest):
                yield b"".join(rest)

    def _open_for_reading(self) -> BinaryIO:
        try:
            # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever;
            # it is refused below like any file that is not a regular one.
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except IsADirectoryError:
            raise SessionFileError(self.path, "is a directory, not a session file") from None
        except PermissionError:
            raise SessionFileError(self.path, "permission denied") from None
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            # Checked before open(): Python's open() of a directory's descriptor raises
            # IsADirectoryError naming the descriptor ("3: Is a directory").
            os.close(fd)
            raise SessionFileError(self.path, "is a directory, not a session file")
        handle = open(fd, "rb")  # noqa: SIM115 - returned to the caller's with block
        try:
            if not stat.S_ISREG(st.st_mode):
                raise SessionFileError(self.path, "is not a regular file (a FIFO or device?)")
            os.set_blocking(fd, True)
        except BaseException:
            handle.close()
            raise
        if self._identity is None:
            # The bytes read are our first view: a later rewrite by another writer
            # must show up as ``replaced`` in our first transaction.
            self._identity = (st.st_dev, st.st_ino)
        return handle

    def close(self) -> None:
        """Release the file descriptors kept open between writes."""
        self._drop_fill_fd()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    @contextmanager
    def transaction(self) -> Iterator[_FileTransaction]:
        fd, replaced, size = self._lock()
        txn = _FileTransaction(self, fd, replaced, size)
        try:
            yield txn
        finally:
            if self._fd == fd:
                fcntl.flock(fd, fcntl.LOCK_UN)

    # -- internals ---------------------------------------------------------------------------

    def _append_lines(self, fd: int, lead: bytes, data: bytes) -> int:
        """Append ``lead + data`` (``data``: whole lines) to the locked ``fd``; bytes written.

        First a blank line of the same length is appended (``lead``, spaces, a newline), then
        ``data`` without its final newline is written over the spaces. A kill during the first
        write leaves only whitespace unfinished; during the second, a line that is already
        terminated. pi appends without ending an unfinished line first: whitespace in front of
        its line is harmless, part of an entry is not.
        """
        fill = self._fill_descriptor(fd) if len(data) > 1 else None
        if fill is None:
            return _write_all(fd, lead + data)
        blank = lead + b" " * (len(data) - 1) + b"\n"
        total = 0
        while True:
            written = os.write(fd, blank)
            total += written
            if written == len(blank):
                break
            # A short write (a full disk, a signal): what landed is whitespace. Finish that
            # blank line, then reserve a whole one again, in one piece.
            total += _write_all(fd, blank[written:])
            blank = blank[len(lead) :]
            lead = b""
        # O_APPEND put our bytes at the end, wherever that was (pi takes no lock): our own
        # descriptor's offset is just past them.
        start = os.lseek(fd, 0, os.SEEK_CUR) - len(data)
        view = memoryview(data)[:-1]
        while view:
            done = os.pwrite(fill, view, start)
            view = view[done:]
            start += done
        return total

    def _fill_descriptor(self, fd: int) -> int | None:
        """The session opened a second time without ``O_APPEND`` (kept open with ``fd``), or
        ``None`` when that does not name the same file."""
        if self._fill_fd is None:
            try:
                fill = os.open(self.path, os.O_WRONLY | os.O_CLOEXEC)
            except OSError:
                return None
            mine, theirs = os.fstat(fd), os.fstat(fill)
            if not stat.S_ISREG(mine.st_mode) or (mine.st_dev, mine.st_ino) != (
                theirs.st_dev,
                theirs.st_ino,
            ):
                os.close(fill)
                return None
            self._fill_fd = fill
        return self._fill_fd

    def _own_writers(self) -> tuple[int, ...]:
        """Our write-only descriptor (the fill one), which only writes under our lock: it is
        never another writer to wait for."""
        return () if self._fill_fd is None else (self._fill_fd,)

    def _drop_fill_fd(self) -> None:
        if self._fill_fd is not None:
            os.close(self._fill_fd)
            self._fill_fd = None

    def _open(self) -> int:
        try:
            make_dirs(self.path.parent)
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
            return os.open(self.path, flags, _FILE_MODE)
        except PermissionError:
            raise SessionFileError(
                self.path, "permission denied; cannot write the session"
            ) from None
        except IsADirectoryError:
            raise SessionFileError(self.path, "is a directory, not a session file") from None
        except OSError as exc:
            raise SessionFileError(self.path, f"cannot open for writing ({exc.strerror})") from None

    def _lock(self) -> tuple[int, bool, int]:
        deadline = time.monotonic() + self.lock_timeout
        while True:
            if self._fd is None:
                self._fd = self._open()
            fd = self._fd
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES):
                        raise
                    if time.monotonic() > deadline:
                        raise SessionLockedError(
                            self.path,
                            f"another process holds the write lock for over "
                            f"{self.lock_timeout:g} s; try again later",
                        ) from None
                    time.sleep(_LOCK_POLL_S)
            fd_stat = os.fstat(fd)
            try:
                path_stat = os.stat(self.path)
            except FileNotFoundError:
                path_stat = None
            if path_stat is not None and (path_stat.st_dev, path_stat.st_ino) == (
                fd_stat.st_dev,
                fd_stat.st_ino,
            ):
                identity = (fd_stat.st_dev, fd_stat.st_ino)
                replaced = self._identity is not None and self._identity != identity
                self._identity = identity
                if not self._cleaned:
                    self._cleaned = True
                    self.stale_temps_removed = remove_stale_temps(self._target())
                return fd, replaced, self._settled_size(fd, fd_stat.st_size, identity)
            # Someone renamed a rewritten file over ours (or removed it): follow the path.
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            self._fd = None
            self._drop_fill_fd()

    def _settled_size(self, fd: int, size: int, identity: tuple[int, int]) -> int:
        """The file's size once a line another writer is writing right now is finished.

        Our lock does not stop pi: a file that ends in an unfinished line may be pi in the
        middle of an append. Ending that line with our newline (before an append) or writing
        it back ended (in a rewrite) would cut pi's line in two, so while a process holds the
        file open write-only and the line stays unfinished, wait, at most ``_SETTLE_MAX_S``.
        A torn line nobody is writing (a crash) costs one look.
        """
        deadline = time.monotonic() + _SETTLE_MAX_S
        while size and os.pread(fd, 1, size - 1) != b"\n":
            if not count_write_only_holders(self._target(), identity, own=self._own_writers()):
                break
            if time.monotonic() > deadline:
                break
            time.sleep(_CARRY_PAUSE_S / 5)
            size = os.fstat(fd).st_size
        return size

    def _carry_over(self, old_fd: int, target: Path, read_up_to: int) -> None:
        """Append to the new file what was appended to the old one after ``read_up_to``.

        pi takes no lock: an append it opened the file for before our rename lands in the old
        inode, which the rename unlinked. Those bytes are copied over, whole lines only, as
        they arrive, until the old inode has stopped growing for a pause and no process holds
        it open write-only any more (where ``/proc`` tells; elsewhere, until it also ends with
        a finished line), at most ``_CARRY_MAX_S``. An unfinished line still there at the end
        (its writer died, or is stalled past the limit) is copied as it is: kept, not dropped.
        """
        old = os.fstat(old_fd)
        identity = (old.st_dev, old.st_ino)
        carried = seen = read_up_to
        quiet = 0
        deadline = time.monotonic() + _CARRY_MAX_S
        while True:
            size = os.fstat(old_fd).st_size
            carried += self._copy_tail(old_fd, target, carried, size, whole_lines=True)
            holders = count_write_only_holders(target, identity, own=self._own_writers())
            settled = size == seen and (holders == 0 if holders is not None else carried == size)
            quiet = quiet + 1 if settled else 0
            # Two settled looks one pause apart: the pause covers a writer whose open() had
            # found the old file but not yet returned when we looked the first time.
            if quiet >= 2 or time.monotonic() > deadline:
                break
            seen = size
            time.sleep(_CARRY_PAUSE_S)
        size = os.fstat(old_fd).st_size
        self._copy_tail(old_fd, target, carried, size, whole_lines=False)

    def _copy_tail(
        self, old_fd: int, target: Path, start: int, end: int, *, whole_lines: bool
    ) -> int:
        """Append the old file's bytes ``[start, end)`` (only up to the last newline when
        ``whole_lines``) to ``target``; returns how many were copied."""
        extra = _read_range(old_fd, start, end)
        if whole_lines:
            extra = extra[: extra.rfind(b"\n") + 1]
        if extra:
            with open(target, "ab") as handle:
                handle.write(extra)
                handle.flush()
                if self.fsync:
                    os.fsync(handle.fileno())
        return len(extra)

    def _target(self) -> Path:
        """The file a rewrite replaces: through a symlink, the file it points to (renaming
        over the link would leave the target stale and turn the link into a copy)."""
        return Path(os.path.realpath(self.path))

    def _replace_with(self, locked_fd: int, data: Iterable[bytes], *, read_up_to: int) -> None:
        target = self._target()
        directory = target.parent
        # os.urandom, not secrets: the same 8 hex characters, without importing secrets (and
        # random, hmac) into every command that only reads (tests/test_lazy_imports.py).
        temp = directory / f".{target.name}.{os.urandom(4).hex()}.tmp"
        mode = os.fstat(locked_fd).st_mode & 0o777 or _FILE_MODE
        try:
            tfd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
        except OSError as exc:
            raise SessionFileError(
                self.path, f"cannot create a temporary file for the rewrite ({exc.strerror})"
            ) from None
        try:
            os.fchmod(tfd, mode)  # os.open applied the umask; keep the original mode exactly
            for chunk in data:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(tfd, view) :]
            os.fsync(tfd)
            new_stat = os.fstat(tfd)
        except BaseException:
            os.close(tfd)
            temp.unlink(missing_ok=True)
            raise
        os.close(tfd)
        try:
            os.replace(temp, target)
        except OSError as exc:
            temp.unlink(missing_ok=True)
            raise SessionFileError(self.path, f"atomic rename failed ({exc.strerror})") from None
        fsync_dir(directory)
        self._carry_over(locked_fd, target, read_up_to)
        # Our lock lived on the old inode; release it and write to the new file from now on.
        fcntl.flock(locked_fd, fcntl.LOCK_UN)
        os.close(locked_fd)
        self._fd = None
        self._drop_fill_fd()
        self._identity = (new_stat.st_dev, new_stat.st_ino)


_CARRY_PAUSE_S: Final = 0.005
_CARRY_MAX_S: Final = 2.0
_SETTLE_MAX_S: Final = 0.5
"""The longest a transaction waits for another writer to finish the file's last line."""
"""The longest a rewrite waits for writers still appending to the file it replaced."""


def _read_range(fd: int, start: int, end: int) -> bytes:
    chunks: list[bytes] = []
    while start < end:
        chunk = os.pread(fd, end - start, start)
        if not chunk:
            break
        chunks.append(chunk)
        start += len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> int:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    return len(data)


def remove_stale_temps(file: Path) -> list[Path]:
    """Remove the temporary copies (``.<name>.<8 hex>.tmp``) that killed rewrites of ``file``
    left behind; returns them, sorted.

    Call it with the session's write lock held: a rewrite in progress holds that lock, so every
    such copy that exists then is a leftover.
    """
    removed: list[Path] = []
    prefix = f".{file.name}."
    for candidate in file.parent.glob(f"{glob.escape(prefix)}*.tmp"):
        if _TEMP_NAME.fullmatch(candidate.name[len(prefix) :]) and candidate.is_file():
            candidate.unlink(missing_ok=True)
            removed.append(candidate)
    return sorted(removed)


def make_dirs(directory: Path) -> None:
    """Create ``directory`` and its missing parents, each new one with mode 0700."""
    missing: list[Path] = []
    while not directory.exists():
        missing.append(directory)
        directory = directory.parent
    for new in reversed(missing):
        new.mkdir(mode=_DIR_MODE, exist_ok=True)


def fsync_dir(directory: Path) -> None:
    """Make a rename or a new file in ``directory`` durable (best effort: some file systems
    cannot fsync a directory)."""
    try:
        dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
