"""The lines a digest yields, each with a priority that decides what the budget drops first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import ahocorasick_rs

from contextree.compaction.offline.commands import command_family, resolved_failures
from contextree.compaction.offline.condense import condensed, without_shortened_copies
from contextree.compaction.offline.digest import (
    ACTION_LABEL,
    ASKED,
    CONTEXT_LABEL,
    GOAL_SHOWN_CHARS,
    NOTE_LABEL,
    NOTED_LABEL,
    OUTPUT_LABEL,
    QUESTION_LABEL,
    REQUESTS_LABEL,
    RESPOND,
    STATE_LABEL,
    STATUS_LABEL,
    UNANSWERED_LABEL,
    Command,
    Digest,
    FileChange,
)
from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.offline.prose import goal_clause, states_rule
from contextree.compaction.offline.references import reference_line
from contextree.compaction.offline.specifics import specific_count
from contextree.compaction.offline.text import (
    add_once,
    clip,
    focus_words_of,
    mentions,
    one_line,
    plural,
    split_sentences,
)
from contextree.compaction.offline.user_lines import USER_MARK

_GOAL_NOTE_SHOWN_CHARS: Final = 200
"""What of a goal note (or of the goal's clause in its short form) stays when even the
essentials exceed the budget."""
_PATHS_PER_LINE: Final = 10
_RESPOND_CHARS: Final = 80
"""The latest request in the next step that answers it (shown whole under In Progress)."""
_REFERENCE_PRIORITY: Final = 86
"""A reference code's line: a few tokens that outlast the sentences naming the code."""
_USER_TODO_PRIORITY: Final = 80
"""A TODO the user left open ranks with their preferences (80-85)."""
_STATE_TODO_PRIORITY: Final = 78
"""A TODO that is a state said in passing ("the coach isn't confirmed yet", "three entries
haven't paid yet") rather than work named as left to do: kept before the notes of the work,
not as a must line (in a session of plain talk the assistant says a dozen of them, and as must
lines they filled a small budget: dev +6 and held-out +3 probes within 20% of the history, the
same at the full budget)."""
_WORK_TODO: Final = LazyPattern(
    r"(?i)^(?:[-*]\s+|\d+[.)]\s+)?(?:\*\*)?(?:TODO|FIXME)\b|\b(?:still need to|still have to|"
    r"not done yet|left to do|remaining work|haven't (?:yet )?(?:done|migrated|updated|fixed))\b"
)
"""What names work as left to do ("TODO: ...", "I still need to ..."): such a TODO survives
every round, until history reports it done, whatever the budget."""
_SPOKEN_BONUS: Final = 5
"""A tool result's line the assistant went on to speak of outlasts one it passed over: its
own words often leave out the value the line holds (dev +13, held-out +9 at the full budget;
within 20% of the history -2 and -1, the user's plain statements they displaced)."""
_ASKED_FACT_PRIORITY: Final = 62
"""A user's question that names a value ("does the plan cope with him being in lisbon for
work 11-15 august?"): kept after their statements (ranked as a statement naming a value, 85
and more, it displaced them within 20% of the history: dev -2, held-out -2; at 50-70 dev +1
at the full budget, nothing else changed)."""
_RULE_BONUS: Final = 5
"""A tool result's line that sets a rule (a policy's "Never cross the causeway after HW-3h", a
contract's "must not be shared without ... consent") outlasts one that only states a fact: a
colleague who loses it may do harm (held-out +6 at the full budget, safety 47 -> 49 and saved
documents 28 -> 31 of 41, +3 within 20%; dev -2, the newest readable split +2)."""
_SHOWN_COMMANDS: Final = 10
"""Clean runs listed one per line (the most recent); older ones are counted by program."""


@dataclass(frozen=True)
class Item:
    text: str
    priority: int
    """Higher is kept longer; items with ``must`` are never dropped."""
    order: int
    """Position in history: within a priority, the oldest item is dropped first."""
    must: bool = False
    clip_to: int | None = None
    """Length a ``must`` item may be shortened to when even the essentials exceed the budget."""
    plain: bool = False
    """Rendered without a list marker (the goal text)."""
    label: str | None = None
    """A line written once before the first item of a run with this label."""
    user: bool = False
    """The user's (or a system message's) own words: counted when the budget leaves it out."""
    focus: bool = False
    """Matches the custom instructions: first in its section and never shortened."""
    short: str | None = None
    """What a ``must`` item becomes when even the essentials exceed the budget, instead of its
    first ``clip_to`` characters."""


class _ItemBuilder:
    def __init__(self, focus_words: tuple[str, ...]) -> None:
        self.items: dict[str, list[Item]] = {}
        self.focus_words = focus_words
        self.count = 0

    def add(
        self,
        key: str,
        text: str,
        priority: int,
        *,
        must: bool = False,
        clip_to: int | None = None,
        plain: bool = False,
        label: str | None = None,
        user: bool = False,
        short: str | None = None,
    ) -> None:
        self.count += 1
        focus = bool(self.focus_words) and mentions(text, self.focus_words)
        if focus and not must:
            priority = min(priority + 25, 99)
        item = Item(text, priority, self.count, must, clip_to, plain, label, user, focus, short)
        self.items.setdefault(key, []).append(item)


def build_items(d: Digest) -> dict[str, list[Item]]:
    b = _ItemBuilder(focus_words_of(d.focus))
    resolved = resolved_failures(d.commands)
    _add_asks(b, d)
    _add_done(b, d, resolved)
    _add_in_progress(b, d)
    blocked_errors = _add_blocked(b, d, resolved)
    _add_next(b, d, resolved)
    _add_context(b, d, resolved, blocked_errors)
    return b.items


def _goal_short(goal: str) -> str | None:
    """The goal shortened to its start and the clause that says what the work is for, when
    that clause lies past what a shortened goal line shows ("hi. I run the newsletter ...
    […] getting issue 12 out before the AGM on 3 March, that's the main goal.")."""
    clause = goal_clause(goal)
    if clause is None or clause in goal[:GOAL_SHOWN_CHARS]:
        return None
    clause = clip(clause, _GOAL_NOTE_SHOWN_CHARS)
    head = clip(goal, max(GOAL_SHOWN_CHARS - len(clause), 40))
    return f"{head} {clause}"


def _asked(request: str, times: int) -> str:
    return request + (ASKED.format(n=times) if times > 1 else "")


def _held_in(texts: list[str], shown: list[str], joined: str) -> set[str]:
    """Those of ``texts`` that occur in one of ``shown`` (``joined`` is them joined with NUL):
    one pass of an automaton of all the texts over the facts, where a search of the facts
    per text was quadratic in a long session of plain talk (every statement a fact)."""
    if not texts or not shown:
        return set()
    exact = set(shown)
    found = {text for text in texts if text in exact}
    rest = list(dict.fromkeys(t for t in texts if t and t not in found and "\0" not in t))
    if rest:
        automaton = ahocorasick_rs.AhoCorasick(rest, matchkind=ahocorasick_rs.MatchKind.Standard)
        found.update(
            rest[i] for i, _, _ in automaton.find_matches_as_indexes(joined, overlapping=True)
        )
    found.update(t for t in texts if "\0" in t and any(t in fact for fact in shown))
    return found


def _add_asks(b: _ItemBuilder, d: Digest) -> None:
    """The goal, status, requests, constraints, facts and questions."""
    # A statement the goal or the rules already show is not repeated among the facts.
    rules = {*d.constraints, *d.preferences, *d.goal_notes}
    stated = without_shortened_copies(d.facts, d.constraints, d.preferences, d.goal_notes)
    shown_facts = [fact for fact in stated if fact not in d.goal and fact not in rules]
    facts = "\0".join(shown_facts)
    texts = [_asked(request, d.request_counts.get(request, 1)) for request in d.requests]
    in_facts = _held_in([*texts, d.status] if d.status else texts, shown_facts, facts)
    if d.goal:
        # The goal is cut to its head and the clause that says what the work is for, or to
        # its weightiest sentences: a first message often opens with a greeting and a mood
        # ("hi. tax time and i'm freaking out ...") that a head cut kept instead of the
        # request said last (dev: +3 probes at a fifth of the history).
        short = _goal_short(d.goal) or condensed(d.goal, GOAL_SHOWN_CHARS)
        b.add("goal", d.goal, 100, must=True, clip_to=GOAL_SHOWN_CHARS, plain=True, short=short)
    for note in d.goal_notes:
        b.add("goal", note, 100, must=True, clip_to=_GOAL_NOTE_SHOWN_CHARS, plain=True)
    if d.status and d.status not in in_facts:
        b.add("status", f"{STATUS_LABEL} {d.status}", 95)
    for index, (request, text) in enumerate(zip(d.requests, texts, strict=True)):
        times = d.request_counts.get(request, 1)
        if index == len(d.requests) - 1:
            priority = 70
        elif len(request) < 16 or request in d.constraints:
            priority = 15  # "continue", "yes", "sleep" or a line already kept as a constraint
        else:
            # A request made again and again matters more than one made once.
            priority = 30 + _recency(index, len(d.requests)) + 5 * min(times - 1, 4)
        if text in in_facts:
            continue  # the whole request is kept as a statement of fact
        b.add("requests", text, priority, label=REQUESTS_LABEL, user=True)
    for constraint in without_shortened_copies(d.constraints, d.preferences):
        b.add("constraints", constraint, 100, must=True, clip_to=160)
    preferences = without_shortened_copies(d.preferences, d.constraints)
    for index, preference in enumerate(preferences):
        # Style, format, language and units hold for the whole session.
        b.add("constraints", preference, 80 + _recency(index, len(preferences)) // 4, user=True)
    for fact in shown_facts:  # (a model's summary gets the goal's recorded, see facts.py)
        # The user's statements: the more they pin down, the longer kept; a plain one (no
        # specific value) after the preferences, before the assistant's notes.
        specific = specific_count(fact)
        if fact.endswith("?"):
            # A value the user named inside a question: with the notes of the work.
            b.add("facts", fact, _ASKED_FACT_PRIORITY, user=True)
            continue
        b.add("facts", fact, 80 + 5 * min(specific, 3) if specific else 72, user=True)
    for index, note in enumerate(d.noted):
        priority = 45 + 5 * min(specific_count(note), 3) + _recency(index, len(d.noted))
        priority += _SPOKEN_BONUS if note in d.spoken else 0
        priority += _RULE_BONUS if _sets_rule(note) else 0
        b.add("facts", note, priority, label=NOTED_LABEL)
    for code, label in d.references.items():
        b.add("references", reference_line(code, label), _REFERENCE_PRIORITY)
    if d.pending_question:
        b.add("question", _question_text(d.pending_question), 100, must=True)
    for question in d.open_questions:
        if not (d.pending_question and question in d.pending_question):
            b.add("questions", f"{UNANSWERED_LABEL} {question}", 88)


def _add_done(b: _ItemBuilder, d: Digest, resolved: set[str]) -> None:
    """The work done: notes, edits, reads, commands run, inspections and tools."""
    for note in d.done_notes:
        b.add("done", f"[x] {note}", 45)
    for path, change in d.edits.items():
        b.add("done", f"[x] Modified `{path}`{_ops_note(change)}", 100, must=True)
    for path, tool in d.saved.items():
        # A document the user's work produced: kept before the notes of calls, not as a
        # must item like a code file's change (a long session writes many).
        if path not in d.edits:
            b.add("done", f"[x] Saved `{path}` ({tool})", 88)
    read_only = [path for path in d.reads if path not in d.edits]
    for start in range(0, len(read_only), _PATHS_PER_LINE):
        chunk = read_only[start : start + _PATHS_PER_LINE]
        b.add("done", "[x] Read " + ", ".join(f"`{path}`" for path in chunk), 100, must=True)
    _add_commands(b, d, resolved)
    if d.inspections:
        total = sum(d.inspections.values())
        counts = ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in d.inspections.items())
        b.add("done", f"[x] Ran {plural(total, 'read-only command')} ({counts})", 45)
    if d.tools:
        used = ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in d.tools.items())
        b.add("done", f"[x] Other tools used: {used}", 15)


