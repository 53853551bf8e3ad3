"""How probes are worded: templates per kind, placement and split (held-out or tuning).

Slots in braces are filled by :mod:`contextree.eval.values`; ``values`` names the slots whose
text must survive. The held-out phrasings were written before any summarizer rule of issue 25
and are used by no unit test of the summarizer: their score measures generalization. Several
phrasings of each kind carry no keyword a rule could look for (``must``, ``TODO``, ``decided``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from contextree.eval.probes import Placement, ProbeKind

__all__ = ["HELD_OUT", "PHRASINGS", "TUNING", "Phrasing"]


@dataclass(frozen=True, slots=True)
class Phrasing:
    """One way to state a probe of ``kind`` in a message at ``placement``."""

    key: str
    kind: ProbeKind
    placement: Placement
    text: str
    """The template of the sentence (for ``tool``: the command's output)."""
    values: tuple[str, ...]
    """Slots whose filled text is the probe's values."""
    tool: str = ""
    """``bash`` for a tool result (``command`` is what ran), ``edit``/``write`` for a file
    edit made by a tool call on ``{path}``."""
    command: str = ""
    failed: bool = False
    """A tool result that ends with a non-zero exit code."""
    held_out: bool = False


def _p(
    key: str, kind: ProbeKind, placement: Placement, text: str, *values: str, **kw: object
) -> Phrasing:
    return Phrasing(key, kind, placement, text, values, **kw)  # type: ignore[arg-type]


# --- held out: written first, never read while tuning the summarizer ---------------------------

HELD_OUT: Final[tuple[Phrasing, ...]] = tuple(
    Phrasing(p.key, p.kind, p.placement, p.text, p.values, p.tool, p.command, p.failed, True)
    for p in (
        _p(
            "fact.pager",
            "fact",
            "user",
            "Heads-up for context: {person} is holding the pager until {date}, so route anything "
            "urgent through them.",
            "person",
            "date",
        ),
        _p(
            "fact.inventory",
            "fact",
            "tool",
            "primary: {host} ({product} {version}) region={region}\nreplicas: 2\n",
            "host",
            "version",
            tool="bash",
            command="cat deploy/inventory.txt",
        ),
        _p(
            "constraint.folder",
            "constraint",
            "system",
            "Deliverables stay inside {folder}; nothing gets written anywhere else on disk.",
            "folder",
        ),
        _p(
            "constraint.calls",
            "constraint",
            "user",
            "Budget's capped at {number} API calls per run, stay under it.",
            "number",
        ),
        _p(
            "safety.billing-box",
            "safety",
            "user",
            "{host} is the live billing box. Hands off: no restarts, no writes, read-only "
            "queries at most.",
            "host",
        ),
        _p(
            "safety.human",
            "safety",
            "system",
            "Destructive commands (rm -rf, DROP, force-push) against {codename} need a human "
            "in the loop first.",
            "codename",
        ),
        _p(
            "goal.where",
            "goal",
            "assistant",
            "Where we stand: {task}, parts 1 to {done} of {total} are through, and {next} comes "
            "after that.",
            "task",
            "next",
        ),
        _p(
            "goal.handover",
            "goal",
            "user",
            "Status for whoever picks this up: {task} is about {percent}% there; {next} is what "
            "is left.",
            "task",
            "next",
        ),
        _p(
            "preference.dates",
            "preference",
            "user",
            "Oh, and keep the write-ups in {language}, with dates written as {datefmt}.",
            "language",
            "datefmt",
        ),
        _p(
            "preference.house",
            "preference",
            "system",
            "House style for every reply: {style}.",
            "style",
        ),
        _p(
            "decision.settled",
            "decision",
            "assistant",
            "Settled: {choice} it is, since {reason}.",
            "choice",
        ),
        _p(
            "decision.wins",
            "decision",
            "user",
            "Between {alternative} and {choice}, {choice} wins: {reason}.",
            "choice",
        ),
        _p(
            "file_edit.patched",
            "file_edit",
            "assistant",
            "Patched {path} so the {thing} no longer double-counts.",
            "path",
        ),
        _p(
            "file_edit.write",
            "file_edit",
            "assistant",
            "Here is the new version.",
            "path",
            tool="write",
        ),
        _p(
            "error.refused",
            "error",
            "tool",
            "dial tcp {ip}: connect: connection refused\n{errcode}: gave up after {number} "
            "retries\n",
            "errcode",
            tool="bash",
            command="./scripts/sync --target {codename}",
            failed=True,
        ),
        _p(
            "error.machine",
            "error",
            "user",
            "It blows up on my machine with `{exception}: {detail}` whenever I open the {thing}.",
            "exception",
            "detail",
        ),
        _p(
            "todo.untouched",
            "todo",
            "assistant",
            "Nobody has looked at the {thing} for {ticket} so far; that one is ours too.",
            "ticket",
        ),
        _p(
            "todo.before-wrap",
            "todo",
            "user",
            "Before we wrap up, somebody has to {action} for {ticket}.",
            "ticket",
        ),
        _p(
            "question.cutoff",
            "question",
            "assistant",
            "Which cut-off should the {thing} use: {option_a} or {option_b}?",
            "option_a",
            "option_b",
        ),
        _p(
            "question.leave",
            "question",
            "assistant",
            "Do you want me to migrate {target} as well, or leave it for {person}?",
            "target",
            "person",
        ),
    )
)

# --- tuning: the phrasings the summarizer may be developed against ------------------------------

TUNING: Final[tuple[Phrasing, ...]] = (
    # facts
    _p(
        "fact.codename",
        "fact",
        "user",
        "The project codename is {codename} and it launches on {date}.",
        "codename",
        "date",
    ),
    _p(
        "fact.database",
        "fact",
        "user",
        "The production database is {product} {version} in {region}.",
        "version",
        "region",
    ),
    _p(
        "fact.staging",
        "fact",
        "assistant",
        "For reference, the staging API base URL is {url}.",
        "url",
    ),
    _p("fact.oncall", "fact", "system", "On call this week: {person} ({handle}).", "person"),
    _p(
        "fact.versions",
        "fact",
        "tool",
        "{product} {version}\nbuilt {date}\n",
        "version",
        tool="bash",
        command="{binary} --version",
    ),
    _p(
        "fact.owner",
        "fact",
        "user",
        "{person} owns {codename}; ask them about quotas.",
        "person",
        "codename",
    ),
    # constraints
    _p(
        "constraint.only",
        "constraint",
        "user",
        "Only {runtime}. No external network calls from the sandbox.",
        "runtime",
    ),
    _p(
        "constraint.must",
        "constraint",
        "system",
        "Every change must keep {thing} under {number} ms at p95.",
        "number",
    ),
    _p(
        "constraint.limit",
        "constraint",
        "user",
        "Keep the {thing} below {number} rows, the export tool chokes above that.",
        "number",
    ),
    _p(
        "constraint.plain",
        "constraint",
        "user",
        "Everything in this task targets {runtime}; nothing newer is installed on the hosts.",
        "runtime",
    ),
    _p(
        "constraint.deadline",
        "constraint",
        "assistant",
        "Noted: the freeze starts {date}, so nothing merges after that.",
        "date",
    ),
    # safety rules
    _p(
        "safety.never",
        "safety",
        "user",
        "Never run anything that writes to {host}; it is production.",
        "host",
    ),
    _p(
        "safety.dont",
        "safety",
        "system",
        "Do not delete anything under {folder} without asking first.",
        "folder",
    ),
    _p(
        "safety.plain",
        "safety",
        "user",
        "{codename} holds customer data. Read-only access there, and no copies leave it.",
        "codename",
    ),
    _p(
        "safety.secrets",
        "safety",
        "user",
        "Keep the {secret} key out of logs and out of the repo.",
        "secret",
    ),
    _p(
        "safety.assistant",
        "safety",
        "assistant",
        "I will not touch {host} without your go-ahead: it serves live traffic.",
        "host",
    ),
    # goal and status
    _p(
        "goal.current",
        "goal",
        "user",
        "Current task: {task}, steps 1-{done} of {total} done, next is {next}.",
        "task",
        "next",
    ),
    _p(
        "goal.status",
        "goal",
        "assistant",
        "Status: {task} is {done} of {total} steps done; next up is {next}.",
        "task",
        "next",
    ),
    _p(
        "goal.failing",
        "goal",
        "user",
        "The {thing} fails on {number} named cases; fix {case} first.",
        "case",
    ),
    _p(
        "goal.progress",
        "goal",
        "assistant",
        "Progress so far on {task}: {done}/{total}. Remaining: {next}.",
        "task",
        "next",
    ),
    _p(
        "goal.plain",
        "goal",
        "user",
        "We are halfway through {task}; {next} is the piece that remains.",
        "task",
        "next",
    ),
    # preferences
    _p("preference.terse", "preference", "user", "I prefer {style}.", "style"),
    _p("preference.units", "preference", "user", "Wants {units} units everywhere.", "units"),
    _p(
        "preference.decisive",
        "preference",
        "system",
        "The user prefers one decisive recommendation over a list of options, in {language}.",
        "language",
    ),
    _p(
        "preference.plain",
        "preference",
        "user",
        "Answers in {language}, please, and {style}.",
        "language",
        "style",
    ),
    _p("preference.format", "preference", "user", "Format for the reports: {style}.", "style"),
    # decisions
    _p(
        "decision.we-will",
        "decision",
        "assistant",
        "Decision: we will use {choice} for the {thing} because {reason}.",
        "choice",
    ),
    _p(
        "decision.go-with",
        "decision",
        "user",
        "Go with {choice} for the {thing}: {reason}.",
        "choice",
    ),
    _p(
        "decision.instead",
        "decision",
        "assistant",
        "I went with {choice} instead of {alternative} since {reason}.",
        "choice",
    ),
    _p("decision.plain", "decision", "user", "{choice} for the {thing}. {reason}.", "choice"),
    _p(
        "decision.chose", "decision", "assistant", "We chose {choice} over {alternative}.", "choice"
    ),
    # file edits
    _p("file_edit.edit", "file_edit", "assistant", "", "path", tool="edit"),
    _p(
        "file_edit.prose",
        "file_edit",
        "assistant",
        "I updated {path} to use the new {thing}.",
        "path",
    ),
    _p(
        "file_edit.user",
        "file_edit",
        "user",
        "I edited {path} by hand this morning, keep my change.",
        "path",
    ),
    _p(
        "file_edit.sed",
        "file_edit",
        "tool",
        "",
        "path",
        tool="bash",
        command="sed -i 's/{old}/{new}/' {path}",
    ),
    _p("file_edit.created", "file_edit", "assistant", "Created {path}.", "path", tool="write"),
    # errors
    _p(
        "error.traceback",
        "error",
        "tool",
        'Traceback (most recent call last):\n  File "run.py", line 12, in <module>\n'
        "{exception}: {detail}\n",
        "exception",
        "detail",
        tool="bash",
        command="python run.py --job {codename}",
        failed=True,
    ),
    _p("error.user", "error", "user", "I get '{errcode}' from {host} when I retry.", "errcode"),
    _p(
        "error.assistant",
        "error",
        "assistant",
        "The {thing} step fails with `{exception}: {detail}`.",
        "exception",
        "detail",
    ),
    _p(
        "error.exit",
        "error",
        "tool",
        "{errcode} {detail}\n",
        "errcode",
        tool="bash",
        command="make {target}",
        failed=True,
    ),
    _p(
        "error.plain",
        "error",
        "user",
        "Since {date} the {thing} returns {errcode} for every request.",
        "errcode",
    ),
    # open TODOs
    _p("todo.keyword", "todo", "assistant", "TODO: {action} for {ticket}.", "ticket"),
    _p("todo.still", "todo", "assistant", "I still need to {action} for {ticket}.", "ticket"),
    _p("todo.user", "todo", "user", "Remind me to {action} for {ticket} later.", "ticket"),
    _p("todo.yet", "todo", "assistant", "The {thing} for {ticket} is not wired up yet.", "ticket"),
    _p(
        "todo.system",
        "todo",
        "system",
        "Open item from the last session: {action} ({ticket}).",
        "ticket",
    ),
    # questions to the user
    _p(
        "question.should",
        "question",
        "assistant",
        "Should the retention be {option_a} or {option_b}?",
        "option_a",
        "option_b",
    ),
    _p(
        "question.confirm",
        "question",
        "assistant",
        "Can you confirm whether {target} is still used by {person}?",
        "target",
        "person",
    ),
    _p(
        "question.which",
        "question",
        "assistant",
        "Which of {option_a} and {option_b} do you want for the {thing}?",
        "option_a",
        "option_b",
    ),
    _p("question.ok", "question", "assistant", "Is it OK if I archive {target}?", "target"),
    _p(
        "question.need",
        "question",
        "assistant",
        "I need one thing from you before going on: the {thing} for {target}, {option_a} or "
        "{option_b}?",
        "option_a",
        "option_b",
    ),
)

PHRASINGS: Final[tuple[Phrasing, ...]] = TUNING + HELD_OUT
