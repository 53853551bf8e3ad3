"""A compaction written by the provider's own compaction (``openai-compact:``,
``anthropic-compact:``).

The provider gets the history to fold (the earlier summary first, as a user message) in the
provider view and returns items only it can use. The entry keeps them in
``details.providerCompaction`` (``{provider, model, items}``) so a client of that provider can
send them back instead of the summary; every other reader (pi, another provider, contextree's
own context) reads ``summary``: the provider's readable text when it gives one (Anthropic),
else the offline summarizer's (OpenAI's item is encrypted).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from contextree.context.convert import convert_to_llm
from contextree.context.provider import provider_messages
from contextree.entries.types import AgentMessage, LlmMessage

if TYPE_CHECKING:
    from contextree.llm.provider_compaction import ProviderCompaction

__all__ = ["ProviderCompactor", "provider_details", "provider_history"]


@runtime_checkable
class ProviderCompactor(Protocol):
    """A client that compacts with the provider's own API."""

    name: str

    async def compact_messages(
        self, messages: Sequence[LlmMessage], *, instructions: str | None = None
    ) -> ProviderCompaction: ...


def provider_history(
    messages: Sequence[AgentMessage], previous_summary: str | None
) -> list[LlmMessage]:
    """What the provider compacts: the earlier summary, then the history, as a request."""
    head: list[AgentMessage] = []
    if previous_summary:
        text = f"Summary of the conversation before this point:\n\n{previous_summary}"
        head.append({"role": "user", "content": [{"type": "text", "text": text}]})
    return provider_messages(convert_to_llm([*head, *messages]))


def provider_details(result: ProviderCompaction) -> dict[str, Any]:
    """The entry's ``details`` keys for a provider's compaction."""
    return {
        "providerCompaction": {
            "provider": result.provider,
            "model": result.model,
            "items": result.items,
        }
    }
