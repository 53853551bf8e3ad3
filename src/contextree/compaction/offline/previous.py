"""Reading an earlier summary back into a digest, and merging an old digest with a new one.

Our own summary lines (see ``items.py``) become structure again; other lines are kept
verbatim.
"""

from __future__ import annotations

import re
from typing import Final

from contextree.compaction.file_ops import parse_files_tag
from contextree.compaction.offline.answers import answers_question
from contextree.compaction.offline.digest import (
    ACTION_LABEL,
    CONTEXT_LABEL,
    GENERATED_STEPS,
    GOAL_NOTE_CHARS,
    NESTED_NOTE,
    NOTE_HEAD,
    NOTED_LABEL,
    OUTPUT_LABEL,
    QUESTION_LABEL,
    REQUEST_CHARS,
    REQUESTS_LABEL,
    STATE_LABEL,
    STATUS_LABEL,
    UNANSWERED_LABEL,
    WAITING,
    Command,
    Digest,
    FileChange,
)
from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.offline.preferences import FIRM_PREFERENCE
from contextree.compaction.offline.prose import (
    CONSTRAINT,
    GOAL_STATEMENT,
    reports_done,
    says_the_goal,
    states_fact,
)
from contextree.compaction.offline.references import (
    REFERENCES_HEADING,
    add_references,
    merged_references,
    read_reference_line,
)
from contextree.compaction.offline.text import (
    add_grouped,
    add_once,
    clip,
    one_line,
    similar,
    split_sentences,
    union,
)

_TAG_BLOCK = LazyPattern(r"<(read-files|modified-files|files)>\n?(.*?)\n?</\1>\s*", re.S)
_OMITTED = LazyPattern(r"^(?:…|\.\.\.) \(\d+ more files? omitted\)$")
_HEADING = LazyPattern(r"^(#{2,3})\s+(.+?)\s*:?\s*$")
_TURN_CONTEXT = LazyPattern(r"\n-{3,}\n+\*\*Turn Context \(split turn\):\*\*\n")
_ITEM_MARKER = LazyPattern(r"^(?:[-*•]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_SECTION_KEYS: Final = {
    "goal": "goal",
    "goals": "goal",
    "original request": "request",
    "constraints & preferences": "constraints",
    "constraints and preferences": "constraints",
    "constraints": "constraints",
    "key facts": "facts",
    "facts": "facts",
    "open questions": "questions",
    "done": "done",
    "completed": "done",
    "early progress": "done",
    "in progress": "in_progress",
    "open todos": "todos",
    "todos": "todos",
    "todo": "todos",
    "pending": "in_progress",
    "blocked": "blocked",
    "key decisions": "decisions",
    "decisions": "decisions",
    "next steps": "next",
    "critical context": "critical",
    "references": "references",
    "context for suffix": "suffix",
    "progress": "progress",
}
_MODIFIED_LINE = LazyPattern(r"^Modified `(?P<path>.+)`(?: \((?P<ops>[^()]*)\))?$")
_READ_LINE = LazyPattern(r"^Read (?P<paths>`.*)$")
_SAVED_LINE = LazyPattern(r"^Saved `(?P<path>[^`]+)` \((?P<tool>[^()]+)\)$")
_RAN_LINE = LazyPattern(
    r"^Ran `(?P<cmd>.+?)`(?: ×(?P<runs>\d+))? \((?P<note>[^()]*)\)(?:: (?P<result>.*))?$"
)
_LEFT_OUT_LINE = LazyPattern(r"^_(\d+) of the user's statements left out for the budget\._$")
_LEFT_OUT_IN = LazyPattern(r" ?_(\d+) of the user's statements left out for the budget\._")
"""The same note inside a paragraph: earlier releases read it back as part of the goal line
above it, and wrote one more each round."""
_TOOLS_LINE = LazyPattern(r"^Other tools used: (?P<tools>.+)$")
_INSPECTIONS_LINE = LazyPattern(r"^Ran \d+ read-only commands? \((?P<counts>.+)\)$")
_FAILED_LINE = LazyPattern(r"^`(?P<cmd>.+)` failed \((?P<note>[^()]*)\)(?:: (?P<error>.*))?$")
_EDIT_FAILED_LINE = LazyPattern(r"^Editing `(?P<path>.+)` failed(?:: (?P<error>.*))?$")
_BACKTICKED = LazyPattern(r"`([^`]+)`")
_EMPTY_SUMMARIES: Final = ("No prior history.", "No content to summarize", "No summary generated")


