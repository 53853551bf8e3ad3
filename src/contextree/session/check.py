"""Damage checks over a whole session: what ``contextree check`` reports.

Errors are damage (a model call or pi would go wrong, or data was lost); warnings are oddities a
healthy session can have (an aborted run leaves tool calls without results, a stray byte of
invalid UTF-8 in a tool output is read as U+FFFD, as pi reads it).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from contextree.entries.codec import INVALID_UTF8, LineError, entry_problem
from contextree.entries.shapes import message_oddities, message_problem
from contextree.entries.types import StoredEntry
from contextree.errors import cycle_text
from contextree.session.tool_pairs import ToolPairing
from contextree.session.tree import SessionTree, parent_cycle
from contextree.store.index import Record, collector_paused
from contextree.store.lines import PARTIAL_LAST_LINE

__all__ = [
    "NO_ROLE",
    "CheckReport",
    "Finding",
    "check_session",
    "finding_json",
    "parent_cycles",
]

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: where (line, entry id) and what."""

    severity: Severity
    message: str
    line: int | None = None
    entry_id: str | None = None


@dataclass(slots=True)
class CheckReport:
    source: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def damaged(self) -> bool:
        return bool(self.errors)

    def to_json(self) -> dict[str, Any]:
        """``contextree check --format json`` (docs/cli-json.md)."""
        return {
            "source": self.source,
            "damaged": self.damaged,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "findings": [finding_json(f) for f in self.findings],
        }


def finding_json(finding: Finding) -> dict[str, Any]:
    """One finding as ``check --format json`` lists it."""
    return {
        "severity": finding.severity,
        "message": finding.message,
        "line": finding.line,
        "entryId": finding.entry_id,
    }


def parent_cycles(tree: SessionTree) -> list[list[Record]]:
    """Every parent cycle of ``tree``: its records, in chain order from where it closes."""
    by_id = {r.id: r for r in tree.records() if r.id is not None}
    reaches_root: dict[str, bool] = {}
    cycles: list[list[Record]] = []
    for record in by_id.values():
        cycle = parent_cycle(by_id.get, record, reaches_root)
        if cycle:
            cycles.append(cycle)
    return cycles


def _known(entry_id: object, tree: SessionTree) -> bool:
    # A damaged file can hold any JSON value here; only a string can name an entry.
    return isinstance(entry_id, str) and tree.has_entry(entry_id)


def _entry_findings(tree: SessionTree, record: Record, entry: StoredEntry) -> list[Finding]:
    """What is wrong with one decoded entry on its own (its shape, its references)."""
    where = (record.line, record.id)
    problem = entry_problem(entry, needs_id=True)
    if problem is not None:
        return [Finding("error", problem, *where)]
    kind = record.type
    found: list[Finding] = []
    if kind == "message":
        message = entry["message"]
        if (shape := message_problem(message)) is not None:
            found.append(Finding("error", f"{shape} (a provider request cannot carry it)", *where))
        found.extend(Finding("warning", odd, *where) for odd in message_oddities(message))
    elif kind == "compaction":
        kept = entry.get("firstKeptEntryId")
        view = tree.get_branch_view(record.id) if record.id else None
        # A scan of the path, not a set of it: a set of a 100k-entry path costs megabytes.
        on_path = isinstance(kept, str) and view is not None and kept in view.ids()
        if not on_path:
            text = (
                f"firstKeptEntryId {kept!r} is not on the compaction's path "
                "(nothing before it is kept)"
            )
            found.append(Finding("error", text, *where))
        if not isinstance(entry.get("summary"), str):
            found.append(Finding("error", 'compaction has no string "summary"', *where))
    elif kind == "label" and not _known(entry.get("targetId"), tree):
        text = f"label targets missing entry {entry.get('targetId')!r}"
        found.append(Finding("warning", text, record.line))
    elif kind == "branch_summary":
        from_id = entry.get("fromId")
        if from_id != "root" and not _known(from_id, tree):
            found.append(Finding("warning", f"fromId {from_id!r} does not exist", record.line))
    return found


