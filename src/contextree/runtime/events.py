"""Events an :class:`~contextree.runtime.agent.AgentSession` emits while it works."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["EVENT_TYPES", "AgentEvent", "EventListener"]

EVENT_TYPES: Final = frozenset(
    {
        "agent_start",
        "agent_end",
        "message",
        "tool_start",
        "tool_end",
        "retry",
        "prune",
        "auto_compaction_start",
        "auto_compaction_end",
        "compaction_start",
        "compaction_end",
    }
)


@dataclass(frozen=True, slots=True)
class AgentEvent:
    """``type`` is one of :data:`EVENT_TYPES`; ``data`` uses pi's camelCase field names.

    - ``auto_compaction_start``: ``reason`` ("threshold" | "overflow"), ``action``
    - ``auto_compaction_end``: ``result``, ``aborted``, ``willRetry``, ``errorMessage?``,
      ``skipped?``
    - ``compaction_start`` / ``compaction_end``: the same for manual compactions
      (``reason: "manual"``)
    - ``message``: ``message``, ``entryId``; ``tool_start`` / ``tool_end``: ``toolCallId``,
      ``name``, ``isError?``; ``retry``: ``attempt``, ``delayMs``, ``error``; ``prune``:
      ``prunedCount``, ``tokensSaved``; ``agent_end``: ``aborted``, ``error?``
    """

    type: str
    data: dict[str, Any] = field(default_factory=dict)


EventListener = Callable[[AgentEvent], None]