def digest_summary(text: str) -> Digest:
    """Read an earlier summary: our own lines become structure again, other lines stay verbatim."""
    d = Digest()
    body = _TAG_BLOCK.sub(lambda match: _collect_tag(d, match), text)
    body = _TURN_CONTEXT.sub("\n", body)
    sections = _split_sections(body)
    # The codes the summary's lines name, after those of its list (a line that holds one
    # stood for it there, see render.py): they outlast the line.
    found: dict[str, str] = {}
    for line in body.splitlines():
        add_references(found, line)
    for key, lines in sections:
        if key == "references" and not _our_references(lines):
            # A model's own "## References" (links, documents): carried as it wrote it.
            key, lines = _CARRIED, [REFERENCES_HEADING, *lines]
        if key == _CARRIED:
            heading, text = lines[0], "\n".join(lines[1:]).strip()
            if text and heading not in (h for h, _ in d.carried):
                d.carried.append((heading, text))
            continue
        noted = False
        for item in _group_items(lines):
            if key == "facts" and item.strip() == NOTED_LABEL:
                noted = True  # the assistant's statements and tool outputs follow
            elif key == "facts" and _ITEM_MARKER.match(item):
                fact = _ITEM_MARKER.sub("", item, count=1)
                for one in _notes_of_group(fact) if noted else [fact]:
                    add_once(d.noted if noted else d.facts, one)
            else:
                _read_item(d, key, item)
    for code, label in found.items():
        d.references.setdefault(code, label)
    return d


def _our_references(lines: list[str]) -> bool:
    """Whether a "References" section is our list of codes: each of its items is one."""
    items = [_ITEM_MARKER.sub("", item, count=1) for item in _group_items(lines)]
    return all(read_reference_line(item) is not None for item in items)


_NOTE_GROUP = LazyPattern(rf"^({NOTE_HEAD})\n(?={re.escape(NESTED_NOTE)})")
_NESTED_MARKER = LazyPattern(r"^[-*•]\s+")


def _notes_of_group(fact: str) -> list[str]:
    """The notes of a "`tool` returned:" line with its results nested under it (render.py
    writes a run of one tool's notes so), each with its label again; any other line whole."""
    group = _NOTE_GROUP.match(fact)
    if group is None:
        return [fact]
    # Only the list marker goes: a result's own "[x]" is what it said.
    nested = (_NESTED_MARKER.sub("", line.strip(), count=1) for line in fact.splitlines()[1:])
    return [f"{group.group(1)} {line}" for line in nested if line]


def _collect_tag(d: Digest, match: re.Match[str]) -> str:
    if match.group(1) == "files":
        # oh-my-pi 18: one tag, a folded directory tree with (Read)/(Write)/(RW) marks.
        read, modified = parse_files_tag(match.group(2))
        for path in read:
            d.reads.setdefault(path, None)
        for path in modified:
            d.edits.setdefault(path, FileChange())
        return ""
    # The fork writes "\n" between names as two characters (§8), so split on both.
    for raw in re.split(r"\n|\\n", match.group(2)):
        path = raw.strip()
        if not path or _OMITTED.match(path):
            continue
        if match.group(1) == "read-files":
            d.reads.setdefault(path, None)
        else:
            d.edits.setdefault(path, FileChange())
    return ""


_CARRIED = "carried"
"""Section key of a heading we do not know: the section is carried whole under its heading."""
_PARENTHETICAL = LazyPattern(r"\s*\(.*\)$")


def _section_key(title: str) -> str | None:
    """Our key for a heading's title, or ``None`` for a heading we do not know."""
    title = _PARENTHETICAL.sub("", title.strip("*").strip().lower()).rstrip(":").strip()
    if title in _SECTION_KEYS:
        return _SECTION_KEYS[title]
    for known, key in _SECTION_KEYS.items():
        # "Key Decisions Made", "Next Steps for the release"
        if " " in known and title.startswith(known + " "):
            return key
    return None


