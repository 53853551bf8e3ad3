"""``contextree check --repair``: set aside the lines of a session that cannot be used.

The repair works in place, and only after a full copy is safe:

1. under the session's write lock (appenders in other processes wait), the file is read once;
2. the original bytes go to ``<name>.bak-<UTC time>`` (a new file, never an existing one nor
   through a symbolic link: ``-2``, ``-3``... when the name is taken), which is fsynced before
   anything else happens;
3. every unusable line goes, verbatim, to ``<name>.rejected`` (added to what it holds, never
   overwritten; the new content replaces it atomically), each preceded by a ``#`` comment with
   its line number and why it was rejected. A line already there under the same line number
   is not added again: a repair killed before step 4 and run again leaves each line once.
   Only a rejected-lines log is added to: when ``<name>.rejected`` is anything else (a session
   of that name, say, or a symbolic link - never followed, even when it points nowhere),
   ``<name>.rejected-2``, ``-3``... is used (:mod:`.rejected_log`);
4. the session is replaced atomically by the remaining lines (DESIGN decision 6: a file is
   only ever changed by an atomic rewrite), so pi and contextree keep using the same path.

A session in a database (``sqlite://`` / ``postgresql://`` URL) is repaired the same way, with
the backup and the rejected lines kept as sessions of the same database named
``<NAME>.bak-<UTC time>`` and ``<NAME>.rejected``; they are written first, each in its own
transaction, and the session is replaced only if it did not change meanwhile.

Unusable means: not JSON (after reading invalid UTF-8 as U+FFFD), not an object, nested too
deeply, no entry type, no id (format v2 and later), or a message entry without a message; also
a cut-off last line and garbage before the header. Blank lines are dropped. Everything else is
kept byte for byte, even when it is wrong: lines with invalid UTF-8 (pi reads them with U+FFFD,
and removing one would cut every later entry off from its parent), duplicate ids, entries whose
parent is missing, a ``firstKeptEntryId`` or a label pointing nowhere. Those are reported, not
changed, because no rule can tell which side of a dangling reference is the damaged one.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from contextree.entries.codec import LineError, entry_problem
from contextree.errors import SessionFileError
from contextree.session.check import Finding, check_session, finding_json
from contextree.session.rejected_log import (
    CHUNK_MARK,
    LINE_COMMENT,
    candidate_names,
    is_rejected_log,
)
from contextree.session.tree import SessionTree
from contextree.store.index import BadLine, Record
from contextree.store.jsonl import JsonlFileStore, fsync_dir, remove_stale_temps
from contextree.store.lines import parse_session
from contextree.store.missing import missing_session
from contextree.store.url import is_store_url, open_store

__all__ = ["RejectedLine", "RepairReport", "repair_session"]

_FILE_MODE = 0o600


@dataclass(frozen=True, slots=True)
class RejectedLine:
    """A line moved to the ``.rejected`` file: its number in the original and why."""

    line: int
    reason: str


@dataclass(slots=True)
class RepairReport:
    """What a repair did, and what is still wrong with the session afterwards."""

    source: str
    changed: bool = False
    """Whether the session file was replaced (then ``backup`` holds the original)."""
    backup: Path | str | None = None
    rejected_file: Path | str | None = None
    """Files next to a session file; for a database session, the URLs of sessions beside it."""
    rejected: list[RejectedLine] = field(default_factory=list)
    blank_lines_dropped: int = 0
    last_line_terminated: bool = False
    """The file did not end with a newline; the repaired copy does."""
    stale_temp_files: list[Path] = field(default_factory=list)
    """Leftovers of rewrites interrupted by a crash (incomplete copies); removed."""
    findings: list[Finding] = field(default_factory=list)
    """``contextree check`` of the session as it is now, after the repair."""

    @property
    def damaged(self) -> bool:
        """Whether errors remain that the repair does not fix (dangling references...)."""
        return any(f.severity == "error" for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        """``contextree check --repair --format json`` (docs/cli-json.md)."""
        return {
            "source": self.source,
            "changed": self.changed,
            "backup": str(self.backup) if self.backup is not None else None,
            "rejectedFile": str(self.rejected_file) if self.rejected_file is not None else None,
            "rejected": [{"line": r.line, "reason": r.reason} for r in self.rejected],
            "blankLinesDropped": self.blank_lines_dropped,
            "lastLineTerminated": self.last_line_terminated,
            "staleTempFiles": [str(p) for p in self.stale_temp_files],
            "damaged": self.damaged,
            "findings": [finding_json(f) for f in self.findings],
        }

    def messages(self) -> list[str]:
        """One line per action and per remaining problem."""
        out: list[str] = []
        if self.changed:
            out.append(f"{self.source}: original saved as {self.backup}")
        for rejected in self.rejected:
            out.append(
                f"{self.source}:{rejected.line}: moved to {self.rejected_file}: {rejected.reason}"
            )
        if self.blank_lines_dropped:
            out.append(f"{self.source}: dropped {self.blank_lines_dropped} blank line(s)")
        if self.last_line_terminated:
            out.append(f"{self.source}: ended the last line with a newline")
        for temp in self.stale_temp_files:
            out.append(f"{self.source}: removed {temp.name} (left by an interrupted rewrite)")
        for finding in self.findings:
            where = f"{self.source}:{finding.line}" if finding.line else self.source
            entry = f" (entry {finding.entry_id})" if finding.entry_id else ""
            out.append(f"{where}: {finding.severity}: {finding.message}{entry}")
        if not self.changed:
            out.append(f"{self.source}: nothing to repair; the file was not changed")
        elif self.damaged:
            out.append(f"{self.source}: repaired; the errors above need a decision by hand")
        else:
            out.append(f"{self.source}: repaired")
        return out


def _utc_now() -> datetime:
    return datetime.now(UTC)


def repair_session(path: str | Path, *, now: Callable[[], datetime] = _utc_now) -> RepairReport:
    """Repair the session file at ``path`` in place, after backing it up.

    Returns what was done and what remains wrong. A file without a valid session header is
    not a session this function can repair: it raises :class:`SessionFileError` and changes
    nothing.
    """
    if is_store_url(path):
        return _repair_stored(str(path), now)
    file = Path(path)
    if not file.is_file():
        raise missing_session(file)
    report = RepairReport(str(file))
    if not os.access(file, os.W_OK):
        return _check_unwritable(file, report)
    store = JsonlFileStore(file)
    try:
        with store.transaction() as txn:
            data = txn.read_from(0)
            repaired, rejected_lines = _split(data, report)
            rejected_target = file.with_name(f"{file.name}.rejected")
            report.stale_temp_files = sorted(
                store.stale_temps_removed + remove_stale_temps(rejected_target)
            )
            if repaired != data:
                stamp = now().astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
                report.backup = _write_backup(file, data, stamp)
                if rejected_lines:
                    report.rejected_file = _append_rejected(
                        file, rejected_lines, stamp, report.backup
                    )
                fsync_dir(file.parent)
                txn.replace(repaired)
                report.changed = True
    finally:
        store.close()
    report.findings = check_session(SessionTree.open(file, create=False)).findings
    return report


def _check_unwritable(file: Path, report: RepairReport) -> RepairReport:
    """The repair of a file this user may not write: with nothing to repair it needs no write
    access (a file in a read-only directory is never written either then); with something to
    repair it fails as the write would, changing nothing."""
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise SessionFileError(file, f"cannot read the session ({exc.strerror})") from None
    repaired, _ = _split(data, report)
    if repaired != data:
        raise SessionFileError(
            file, "permission denied; cannot write the session (it needs repair; nothing changed)"
        )
    report.findings = check_session(SessionTree.open(file, create=False)).findings
    return report


def _repair_stored(url: str, now: Callable[[], datetime]) -> RepairReport:
    store = open_store(url)
    if not store.exists():
        raise missing_session(url)
    report = RepairReport(store.name)
    data = store.read()
    repaired, rejected_lines = _split(data, report)
    if repaired != data:
        stamp = now().astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
        report.backup = _new_stored(f"{url}.bak-{stamp}", data)
        if rejected_lines:
            report.rejected_file = _add_stored_rejected(
                url, store.name, rejected_lines, stamp, report.backup
            )
        with store.transaction() as txn:
            if txn.replaced or txn.read_from(0) != data:
                raise SessionFileError(
                    store.name,
                    f"changed while being repaired; nothing was replaced (the copy read is in "
                    f"{report.backup}); run the repair again",
                )
            txn.replace(repaired)
        report.changed = True
    report.findings = check_session(SessionTree.open(url, create=False)).findings
    return report


def _add_stored_rejected(
    url: str, source: str, rejected: list[tuple[int, bytes, str]], stamp: str, backup: str
) -> str:
    """Add ``rejected`` to the first rejected-lines log from ``<url>.rejected`` on (never to a
    session that happens to have the name); its name."""
    for name in candidate_names(f"{url}.rejected"):
        log = open_store(name, derived_name=True)
        with log.transaction() as txn:
            held = txn.read_from(0)
            if not is_rejected_log(held):
                continue  # a session of that name: not ours to write into
            fresh = _not_yet_rejected(held, rejected)
            if fresh:
                txn.append(_rejected_chunk(source, fresh, stamp, backup))
        return log.name
    raise SessionFileError(url, "no free name for the rejected lines; nothing was replaced")


def _new_stored(url: str, data: bytes) -> str:
    """Write ``data`` as a new session at ``url`` (``-2``, ``-3``... when taken); its name."""
    for attempt in range(1, 1000):
        store = open_store(url if attempt == 1 else f"{url}-{attempt}", derived_name=True)
        with store.transaction() as txn:
            if txn.size:
                continue
            txn.replace(data)
        return store.name
    raise SessionFileError(url, "too many backups with the same time stamp; nothing changed")


def _split(data: bytes, report: RepairReport) -> tuple[bytes, list[tuple[int, bytes, str]]]:
    """The repaired bytes, and the rejected lines as ``(number, raw, reason)``."""
    parsed = parse_session(data, report.source)  # no header: raises, nothing is written
    rejected: list[tuple[int, bytes, str]] = []
    kept: list[bytes] = [parsed.title_slot] if parsed.title_slot is not None else []
    for bad in parsed.leading:
        rejected.append((bad.line, bad.raw, f"before the session header: {bad.reason}"))
    assert parsed.header_raw is not None
    kept.append(parsed.header_raw)
    needs_id = parsed.version >= 2
    for item in parsed.items:
        if isinstance(item, BadLine):
            rejected.append((item.line, item.raw, item.reason))
            continue
        problem = _entry_problem(item, needs_id=needs_id)
        raw = item.raw
        assert raw is not None
        if problem is not None:
            rejected.append((item.line or 0, raw, problem))
        else:
            kept.append(raw)
    rejected.sort(key=lambda r: r[0])
    report.rejected = [RejectedLine(number, reason) for number, _, reason in rejected]
    total = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    report.blank_lines_dropped = total - len(kept) - len(rejected)
    report.last_line_terminated = (
        bool(data) and not data.endswith(b"\n") and not (rejected and rejected[-1][0] == total)
    )
    return b"\n".join(kept) + b"\n", rejected


def _entry_problem(record: Record, *, needs_id: bool) -> str | None:
    try:
        entry = record.entry
    except LineError as exc:
        return str(exc)
    except RecursionError:
        return "nested too deeply to decode"
    return entry_problem(entry, needs_id=needs_id)


def _create_exclusive(path: Path) -> int:
    """A new file at ``path``; never an existing one, never through a symbolic link (``O_EXCL``
    fails on any link, even a dangling one; ``O_NOFOLLOW`` says so twice)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(path, flags, _FILE_MODE)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)