def _add_commands(b: _ItemBuilder, d: Digest, resolved: set[str]) -> None:
    """The commands run, except those still failing (blocked)."""
    routine: list[Command] = []
    by_recency = sorted(d.commands.values(), key=lambda command: command.seq)
    rank = {command.text: index for index, command in enumerate(by_recency)}
    # Listed in the order of their latest runs, so the last line is the latest outcome (also
    # for a reader of the summary text, such as the short summary).
    for command in by_recency:
        runs = f" ×{command.runs}" if command.runs > 1 else ""
        bonus = _recency(rank[command.text], len(rank))
        result = f": {command.result}" if command.result else ""
        if command.text in resolved or command.status == "superseded":
            passed = _earlier_passes(command)
            note = f"{command.status_note()}{passed}; superseded by a later run"
            b.add("done", f"[x] Ran `{command.text}`{runs} ({note}){result}", 30 + bonus)
        elif command.status != "failed":
            earlier = f"; {plural(command.failures, 'earlier failure')}" if command.failures else ""
            if not earlier and rank[command.text] < len(rank) - _SHOWN_COMMANDS:
                routine.append(command)  # an older clean run: counted, not listed
                continue
            note = f"{command.status_note()}{earlier}"
            line = f"[x] Ran `{command.text}`{runs} ({note}){result}"
            b.add("done", line, (35 if earlier else 25) + bonus)
    if routine:
        families: dict[str, int] = {}
        for command in routine:
            family = command_family(command.text)
            families[family] = families.get(family, 0) + command.runs
        top = sorted(families.items(), key=lambda item: -item[1])[:6]
        shown = ", ".join(f"`{name}` ×{n}" if n > 1 else f"`{name}`" for name, n in top)
        more = f" and {len(families) - len(top)} more" if len(families) > len(top) else ""
        runs_text = plural(sum(c.runs for c in routine), "earlier command")
        b.add("done", f"[x] Ran {runs_text} without errors ({shown}{more})", 40)


