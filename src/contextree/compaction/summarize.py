"""``compact()``: turn a :class:`CompactionPreparation` into a summary (pi-behaviour §7.2-7.5).

The summarizer receives one user message: the serialized conversation in ``<conversation>``,
the previous summary in ``<previous-summary>`` when there is one, hook context lines in
``<additional-context>``, then our initial or update prompt, then ``Additional focus: ...``.
A split turn summarizes the history and the turn prefix concurrently and joins the two.

Deliberate differences (DESIGN.md): a split turn with nothing new before it keeps the previous
summary (decision 3), custom instructions also reach the turn-prefix summary (decision 3), file
tags follow decision 5, and a failing short summary is logged and left out instead of failing
the whole compaction.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextree.compaction.file_ops import compute_file_lists, upsert_file_tags
from contextree.compaction.prepare import CompactionPreparation
from contextree.compaction.prompt_templates import load_prompt
from contextree.compaction.serialize import serialize_conversation
from contextree.context.convert import convert_to_llm
from contextree.entries.types import AgentMessage
from contextree.errors import CompactionError
from contextree.llm.base import Completion, CompletionRequest, ModelClient
from contextree.security.redact import DEFAULT_REDACTOR, Redactor
from contextree.tokens.estimate import TokenEstimator, get_estimator

__all__ = [
    "SPLIT_TURN_SEPARATOR",
    "CompactionResult",
    "build_summary_prompt",
    "compact",
    "summary_request",
]

log = logging.getLogger("contextree.compaction")

SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n"
NO_PRIOR_HISTORY = "No prior history."


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """A finished compaction, ready for ``SessionTree.append_compaction``."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: dict[str, Any] | None
    short_summary: str | None = None
    tokens_after: int = 0
    """Estimated context tokens right after the compaction (summary + kept messages)."""
    preserve_data: dict[str, Any] | None = None
    from_extension: bool = False
    usage: list[dict[str, Any]] = field(default_factory=list)
    """Provider usage of each summarization call (for cost reporting)."""


def _block(tag: str, body: str) -> str:
    return f"<{tag}>\n{body}\n</{tag}>\n\n"


