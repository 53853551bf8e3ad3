"""The prompt and request of one summarization call (pi-behaviour §7.2), and the call:
what :func:`~contextree.compaction.summarize.compact` sends, kept apart from how it
plans and joins the calls."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contextree.compaction.prompt_templates import load_prompt
from contextree.compaction.serialize import serialize_conversation
from contextree.context.convert import convert_to_llm
from contextree.entries.types import StoredMessage
from contextree.errors import CompactionError
from contextree.llm.base import Completion, CompletionRequest, ModelClient
from contextree.security.redact import DEFAULT_REDACTOR, Redactor
from contextree.tokens.estimate import utf16_len

__all__ = [
    "build_summary_prompt",
    "call_summarizer",
    "prompt_text",
    "redacted",
    "summary_request",
    "text_tokens",
]


def text_tokens(text: str) -> int:
    """chars/4 of ``text`` (UTF-16 units, rounded up): how summary budgets are measured."""
    return math.ceil(utf16_len(text) / 4)


def _block(tag: str, body: str) -> str:
    return f"<{tag}>\n{body}\n</{tag}>\n\n"


def build_summary_prompt(
    messages: Sequence[StoredMessage],
    instructions: str,
    *,
    previous_summary: str | None = None,
    extra_context: Sequence[str] = (),
    custom_instructions: str | None = None,
    redactor: Redactor | None = DEFAULT_REDACTOR,
) -> str:
    """Assemble the user prompt of one summarization call (§7.2).

    ``redactor`` blanks secrets out of the conversation, the previous summary and the hook
    context before they leave for the summarizer (default: the built-in key patterns;
    ``None`` sends them as they are). Our instructions and the user's focus are not touched.
    """
    return prompt_text(
        serialize_conversation(convert_to_llm(messages)),
        instructions,
        previous_summary=previous_summary,
        extra_context=extra_context,
        custom_instructions=custom_instructions,
        redactor=redactor,
    )


def prompt_text(
    conversation: str | None,
    instructions: str,
    *,
    previous_summary: str | None = None,
    extra_context: Sequence[str] = (),
    custom_instructions: str | None = None,
    redactor: Redactor | None = DEFAULT_REDACTOR,
) -> str:
    redact = redactor.redact if redactor is not None else _unchanged
    text = _block("conversation", redact(conversation)) if conversation is not None else ""
    if previous_summary:
        text += _block("previous-summary", redact(previous_summary))
    if extra_context:
        lines = "\n".join(f"- {line}" for line in extra_context)
        text += _block("additional-context", redact(lines))
    text += instructions
    if custom_instructions:
        text += f"\n\nAdditional focus: {custom_instructions}"
    return text


def _unchanged(text: str) -> str:
    return text


def redacted(value: Any, redactor: Redactor) -> Any:
    """A copy of a JSON value with every string redacted (for summarizers that read messages)."""
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, dict):
        return {key: redacted(item, redactor) for key, item in value.items()}
    if isinstance(value, list):
        return [redacted(item, redactor) for item in value]
    return value


def summary_request(
    prompt: str, *, max_tokens: int, reasoning: str | None, prompts_dir: Path | None
) -> CompletionRequest:
    """The request for one summarization call: our system prompt and one user message."""
    return CompletionRequest(
        system_prompt=load_prompt("system", overrides_dir=prompts_dir),
        messages=[{"role": "user", "content": [{"type": "text", "text": prompt}]}],
        max_tokens=max_tokens,
        reasoning=reasoning,
    )


async def call_summarizer(
    client: ModelClient, request: CompletionRequest, failure: str, usage: list[dict[str, Any]]
) -> str:
    completion: Completion = await client.complete(request)
    if completion.stop_reason == "aborted":
        raise asyncio.CancelledError()
    if completion.stop_reason == "error":
        raise CompactionError(f"{failure}: {completion.error_message or 'Unknown error'}")
    usage.append(dict(completion.usage))
    text = completion.text
    if not text.strip():
        # An empty summary would replace the history with nothing (DESIGN decision 4):
        # fail, and nothing is written.
        raise CompactionError(f"{failure}: {client.name} returned an empty summary")
    return text