def _write_backup(file: Path, data: bytes, stamp: str) -> Path:
    """Write ``data`` to a new ``<name>.bak-<stamp>[-N]``, never over an existing file."""
    for attempt in range(1, 1000):
        suffix = "" if attempt == 1 else f"-{attempt}"
        backup = file.with_name(f"{file.name}.bak-{stamp}{suffix}")
        try:
            fd = _create_exclusive(backup)
        except FileExistsError:
            continue
        except OSError as exc:
            raise SessionFileError(
                file, f"cannot create the backup {backup.name} ({exc.strerror}); nothing changed"
            ) from None
        try:
            _write_all(fd, data)
        except OSError as exc:
            backup.unlink(missing_ok=True)
            raise SessionFileError(
                file, f"cannot write the backup {backup.name} ({exc.strerror}); nothing changed"
            ) from None
        finally:
            os.close(fd)
        return backup
    raise SessionFileError(file, "too many backups with the same time stamp; nothing changed")


def _append_rejected(
    file: Path, rejected: list[tuple[int, bytes, str]], stamp: str, backup: Path
) -> Path:
    """Add the rejected lines, verbatim, each after a ``# line N: reason`` comment, to those
    already in ``<name>.rejected``, leaving out the ones it holds already (a repair killed
    before it replaced the session, run again); the file is replaced atomically, so a kill
    leaves the old or the new one.

    Only a regular file holding a rejected-lines log (or a free name) is used: a symbolic link
    (dangling or not), a directory, a session... is left alone and the next name is taken
    (``-2``, ``-3``...). Nothing is ever written through a link: the temporary copy is made
    beside the session, and renamed (which replaces a name, never follows it) or hard-linked
    (which never takes a name already there) into place."""
    for name in candidate_names(f"{file.name}.rejected"):
        target = file.with_name(name)
        existing = _read_log(file, target, backup)
        if existing is None or not is_rejected_log(existing):
            continue  # a link, a directory, a session...: not ours to write into
        fresh = _not_yet_rejected(existing, rejected)
        if not fresh:
            return target
        if existing and not existing.endswith(b"\n"):
            existing += b"\n"  # cut short by a crash of an older version: keep it, end it
        chunk = _rejected_chunk(file.name, fresh, stamp, backup.name)
        if _put_log(file, target, existing + chunk, backup, new=not existing):
            return target
    raise SessionFileError(
        file, f"{file.name}.rejected: no free name for the rejected lines; nothing was replaced"
    )


