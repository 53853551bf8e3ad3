"""Writing a digest as a summary of a given kind within a token budget (pi-behaviour.md §7.3).

The full, branch and turn-prefix summaries share one set of lines (``items.py``) laid out under
different headings; lines are dropped least important and oldest first until the text fits. The
short display summary is a few sentences instead.
"""

from __future__ import annotations

from typing import Final

from contextree.compaction.offline.commands import resolved_failures
from contextree.compaction.offline.condense import condensed
from contextree.compaction.offline.digest import (
    LEFT_OUT,
    NESTED_NOTE,
    NOTE_LABEL,
    NOTED_LABEL,
    Digest,
)
from contextree.compaction.offline.items import Item, build_items
from contextree.compaction.offline.references import (
    REFERENCES_HEADING,
    code_words,
    line_code,
)
from contextree.compaction.offline.text import clip, estimate_tokens, plural
from contextree.compaction.summary_request import SummaryKind

_SHORT_CHARS: Final = 120
"""What a user's long statement is cut to (its weightiest sentences) before lines are dropped."""

Layout = tuple[tuple[str, str, tuple[str, ...]], ...]
"""(heading, list style, logical keys); a heading with no keys introduces the next one."""

_CRITICAL_KEYS: Final = (
    "focus",
    "context",
    "state",
    "state_done",
    "errors",
    "notes",
    "related",
    "paths",
    "output",
)
FULL_LAYOUT: Final[Layout] = (
    # pi's sections, ordered by what a colleague needs first: when even the essentials exceed
    # the budget, the text is cut from the end, so the list of finished work goes before the
    # goal, the user's rules, the decisions, the next steps or the open work.
    # What a colleague must not lose comes first (issue 25 item 5): the goal and where it
    # stands, the user's rules, the facts they stated, the questions waiting for them.
    ("## Goal", "-", ("goal", "status", "requests")),
    ("## Constraints & Preferences", "-", ("constraints",)),
    ("## Key Facts", "-", ("facts",)),
    (REFERENCES_HEADING, "-", ("references",)),
    ("## Open Questions", "-", ("question", "questions")),
    ("## Key Decisions", "-", ("decisions",)),
    ("## Next Steps", "1.", ("next",)),
    ("## Progress", "", ()),
    ("### In Progress", "-", ("in_progress",)),
    ("### Open TODOs", "-", ("todos",)),
    ("### Blocked", "-", ("blocked",)),
    ("### Done", "-", ("done",)),
    ("## Critical Context", "-", _CRITICAL_KEYS),
)
_BRANCH_LAYOUT: Final[Layout] = (
    ("## Goal", "-", ("goal", "status", "requests")),
    ("## Constraints & Preferences", "-", ("constraints", "focus", "context")),
    ("## Key Facts", "-", ("facts",)),
    (REFERENCES_HEADING, "-", ("references",)),
    ("## Progress", "", ()),
    ("### Done", "-", ("done", "state_done")),
    ("### In Progress", "-", ("in_progress", "state")),
    ("### Open TODOs", "-", ("todos",)),
    ("### Blocked", "-", ("blocked", "errors")),
    ("## Key Decisions", "-", ("decisions",)),
    ("## Next Steps", "1.", ("next", "question", "questions")),
)
_TURN_PREFIX_LAYOUT: Final[Layout] = (
    ("## Original Request", "-", ("goal", "status", "requests")),
    ("## Early Progress", "-", ("done", "blocked", "decisions", "todos")),
    # Under a heading of their own, so that the next compaction reads the user's statements
    # back as facts (among the suffix's context lines they were read as notes).
    ("## Key Facts", "-", ("facts",)),
    (REFERENCES_HEADING, "-", ("references",)),
    (
        "## Context for Suffix",
        "-",
        (
            "constraints",
            "focus",
            "context",
            "in_progress",
            "question",
            "questions",
            "state",
            "state_done",
            "errors",
            "notes",
            "next",
            "related",
            "paths",
            "output",
        ),
    ),
)


def render_digest(d: Digest, *, kind: SummaryKind, budget_tokens: int) -> str:
    layout = {"branch": _BRANCH_LAYOUT, "turn_prefix": _TURN_PREFIX_LAYOUT}.get(kind, FULL_LAYOUT)
    # Sections of an earlier summary under headings of its own follow ours, as they were.
    layout += tuple((heading, "", (f"carried:{heading}",)) for heading, _ in d.carried)
    items = build_items(d)
    return fit_layout(layout, items, budget_tokens, left_out=d.left_out)


