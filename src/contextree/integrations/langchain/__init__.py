"""LangChain 1.x / LangGraph integration: agent middleware backed by a contextree session.

``ContextreeMiddleware`` goes into ``langchain.agents.create_agent(middleware=[...])`` in place
of LangChain's ``SummarizationMiddleware``: the conversation is stored in a pi session file and
the model sees the compacted context. ``contextree.integrations.langchain.convert`` converts
messages both ways. Needs the ``[langchain]`` extra: ``pip install "contextree[langchain]"``.
"""

from __future__ import annotations

try:
    import langchain.agents.middleware  # noqa: F401
    import langchain_core.messages  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "contextree.integrations.langchain needs LangChain 1.x and LangGraph: "
        'pip install "contextree[langchain]"'
    ) from exc

from contextree.integrations.langchain.convert import (
    MessageConversionError,
    from_langchain,
    from_langchain_messages,
    to_langchain,
    to_langchain_messages,
)
from contextree.integrations.langchain.middleware import ContextreeMiddleware

__all__ = [
    "ContextreeMiddleware",
    "MessageConversionError",
    "from_langchain",
    "from_langchain_messages",
    "to_langchain",
    "to_langchain_messages",
]
