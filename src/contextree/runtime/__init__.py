"""The agent runtime: ``AgentSession`` runs turns, tools, compactions and retries on a tree.

``from contextree.runtime import AgentSession`` works; the names load on first use, because
the runtime pulls in the model clients and the tools.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contextree.runtime.agent import OVERFLOW_RETRY_FAILED, AgentSession, TurnOutcome
    from contextree.runtime.coding import coding_agent
    from contextree.runtime.events import EVENT_TYPES, AgentEvent, EventListener
    from contextree.runtime.retry import FallbackClient
    from contextree.runtime.system_prompt import default_system_prompt

__all__ = [
    "EVENT_TYPES",
    "OVERFLOW_RETRY_FAILED",
    "AgentEvent",
    "AgentSession",
    "EventListener",
    "FallbackClient",
    "TurnOutcome",
    "coding_agent",
    "default_system_prompt",
]

_LAZY = {
    "OVERFLOW_RETRY_FAILED": "agent",
    "AgentSession": "agent",
    "TurnOutcome": "agent",
    "EVENT_TYPES": "events",
    "AgentEvent": "events",
    "EventListener": "events",
    "FallbackClient": "retry",
    "coding_agent": "coding",
    "default_system_prompt": "system_prompt",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'contextree.runtime' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"contextree.runtime.{module}"), name)
