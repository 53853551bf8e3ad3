"""The offline summarizer: the summarizer protocol over the readers and the renderer, and the
model-client protocol over the prompt parser (for prompts that arrive as text, e.g. at
``contextree serve``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from contextree.compaction.offline.parts import Conversation
from contextree.compaction.offline.prompt import parse_summary_prompt
from contextree.compaction.offline.reading import read_digest, serialized
from contextree.compaction.offline.render import render_digest, short_summary
from contextree.compaction.offline.text import estimate_tokens, fit_text
from contextree.compaction.summary_request import (
    SUMMARY_KINDS,
    SummaryKind,
    SummaryMethod,
    SummaryReply,
    SummaryRequest,
)
from contextree.entries.types import StoredMessage, is_text_content
from contextree.llm.base import Completion, CompletionRequest, make_usage
from contextree.store.index import collector_paused
from contextree.text.surrogates import well_formed

__all__ = ["OfflineSummarizer"]


class OfflineSummarizer:
    """A deterministic summarizer that reads conversation structure instead of calling a model.

    Args:
        name: the client name reported in the protocol's ``name`` attribute.
        max_fraction: the summary may use at most this share of the summarized tokens other
            than the user's and system messages, plus those messages' size and a quarter (they
            are never scaled down).
        max_tokens_cap: the summary never exceeds this many tokens (a request's or caller's
            budget can only lower it).
        min_tokens: the budget never drops below this, so tiny conversations still get a
            usable summary (a request's ``max_tokens`` can still lower it).
    """

    method: SummaryMethod = "offline"
    fallible = False
    summarizes_turn_prefix = True
    parallel_requests = True

    def __init__(
        self,
        name: str = "offline",
        *,
        max_fraction: float = 0.2,
        max_tokens_cap: int = 8192,
        min_tokens: int = 400,
    ) -> None:
        if not 0 < max_fraction <= 1:
            raise ValueError(f"max_fraction must be in (0, 1], got {max_fraction}")
        if max_tokens_cap < 1 or min_tokens < 1:
            raise ValueError(
                f"max_tokens_cap and min_tokens must be positive, got {max_tokens_cap} "
                f"and {min_tokens}"
            )
        self.name = name
        self.max_fraction = max_fraction
        self.max_tokens_cap = max_tokens_cap
        self.min_tokens = min_tokens

    async def write_summary(self, request: SummaryRequest) -> SummaryReply:
        """The summary ``request`` asks for, read from its messages (the summarizer protocol;
        see :meth:`summarize_messages`). ``continued_by`` is read after the messages."""
        read = request
        if request.continued_by is not None:
            read = replace(request, messages=(*request.messages, request.continued_by))
        # Reading thousands of messages makes millions of strings, lists and dicts that live
        # until the summary is written, none in a cycle; the collector's passes over them
        # took 0.07-0.25 s of compacting a 100k-entry session (about 2 s). It resumes after.
        with collector_paused():
            text = self.summarize_messages(
                read.redacted_messages(),
                kind=request.kind,
                previous_summary=request.previous_summary,
                extra_context=request.extra_context,
                focus=request.custom_instructions,
                budget_tokens=request.budget_tokens,
                earlier=read.redacted_earlier(),
            )
        return SummaryReply(text)

    async def complete(self, request: CompletionRequest) -> Completion:
        """Summarize the prompt in ``request`` (the model-client protocol), for prompts that
        arrive as text: compaction and branch summaries call :meth:`write_summary` instead.

        The user messages' text is parsed with :func:`parse_summary_prompt`; ``max_tokens``
        lowers the budget. Usage is chars/4 of the prompt and of the summary.
        """
        texts = [_message_text(message) for message in request.messages]
        prompt = "\n\n".join(text for text in texts if text)
        parsed = parse_summary_prompt(prompt)
        summary = self.summarize(
            parsed.conversation,
            kind=parsed.kind,
            previous_summary=parsed.previous_summary,
            extra_context=parsed.extra_context,
            focus=parsed.focus,
            budget_tokens=request.max_tokens,
        )
        usage = make_usage(
            input=estimate_tokens(request.system_prompt) + estimate_tokens(prompt),
            output=estimate_tokens(summary),
        )
        return Completion(
            content=[{"type": "text", "text": summary}],
            usage=usage,
            stop_reason="stop",
            model="offline",
        )

    def summarize_messages(
        self,
        messages: Sequence[StoredMessage],
        *,
        kind: SummaryKind = "initial",
        previous_summary: str | None = None,
        extra_context: Sequence[str] = (),
        focus: str | None = None,
        budget_tokens: int | None = None,
        earlier: Sequence[StoredMessage] = (),
    ) -> str:
        """Summarize session messages (pi's AgentMessages, before ``convert_to_llm``).

        Unlike a model, the offline summarizer reads long tool results whole at both ends
        (the start and the last lines, where ``41 passed`` or an exit code is), so the state
        of a command is never lost to pi's 2,000-character cut. The result is at most
        ``budget_tokens`` (chars/4). ``earlier``: the messages the previous summary (its
        own) summarized, read again before ``messages`` (``compaction/earlier.py``). See
        :meth:`summarize` for the other arguments.
        """
        return self._read_twice(
            lambda fix: _Read(
                serialized(fix(list(messages))),
                fix(previous_summary),
                fix(list(extra_context)),
                fix(focus),
                serialized(fix(list(earlier))),
            ),
            kind,
            budget_tokens,
        )

    def summarize(
        self,
        conversation_text: str,
        *,
        kind: SummaryKind = "initial",
        previous_summary: str | None = None,
        extra_context: Iterable[str] = (),
        focus: str | None = None,
        budget_tokens: int | None = None,
        earlier_conversation: str = "",
    ) -> str:
        """Summarize a conversation serialized as in pi-behaviour.md §7.1.

        Args:
            conversation_text: the output of ``serialize_conversation``.
            kind: the summary to write; ``"update"`` and ``"initial"`` differ only in whether
                a previous summary is merged, which happens whenever one is given.
            previous_summary: an earlier summary whose facts are kept.
            extra_context: lines a hook added; they go to Critical Context verbatim.
            focus: the user's custom instructions; shown and used to rank lines.
            budget_tokens: an upper bound on the summary size, e.g. the request's max_tokens.
            earlier_conversation: what ``previous_summary`` summarized (serialized the same
                way), read again before the conversation: the summary then chooses among
                all of it, and takes from the previous summary only what no message holds
                (a hook's context lines). The budget is the same as without it.

        Raises:
            ValueError: ``kind`` is not one of :data:`SUMMARY_KINDS`.
        """
        context = list(extra_context)
        return self._read_twice(
            lambda fix: _Read(
                Conversation(fix(conversation_text)),
                fix(previous_summary),
                fix(context),
                fix(focus),
                Conversation(fix(earlier_conversation)),
            ),
            kind,
            budget_tokens,
        )

    def _read_twice(
        self, inputs: Callable[[Callable[[Any], Any]], _Read], kind: SummaryKind, budget: int | None
    ) -> str:
        """The summary of ``inputs`` as they are; when a lone surrogate in text built in memory
        (never in a session read from a file) makes the word automata raise
        UnicodeEncodeError, of the inputs made well formed (U+FFFD for each)."""
        try:
            return self._summarize(inputs(_as_is), kind=kind, budget_tokens=budget)
        except UnicodeEncodeError:
            return self._summarize(inputs(well_formed), kind=kind, budget_tokens=budget)

    def _summarize(self, read: _Read, *, kind: SummaryKind, budget_tokens: int | None) -> str:
        """:meth:`summarize` of a conversation that may come with its parts (from
        :meth:`summarize_messages`: the reader need not split the text again)."""
        conversation, previous_summary, extra_context, focus, earlier = read
        if kind not in SUMMARY_KINDS:
            raise ValueError(f'unknown summary kind "{kind}"; expected one of: {SUMMARY_KINDS}')
        focus_text = focus.strip() if focus and focus.strip() else None
        digest = read_digest(
            conversation,
            # A turn prefix is summarized on its own; the history's summary merges the rest.
            previous_summary=None if kind == "turn_prefix" else previous_summary,
            focus=focus_text,
            earlier=earlier,
        )
        user_tokens = digest.user_chars // 4
        context = [line.strip() for line in extra_context if line.strip()]
        if context:
            # A hook gives its context for this call; older context lines are replaced.
            digest.extra_context = context
        budget = self._budget(conversation, previous_summary, budget_tokens, user_tokens)
        if kind == "short":
            return fit_text(short_summary(digest), budget)
        # The layout drops lines by importance; the essentials it never drops are cut last
        # here, so the budget holds for every input.
        return fit_text(render_digest(digest, kind=kind, budget_tokens=budget), budget)

    def _budget(
        self,
        conversation: Conversation,
        previous: str | None,
        limit: int | None,
        user_tokens: int = 0,
    ) -> int:
        # The previous summary already stands for older history at most max_fraction of its
        # size, so it is carried at its own size; only the new messages are scaled. What the
        # user wrote is not scaled: in a conversation of plain talk (a trip, a budget, a
        # support call) the user's messages are a large share and each says something the
        # next reader needs, where a coding session's bulk is tool output.
        conversation_tokens = math.ceil(conversation.utf16_units() / 4)  # estimate_tokens
        user_tokens = min(user_tokens, conversation_tokens)
        # (A quarter more than their size: list markers, labels and headings around them.)
        new_share = user_tokens * 5 // 4 + math.floor(
            self.max_fraction * (conversation_tokens - user_tokens)
        )
        carried = estimate_tokens(previous) if previous else 0
        budget = min(max(self.min_tokens, new_share + carried), self.max_tokens_cap)
        if limit is not None and limit > 0:
            budget = min(budget, limit)
        return budget


def _message_text(message: object) -> str:
    # The fork's developer messages are user input too.
    if not isinstance(message, dict) or message.get("role") not in ("user", "developer"):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        block["text"]
        for block in content
        if is_text_content(block) and isinstance(block.get("text"), str)
    )


class _Read(NamedTuple):
    """What a summary is made of: the conversation, the previous summary, a hook's context
    lines, the focus, and what the previous summary summarized."""

    conversation: Conversation
    previous_summary: str | None
    extra_context: list[str]
    focus: str | None
    earlier: Conversation


def _as_is(value: Any) -> Any:
    return value