def _split_sections(body: str) -> list[tuple[str, list[str]]]:
    """(key, lines) per section. A ``##`` heading we do not know starts a carried section
    (key ``"carried"``, first line the heading itself); a ``###`` heading we do not know inside
    a known section becomes one item with its lines indented under it."""
    sections: list[tuple[str, list[str]]] = [("preamble", [])]
    in_subsection = False
    for line in body.splitlines():
        heading = _HEADING.match(line)
        if heading:
            key = _section_key(heading.group(2))
            level = len(heading.group(1))
            current = sections[-1][0]
            if key is not None:
                sections.append((key, []))
                in_subsection = False
            elif level >= 3 and current not in (_CARRIED, "preamble"):
                sections[-1][1].append(f"**{heading.group(2).strip().strip('*')}**")
                in_subsection = True
            elif level >= 3 and current == _CARRIED:
                sections[-1][1].append(line)
            else:
                sections.append((_CARRIED, [line.strip()]))
                in_subsection = False
            continue
        if in_subsection and line.strip():
            line = "  " + line.strip()
        sections[-1][1].append(line)
    preamble = [line for line in sections[0][1] if line.strip()]
    if len(sections) == 1:
        whole = "\n".join(preamble).strip()
        if whole and whole not in _EMPTY_SUMMARIES:
            return [("critical", [f"Earlier summary: {whole}"])]
        return []
    # Lines before the first heading are a preamble such as the branch one; keep anything else.
    kept = [
        line
        for line in preamble
        if not line.rstrip().endswith(":")
        and "branch" not in line.lower()
        and not line.startswith("# ")  # a title ("# Context Checkpoint")
    ]
    return [("critical", kept), *sections[1:]]


def _group_items(lines: list[str]) -> list[str]:
    """A section's items: each list item with its continuation lines, and each paragraph of
    prose whole (a model's paragraph is one fact, not one bullet per line)."""
    items: list[str] = []
    in_paragraph = False
    for line in lines:
        if not line.strip():
            in_paragraph = False
            continue
        if line.strip().lower() in ("(none)", "none", "- (none)"):
            continue
        if items and line[:1] in (" ", "\t", ">"):
            items[-1] += "\n" + line
        elif in_paragraph and not _ITEM_MARKER.match(line) and not _LEFT_OUT_IN.search(line):
            items[-1] += " " + line.strip()
        else:
            items.append(line.rstrip())
            in_paragraph = not _ITEM_MARKER.match(line)
    return items


def _read_item(d: Digest, key: str, item: str) -> None:
    text = _ITEM_MARKER.sub("", item, count=1)
    if text.startswith(("**Focus**", "**Related to focus**")):
        return  # they belong to the request that asked for a focus
    if left_out := _LEFT_OUT_LINE.match(text.strip()):
        d.left_out += int(left_out.group(1))
        return
    if text.startswith(STATUS_LABEL):
        d.status = text[len(STATUS_LABEL) :].strip()
        return
    if text.startswith(UNANSWERED_LABEL):
        add_once(d.open_questions, text[len(UNANSWERED_LABEL) :].strip())
        return
    if text.startswith(CONTEXT_LABEL):
        add_once(d.extra_context, text[len(CONTEXT_LABEL) :].strip())
        return
    if text.startswith(QUESTION_LABEL):
        question = text[len(QUESTION_LABEL) :].lstrip(" \n")
        lines = [re.sub(r"^\s*> ?", "", line) for line in question.splitlines()]
        d.pending_question = "\n".join(lines) if "\n" in question else question
        return
    for label in (STATE_LABEL, ACTION_LABEL, OUTPUT_LABEL):
        if text.startswith(label):
            value = text[len(label) :].strip()
            if label == STATE_LABEL:
                d.last_state = value
            elif label == ACTION_LABEL:
                d.last_action = value
            else:
                d.last_output = value
            return
    if text.startswith("**Error**: "):
        add_once(d.errors, text.split(": ", 1)[1])
        return
    if text.startswith("**Paths mentioned**: "):
        for path in _BACKTICKED.findall(text):
            d.mentioned.setdefault(path, None)
        return
    match key:
        case "goal":
            _read_goal_item(d, item, text)
        case "request":
            if item == REQUESTS_LABEL:
                return
            request = clip(one_line(text), REQUEST_CHARS)
            _read_request(d, request)
            # A split turn's request is the user's message: a statement in it is a fact,
            # as it would have been had the turn not been split (the same rule).
            stated = _ASKED_SUFFIX.sub("", request)
            if "?" not in stated and not stated.endswith(":") and states_fact(stated):
                add_once(d.facts, stated)
        case "constraints":
            add_once(d.constraints, text)
        case "done":
            _read_done_item(d, text)
        case "in_progress":
            add_once(d.in_progress, text)
        case "todos":
            add_once(d.todos, text)
        case "blocked":
            _read_blocked_item(d, text)
        case "decisions":
            add_once(d.decisions, text)
        case "next":
            add_once(d.next_steps, text)
        case "suffix":
            _read_suffix_item(d, item, text)
        case "references":
            reference = read_reference_line(text)
            if reference is None:
                add_once(d.critical, text)
            elif reference[0] not in d.references:
                d.references[reference[0]] = reference[1]
        case _:
            add_once(d.critical, text)


