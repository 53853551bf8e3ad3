"""The headings the summary prompts ask for, shared by the prompt and offline-summarizer tests."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from contextree.compaction.offline import OfflineSummarizer

FULL_SECTIONS = (
    "## Goal",
    "## Constraints & Preferences",
    "## Progress",
    "### Done",
    "### In Progress",
    "### Blocked",
    "## Key Decisions",
    "## Next Steps",
    "## Critical Context",
)
"""The sections of an initial or updated history summary, in order."""

OFFLINE_SECTIONS = (
    "## Goal",
    "## Constraints & Preferences",
    "## Key Decisions",
    "## Next Steps",
    "## Progress",
    "### In Progress",
    "### Blocked",
    "### Done",
    "## Critical Context",
)
"""The same sections as the offline summarizer orders them: by importance, so that a size cap
cuts the list of finished work first (docs/summaries.md)."""

BRANCH_SECTIONS = FULL_SECTIONS[:-1]
"""A branch summary has every history section but ``## Critical Context``."""

TURN_PREFIX_SECTIONS = ("## Original Request", "## Early Progress", "## Context for Suffix")


def assert_sections_in_order(text: str, headings: Iterable[str]) -> None:
    """Each heading stands in ``text`` followed by a newline, in the given order."""
    headings = tuple(headings)
    positions = [text.index(heading + "\n") for heading in headings]
    # Not a test module, so pytest does not rewrite this assert: say what went wrong.
    assert positions == sorted(positions), (
        f"out of order: {dict(zip(headings, positions, strict=True))}"
    )


def offline_summary(messages: list[dict[str, Any]], **kw: object) -> str:
    """The offline summary of pi-shaped ``messages`` (a 4,000-token budget unless given)."""
    kw.setdefault("budget_tokens", 4000)
    return OfflineSummarizer().summarize_messages(messages, **kw)  # type: ignore[arg-type]


def section(summary: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading of level 2 or 3."""
    start = summary.index(heading + "\n") + len(heading) + 1
    following = re.search(r"^#{2,3} ", summary[start:], re.M)
    return summary[start : start + following.start()] if following else summary[start:]