def check_session(tree: SessionTree) -> CheckReport:
    """Validate every entry of ``tree`` and return what is wrong."""
    report = CheckReport(tree.report.source)
    add = report.findings.append
    # A file longer now than when it was read is being appended to: its unfinished last line
    # is another process's append in flight (read between its bytes' writes), not damage.
    appending = tree.report.partial_last_line and _grown_since_read(tree)
    for bad in tree.report.bad_lines:
        if appending and bad.reason == PARTIAL_LAST_LINE:
            add(Finding("info", "the last line was being appended while it was read", bad.line))
            continue
        add(Finding("error", f"unreadable line skipped: {bad.reason}", bad.line))
    for entry_id, lines in tree.report.duplicate_ids.items():
        add(Finding("error", f"duplicate id {entry_id!r} (lines {lines})", lines[-1], entry_id))
    for entry_id, line, parent in tree.report.orphans:
        add(Finding("error", f"parent {parent!r} does not exist", line, entry_id))
    for cycle in parent_cycles(tree):
        members = [str(r.id) for r in cycle]
        for position, record in enumerate(cycle):
            # ParentCycleError's words, from this entry on: what the other commands say.
            shown = cycle_text(members[position:] + members[:position])
            loop = f"its parent chain loops back on itself ({shown})"
            add(Finding("error", loop, record.line, record.id))
    replaced = f"{INVALID_UTF8}; the line is kept byte for byte"
    header_line = tree.report.header_utf8_line
    if header_line is not None:
        add(Finding("warning", f"session header: {replaced}", header_line))
    decoding: list[Finding] = []
    entries: list[Finding] = []
    pairing = ToolPairing(tree.record_of)
    with collector_paused():  # decoding every entry: a bulk load
        for record in tree.records():
            try:
                # Each entry is read once and let go (Record.peek): memory stays near the
                # file's size (keeping them all took 4.4 times its size on a 141 MB session).
                entry = record.peek()
            except (LineError, RecursionError) as exc:
                reason = str(exc) if isinstance(exc, LineError) else "nested too deeply"
                decoding.append(
                    Finding("error", f"entry cannot be decoded: {reason}", record.line, record.id)
                )
                continue
            if record.utf8_replaced:
                decoding.append(Finding("warning", replaced, record.line, record.id))
            entries.extend(_entry_findings(tree, record, entry))
            if record.type == "message":
                pairing.add(record, entry.get("message"))
    report.findings.extend(decoding)
    report.findings.extend(entries)
    for severity, text, record in pairing.problems(tree.records()):
        add(Finding(severity, text, record.line, record.id))
    if tree.needs_rewrite:
        add(
            Finding(
                "info",
                f"format v{tree.report.migrated_from} is migrated to v3 in memory; "
                "the next write rewrites the file atomically",
            )
        )
    if tree.report.partial_last_line and not appending:
        add(Finding("warning", "the last line was cut off by an interrupted write"))
    return report


def _grown_since_read(tree: SessionTree) -> bool:
    """Whether the session's file holds more bytes now than the tree read (a database store
    is read in transactions, and has no such moment)."""
    path = getattr(tree.store, "path", None)
    if not isinstance(path, Path):
        return False
    try:
        return path.stat().st_size > tree.known_size
    except OSError:
        return False


UNDECODABLE = "undecodable"
"""The key :func:`count_types` counts message entries under whose body cannot be decoded."""

NO_ROLE = "(no role)"
"""The role :func:`count_types` counts message entries under that have no role: no
``message`` object, or a ``role`` that is not a non-empty string."""


def count_types(tree: SessionTree) -> Counter[str]:
    """Entries per type, message entries per role (``message:user``...).

    A message whose role cannot be read counts as :data:`UNDECODABLE`, one without a role as
    ``message:`` :data:`NO_ROLE`. Only the role is read, so oddities elsewhere in a body
    (invalid UTF-8 in a text, say) are found by ``check``.
    """
    counts: Counter[str] = Counter()
    for record in tree.records():
        if record.type == "message":
            try:
                role = record.message_role()
                counts[f"message:{role if isinstance(role, str) and role else NO_ROLE}"] += 1
            except (LineError, RecursionError):
                counts[UNDECODABLE] += 1
        else:
            counts[record.type] += 1
    return counts
