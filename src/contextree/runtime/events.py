"""Events an :class:`~contextree.runtime.agent.AgentSession` emits while it works."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from contextree.hooks.registry import HookRegistry

__all__ = ["EVENT_TYPES", "AgentEvent", "EventHub", "EventListener"]

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


class EventHub:
    """Delivers a session's events to its listeners, then to the hooks registered for them."""

    def __init__(self, hooks: HookRegistry, listeners: list[EventListener] | None = None) -> None:
        self.hooks = hooks
        self._listeners: list[EventListener] = list(listeners or [])

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Call ``listener`` with every :class:`AgentEvent`; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def emit(self, kind: str, **data: Any) -> None:
        event = AgentEvent(kind, data)
        for listener in list(self._listeners):
            listener(event)
        if self.hooks.has(kind):
            await self.hooks.emit(kind, event)