def _read_log(file: Path, target: Path, backup: Path) -> bytes | None:
    """What the regular file ``target`` holds (``b""`` when nothing is there), or ``None``
    when it is something else: a symbolic link, a directory, a FIFO... (never followed)."""
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return b"" if not os.path.lexists(target) else None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            return None  # a symbolic link (ELOOP with O_NOFOLLOW), a directory, a socket
        raise _log_error(file, target, backup, "read", exc) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    except OSError as exc:
        raise _log_error(file, target, backup, "read", exc) from None
    finally:
        os.close(fd)


def _put_log(file: Path, target: Path, data: bytes, backup: Path, *, new: bool) -> bool:
    """Make ``target`` (a name beside the session, never resolved) hold ``data``, atomically.
    A new log takes the name only if it is still free (``False`` when something took it
    meanwhile); an existing one is replaced by a rename, which replaces a link put there
    meanwhile instead of writing through it."""
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = _create_exclusive(temp)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        if not new:
            os.replace(temp, target)
            return True
        try:
            os.link(temp, target)  # never takes, or follows, a name already there
        except FileExistsError:
            temp.unlink()
            return False
        temp.unlink()
        return True
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise _log_error(file, target, backup, "write", exc) from None


def _log_error(
    file: Path, target: Path, backup: Path, action: str, exc: OSError
) -> SessionFileError:
    return SessionFileError(
        file,
        f"cannot {action} {target.name} ({exc.strerror}); the original is in {backup.name} "
        "and the session was not changed",
    )


