"""OpenAI Agents SDK integration: a ``Session`` stored in a contextree session file.

Needs the ``openai-agents`` package: ``pip install "contextree[openai-agents]"``. Importing
``contextree`` or ``contextree.integrations`` never imports it; importing this package does.
"""

from __future__ import annotations

try:
    import agents as _agents  # noqa: F401  (fail here, with the install hint, not deeper)
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "contextree.integrations.openai_agents needs the OpenAI Agents SDK; "
        'install it with: pip install "contextree[openai-agents]"'
    ) from exc

from contextree.integrations.openai_agents.convert import (
    UnsupportedItemError,
    items_to_messages,
    messages_to_items,
)
from contextree.integrations.openai_agents.session import CLEAR_MARKER, ContextreeSession

__all__ = [
    "CLEAR_MARKER",
    "ContextreeSession",
    "UnsupportedItemError",
    "items_to_messages",
    "messages_to_items",
]