def fit_layout(
    layout: Layout, items: dict[str, list[Item]], budget_tokens: int, *, left_out: int = 0
) -> str:
    shown = [item for keys in layout for key in keys[2] for item in items.get(key, [])]
    dropped: set[int] = set()
    clipped: dict[int, str] = {}
    references = items.get("references", [])

    def render() -> str:
        # The summary says how many of the user's statements the budget left out, so a
        # colleague knows to look for them (issue 25 item 1).
        n = left_out + sum(1 for item in shown if item.user and item.order in dropped)
        hidden = _held_references(shown, references, dropped, clipped) if references else dropped
        return _render_layout(layout, items, hidden, clipped, left_out=n)

    text = render()
    candidates = sorted(
        (item for item in shown if not item.must), key=lambda item: (item.priority, item.order)
    )
    # Lines go least important and oldest first; but before the lines of a priority go, the
    # long statements among them are cut to the sentences that carry something
    # (condense.py), so that more of what was said stays.
    steps = sorted(
        [(item, False) for item in candidates]
        + [(item, True) for item in candidates if _cut_first(item)],
        key=lambda step: (step[0].priority, not step[1], step[0].order),
    )
    next_step = 0
    while estimate_tokens(text) > budget_tokens and next_step < len(steps):
        excess = (estimate_tokens(text) - budget_tokens) * 4
        freed = 0
        while next_step < len(steps) and freed < excess:
            item, shorten = steps[next_step]
            next_step += 1
            now = clipped.get(item.order, item.text)
            if shorten:
                clipped[item.order] = _cut(item.text)
                freed += len(now) - len(clipped[item.order])
            else:
                dropped.add(item.order)
                freed += len(now) + 3
        text = render()
    if estimate_tokens(text) > budget_tokens:
        # Only essentials are left; shorten their prose (never a path) and accept the rest.
        for item in shown:
            long = item.clip_to is not None and len(item.text) > item.clip_to
            if item.must and long and not item.focus and item.clip_to is not None:
                clipped[item.order] = item.short or condensed(item.text, item.clip_to)
        text = render()
    return text


def _held_references(
    shown: list[Item], references: list[Item], dropped: set[int], clipped: dict[int, str]
) -> set[int]:
    """``dropped`` and the reference lines whose code a line still shown holds: the list of
    codes is for those the budget left without their sentence."""
    codes = {item.order for item in references}
    held = code_words(
        "\0".join(
            clipped.get(item.order, item.text)
            for item in shown
            if item.order not in dropped and item.order not in codes
        )
    )
    return dropped | {
        item.order
        for item in references
        if item.order not in dropped and line_code(item.text) in held
    }


_NOTE_SHORT_CHARS: Final = 200
"""What a note of a tool's result is cut to: a result's sentences name more values than the
user's (a ticket and a time slot), and cut to 120 they lost one (dev: three probes fewer at
the full budget than at 160-200)."""


def _cut(text: str) -> str:
    """``text`` cut to its weightiest sentences; a note's "`tool` returned: " stays."""
    label = NOTE_LABEL.match(text)
    if label is None:
        return condensed(text, _SHORT_CHARS)
    head = label.group(0)
    return head + condensed(text[len(head) :], _NOTE_SHORT_CHARS - len(head))


def _cut_first(item: Item) -> bool:
    """Whether ``item`` is cut before it is dropped: the user's long statements, and the long
    lines noted from the work (a tool's result, the assistant's specific statements)."""
    return (item.user or item.label == NOTED_LABEL) and len(item.text) > _SHORT_CHARS


def _note_groups(items: list[Item], texts: list[str], style: str) -> list[str | None]:
    """Per line, the "`tool` returned: " it shares with the lines next to it, or ``None`` for
    a line written on its own. A run of two or more notes of one tool's results is written as
    one "`tool` returned:" line with the results nested under it: the label, about seven
    tokens, is then paid once instead of once a line, and the budget keeps more of what was
    noted. Only lines under "Noted during the work:", which the next compaction splits again."""
    heads = [
        label.group(0)
        if style == "-"
        and item.label == NOTED_LABEL
        and "\n" not in text
        and (label := NOTE_LABEL.match(text))
        else None
        for item, text in zip(items, texts, strict=True)
    ]
    # Each line's neighbours (none before the first, none after the last).
    before = [None, *heads][: len(heads)]
    after = [*heads[1:], None][: len(heads)]
    return [
        head if head is not None and head in (previous, following) else None
        for head, previous, following in zip(heads, before, after, strict=True)
    ]


