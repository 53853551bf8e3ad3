"""The facts a handoff must not lose, as data, and the section that records them in a model's
summary (issue 10 item 6: no fact depends on the model's recall).

The facts come from the same reader the offline summarizer uses, over the messages themselves
(long tool outputs read at both ends) and, on later rounds, the previous summary: the user's
constraints and decisions verbatim, open TODOs, errors still open (a later successful run of
the same command closes one), the files changed, and a question the user has not answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from contextree.compaction.offline.commands import resolved_failures
from contextree.compaction.offline.digest import (
    QUESTION_LABEL,
    STATUS_LABEL,
    UNANSWERED_LABEL,
    Digest,
)
from contextree.compaction.offline.items import Item, build_items
from contextree.compaction.offline.reading import read_digest, serialized
from contextree.compaction.offline.references import code_words, line_code
from contextree.compaction.offline.render import FULL_LAYOUT, Layout, fit_layout
from contextree.compaction.offline.text import clip, estimate_tokens, fit_text
from contextree.entries.types import StoredMessage

__all__ = [
    "RECORDED_FACTS_HEADING",
    "HandoffFacts",
    "RecordedFacts",
    "extract_facts",
    "record_facts",
    "render_key_facts",
]

RECORDED_FACTS_HEADING: Final = "## Recorded Facts (contextree)"
"""The heading of the section :func:`render_key_facts` writes; read back as its sub-sections."""
_MAX_FILES: Final = 20
_ITEM_CHARS: Final = 300
_RECORDED_LAYOUT: Final[Layout] = tuple(
    # The offline summary's sections, one level down under the recorded-facts heading (its
    # "Progress" parent heading dropped: the sub-sections stand on their own).
    ("### " + heading.lstrip("# "), style, keys)
    for heading, style, keys in FULL_LAYOUT
    if keys
)
_SAID_MIN_CHARS: Final = 24
"""Shorter lines are recorded even when the model's text holds them: a short line (``Ran
`make` (ok)``) can occur there by chance in another sense."""


@dataclass(frozen=True, slots=True)
class HandoffFacts:
    """What a colleague needs to continue, each item one line of text, oldest first."""

    goal: str
    constraints: tuple[str, ...]
    """The user's constraints and firm preferences, each the user's whole line."""
    decisions: tuple[str, ...]
    todos: tuple[str, ...]
    """TODO / still-to-do statements that later history did not report done."""
    open_errors: tuple[str, ...]
    """Failing commands and edits whose latest outcome is still a failure."""
    modified_files: tuple[str, ...]
    """Files changed by tool calls or, as the assistant said, otherwise."""
    read_files: tuple[str, ...]
    pending_question: str | None
    facts: tuple[str, ...] = ()
    """What the user (or a system message) stated with specific values, verbatim."""
    status: str | None = None
    """The latest statement of where the work stands."""
    open_questions: tuple[str, ...] = ()
    """Earlier questions to the user that no later message took up."""


def _digest(
    messages: Sequence[StoredMessage],
    previous_summary: str | None,
    earlier: Sequence[StoredMessage] = (),
) -> Digest:
    return read_digest(
        serialized(messages), previous_summary=previous_summary, earlier=serialized(earlier)
    )


def extract_facts(
    messages: Sequence[StoredMessage], *, previous_summary: str | None = None
) -> HandoffFacts:
    """The facts of ``messages`` (pi AgentMessages), carried over from ``previous_summary``."""
    d = _digest(messages, previous_summary)
    resolved = resolved_failures(d.commands)
    errors = [
        f"`{command.text}` failed ({command.status_note()})"
        + (f": {command.error}" if command.error else "")
        for command in sorted(d.commands.values(), key=lambda c: c.seq)
        if command.status == "failed" and command.text not in resolved
    ]
    errors += [
        f"Editing `{path}` failed" + (f": {change.error}" if change.error else "")
        for path, change in d.edits.items()
        if change.failed_last
    ]
    return HandoffFacts(
        goal=d.goal,
        constraints=tuple(d.constraints),
        decisions=tuple(d.decisions),
        todos=tuple(d.todos),
        open_errors=tuple(errors),
        modified_files=tuple(d.edits),
        read_files=tuple(path for path in d.reads if path not in d.edits),
        pending_question=d.pending_question,
        facts=tuple(d.facts),
        status=d.status,
        open_questions=tuple(d.open_questions),
    )


def render_key_facts(facts: HandoffFacts, *, budget_tokens: int) -> str:
    """The recorded-facts section for a model's summary, within ``budget_tokens`` (chars/4);
    ``""`` when there is nothing to record.

    Sub-sections use the headings our summary reader knows, so a later round carries each
    item under its kind: constraints, the user's facts and the status, open questions, open
    TODOs, open errors, decisions, files changed.
    Most important first, so the budget cuts the file list before a constraint.
    """
    blocks: list[str] = []

    def section(heading: str, items: Sequence[str]) -> None:
        if items:
            lines = "\n".join(f"- {clip(' '.join(item.split()), _ITEM_CHARS)}" for item in items)
            blocks.append(f"### {heading}\n{lines}")

    section("Constraints & Preferences", facts.constraints)
    status = [f"{STATUS_LABEL} {facts.status}"] if facts.status else []
    section("Key Facts", [*status, *facts.facts])
    questions = [f"{UNANSWERED_LABEL} {q}" for q in facts.open_questions]
    if facts.pending_question:
        questions.insert(0, f"{QUESTION_LABEL} {facts.pending_question}")
    section("Open Questions", questions)
    section("Open TODOs", facts.todos)
    section("Blocked", facts.open_errors)
    section("Key Decisions", facts.decisions)
    files = [f"Modified `{path}`" for path in facts.modified_files[:_MAX_FILES]]
    if len(facts.modified_files) > _MAX_FILES:
        files.append(f"... and {len(facts.modified_files) - _MAX_FILES} more files")
    section("Done", files)
    if not blocks:
        return ""
    text = RECORDED_FACTS_HEADING + "\n\n" + "\n\n".join(blocks)
    fitted = fit_text(text, budget_tokens)
    return fitted if fitted.count("\n") > 0 else ""


class RecordedFacts:
    """The recorded-facts section of one summary, renderable at several budgets (the history
    is read once: a compaction sizes the section before the model writes, then renders it
    after, leaving out what the model's text holds)."""

    heading: Final = RECORDED_FACTS_HEADING

    def __init__(
        self,
        messages: Sequence[StoredMessage],
        *,
        previous_summary: str | None = None,
        earlier: Sequence[StoredMessage] = (),
    ) -> None:
        """``earlier``: the messages the previous summary's recorded facts came from, read
        again before ``messages`` (``compaction/earlier.py``)."""
        self._digest = _digest(messages, previous_summary, earlier)
        self._layout = _RECORDED_LAYOUT + tuple(
            (heading, "", (f"carried:{heading}",)) for heading, _ in self._digest.carried
        )

    def render(self, *, budget_tokens: int, said: str = "") -> str:
        """Every line the offline summary of the messages would hold (issue 25 item 8: a
        model summary keeps at least what the offline one keeps), least important dropped
        first to fit ``budget_tokens``, leaving out the lines ``said`` (the model's text)
        already holds word for word. ``""`` when nothing is left."""
        items = build_items(self._digest)
        spoken = " ".join(said.split()).casefold()
        if spoken:
            # A reference code is said when the model wrote the code (the label is ours).
            codes = code_words(said)

            def unsaid(key: str, item: Item) -> bool:
                if key == "references":
                    return line_code(item.text) not in codes
                return not _said(item, spoken)

            items = {key: [i for i in group if unsaid(key, i)] for key, group in items.items()}
        room = budget_tokens - estimate_tokens(RECORDED_FACTS_HEADING) - 1
        body = fit_layout(self._layout, items, room, left_out=self._digest.left_out)
        if not body.strip():
            return ""
        fitted = fit_text(f"{RECORDED_FACTS_HEADING}\n\n{body}", budget_tokens)
        return fitted if fitted.count("\n") > 0 else ""


def record_facts(
    messages: Sequence[StoredMessage],
    *,
    budget_tokens: int,
    previous_summary: str | None = None,
    said: str = "",
) -> str:
    """The recorded-facts section for a model's summary ``said`` (see
    :meth:`RecordedFacts.render`).

    Unlike :func:`render_key_facts`, this records the preferences, the assistant's noted
    statements and short outputs, the commands' latest outcomes, the goal and the next steps
    too: all of it is what the offline summarizer would have kept in place of the model."""
    recorded = RecordedFacts(messages, previous_summary=previous_summary)
    return recorded.render(budget_tokens=budget_tokens, said=said)


def _said(item: Item, spoken: str) -> bool:
    text = " ".join(item.text.split()).casefold()
    return len(text) >= _SAID_MIN_CHARS and text in spoken
