"""Probes: planted items whose specific values must stay visible to the model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, get_args

__all__ = ["PROBE_KINDS", "Placement", "Position", "Probe", "ProbeKind"]

ProbeKind = Literal[
    "fact",
    "constraint",
    "safety",
    "goal",
    "preference",
    "decision",
    "file_edit",
    "error",
    "todo",
    "question",
]
"""What a planted item is: a plain fact, a constraint, a safety rule, the goal and its status,
a preference, a decision, a file edit, an error, an open TODO or a question to the user."""

PROBE_KINDS: Final[tuple[ProbeKind, ...]] = get_args(ProbeKind)

Placement = Literal["user", "assistant", "tool", "system"]
"""The message that carries a probe: the user's, the assistant's prose or tool call, a tool
result, or a system/developer message."""

Position = Literal["early", "middle", "late"]


@dataclass(frozen=True, slots=True)
class Probe:
    """One planted item: kept when every one of ``values`` appears in what the model sees."""

    id: str
    kind: ProbeKind
    values: tuple[str, ...]
    """The specific values (names, versions, hosts, paths, numbers ...) that must survive."""
    text: str = ""
    """The sentence as planted (for reports; not used to score)."""
    ask: str = ""
    """What the user might ask later when they need the item again, in their own words and
    without its values (written with the blind sessions): the message ``recall.auto`` is
    measured with (:func:`contextree.eval.recall_check.visible_or_asked`)."""
    phrasing: str = ""
    """The phrasing's key; empty for a user's own probes."""
    held_out: bool = False
    """From the held-out phrasings, which no unit test of the summarizer uses."""
    placement: Placement | None = None
    position: Position | None = None
    segment: int = 0
    """The slice of the session (0-based) the probe was planted in."""