def build_summary_prompt(
    messages: Sequence[AgentMessage],
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
    redact = redactor.redact if redactor is not None else _unchanged
    text = _block("conversation", redact(serialize_conversation(convert_to_llm(messages))))
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


async def _call(
    client: ModelClient, request: CompletionRequest, failure: str, usage: list[dict[str, Any]]
) -> str:
    completion: Completion = await client.complete(request)
    if completion.stop_reason == "aborted":
        raise asyncio.CancelledError()
    if completion.stop_reason == "error":
        raise CompactionError(f"{failure}: {completion.error_message or 'Unknown error'}")
    usage.append(dict(completion.usage))
    text = "\n".join(
        str(block.get("text", ""))
        for block in completion.content
        if isinstance(block, dict) and block.get("type") == "text"
    )
    if not text.strip():
        # An empty summary would replace the history with nothing (DESIGN decision 4):
        # fail, and nothing is written.
        raise CompactionError(f"{failure}: {client.name} returned an empty summary")
    return text


async def compact(
    preparation: CompactionPreparation,
    summarizer: ModelClient,
    *,
    custom_instructions: str | None = None,
    turn_prefix_summarizer: ModelClient | None = None,
    short_summarizer: ModelClient | None = None,
    prompt_override: str | None = None,
    extra_context: Sequence[str] = (),
    reasoning: str | None = None,
    prompts_dir: Path | None = None,
    short_summary: bool = True,
    estimator: TokenEstimator | None = None,
    redactor: Redactor | None = DEFAULT_REDACTOR,
) -> CompactionResult:
    """Summarize what ``preparation`` selected; cancel by cancelling the awaiting task.

    Args:
        summarizer: the model (or the offline summarizer, or a remote endpoint) for the history.
        turn_prefix_summarizer: the model for a split turn's prefix; default ``summarizer``. The
            remote endpoint never summarizes the prefix (§7.6); callers pass a local one.
        short_summarizer: the model for the short display summary; default ``summarizer``.
        prompt_override: replaces the initial/update prompt (a ``session.compacting`` hook).
        extra_context: lines for the ``<additional-context>`` block (hooks).
        prompts_dir: a directory whose ``<name>.md`` files override our prompts.
        short_summary: also write the short display summary (failures only log).
        redactor: blanks secrets out of every prompt (see :func:`build_summary_prompt`);
            default the built-in patterns, ``None`` for none.

    Raises:
        CompactionError: a summarization call failed.
    """
    reserve = preparation.settings.reserve_tokens
    usage: list[dict[str, Any]] = []
    previous = preparation.previous_summary
    to_summarize = preparation.messages_to_summarize
    prefix = preparation.turn_prefix_messages

    async def history() -> str:
        if not to_summarize:
            # Decision 3: nothing new before the split turn keeps the previous summary.
            return previous or NO_PRIOR_HISTORY
        base = prompt_override or load_prompt(
            "update-summary" if previous else "initial-summary", overrides_dir=prompts_dir
        )
        prompt = build_summary_prompt(
            to_summarize,
            base,
            previous_summary=previous,
            extra_context=extra_context,
            custom_instructions=custom_instructions,
            redactor=redactor,
        )
        request = summary_request(
            prompt,
            max_tokens=math.floor(0.8 * reserve),
            reasoning=reasoning,
            prompts_dir=prompts_dir,
        )
        return await _call(summarizer, request, "Summarization failed", usage)

    async def turn_prefix() -> str:
        prompt = build_summary_prompt(
            prefix,
            load_prompt("turn-prefix", overrides_dir=prompts_dir),
            custom_instructions=custom_instructions,
            redactor=redactor,
        )
        request = summary_request(
            prompt,
            max_tokens=math.floor(0.5 * reserve),
            reasoning=reasoning,
            prompts_dir=prompts_dir,
        )
        client = turn_prefix_summarizer or summarizer
        return await _call(client, request, "Turn prefix summarization failed", usage)

    if preparation.is_split_turn and prefix:
        history_text, prefix_text = await asyncio.gather(history(), turn_prefix())
        summary = history_text + SPLIT_TURN_SEPARATOR + prefix_text
    else:
        summary = await history()

    short: str | None = None
    if short_summary:
        short = await _short_summary(
            preparation,
            summary,
            short_summarizer or summarizer,
            extra_context=extra_context,
            reserve=reserve,
            prompts_dir=prompts_dir,
            usage=usage,
            redactor=redactor,
        )

    read_files, modified_files = compute_file_lists(preparation.file_ops)
    summary = upsert_file_tags(summary, read_files, modified_files)
    estimate = (estimator or get_estimator("pi")).estimate
    tokens_after = estimate({"role": "compactionSummary", "summary": summary}) + sum(
        estimate(m) for m in preparation.recent_messages
    )
    return CompactionResult(
        summary=summary,
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details={"readFiles": read_files, "modifiedFiles": modified_files},
        short_summary=short,
        tokens_after=tokens_after,
        usage=usage,
    )


async def _short_summary(
    preparation: CompactionPreparation,
    summary: str,
    client: ModelClient,
    *,
    extra_context: Sequence[str],
    reserve: int,
    prompts_dir: Path | None,
    usage: list[dict[str, Any]],
    redactor: Redactor | None,
) -> str | None:
    prompt = build_summary_prompt(
        preparation.recent_messages,
        load_prompt("short-summary", overrides_dir=prompts_dir),
        previous_summary=summary,
        extra_context=extra_context,
        redactor=redactor,
    )
    request = summary_request(
        prompt,
        max_tokens=min(512, math.floor(0.2 * reserve)),
        reasoning=None,
        prompts_dir=prompts_dir,
    )
    try:
        text = await _call(client, request, "Short summary failed", usage)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        # Unlike the fork, a failed display summary does not fail the compaction.
        log.warning("short summary failed; storing none: %s", exc)
        return None
    return text.strip() or None
