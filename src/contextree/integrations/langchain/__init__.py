"""LangChain 1.x / LangGraph integration: agent middleware backed by a contextree session.

``ContextreeMiddleware`` goes into ``langchain.agents.create_agent(middleware=[...])`` in place
of LangChain's ``SummarizationMiddleware``: the conversation is stored in a pi session file and
the model sees the compacted context. ``contextree.integrations.langchain.convert`` converts
messages both ways. Needs the ``[langchain]`` extra: ``pip install "contextree[langchain]"``.
"""

from __future__ import annotations

from contextree.integrations._extras import require_framework

require_framework(
    "langchain",
    ("langchain.agents.middleware", "langchain_core.messages"),
    needs="LangChain 1.x and LangGraph",
    extra="langchain",
)

from contextree.integrations.langchain.convert import (  # noqa: E402 - after the check
    MessageConversionError,
    from_langchain,
    from_langchain_messages,
    to_langchain,
    to_langchain_messages,
)
from contextree.integrations.langchain.middleware import ContextreeMiddleware  # noqa: E402

__all__ = [
    "ContextreeMiddleware",
    "MessageConversionError",
    "from_langchain",
    "from_langchain_messages",
    "to_langchain",
    "to_langchain_messages",
]