def _add_in_progress(b: _ItemBuilder, d: Digest) -> None:
    in_facts = _held_in(d.in_progress, d.facts, "\0".join(d.facts))
    for item in d.in_progress:
        # A request that is also a statement of fact is shown whole among the facts: here
        # its head says which one is in progress.
        shown = len(item) > _RESPOND_CHARS and item in in_facts
        b.add("in_progress", f"[ ] {clip(item, _RESPOND_CHARS) if shown else item}", 80)
    for todo in d.todos:
        # An open TODO of work left to do survives every round until history reports it done.
        if todo.startswith(USER_MARK):
            # The user's own ("i'll ring them myself on monday"): kept beside their
            # preferences, not before everything as the work's own TODOs are (a must item
            # each filled a small budget: dev -2 within 20%).
            b.add("todos", todo, _USER_TODO_PRIORITY, user=True)
        elif _WORK_TODO.search(todo):
            b.add("todos", todo, 100, must=True, clip_to=200)
        else:
            b.add("todos", todo, _STATE_TODO_PRIORITY)
    if d.last_action:
        b.add("in_progress", f"[ ] {ACTION_LABEL} {d.last_action}", 60)


def _add_blocked(b: _ItemBuilder, d: Digest, resolved: set[str]) -> list[str]:
    """What is failing now; the errors it shows (not repeated under errors)."""
    blocked_errors: list[str] = []
    for command in d.commands.values():
        if command.status == "failed" and command.text not in resolved:
            error = f": {command.error}" if command.error else ""
            blocked_errors.append(command.error or "")
            passed = _earlier_passes(command)
            counts = f"; {command.result}" if command.result else ""
            line = f"`{command.text}` failed ({command.status_note()}{passed}{counts}){error}"
            b.add("blocked", line, 100, must=True, clip_to=220)
    for path, change in d.edits.items():
        if change.failed_last:
            blocked_errors.append(change.error or "")
            error = f": {change.error}" if change.error else ""
            b.add("blocked", f"Editing `{path}` failed{error}", 100, must=True, clip_to=220)
    for note in d.blocked_notes:
        b.add("blocked", note, 60)
    return blocked_errors


