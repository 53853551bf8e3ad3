"""The values hook handlers receive (pi-behaviour §11).

Handlers return ``None`` or a result: an object with the snake_case attributes below, or a
``dict`` with pi's camelCase keys (``{"cancel": True}``, ``{"compaction": {...}}``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contextree.entries.types import StoredEntry, StoredMessage

__all__ = [
    "BeforeCompactEvent",
    "BeforeCompactResult",
    "BeforeTreeEvent",
    "BeforeTreeResult",
    "CompactingEvent",
    "CompactingResult",
    "SessionCompactEvent",
    "SessionTreeEvent",
]


@dataclass(frozen=True, slots=True)
class BeforeCompactEvent:
    """``session_before_compact``: may cancel, or supply the whole compaction."""

    preparation: Any
    """The ``CompactionPreparation`` about to be summarized."""
    branch_entries: Sequence[StoredEntry]
    """The root-to-leaf path (entries are decoded as you read them)."""
    custom_instructions: str | None
    reason: str = "manual"


@dataclass(frozen=True, slots=True)
class BeforeCompactResult:
    cancel: bool = False
    compaction: Any = None
    """A ``CompactionResult`` or dict (``summary``, ``firstKeptEntryId``, ``tokensBefore``,
    ``details``, ``shortSummary``, ``preserveData``), used verbatim (``fromExtension: true``)."""


@dataclass(frozen=True, slots=True)
class CompactingEvent:
    """``session.compacting``: may steer the summary prompt."""

    session_id: str
    messages: list[StoredMessage]
    """Messages to summarize followed by the turn prefix."""


@dataclass(frozen=True, slots=True)
class CompactingResult:
    context: list[str] = field(default_factory=list)
    """Lines for the ``<additional-context>`` block."""
    prompt: str | None = None
    """Replaces the initial/update summary prompt."""
    preserve_data: dict[str, Any] | None = None
    """Stored in the compaction entry's ``preserveData``."""


@dataclass(frozen=True, slots=True)
class SessionCompactEvent:
    """``session_compact``: the compaction entry was saved."""

    compaction_entry: StoredEntry
    from_extension: bool
    dropped: Any = None
    """What left the model's view (``contextree.compaction.dropped.DroppedFromView``): the
    messages folded, tool outputs among them, user messages the summary does not carry."""


@dataclass(frozen=True, slots=True)
class BeforeTreeEvent:
    """``session_before_tree``: may cancel, supply the summary, or override options."""

    preparation: Any
    """The ``TreePreparation`` of the move."""


@dataclass(frozen=True, slots=True)
class BeforeTreeResult:
    cancel: bool = False
    summary: Any = None
    """``{"summary": str, "details": ...}`` used instead of generating one."""
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


@dataclass(frozen=True, slots=True)
class SessionTreeEvent:
    """``session_tree``: the leaf moved."""

    new_leaf_id: str | None
    old_leaf_id: str | None
    summary_entry: StoredEntry | None = None
    from_extension: bool | None = None