def _not_yet_rejected(
    existing: bytes, rejected: list[tuple[int, bytes, str]]
) -> list[tuple[int, bytes, str]]:
    """The lines of ``rejected`` that ``existing`` (a ``.rejected`` file) does not hold yet
    under the same line number."""
    if not existing:
        return rejected
    held: set[tuple[int, bytes]] = set()
    lines = existing.split(b"\n")
    position = 0
    while position < len(lines) - 1:
        found = LINE_COMMENT.match(lines[position])
        if found is None:
            position += 1
            continue
        held.add((int(found.group(1)), lines[position + 1]))
        position += 2  # the rejected line itself, whatever it looks like
    return [item for item in rejected if (item[0], item[1]) not in held]


def _rejected_chunk(
    source: str, rejected: list[tuple[int, bytes, str]], stamp: str, backup: str
) -> bytes:
    """The rejected lines, verbatim, each after a ``# line N: reason`` comment."""
    # A name may hold a line break: the comment must stay one line for the log to stay a log.
    source, backup = (" ".join(name.splitlines()) for name in (source, backup))
    chunks = [
        CHUNK_MARK
        + f"{stamp}: {len(rejected)} line(s) rejected from {source} (original: {backup})\n".encode()
    ]
    for number, raw, reason in rejected:
        chunks.append(f"# line {number}: {' '.join(reason.split())}\n".encode())
        chunks.append(raw + b"\n")
    return b"".join(chunks)
