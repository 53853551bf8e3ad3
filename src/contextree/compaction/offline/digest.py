"""What the offline summarizer knows about a conversation: the digest and the line vocabulary.

A conversation (``conversation.py``) and an earlier summary (``previous.py``) are both read into a
:class:`Digest`; ``items.py`` and ``render.py`` write it out. The labels and generated next steps
below are written by one side and recognized by the other, so they live here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from contextree.compaction.offline.lazy_pattern import LazyPattern

WAITING: Final = "Waiting for the user's answer to the pending question"
RESPOND: Final = "Respond to the latest user request: "
GENERATED_STEPS: Final = (
    "Wait for the user's answer",
    "Respond to the latest user request",
    "Check the result of the last action",
    "Check whether the latest request",
    "Fix the failure of `",
    "Re-read `",
)

REQUESTS_LABEL: Final = "Later requests from the user:"
ASKED: Final = " (asked {n} times)"
QUESTION_LABEL: Final = "**Pending question to the user** (verbatim):"
STATE_LABEL: Final = "**Last assistant state**:"
CONTEXT_LABEL: Final = "**Context**:"
ACTION_LABEL: Final = "**Last action before the cut**:"
OUTPUT_LABEL: Final = "**Latest tool output** (excerpt):"
STATUS_LABEL: Final = "**Current status**:"
NOTED_LABEL: Final = "Noted during the work:"
NOTE_HEAD: Final = r"`[^`\n]{1,80}` (?:returned|wrote(?: \([^`()\n]{1,80}\))?):"
"""The pattern of what a note of a tool's result starts with ("`booking` returned:", or of what
a writing call wrote, "`docs_update` wrote (Price list):"), before
the result (after a space) or the results nested under it (each on a line of its own, after
:data:`NESTED_NOTE`): render.py writes both forms and previous.py reads them back."""
NOTE_LABEL: Final = LazyPattern(rf"^{NOTE_HEAD} ")
"""A note's label with the space after it, where a single note's result begins."""
NESTED_NOTE: Final = "  - "
UNANSWERED_LABEL: Final = "**Unanswered question to the user**:"
LEFT_OUT: Final = "_{n} of the user's statements left out for the budget._"

REQUEST_CHARS: Final = 240
GOAL_NOTE_CHARS: Final = 300
"""A goal said in passing is kept as long as a user's line is kept elsewhere."""
GOAL_SHOWN_CHARS: Final = 160
"""What of the goal line stays when even the essentials exceed the budget."""
SENTENCE_CHARS: Final = 240
COMMAND_CHARS: Final = 160
ERROR_CHARS: Final = 240


@dataclass
class Command:
    """One distinct shell command and the outcome of its latest run."""

    text: str
    runs: int = 0
    failures: int = 0
    passes: int = 0
    status: str = "unknown"
    """``ok``, ``failed``, ``cancelled``, ``unknown`` (no result, or the exit line was cut), or
    ``superseded`` (read back from a summary: failed, then a later run of its family)."""
    exit_code: int | None = None
    error: str | None = None
    seq: int = 0
    """When the latest run finished, counted over all commands; orders fixes after failures."""
    result: str | None = None
    """What the latest run reported, as it said it (``41 passed in 0.93s``), if it said so."""

    def finish(
        self, status: str, exit_code: int | None, error: str | None, result: str | None = None
    ) -> None:
        if status == "failed":
            self.failures += 1
        elif status == "ok":
            self.passes += 1
        self.status, self.exit_code, self.error = status, exit_code, error
        self.result = result

    def status_note(self) -> str:
        if self.status in ("failed", "superseded"):
            return f"exit {self.exit_code}" if self.exit_code is not None else "errors in output"
        if self.status == "ok":
            return f"exit {self.exit_code if self.exit_code is not None else 0}"
        return "cancelled" if self.status == "cancelled" else "exit status not shown"

    def outcome(self) -> str:
        """The latest run's exit status and what it reported: ``exit 0: 41 passed``."""
        return self.status_note() + (f": {self.result}" if self.result else "")


@dataclass
class FileChange:
    ops: dict[str, int] = field(default_factory=dict)
    failures: int = 0
    failed_last: bool = False
    error: str | None = None


@dataclass
class Digest:
    """Facts in the order they happened; lists hold one-line texts without list markers."""

    goal: str = ""
    goal_notes: list[str] = field(default_factory=list)
    """The user's later lines on what the work is for (a goal said in passing), each kept
    whole, after the goal (the first message's own goal clause is kept by the goal's short
    form, see items.py)."""
    requests: list[str] = field(default_factory=list)
    request_counts: dict[str, int] = field(default_factory=dict)
    """How often a request (or a near-duplicate of it) was made, when more than once."""
    constraints: list[str] = field(default_factory=list)
    preferences: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    """What the user (or a system message) stated with specific values, verbatim."""
    noted: list[str] = field(default_factory=list)
    """Specific statements of the assistant and short tool outputs, verbatim."""
    spoken: dict[str, None] = field(default_factory=dict)
    """The lines of ``noted`` from tool results that the assistant went on to speak of."""
    references: dict[str, str] = field(default_factory=dict)
    """Reference codes named anywhere (a ticket, a booking, a permit), each with the words
    that introduced it (``references.py``), in the order last named."""
    status: str | None = None
    """The latest statement of where the work stands (the assistant's; latest wins)."""
    open_questions: list[str] = field(default_factory=list)
    """Questions to the user that the next user message did not answer."""
    user_said: list[str] = field(default_factory=list)
    """The user's messages (not rendered): they answer earlier open questions on a merge."""
    user_chars: int = 0
    """How many characters the user's own messages in the conversation hold (not merged from
    an earlier summary): the summary's budget makes room for them."""
    finished: bool = False
    """The assistant's last words report the latest request finished."""
    left_out: int = 0
    """User statements an earlier summary left out for its budget."""
    reads: dict[str, None] = field(default_factory=dict)
    edits: dict[str, FileChange] = field(default_factory=dict)
    saved: dict[str, str] = field(default_factory=dict)
    """Documents a service tool wrote (``docs.write`` a template, ``sheets.create`` a sheet),
    by path, with the tool: a file of the user's world, not of a code base."""
    commands: dict[str, Command] = field(default_factory=dict)
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