def _render_layout(
    layout: Layout,
    items: dict[str, list[Item]],
    dropped: set[int],
    clipped: dict[int, str],
    *,
    left_out: int = 0,
) -> str:
    blocks: list[str] = []
    pending_heading = ""
    for index, (heading, style, keys) in enumerate(layout):
        if not keys:
            pending_heading = heading + "\n"
            continue
        if not heading.startswith("### "):
            # A heading of the parent's level ends it: "## Progress" with no subsection that
            # has content is not written above "## Critical Context".
            pending_heading = ""
        lines: list[str] = []
        label: str | None = None
        number = 0
        for key in keys:
            # Items that match the custom instructions come first in their section.
            ordered = sorted(items.get(key, []), key=lambda item: not item.focus)
            kept = [item for item in ordered if item.order not in dropped]
            texts = [clipped.get(item.order, item.text) for item in kept]
            groups = _note_groups(kept, texts, style)
            shared: str | None = None  # the label of the run of notes being written
            for item, text, grouped in zip(kept, texts, groups, strict=True):
                if item.label and item.label != label:
                    lines.extend(["", item.label] if lines else [item.label])
                label = item.label
                if grouped is not None:
                    if grouped != shared:
                        lines.append("- " + grouped.rstrip())
                    shared = grouped
                    lines.append(NESTED_NOTE + text[len(grouped) :])
                    continue
                shared = None
                if item.plain:
                    # A paragraph each: the goal and the user's later words on it are read
                    # back as separate lines.
                    lines.extend(["", text] if lines else [text])
                    continue
                number += 1
                marker = f"{number}. " if style == "1." else "- "
                lines.append(marker + text.replace("\n", "\n" + " " * len(marker)))
        if index == 0 and left_out:
            lines.append(LEFT_OUT.format(n=left_out))
        if not lines:
            continue  # an empty section says nothing; its parent heading waits for content
        blocks.append(f"{pending_heading}{heading}\n" + "\n".join(lines))
        pending_heading = ""
    return "\n\n".join(blocks)


def short_summary(digest: Digest) -> str:
    """Two or three first-person sentences about the changes (the short display summary)."""
    sentences: list[str] = []
    modified = list(digest.edits)
    if modified:
        names = [f"`{path}`" for path in modified[:4]]
        if len(modified) > 4:
            names.append(plural(len(modified) - 4, "more file"))
        sentences.append(f"I modified {_join_names(names)}.")
    elif digest.reads:
        names = [f"`{path}`" for path in list(digest.reads)[:3]]
        sentences.append(f"I made no file changes; I read {_join_names(names)}.")
    else:
        sentences.append("I made no file changes.")
    resolved = resolved_failures(digest.commands)
    failing = [
        command
        for command in digest.commands.values()
        if command.status == "failed" and command.text not in resolved
    ]
    if failing:
        runs = [f"`{clip(c.text, 60)}` ({c.status_note()})" for c in failing[:3]]
        verb = "fails" if len(runs) == 1 else "fail"
        sentences.append(f"I ran {_join_names(runs)}, which still {verb}.")
    elif digest.commands:
        sentences.append(_commands_sentence(digest))
    if digest.pending_question:
        question = " ".join(digest.pending_question.split())
        sentences.append(f"I asked the user: {clip(question, 200)}")
    elif digest.in_progress:
        sentences.append(f"I have not finished: {clip(digest.in_progress[-1], 160)}.")
    return " ".join(sentences[:3])


def _commands_sentence(digest: Digest) -> str:
    """What the commands did, only as far as the history says: "without errors" only when no
    run failed, and the latest run's outcome as it was reported."""
    commands = list(digest.commands.values())
    ran = f"I ran {plural(len(commands), 'command')}"
    latest = max(commands, key=lambda command: command.seq)
    outcome = f"`{clip(latest.text, 60)}` ({latest.outcome()})"
    failed = sum(command.failures for command in commands)
    if not failed and all(command.status == "ok" for command in commands):
        return f"{ran} without errors; the last was {outcome}."
    if failed:
        fixed = plural(failed, "failed run")
        return f"{ran}; {fixed} were followed by passing runs, the last {outcome}."
    return f"{ran}; the last was {outcome}."


def _join_names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
