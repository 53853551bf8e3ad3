"""The prompt and request of one summarization call (pi-behaviour §7.2), and
:class:`ModelSummarizer`: a text model behind the summarizer protocol, which builds the prompt
a :class:`~contextree.compaction.summary_request.SummaryRequest` asks for and calls the model
(window by window when the conversation exceeds its window)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Final, Literal

from contextree.compaction.prompt_templates import load_prompt
from contextree.compaction.serialize import serialize_conversation
from contextree.compaction.summary_request import (
    SummaryMethod,
    SummaryReply,
    SummaryRequest,
    redacted,
)
from contextree.compaction.windows import WindowPlan, conversation_pieces, summarize_in_windows
from contextree.context.convert import convert_to_llm
from contextree.entries.types import StoredMessage
from contextree.llm.base import Completion, CompletionRequest, ModelClient
from contextree.security.redact import DEFAULT_REDACTOR, Redactor
from contextree.tokens.estimate import utf16_len

__all__ = [
    "ModelSummarizer",
    "build_summary_prompt",
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


_ONE_CALL: Final = ("short", "branch")
_STOPS: Final[dict[str, Literal["error", "aborted"]]] = {"error": "error", "aborted": "aborted"}
"""Kinds asked in one call: their text is bounded already (a summary, a fitted branch)."""


class _Stopped(Exception):
    """A call the model ended with an error, an abort or no text: the summary stops there."""

    def __init__(self, completion: Completion) -> None:
        super().__init__(completion.error_message)
        self.completion = completion


class ModelSummarizer:
    """A text model as a summarizer: the prompt of each request (§7.2), our system prompt,
    ``max_tokens`` the request's budget; a history longer than the model's window goes window
    by window (:mod:`~contextree.compaction.windows`).

    ``summarizes_turn_prefix`` and ``parallel_requests`` come from the client's attributes of
    those names when it has them (``RemoteSummaryClient``: no turn prefix; ``llamacpp``,
    ``ollama``: one request at a time).
    """

    method: SummaryMethod = "model"
    fallible = True

    def __init__(self, client: ModelClient) -> None:
        self.client = client
        self.name = client.name
        self.summarizes_turn_prefix = bool(getattr(client, "summarizes_turn_prefix", True))
        self.parallel_requests = bool(getattr(client, "parallel_requests", True))

    def __repr__(self) -> str:
        return f"ModelSummarizer({self.client!r})"

    async def write_summary(self, request: SummaryRequest) -> SummaryReply:
        """Ask the model; a reply that ended in an error, an abort or no text is returned as
        it is, with the requests made so far."""
        windows = 0

        async def one_window(conversation: str | None, running: str | None) -> str:
            nonlocal windows
            prompt = prompt_text(
                conversation,
                _instructions(request, running),
                previous_summary=running,
                extra_context=request.extra_context,
                custom_instructions=request.custom_instructions,
                redactor=request.redactor,
            )
            completion = await self.client.complete(
                summary_request(
                    prompt,
                    max_tokens=request.budget_tokens,
                    reasoning=request.reasoning,
                    prompts_dir=request.prompts_dir,
                )
            )
            if completion.stop_reason in ("aborted", "error"):
                raise _Stopped(completion)
            request.spent(completion.usage)
            if not completion.text.strip():
                raise _Stopped(completion)
            windows += 1
            return completion.text

        try:
            if request.kind in _ONE_CALL:
                text = await one_window(_conversation(request), request.previous_summary)
            else:
                text, _ = await summarize_in_windows(
                    conversation_pieces(convert_to_llm(request.messages)),
                    one_window,
                    plan=_window_plan(request),
                    previous_summary=request.previous_summary,
                )
        except _Stopped as stopped:
            completion = stopped.completion
            return SummaryReply(
                completion.text,
                stop_reason=_STOPS.get(completion.stop_reason, "stop"),
                error_message=completion.error_message,
                windows=windows,
            )
        return SummaryReply(text, windows=windows)


def _conversation(request: SummaryRequest) -> str | None:
    """A one-call request's conversation: none for the short summary (it shortens one)."""
    if request.kind == "short":
        return None
    return serialize_conversation(convert_to_llm(request.messages))


_TEMPLATES: Final = {"turn_prefix": "turn-prefix", "short": "short-summary"}


def _instructions(request: SummaryRequest, running: str | None) -> str:
    """The prompt after the blocks: the request's own (history, branch), else our template
    for the kind; a history summary updates the running summary when there is one."""
    directory = request.prompts_dir
    if request.kind in ("turn_prefix", "short"):
        return load_prompt(_TEMPLATES[request.kind], overrides_dir=directory)
    if request.instructions:
        return request.instructions
    if request.kind == "branch":
        return load_prompt("branch-summary", overrides_dir=directory)
    return load_prompt("update-summary" if running else "initial-summary", overrides_dir=directory)


def _window_plan(request: SummaryRequest) -> WindowPlan:
    """How much conversation one request of ``request`` may carry next to its fixed text."""
    fixed = (
        text_tokens(load_prompt("system", overrides_dir=request.prompts_dir))
        + text_tokens(_instructions(request, request.previous_summary or "update"))
        + text_tokens(request.custom_instructions or "")
        + sum(text_tokens(line) + 1 for line in request.extra_context)
        + 32
    )
    return WindowPlan.for_window(
        request.context_window, fixed_tokens=fixed, output_tokens=request.budget_tokens
    )
