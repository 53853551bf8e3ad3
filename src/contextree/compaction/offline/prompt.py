"""Taking an assembled summarization prompt apart again (pi-behaviour.md §7.2).

Finds the ``<conversation>``, ``<previous-summary>`` and ``<additional-context>`` blocks, the
``Additional focus`` line and the kind of summary the instructions ask for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from contextree.compaction.offline.lazy_pattern import LazyPattern
from contextree.compaction.prompt_templates import load_prompt
from contextree.compaction.summary_request import SUMMARY_KINDS, SummaryKind

__all__ = ["SUMMARY_KINDS", "SummaryKind", "SummaryPrompt", "parse_summary_prompt"]

_TEMPLATE_KINDS: Final[tuple[tuple[str, SummaryKind], ...]] = (
    ("initial-summary", "initial"),
    ("update-summary", "update"),
    ("turn-prefix", "turn_prefix"),
    ("short-summary", "short"),
    ("branch-summary", "branch"),
)
_FOCUS_MARKER: Final = "Additional focus: "
_SHORT_PROMPT = LazyPattern(
    r"(?i)\b(?:2|two)\s*(?:-|–|to|or)\s*(?:3|three)\s+sentences|short summary"
)
_TURN_PREFIX_PROMPT = LazyPattern(r"(?i)## original request|context for suffix|prefix of a turn")
_BRANCH_WORD = LazyPattern(r"(?i)\bbranch\b")


@dataclass(frozen=True)
class SummaryPrompt:
    """An assembled summarization prompt taken apart (pi-behaviour.md §7.2)."""

    conversation: str
    """The serialized conversation inside ``<conversation>``."""
    previous_summary: str | None
    """The text inside ``<previous-summary>``, if the block is there."""
    extra_context: tuple[str, ...]
    """The lines of ``<additional-context>``, without their ``"- "`` bullets."""
    instructions: str
    """The prompt text after the blocks, without the ``Additional focus`` line."""
    focus: str | None
    """The custom instructions after ``Additional focus:``, if any."""
    kind: SummaryKind
    """The summary the instructions ask for (see :func:`parse_summary_prompt`)."""


def parse_summary_prompt(text: str) -> SummaryPrompt:
    """Take apart a prompt assembled as in pi-behaviour.md §7.2.

    The kind is found by comparing the instructions with our built-in templates; for other
    texts (pi's own prompts reach ``contextree serve``; users override templates) a few
    distinctive phrases decide, and otherwise a prompt with a previous summary is an update and
    one without is an initial summary. Text without a ``<conversation>`` block is read as the
    conversation itself.
    """
    conversation, rest = _take_conversation(text)
    previous, rest = _take_block(rest, "previous-summary")
    extra_block, rest = _take_block(rest, "additional-context")
    extra: tuple[str, ...] = ()
    if extra_block is not None:
        extra = tuple(
            line[2:] if line.startswith("- ") else line
            for line in extra_block.splitlines()
            if line.strip()
        )
    instructions, focus = _split_focus(rest)
    return SummaryPrompt(
        conversation=conversation,
        previous_summary=previous,
        extra_context=extra,
        instructions=instructions,
        focus=focus,
        kind=_detect_kind(instructions, has_previous=previous is not None),
    )


def _take_conversation(text: str) -> tuple[str, str]:
    opening = "<conversation>\n"
    if not text.startswith(opening):
        return text, ""
    # The conversation may itself quote "</conversation>", so prefer a closing tag that is
    # followed by one of the blocks §7.2 puts after it, and otherwise take the last one.
    end = -1
    for follower in ("<previous-summary>\n", "<additional-context>\n"):
        end = text.rfind(f"\n</conversation>\n\n{follower}")
        if end >= 0:
            break
    if end < 0:
        end = text.rfind("\n</conversation>")
    if end < len(opening) - 1:
        return text[len(opening) :], ""
    body = text[len(opening) : max(end, len(opening))]
    return body, text[end + len("\n</conversation>") :].lstrip("\n")


def _take_block(text: str, tag: str) -> tuple[str | None, str]:
    opening = f"<{tag}>\n"
    if not text.startswith(opening):
        return None, text
    end = text.rfind(f"\n</{tag}>")
    if end < len(opening) - 1:
        return text[len(opening) :], ""
    body = text[len(opening) : max(end, len(opening))]
    return body, text[end + len(f"\n</{tag}>") :].lstrip("\n")


def _split_focus(instructions: str) -> tuple[str, str | None]:
    if instructions.startswith(_FOCUS_MARKER):
        return "", instructions[len(_FOCUS_MARKER) :].strip() or None
    index = instructions.rfind("\n\n" + _FOCUS_MARKER)
    if index < 0:
        return instructions.strip(), None
    focus = instructions[index + 2 + len(_FOCUS_MARKER) :].strip()
    return instructions[:index].strip(), focus or None


def _detect_kind(instructions: str, *, has_previous: bool) -> SummaryKind:
    for template, kind in _TEMPLATE_KINDS:
        if instructions and instructions == load_prompt(template):
            return kind
    if _TURN_PREFIX_PROMPT.search(instructions):
        return "turn_prefix"
    if _SHORT_PROMPT.search(instructions):
        return "short"
    # pi's history prompts mention "branch" too (repository state), but they also ask for
    # Critical Context, which the branch prompts do not.
    if (
        _BRANCH_WORD.search(instructions)
        and "critical context" not in instructions.lower()
        and not has_previous
    ):
        return "branch"
    return "update" if has_previous else "initial"