def _add_next(b: _ItemBuilder, d: Digest, resolved: set[str]) -> None:
    """The decisions and the next steps (fixing what fails first)."""
    for decision in d.decisions:
        if decision.startswith(USER_MARK):
            # The user's choice survives every round, like a constraint.
            b.add("decisions", decision, 100, must=True, clip_to=200)
        else:
            b.add("decisions", decision, 84)
    steps = list(d.next_steps)
    failing = [c for c in d.commands.values() if c.status == "failed" and c.text not in resolved]
    for command in sorted(failing, key=lambda c: c.seq)[-3:]:
        add_once(steps, f"Fix the failure of `{command.text}` and run it again.")
    for path, change in d.edits.items():
        if change.failed_last:
            add_once(steps, f"Re-read `{path}` and redo the edit that failed.")
    for index, step in enumerate(steps):
        if step.startswith(RESPOND):
            # The request is under In Progress whole: here its head says which one.
            step = RESPOND + clip(step[len(RESPOND) :], _RESPOND_CHARS)
        b.add("next", step, 75 if index < 3 else 65)


def _add_context(b: _ItemBuilder, d: Digest, resolved: set[str], blocked_errors: list[str]) -> None:
    """The focus, hook context, last state, errors, notes, paths, carried sections, output."""
    if d.focus:
        b.add("focus", f"**Focus** (requested for this summary): {d.focus}", 100, must=True)
    for line in d.extra_context:
        b.add("context", f"{CONTEXT_LABEL} {line}", 85)
    state = d.last_state or ""
    if d.pending_question and state.endswith(one_line(d.pending_question)):
        state = state[: -len(one_line(d.pending_question))].strip()
    if state:
        # Words that report the work finished belong with the finished work in a branch
        # summary, not under In Progress.
        b.add("state_done" if d.finished else "state", f"{STATE_LABEL} {state}", 65)
    # An error of a command that a later run fixed is history, not state: the latest outcome
    # wins.
    fixed = {c.error for c in d.commands.values() if c.error and c.text in resolved}
    errors = [error for error in d.errors if error not in blocked_errors and error not in fixed]
    for index, error in enumerate(errors):
        b.add("errors", f"**Error**: {error}", 70 + _recency(index, len(errors)))
    # A line read back from an earlier summary that is shown above as a rule, a fact or a
    # request is not repeated here.
    above = {d.goal, *d.requests, *d.constraints, *d.preferences, *d.facts}
    for note in d.critical:
        if note not in above:
            b.add("notes", note, 45)
    shown_prose = " ".join(
        [d.goal, *d.requests, *d.constraints, *d.preferences, d.pending_question or "", state]
        + [*d.facts, *d.noted]
        + [decision.replace("**: ", " ").replace("**", "") for decision in d.decisions]
    )
    for note in d.focus_notes:
        if note.removesuffix(" […]") not in shown_prose:
            b.add("related", f"**Related to focus**: {note}", 30)
    known = set(d.reads) | set(d.edits)
    mentioned = [path for path in d.mentioned if path not in known]
    for start in range(0, len(mentioned), _PATHS_PER_LINE):
        chunk = mentioned[start : start + _PATHS_PER_LINE]
        b.add("paths", "**Paths mentioned**: " + ", ".join(f"`{p}`" for p in chunk), 20)
    for heading, body in d.carried:
        # Carried whole: a model's table or paragraph is one fact, not a bullet per line.
        b.add(f"carried:{heading}", body, 55, plain=True)
    if d.last_output:
        b.add("output", f"{OUTPUT_LABEL} {d.last_output}", 10)


