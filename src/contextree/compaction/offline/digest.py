"""What the offline summarizer knows about a conversation: the digest and the line vocabulary.

A conversation (``conversation.py``) and an earlier summary (``previous.py``) are both read into a
:class:`_Digest`; ``items.py`` and ``render.py`` write it out. The labels and generated next steps
below are written by one side and recognized by the other, so they live here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

_WAITING: Final = "Waiting for the user's answer to the pending question"
_GENERATED_STEPS: Final = (
    "Wait for the user's answer",
    "Respond to the latest user request",
    "Check the result of the last action",
    "Check whether the latest request",
    "Fix the failure of `",
    "Re-read `",
)

_REQUESTS_LABEL: Final = "Later requests from the user:"
_ASKED: Final = " (asked {n} times)"
_QUESTION_LABEL: Final = "**Pending question to the user** (verbatim):"
_STATE_LABEL: Final = "**Last assistant state**:"
_CONTEXT_LABEL: Final = "**Context**:"
_ACTION_LABEL: Final = "**Last action before the cut**:"
_OUTPUT_LABEL: Final = "**Latest tool output** (excerpt):"

_REQUEST_CHARS: Final = 240
_SENTENCE_CHARS: Final = 240
_COMMAND_CHARS: Final = 160
_ERROR_CHARS: Final = 240


@dataclass
class _Command:
    """One distinct shell command and the outcome of its latest run."""

    text: str
    runs: int = 0
    failures: int = 0
    status: str = "unknown"
    """``ok``, ``failed``, ``cancelled``, ``unknown`` (no result, or the exit line was cut), or
    ``superseded`` (read back from a summary: failed, then a later run of its family)."""
    exit_code: int | None = None
    error: str | None = None
    seq: int = 0
    """When the latest run finished, counted over all commands; orders fixes after failures."""

    def finish(self, status: str, exit_code: int | None, error: str | None) -> None:
        if status == "failed":
            self.failures += 1
        self.status, self.exit_code, self.error = status, exit_code, error

    def status_note(self) -> str:
        if self.status in ("failed", "superseded"):
            return f"exit {self.exit_code}" if self.exit_code is not None else "errors in output"
        if self.status == "ok":
            return f"exit {self.exit_code if self.exit_code is not None else 0}"
        return "cancelled" if self.status == "cancelled" else "exit status not shown"


@dataclass
class _FileChange:
    ops: dict[str, int] = field(default_factory=dict)
    failures: int = 0
    failed_last: bool = False
    error: str | None = None


@dataclass
class _Digest:
    """Facts in the order they happened; lists hold one-line texts without list markers."""

    goal: str = ""
    requests: list[str] = field(default_factory=list)
    request_counts: dict[str, int] = field(default_factory=dict)
    """How often a request (or a near-duplicate of it) was made, when more than once."""
    constraints: list[str] = field(default_factory=list)
    preferences: list[str] = field(default_factory=list)
    reads: dict[str, None] = field(default_factory=dict)
    edits: dict[str, _FileChange] = field(default_factory=dict)
    commands: dict[str, _Command] = field(default_factory=dict)
    tools: dict[str, int] = field(default_factory=dict)
    inspections: dict[str, int] = field(default_factory=dict)
    """Read-only shell commands (grep, ls, git status ...) counted by program."""
    errors: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    todos: list[str] = field(default_factory=list)
    """Open TODO / still-to-do statements, verbatim, oldest first."""
    done_reports: list[str] = field(default_factory=list)
    """Sentences that report work done (not rendered): they close TODOs of an earlier
    summary when the digests are merged."""
    done_notes: list[str] = field(default_factory=list)
    in_progress: list[str] = field(default_factory=list)
    blocked_notes: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    critical: list[str] = field(default_factory=list)
    focus_notes: list[str] = field(default_factory=list)
    mentioned: dict[str, None] = field(default_factory=dict)
    extra_context: list[str] = field(default_factory=list)
    carried: list[tuple[str, str]] = field(default_factory=list)
    """Sections of an earlier summary under headings we do not know (a model's own layout):
    (heading line, body), carried whole."""
    active: bool = False
    """Whether a conversation with at least one part produced this digest."""
    focus: str | None = None
    pending_question: str | None = None
    last_state: str | None = None
    last_action: str | None = None
    last_output: str | None = None
