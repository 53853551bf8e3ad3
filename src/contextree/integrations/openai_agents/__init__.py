"""OpenAI Agents SDK integration: a ``Session`` stored in a contextree session file.

Needs the ``openai-agents`` package: ``pip install "contextree[openai-agents]"``. Importing
``contextree`` or ``contextree.integrations`` never imports it; importing this package does.
"""

from __future__ import annotations

from contextree.integrations._extras import require_framework

require_framework(
    "openai_agents", ("agents",), needs="the OpenAI Agents SDK", extra="openai-agents"
)

from contextree.integrations.openai_agents.convert import (  # noqa: E402 - after the check
    UnsupportedItemError,
    items_to_messages,
    messages_to_items,
)
from contextree.integrations.openai_agents.session import (  # noqa: E402
    CLEAR_MARKER,
    POP_MARKER,
    ContextreeSession,
)

__all__ = [
    "CLEAR_MARKER",
    "POP_MARKER",
    "ContextreeSession",
    "UnsupportedItemError",
    "items_to_messages",
    "messages_to_items",
]