def _read_suffix_item(d: Digest, item: str, text: str) -> None:
    # Our turn-prefix summary puts several kinds of lines under "Context for Suffix".
    if item.startswith("- [ ] "):
        add_once(d.in_progress, text)
    elif text.startswith(GENERATED_STEPS):
        add_once(d.next_steps, text)
    elif any(CONSTRAINT.search(s) or FIRM_PREFERENCE.search(s) for s in split_sentences(text)):
        # Sentence by sentence, as the live reader finds a rule ("ok book it. but DON'T ...").
        add_once(d.constraints, text)
    else:
        add_once(d.critical, text)


_ASKED_SUFFIX = LazyPattern(r" \(asked (\d+) times\)$")


def _read_request(d: Digest, text: str) -> None:
    asked = _ASKED_SUFFIX.search(text)
    if asked:
        text = text[: asked.start()]
    add_grouped(d.requests, d.request_counts, text, int(asked.group(1)) if asked else 1)


def _read_goal_item(d: Digest, item: str, text: str) -> None:
    if item == REQUESTS_LABEL or d.requests or _ITEM_MARKER.match(item):
        if item != REQUESTS_LABEL:
            _read_request(d, text)
        return
    # Notes that an earlier release joined to the goal are taken out of it. Each counted its
    # own round (the count before it was swallowed by the goal), so they add up.
    d.left_out += sum(int(n) for n in _LEFT_OUT_IN.findall(item))
    item = _LEFT_OUT_IN.sub("", item)
    if not d.goal:
        d.goal = item
    elif any(GOAL_STATEMENT.search(s) for s in split_sentences(item)):
        add_once(d.goal_notes, item)  # the user's later words on what the work is for
    else:
        d.goal = f"{d.goal}\n{item}"  # a model's goal in several paragraphs: one goal


