"""Events an :class:`~contextree.runtime.agent.AgentSession` emits while it works."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypedDict

from contextree.hooks.registry import (
    AUTO_COMPACTION_END,
    AUTO_COMPACTION_START,
    COMPACTION_END,
    COMPACTION_START,
)

if TYPE_CHECKING:
    from contextree.compaction.summarize import CompactionResult
    from contextree.hooks.registry import HookRegistry

__all__ = [
    "AGENT_END",
    "AGENT_START",
    "AUTO_COMPACTION_END",
    "AUTO_COMPACTION_START",
    "COMPACTION_END",
    "COMPACTION_START",
    "EVENT_DATA",
    "EVENT_TYPES",
    "MESSAGE",
    "PRUNE",
    "RETRY",
    "TOOL_END",
    "TOOL_START",
    "AgentEndData",
    "AgentEvent",
    "CompactionEndData",
    "CompactionStartData",
    "EventHub",
    "EventListener",
    "MessageData",
    "NoData",
    "PruneData",
    "RetryData",
    "ToolData",
]

AGENT_START: Final = "agent_start"
AGENT_END: Final = "agent_end"
MESSAGE: Final = "message"
TOOL_START: Final = "tool_start"
TOOL_END: Final = "tool_end"
RETRY: Final = "retry"
PRUNE: Final = "prune"


# What ``AgentEvent.data`` holds for each type, in pi's camelCase (the one spelling). Optional
# keys are declared in ``total=False`` subclasses, not with NotRequired: with postponed
# annotations Python 3.11 cannot tell NotRequired apart at runtime (``__required_keys__``).


class MessageData(TypedDict):
    """:data:`MESSAGE`: a message was stored."""

    message: dict[str, Any]
    entryId: str


class _ToolIds(TypedDict):
    toolCallId: str | None
    name: str | None


class ToolData(_ToolIds, total=False):
    """:data:`TOOL_START` / :data:`TOOL_END`."""

    isError: bool


class RetryData(TypedDict):
    """:data:`RETRY`: a model call failed and is retried after ``delayMs``."""

    attempt: int
    delayMs: float
    error: str


class PruneData(TypedDict):
    """:data:`PRUNE`: old tool outputs were pruned before a threshold check."""

    prunedCount: int
    tokensSaved: int


class _AgentEndRequired(TypedDict):
    aborted: bool


class AgentEndData(_AgentEndRequired, total=False):
    """:data:`AGENT_END`."""

    error: str | None


class _CompactionStartRequired(TypedDict):
    reason: str


class CompactionStartData(_CompactionStartRequired, total=False):
    """:data:`AUTO_COMPACTION_START` (``reason`` "threshold" | "overflow", ``action``) and
    :data:`COMPACTION_START` (``reason`` "manual")."""

    action: str


class _CompactionEndRequired(TypedDict):
    result: CompactionResult | None
    aborted: bool
    willRetry: bool


class CompactionEndData(_CompactionEndRequired, total=False):
    """:data:`AUTO_COMPACTION_END` / :data:`COMPACTION_END`."""

    reason: str
    errorMessage: str
    skipped: bool


class NoData(TypedDict):
    """:data:`AGENT_START`: nothing."""


EVENT_DATA: Final[dict[str, type]] = {
    AGENT_START: NoData,
    AGENT_END: AgentEndData,
    MESSAGE: MessageData,
    TOOL_START: ToolData,
    TOOL_END: ToolData,
    RETRY: RetryData,
    PRUNE: PruneData,
    AUTO_COMPACTION_START: CompactionStartData,
    COMPACTION_START: CompactionStartData,
    AUTO_COMPACTION_END: CompactionEndData,
    COMPACTION_END: CompactionEndData,
}
"""The shape of ``AgentEvent.data`` for each event type (a ``TypedDict``)."""

EVENT_TYPES: Final = frozenset(EVENT_DATA)
"""Every event type; the compaction ones are also hook events
(:data:`~contextree.hooks.registry.COMPACTION_EVENTS`)."""


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
