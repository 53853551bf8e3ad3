"""A small coding session for the compaction, hook and server tests.

Two turns: the user asks for a parser fix (a read, an edit), then for the test suite (a failing
command, another read). With pi's estimator the cut lands

- at the second user message, a clean turn boundary, with ``KEEP_CLEAN`` tokens kept;
- inside the second turn (a split turn: its prefix is summarized on its own) with ``KEEP_SPLIT``;
- inside the first turn (a split turn with no history before it) with ``KEEP_PREFIX_ONLY``.

``add_third_turn`` continues the session after a compaction, so a second compaction has a
previous summary and new files.
"""

from __future__ import annotations

from pathlib import Path

from contextree.session.tree import SessionTree
from contextree.settings.schema import CompactionSettings
from contextree.store import JsonlFileStore
from core_helpers import assistant, counter_clock, counter_ids, tool_call, tool_result, user

__all__ = [
    "CONSTRAINT",
    "FAILING_COMMAND",
    "KEEP_CLEAN",
    "KEEP_PREFIX_ONLY",
    "KEEP_SPLIT",
    "add_third_turn",
    "build_session",
    "open_session",
    "settings",
]

KEEP_CLEAN = 2200
"""Keeps the whole second turn: the cut is its user message (no split turn)."""
KEEP_SPLIT = 1500
"""Keeps the end of the second turn: its user message, command and output are a turn prefix."""
KEEP_PREFIX_ONLY = 2400
"""Cuts inside the first turn: a split turn with nothing before it to summarize."""

CONSTRAINT = "Do not modify tests/golden.txt."
FAILING_COMMAND = "pytest -q tests/test_parser.py"


def settings(keep: int, **changes: object) -> CompactionSettings:
    """Compaction settings keeping ``keep`` tokens (no measured-usage adjustment)."""
    return CompactionSettings(
        keep_recent_tokens=keep,
        adjust_keep_recent_by_usage=False,
        **changes,  # type: ignore[arg-type]
    )


def open_session(path: Path) -> SessionTree:
    """A file-backed session with counter ids and timestamps."""
    return SessionTree(JsonlFileStore(path), cwd="/work", now=counter_clock(), new_id=counter_ids())


def build_session(tree: SessionTree) -> dict[str, str]:
    """Append the two turns; returns the entry ids by name (``u1``, ``a1``, ``t1``, ...)."""
    ids: dict[str, str] = {}

    def add(name: str, message: dict[str, object]) -> None:
        ids[name] = tree.append_message(message)

    add("u1", user(f"Fix the crash in src/parser.py on empty input. {CONSTRAINT}"))
    add("a1", assistant("Reading the parser.", calls=[_call("c1", "read", path="src/parser.py")]))
    add("t1", tool_result("c1", "def parse(text):\n" + "    x = 1\n" * 500, name="read"))
    add(
        "a2",
        assistant(
            "Patching the empty case.",
            calls=[_call("c2", "edit", path="src/parser.py", oldText="x = 1", newText="x = 2")],
        ),
    )
    add("t2", tool_result("c2", "Applied.", name="edit"))
    add("a3", assistant("Fixed the crash."))
    add("u2", user("Now run the test suite and report what fails. " * 18))
    add("a4", assistant("", calls=[_call("c4", "bash", command=FAILING_COMMAND)]))
    add(
        "t4",
        tool_result(
            "c4",
            "FAILED tests/test_parser.py::test_empty\n"
            + "." * 4000
            + "\nCommand exited with code 1",
            isError=True,
        ),
    )
    add(
        "a5",
        assistant("One failure remains.", calls=[_call("c5", "read", path="tests/test_parser.py")]),
    )
    add(
        "t5", tool_result("c5", "def test_empty():\n" + "    assert parse('')\n" * 200, name="read")
    )
    add("a6", assistant("The parser now handles empty input."))
    return ids


def add_third_turn(tree: SessionTree) -> dict[str, str]:
    """A later turn that writes docs/parser.md and reads docs/guide.md."""
    ids: dict[str, str] = {}

    def add(name: str, message: dict[str, object]) -> None:
        ids[name] = tree.append_message(message)

    add("u3", user("Document the parser in docs/parser.md, following docs/guide.md."))
    add("a7", assistant("Writing the page.", calls=[_call("c7", "write", path="docs/parser.md")]))
    add("t7", tool_result("c7", "Wrote docs/parser.md.", name="write"))
    add("a8", assistant("Checking the guide.", calls=[_call("c8", "read", path="docs/guide.md")]))
    add("t8", tool_result("c8", "# Guide\n" + "Write short sections.\n" * 300, name="read"))
    add("a9", assistant("Documented the parser in docs/parser.md."))
    return ids


def _call(call_id: str, name: str, **arguments: object) -> dict[str, object]:
    return tool_call(call_id, name, dict(arguments))