def _read_done_item(d: Digest, text: str) -> None:
    if modified := _MODIFIED_LINE.match(text):
        change = d.edits.setdefault(modified.group("path"), FileChange())
        for op in (modified.group("ops") or "").split(";")[0].split(", "):
            name, _, count = op.strip().partition(" ×")
            if name:
                change.ops[name] = change.ops.get(name, 0) + (int(count) if count.isdigit() else 1)
        if failed := re.search(r"; (\d+) failed", modified.group("ops") or ""):
            change.failures += int(failed.group(1))
    elif saved := _SAVED_LINE.match(text):
        d.saved.setdefault(saved.group("path"), saved.group("tool"))
    elif read := _READ_LINE.match(text):
        for path in _BACKTICKED.findall(read.group("paths")):
            d.reads.setdefault(path, None)
    elif ran := _RAN_LINE.match(text):
        command = d.commands.setdefault(ran.group("cmd"), Command(ran.group("cmd")))
        # Lines are in the order of their latest runs: keep that order.
        command.seq = max((c.seq for c in d.commands.values()), default=0) + 1
        command.runs += int(ran.group("runs") or 1)
        note = ran.group("note")
        failures = re.search(r"(\d+) earlier failures?", note)
        command.failures += int(failures.group(1)) if failures else 0
        code = re.match(r"exit (-?\d+)", note)
        command.exit_code = int(code.group(1)) if code else None
        command.result = ran.group("result")
        if "superseded" in note:
            command.status = "superseded"
        elif note.startswith("cancelled"):
            command.status = "cancelled"
        elif note.startswith("exit status not shown"):
            command.status = "unknown"
        else:
            command.status = "ok"
    elif tools := _TOOLS_LINE.match(text):
        _read_counts(d.tools, tools.group("tools"))
    elif inspections := _INSPECTIONS_LINE.match(text):
        _read_counts(d.inspections, inspections.group("counts"))
    elif _FAILED_LINE.match(text) or _EDIT_FAILED_LINE.match(text):
        _read_blocked_item(d, text)  # a turn-prefix summary lists failures under Early Progress
    elif text.startswith("**"):
        add_once(d.decisions, text)
    else:
        add_once(d.done_notes, text)


def _read_counts(counts: dict[str, int], text: str) -> None:
    for entry in text.split(", "):
        name, _, count = entry.partition(" ×")
        counts[name] = counts.get(name, 0) + (int(count) if count.isdigit() else 1)


def _read_blocked_item(d: Digest, text: str) -> None:
    if failed := _FAILED_LINE.match(text):
        command = d.commands.setdefault(failed.group("cmd"), Command(failed.group("cmd")))
        command.runs += 1
        code = re.match(r"exit (-?\d+)(?:;|$)", failed.group("note"))
        command.finish("failed", int(code.group(1)) if code else None, failed.group("error"))
    elif edit := _EDIT_FAILED_LINE.match(text):
        # The Done line already counted the failure; this line only says it is unresolved.
        change = d.edits.setdefault(edit.group("path"), FileChange())
        change.failed_last, change.error = True, edit.group("error")
    else:
        add_once(d.blocked_notes, text)


def _next_steps(old: Digest, new: Digest) -> list[str]:
    """The new concrete steps, then the earlier ones later history did not report done, then
    the steps we generate from the state ("Respond to the latest user request ...")."""
    done = " ".join(new.done_reports)
    concrete = [step for step in new.next_steps if not step.startswith(GENERATED_STEPS)]
    generated = [step for step in new.next_steps if step.startswith(GENERATED_STEPS)]
    new_requests = (1 if new.goal else 0) + len(new.requests)
    if new_requests > _STALE_PLAN_REQUESTS:
        # The user has asked for many other things since: the earlier plan is history, and
        # stale steps would send a colleague back to finished work.
        return union(concrete, generated)
    earlier = [
        step
        for step in old.next_steps
        if not step.startswith(GENERATED_STEPS) and not reports_done(done, step)
    ]
    return union(concrete, earlier, generated)


_STALE_PLAN_REQUESTS: Final = 3
"""More new user requests than this since an earlier summary drop its next steps."""


