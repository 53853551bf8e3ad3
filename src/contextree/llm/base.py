"""The model-client protocol: one request value, one completion value, one async method.

Every backend (OpenAI-compatible servers, Anthropic, the remote summarization endpoint, the
official SDKs, the offline summarizer, :class:`~contextree.llm.scripted.ScriptedClient`) turns a
:class:`CompletionRequest` into a :class:`Completion`. Messages and content blocks keep pi's
shape (pi-behaviour.md §2), so a completion can be stored as an assistant message as it is.

Cancellation is asyncio task cancellation: cancelling the task that awaits
:meth:`ModelClient.complete` closes the HTTP request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, cast, runtime_checkable

from contextree.entries.types import (
    AssistantBlock,
    AssistantMessage,
    LlmMessage,
    StopReason,
    StoredBlock,
    Usage,
    is_text_content,
)

__all__ = [
    "Completion",
    "CompletionRequest",
    "ModelClient",
    "ToolSpec",
    "make_usage",
]

ToolSpec = dict[str, Any]
"""A tool the model may call: ``{"name": str, "description": str, "parameters": JSON schema}``."""


def make_usage(input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0) -> Usage:
    """Build a pi-shaped usage dict; ``totalTokens`` is the sum of the four parts (§2.2).

    Args:
        input: non-cached input tokens.
        output: output tokens, thinking and tool calls included.
        cache_read: input tokens read from the provider's prompt cache.
        cache_write: input tokens written to the provider's prompt cache.
    """
    return {
        "input": input,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": input + output + cache_read + cache_write,
    }


@dataclass(frozen=True)
class CompletionRequest:
    """One call to a model."""

    system_prompt: str
    """Sent as the provider's system prompt; an empty string sends none."""
    messages: list[LlmMessage]
    """pi-shaped LLM messages: ``user``, ``developer`` (sent as user), ``assistant``,
    ``toolResult``."""
    max_tokens: int | None = None
    """Output token limit; ``None`` leaves the provider's default (Anthropic needs one: 4096)."""
    reasoning: str | None = None
    """pi thinking level (``"minimal"``, ``"low"``, ``"medium"``, ``"high"``, ``"xhigh"``);
    ``None`` or ``"off"`` sends no reasoning option at all."""
    tools: list[ToolSpec] = field(default_factory=list)
    """Tools the model may call; empty sends no tools."""
    temperature: float | None = None
    """Sampling temperature; ``None`` leaves the provider's default."""


@dataclass(frozen=True)
class Completion:
    """What a model answered, in pi's assistant-message vocabulary."""

    content: list[StoredBlock]
    """``text``, ``thinking`` and ``toolCall`` blocks, in the order the model produced them."""
    usage: Usage = field(default_factory=make_usage)
    """``{input, output, cacheRead, cacheWrite, totalTokens}``; ``input`` excludes cache reads."""
    stop_reason: StopReason = "stop"
    """``"stop"``, ``"length"``, ``"toolUse"``, ``"error"`` or ``"aborted"``."""
    error_message: str | None = None
    """Set when ``stop_reason`` is ``"error"`` or ``"aborted"``."""
    model: str = ""
    """The model that answered, as the provider names it."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Data with no standard field, e.g. ``shortSummary`` from the remote endpoint, or the
    provider's raw stop reason under ``providerStopReason``."""

    @property
    def text(self) -> str:
        """The text blocks joined with ``"\\n"``; thinking and tool calls are left out (§7.4)."""
        return "\n".join(
            str(block.get("text", "")) for block in self.content if is_text_content(block)
        )

    @property
    def tool_calls(self) -> list[StoredBlock]:
        """The ``toolCall`` blocks, in order."""
        return [block for block in self.content if block.get("type") == "toolCall"]

    @classmethod
    def from_text(cls, text: str, *, model: str = "", usage: Usage | None = None) -> Completion:
        """A completion holding one text block."""
        block: StoredBlock = {"type": "text", "text": text}
        return cls(content=[block], usage=usage or make_usage(), model=model)

    def to_message(self, *, timestamp: int | None = None) -> AssistantMessage:
        """This completion as a pi assistant message (no ``api``/``provider`` fields)."""
        message: AssistantMessage = {
            "role": "assistant",
            "content": [cast("AssistantBlock", dict(block)) for block in self.content],
            "model": self.model,
            "usage": dict(self.usage),
            "stopReason": self.stop_reason,
        }
        if self.error_message is not None:
            message["errorMessage"] = self.error_message
        if timestamp is not None:
            message["timestamp"] = timestamp
        return message


@runtime_checkable
class ModelClient(Protocol):
    """Turns one completion request into a completion; providers and the offline summarizer
    all fit."""

    name: str
    """``"openai:gpt-4o-mini"``, ``"anthropic:claude-sonnet-4-5"``, ``"remote"``, ``"offline"``."""

    async def complete(self, request: CompletionRequest) -> Completion:
        """Call the model once.

        Raises:
            contextree.errors.ModelError: the call failed; subclasses say how.
        """
        ...
