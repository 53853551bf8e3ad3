"""A compaction written by the provider's own compaction (``openai-compact:``,
``anthropic-compact:``).

The provider gets the history to fold (the earlier summary first, as a user message) in the
provider view and returns items only it can use. The entry keeps them in
``details.providerCompaction`` (``{provider, model, items}``) so a client of that provider can
send them back instead of the summary; every other reader (pi, another provider, contextree's
own context) reads ``summary``: the provider's readable text when it gives one (Anthropic),
else the offline summarizer's (OpenAI's item is encrypted).

:class:`ProviderSummarizer` puts such a client behind the summarizer protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from contextree.compaction.prepare import context_region
from contextree.compaction.summary_prompt import ModelSummarizer
from contextree.compaction.summary_request import SummaryMethod, SummaryReply, SummaryRequest
from contextree.context.convert import convert_to_llm
from contextree.context.provider import provider_messages
from contextree.entries.types import LlmMessage, StoredEntry, StoredMessage

if TYPE_CHECKING:
    from contextree.llm.base import Completion, CompletionRequest
    from contextree.llm.provider_compaction import ProviderCompaction

__all__ = [
    "ProviderCompactor",
    "ProviderSummarizer",
    "provider_details",
    "provider_history",
    "replay_provider_compaction",
]


@runtime_checkable
class ProviderCompactor(Protocol):
    """A client that compacts with the provider's own API."""

    name: str

    async def compact_messages(
        self, messages: Sequence[LlmMessage], *, instructions: str | None = None
    ) -> ProviderCompaction: ...

    async def complete(self, request: CompletionRequest) -> Completion:
        """Text completions (which a provider's compaction refuses)."""
        ...


class ProviderSummarizer:
    """A provider's own compaction as a summarizer.

    A history request (``"initial"``, ``"update"``) is one compaction call over its messages,
    the previous summary first; the reply's text is the provider's readable summary (empty
    when its item is opaque) and its ``details`` hold the items. The provider writes no short
    summary: the offline summarizer does. Other kinds go to the client as text requests
    (which it refuses).
    """

    method: SummaryMethod = "provider"
    fallible = True
    summarizes_turn_prefix = True
    parallel_requests = True

    def __init__(self, compactor: ProviderCompactor) -> None:
        self.compactor = compactor
        self.name = compactor.name

    async def write_summary(self, request: SummaryRequest) -> SummaryReply:
        """The provider's compaction of ``request`` (see the class)."""
        if request.kind == "short":
            from contextree.compaction.offline import OfflineSummarizer

            return await OfflineSummarizer().write_summary(request)
        if request.kind not in ("initial", "update"):
            return await ModelSummarizer(self.compactor).write_summary(request)
        result = await self.compactor.compact_messages(
            provider_history(request.redacted_messages(), request.previous_summary),
            instructions=request.custom_instructions,
        )
        request.spent(result.usage)
        return SummaryReply(result.summary or "", details=provider_details(result))


def provider_history(
    messages: Sequence[StoredMessage], previous_summary: str | None
) -> list[LlmMessage]:
    """What the provider compacts: the earlier summary, then the history, as a request."""
    head: list[StoredMessage] = []
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


def replay_provider_compaction(
    messages: list[LlmMessage], path: Sequence[StoredEntry], provider: str
) -> list[LlmMessage]:
    """A request's ``messages`` (built from ``path``'s context) with the latest compaction's
    provider item sent back when ``provider`` wrote it. Anthropic: its ``compaction`` block, in
    an assistant message right after the summary (the API drops what comes before the block,
    so the model reads its own compaction instead of our summary). OpenAI's item needs the
    Responses API, which the chat clients do not use; other providers get ``messages``."""
    compaction, _ = context_region(path)
    if provider != "anthropic" or compaction < 0 or not messages:
        return messages
    details = path[compaction].get("details")
    stored = details.get("providerCompaction") if isinstance(details, dict) else None
    if not isinstance(stored, dict) or stored.get("provider") != provider:
        return messages
    # Imported here: the wire shapes live with the client, which loads httpx.
    from contextree.llm.provider_compaction import anthropic_blocks

    blocks = anthropic_blocks(stored.get("items"))
    if not blocks:
        return messages
    # The content is the provider's own block, replayed as it was sent (not a pi block).
    replay = cast("LlmMessage", {"role": "assistant", "content": blocks[-1:], "provider": provider})
    return [messages[0], replay, *messages[1:]]