def merge_digest(old: Digest, new: Digest) -> Digest:
    """``old`` (an earlier summary) updated with ``new``: facts are united, older first, and
    the newest state wins for work in progress, next steps and the pending question."""
    user_moved_on = bool(new.goal)
    merged = Digest(
        goal=old.goal or new.goal,
        goal_notes=union(old.goal_notes, new.goal_notes),
        requests=list(old.requests),
        request_counts=dict(old.request_counts),
        constraints=union(old.constraints, new.constraints),
        preferences=union(old.preferences, new.preferences),
        facts=union(old.facts, new.facts),
        noted=union(old.noted, new.noted),
        spoken={**old.spoken, **new.spoken},
        references=merged_references(old.references, new.references),
        # The latest statement of where the work stands wins.
        status=new.status or old.status,
        open_questions=union(
            [
                q
                for q in old.open_questions
                if not any(answers_question(u, q, next_message=False) for u in new.user_said)
            ],
            new.open_questions,
        ),
        left_out=old.left_out + new.left_out,
        reads={**old.reads, **new.reads},
        saved={**old.saved, **new.saved},
        errors=union(old.errors, new.errors),
        decisions=union(old.decisions, new.decisions),
        todos=[
            todo
            for todo in union(old.todos, new.todos)
            if todo in new.todos or not reports_done(" ".join(new.done_reports), todo)
        ],
        blocked_notes=union(old.blocked_notes, new.blocked_notes),
        next_steps=_next_steps(old, new) if new.active else old.next_steps,
        critical=union(old.critical, new.critical),
        focus_notes=new.focus_notes,
        mentioned={**old.mentioned, **new.mentioned},
        extra_context=union(old.extra_context, new.extra_context),
        carried=[
            *old.carried,
            *(c for c in new.carried if c[0] not in {h for h, _ in old.carried}),
        ],
        focus=new.focus or old.focus,
        # The newest state wins; an empty update keeps the old one.
        pending_question=new.pending_question if new.active else old.pending_question,
        last_state=new.last_state or old.last_state,
        last_action=new.last_action if new.active else old.last_action,
        last_output=new.last_output if new.active else old.last_output,
        active=old.active or new.active,
    )
    later = [new.goal] if old.goal and new.goal and not similar(new.goal, old.goal) else []
    if later and says_the_goal(split_sentences(new.goal)):
        # The first message since the earlier summary says what the whole work is for: a
        # goal said in passing, as it would be anywhere later in a conversation.
        add_once(merged.goal_notes, clip(one_line(new.goal), GOAL_NOTE_CHARS))
        later = []
    for request in [*later, *new.requests]:
        add_grouped(
            merged.requests, merged.request_counts, request, new.request_counts.get(request, 1)
        )
    finished = [item for item in old.in_progress if not item.startswith(WAITING)]
    merged.done_notes = union(old.done_notes, finished if user_moved_on else [], new.done_notes)
    if user_moved_on:
        merged.in_progress = new.in_progress
    elif new.active:
        merged.in_progress = union(finished, new.in_progress)
    else:
        merged.in_progress = old.in_progress
    _add_work(merged, old, new)
    return merged


def reread_digest(old: Digest, reread: Digest) -> Digest:
    """``reread`` (the messages an earlier summary summarized and the new ones, read again)
    with what only the earlier summary ``old`` holds: a hook's context lines, sections under
    headings we do not write, the custom instructions it was written for."""
    reread.extra_context = union(old.extra_context, reread.extra_context)
    reread.carried = [
        *old.carried,
        *(c for c in reread.carried if c[0] not in {h for h, _ in old.carried}),
    ]
    reread.focus = reread.focus or old.focus
    return reread


def _add_work(merged: Digest, old: Digest, new: Digest) -> None:
    """Add up the edits, commands, tools and inspections of ``old`` and ``new`` in ``merged``
    (``new``'s commands run after all of ``old``'s)."""
    for path, change in [*old.edits.items(), *new.edits.items()]:
        target = merged.edits.setdefault(path, FileChange())
        for op, count in change.ops.items():
            target.ops[op] = target.ops.get(op, 0) + count
        target.failures += change.failures
        target.failed_last, target.error = change.failed_last, change.error
    offset = max((command.seq for command in old.commands.values()), default=0)
    for key, command in [*old.commands.items(), *new.commands.items()]:
        target_command = merged.commands.setdefault(key, Command(key))
        target_command.runs += command.runs
        target_command.failures += command.failures
        target_command.status = command.status
        target_command.exit_code, target_command.error = command.exit_code, command.error
        target_command.passes += command.passes
        target_command.result = command.result
        is_new = key in new.commands and command is new.commands[key]
        target_command.seq = command.seq + (offset if is_new else 0)
    for counts, merged_counts in ((old.tools, merged.tools), (new.tools, merged.tools)):
        for name, count in counts.items():
            merged_counts[name] = merged_counts.get(name, 0) + count
    for name, count in [*old.inspections.items(), *new.inspections.items()]:
        merged.inspections[name] = merged.inspections.get(name, 0) + count