def _sets_rule(note: str) -> bool:
    """Whether a note of a tool's result (after its "`tool` returned:" label) has a sentence
    that sets a rule; the assistant's own noted sentences have no label and never do."""
    label = NOTE_LABEL.match(note)
    return label is not None and states_rule(split_sentences(note[label.end() :]))


def _earlier_passes(command: Command) -> str:
    # A run that passed before the latest failed: the history is not "failed twice".
    if not command.passes:
        return ""
    return f"; {command.passes} earlier run{'s' if command.passes > 1 else ''} passed"


def _recency(index: int, count: int) -> int:
    """Priority bonus for the newest entries of a list, so old detail is dropped first."""
    if index >= count - 5:
        return 20
    return 8 if index >= count - 15 else 0


def _ops_note(change: FileChange) -> str:
    ops = ", ".join(f"{op} ×{n}" if n > 1 else op for op, n in change.ops.items())
    failed = f"; {change.failures} failed" if change.failures else ""
    return f" ({ops}{failed})" if ops or failed else ""


def _question_text(question: str) -> str:
    if "\n" not in question:
        return f"{QUESTION_LABEL} {question}"
    quoted = "\n".join(f"> {line}" if line else ">" for line in question.splitlines())
    return f"{QUESTION_LABEL}\n{quoted}"
