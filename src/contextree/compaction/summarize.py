"""``compact()``: turn a :class:`CompactionPreparation` into a summary (pi-behaviour §7.2-7.5).

A model receives one user message: the serialized conversation in ``<conversation>``, the
previous summary in ``<previous-summary>`` when there is one, hook context lines in
``<additional-context>``, then our initial or update prompt, then ``Additional focus: ...``.
A split turn summarizes the history and the turn prefix and joins the two: concurrently when
both go to models that take two requests at once, else the prefix first, the history getting
what the prefix's summary leaves of the budget.

Beyond pi (docs/summaries.md):

- one budget (:func:`~contextree.compaction.budget.summary_token_budget`) is the ``max_tokens``
  sent to models and a hard ceiling on the offline summarizer's whole summary, file tags
  included;
- a conversation larger than the summarizer's window is summarized window by window
  (:mod:`contextree.compaction.windows`);
- when the model fails, the offline summarizer writes the summary (``method``
  ``"offline-fallback"``) unless ``fallback_to_offline`` is off;
- a model's summary gets the offline summarizer's recorded facts appended (``"hybrid"``);
- the short display summary is made from the finished summary, not from the conversation.

Deliberate differences kept from before (DESIGN.md): a split turn with nothing new before it
keeps the previous summary (decision 3), custom instructions also reach the turn-prefix
summary (decision 3), file tags follow decision 5, and a failing short summary never fails the
compaction.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Unpack

from contextree.compaction.earlier import OFFLINE_SUMMARIES, RECORDED_SUMMARIES
from contextree.compaction.file_ops import compute_file_lists, upsert_file_tags
from contextree.compaction.options import SummaryKeywords, SummaryOptions, resolve_options
from contextree.compaction.prepare import CompactionPreparation
from contextree.compaction.provider_summary import ProviderCompactor, ProviderSummarizer
from contextree.compaction.summary_request import (
    Summarizer,
    SummaryKind,
    SummaryMethod,
    SummaryReply,
    SummaryRequest,
    redacted_messages,
)
from contextree.entries.types import StoredMessage
from contextree.errors import CompactionCancelledError, CompactionError, ModelError
from contextree.llm.base import ModelClient
from contextree.security.redact import Redactor
from contextree.tokens.estimate import estimate_tokens, get_estimator

if TYPE_CHECKING:
    from contextree.compaction.offline import OfflineSummarizer, RecordedFacts
    from contextree.tokens.estimate import TokenEstimator

from contextree.compaction.summary_prompt import (
    ModelSummarizer,
    build_summary_prompt,
    summary_request,
    text_tokens,
)

__all__ = [
    "SPLIT_TURN_SEPARATOR",
    "CompactionResult",
    "SummaryMethod",
    "as_summarizer",
    "build_summary_prompt",
    "compact",
    "local_turn_prefix_summarizer",
    "summary_request",
    "text_tokens",
]

log = logging.getLogger("contextree.compaction")

SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n"
NO_PRIOR_HISTORY = "No prior history."

_TAG_LISTINGS: Final = (20, 10, 5, 2, 0)
"""Names per file-tag block tried, longest first, until the tags fit their share."""
_TAG_SHARE: Final = 3
"""File tags may use at most a third of the summary budget."""
_FACTS_SHARE: Final = 3
"""A provider's compaction text gets our facts within a third of the budget."""
_MODEL_SHARE: Final = 4
"""A model writes in at least a quarter of the budget, however much the facts need."""
_PREFIX_SHARE: Final = 4
"""A split turn's prefix summary gets a quarter of what is left for the text."""
_MIN_PART_TOKENS: Final = 16


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
    method: SummaryMethod = "model"
    fallback_reason: str | None = None
    """Why the offline summarizer stood in for the model (``method == "offline-fallback"``)."""
    windows: int = 0
    """Model requests the history summary took (more than one when it exceeded the window)."""


def as_summarizer(client: ModelClient | Summarizer) -> Summarizer:
    """``client`` behind the summarizer protocol: as it is when it speaks it (the offline
    summarizer), a provider's compaction behind
    :class:`~contextree.compaction.provider_summary.ProviderSummarizer`, any other model
    behind :class:`~contextree.compaction.summary_prompt.ModelSummarizer`.

    The one place that asks which protocol a client speaks; past it, compaction reads only
    the :class:`~contextree.compaction.summary_request.Summarizer` attributes.
    """
    if isinstance(client, Summarizer):
        return client
    if isinstance(client, ProviderCompactor):
        return ProviderSummarizer(client)
    return ModelSummarizer(client)


def _accepted(reply: SummaryReply, summarizer: Summarizer, failure: str) -> str:
    """The reply's text, or the failure it reports: an abort cancels; an error, or no text
    from a summarizer that can fail (DESIGN decision 4: an empty summary would replace the
    history with nothing), raises and nothing is written."""
    if reply.stop_reason == "aborted":
        raise asyncio.CancelledError()
    if reply.stop_reason == "error":
        raise CompactionError(f"{failure}: {reply.error_message or 'Unknown error'}")
    if summarizer.fallible and not reply.text.strip():
        raise CompactionError(f"{failure}: {summarizer.name} returned an empty summary")
    return reply.text


@dataclass
class _Summarizing:
    """One compaction's summarization calls, with the options they share."""

    preparation: CompactionPreparation
    custom_instructions: str | None
    prompt_override: str | None
    extra_context: Sequence[str]
    reasoning: str | None
    prompts_dir: Path | None
    redactor: Redactor | None
    context_window: int | None
    usage: list[dict[str, Any]] = field(default_factory=list)
    windows: int = 0

    def spent(self, usage: Mapping[str, Any]) -> None:
        self.usage.append(dict(usage))

    def request(
        self, messages: Sequence[StoredMessage], kind: SummaryKind, budget: int, **more: Any
    ) -> SummaryRequest:
        """The request for one summary of this compaction (``more``: its other fields)."""
        return SummaryRequest(
            tuple(messages),
            kind,
            budget,
            redactor=self.redactor,
            prompts_dir=self.prompts_dir,
            context_window=self.context_window,
            on_usage=self.spent,
            **more,
        )

    async def part(
        self,
        summarizer: Summarizer,
        messages: Sequence[StoredMessage],
        *,
        kind: SummaryKind,
        previous: str | None,
        budget: int,
        continued_by: StoredMessage | None = None,
        earlier: Sequence[StoredMessage] = (),
    ) -> str:
        """One summary (history or turn prefix) by ``summarizer`` within ``budget`` tokens."""
        prefix = kind == "turn_prefix"
        request = self.request(
            messages,
            kind,
            budget,
            previous_summary=previous,
            extra_context=() if prefix else tuple(self.extra_context),
            custom_instructions=self.custom_instructions,
            instructions=None if prefix else self.prompt_override,
            continued_by=continued_by,
            earlier_messages=tuple(earlier),
            reasoning=self.reasoning,
        )
        reply = await summarizer.write_summary(request)
        failure = "Turn prefix summarization failed" if prefix else "Summarization failed"
        text = _accepted(reply, summarizer, failure)
        if not prefix:
            self.windows += reply.windows
        return text

    async def short(self, summarizer: Summarizer, summary: str, budget: int) -> str:
        """The short display summary, made from the finished summary."""
        request = self.request(
            (), "short", budget, previous_summary=summary, extra_context=tuple(self.extra_context)
        )
        reply = await summarizer.write_summary(request)
        return _accepted(reply, summarizer, "Short summary failed")

    def prefix_budget(self, budget: int, prefix_summarizer: Summarizer) -> int:
        """A split turn's prefix's share of ``budget``: a quarter; for the offline summarizer
        at most the prefix's share of what the two parts summarize."""
        quarter = max(budget // _PREFIX_SHARE, _MIN_PART_TOKENS)
        if prefix_summarizer.method != "offline":
            return quarter
        # A model writes what it sees fit below its max_tokens; the offline summary fills
        # what it is given, and the prefix (the split turn's start: its request, a few calls)
        # is mostly a small part of what is summarized, whose request the history's summary
        # repeats (it is read as the request the work continues with).
        prep = self.preparation
        prefix = sum(map(estimate_tokens, prep.turn_prefix_messages))
        history = sum(map(estimate_tokens, prep.messages_to_summarize))
        history += text_tokens(prep.previous_summary or "")
        share = budget * prefix // max(prefix + history, 1)
        return max(min(quarter, share), _MIN_PART_TOKENS)

    async def text(
        self,
        history_summarizer: Summarizer,
        prefix_summarizer: Summarizer,
        budget: int,
    ) -> str:
        """The history summary, joined with the turn-prefix summary for a split turn."""
        prep = self.preparation
        previous = prep.previous_summary
        prefix = prep.turn_prefix_messages
        split = prep.is_split_turn and bool(prefix)
        prefix_budget = self.prefix_budget(budget, prefix_summarizer) if split else 0
        joint = text_tokens(SPLIT_TURN_SEPARATOR) + 1 if split else 0

        def history_budget(prefix_tokens: int) -> int:
            return max(budget - prefix_tokens - joint, _MIN_PART_TOKENS)

        async def history(tokens: int) -> str:
            if not prep.messages_to_summarize:
                # Decision 3: nothing new before the split turn keeps the previous summary.
                return previous or NO_PRIOR_HISTORY
            earlier = (
                prep.earlier.messages(OFFLINE_SUMMARIES)
                if prep.earlier is not None and history_summarizer.method == "offline"
                else None
            )
            return await self.part(
                history_summarizer,
                prep.messages_to_summarize,
                kind="update" if previous else "initial",
                previous=previous,
                budget=tokens,
                # The kept turn starts with the user's next message: a summarizer that reads
                # messages must not report a question as pending that this message answers,
                # nor miss the request the work continues with.
                continued_by=prefix[0] if split else None,
                earlier=earlier or (),
            )

        if not split:
            return await history(history_budget(0))

        def turn_prefix() -> Awaitable[str]:
            return self.part(
                prefix_summarizer, prefix, kind="turn_prefix", previous=None, budget=prefix_budget
            )

        if prefix_summarizer.method == "offline" or not _takes_parallel_requests(
            history_summarizer, prefix_summarizer
        ):
            # When nothing is gained by asking at once (the offline summarizer answers at
            # once; one server answers one request at a time), the prefix's summary comes
            # first and the history's gets what it leaves of the budget: a short prefix
            # summary no longer holds a quarter of the budget unused (docs/summaries.md).
            prefix_text = await turn_prefix()
            history_text = await history(history_budget(text_tokens(prefix_text)))
        else:
            history_text, prefix_text = await asyncio.gather(
                history(history_budget(prefix_budget)), turn_prefix()
            )
        return history_text + SPLIT_TURN_SEPARATOR + prefix_text


def _takes_parallel_requests(first: Summarizer, second: Summarizer) -> bool:
    """Whether the two summaries may be asked for at once (pi does): not when both go to one
    server that serves one request at a time (``parallel_requests`` false)."""
    return first is not second or first.parallel_requests


def _file_tags(read_files: list[str], modified_files: list[str], budget: int) -> tuple[str, int]:
    """The file-tag text that fits its share of ``budget``, and the names listed per block."""
    for listed in _TAG_LISTINGS:
        tags = upsert_file_tags("", read_files, modified_files, max_listed=listed)
        if text_tokens(tags) <= budget // _TAG_SHARE:
            return tags, listed
    return "", 0


def local_turn_prefix_summarizer(
    summarizer: ModelClient | Summarizer,
) -> ModelClient | Summarizer:
    """Who summarizes a split turn's prefix when ``summarizer`` writes the history: the same
    model, but never the remote endpoint (§7.6: "the turn prefix is always summarized
    locally"), for which the offline summarizer does it."""
    if as_summarizer(summarizer).summarizes_turn_prefix:
        return summarizer
    return _offline_summarizer()


def _prefix_summarizer(
    history: Summarizer,
    summarizer: ModelClient | Summarizer,
    turn_prefix_summarizer: ModelClient | Summarizer | None,
) -> Summarizer:
    """The summarizer of a split turn's prefix: the caller's, else the history's when it may
    see the prefix, else the offline one (one object when both are one client, so that
    ``parallel_requests`` holds)."""
    if turn_prefix_summarizer is None:
        return history if history.summarizes_turn_prefix else _offline_summarizer()
    if turn_prefix_summarizer is summarizer:
        return history
    return as_summarizer(turn_prefix_summarizer)


def _offline_summarizer() -> OfflineSummarizer:
    from contextree.compaction.offline import OfflineSummarizer

    return OfflineSummarizer()


def _strip_section(summary: str, heading: str) -> str:
    """``summary`` without the markdown section that starts with ``heading`` (a model may echo
    the recorded facts of the previous summary; they are appended afresh)."""
    lines = summary.splitlines()
    level = len(heading) - len(heading.lstrip("#"))
    kept: list[str] = []
    skipping = False
    for line in lines:
        stripped = line.strip()
        if stripped == heading:
            skipping = True
            continue
        if skipping and stripped.startswith("#"):
            depth = len(stripped) - len(stripped.lstrip("#"))
            skipping = depth > level
        if not skipping:
            kept.append(line)
    return "\n".join(kept).rstrip()


def _recorded_facts(
    job: _Summarizing, messages: Sequence[StoredMessage], previous: str | None
) -> RecordedFacts:
    from contextree.compaction.offline import RecordedFacts

    earlier = job.preparation.earlier
    # Read again, like the offline summary, when every earlier summary held these lines.
    before = (earlier.messages(RECORDED_SUMMARIES) if earlier is not None else None) or []
    return RecordedFacts(
        redacted_messages(messages, job.redactor),
        previous_summary=previous,
        earlier=redacted_messages(before, job.redactor),
    )


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


async def compact(
    preparation: CompactionPreparation,
    summarizer: ModelClient | Summarizer,
    *,
    options: SummaryOptions | None = None,
    turn_prefix_summarizer: ModelClient | Summarizer | None = None,
    short_summarizer: ModelClient | Summarizer | None = None,
    prompt_override: str | None = None,
    extra_context: Sequence[str] = (),
    **keywords: Unpack[SummaryKeywords],
) -> CompactionResult:
    """Summarize what ``preparation`` selected; cancel by cancelling the awaiting task.

    Args:
        summarizer: the model (or the offline summarizer, or a remote endpoint) for the
            history; any :class:`~contextree.compaction.summary_request.Summarizer`, or a
            model client (see :func:`as_summarizer`).
        options: instructions, prompts, redactor, window and budgets
            (:class:`~contextree.compaction.options.SummaryOptions`; build one from settings
            with :func:`~contextree.compaction.options.summary_options`). Its
            ``summary_tokens``, ``fallback_to_offline`` and ``record_facts`` default to the
            preparation's settings; ``context_window`` plans windows for history beyond it (an
            overflow reply halves a window either way); ``redactor`` blanks secrets out of
            every prompt (see :func:`build_summary_prompt`).
        turn_prefix_summarizer: the model for a split turn's prefix; default ``summarizer``,
            except that a remote endpoint never gets the prefix (§7.6): with a
            :class:`~contextree.llm.remote.RemoteSummaryClient` the default is the offline
            summarizer.
        short_summarizer: the model for the short display summary; default ``summarizer``.
        prompt_override: replaces the initial/update prompt (a ``session.compacting`` hook).
        extra_context: lines for the ``<additional-context>`` block (hooks).
        keywords: the options' fields one by one (the older spelling), applied over
            ``options``.

    Raises:
        CompactionError: a summarization call failed and the fallback is off.
    """
    opts = resolve_options(options, keywords)
    settings = preparation.settings
    fallback_to_offline = _given_or(opts.fallback_to_offline, settings.fallback_to_offline)
    record_facts = _given_or(opts.record_facts, settings.record_facts)
    budget = opts.summary_budget(settings)
    read_files, modified_files = compute_file_lists(preparation.file_ops)
    tags, listed = _file_tags(read_files, modified_files, budget)
    text_budget = budget - (text_tokens(tags) + 1 if tags else 0)
    job = _job(preparation, opts, prompt_override=prompt_override, extra_context=extra_context)
    history = as_summarizer(summarizer)
    written = await _written(
        job,
        history,
        _prefix_summarizer(history, summarizer, turn_prefix_summarizer),
        record_facts=record_facts,
        fallback_to_offline=fallback_to_offline,
        text_budget=text_budget,
    )
    short = (
        await _short_of(
            job,
            written,
            None if short_summarizer is None else as_summarizer(short_summarizer),
            budget=min(512, math.floor(0.2 * settings.reserve_tokens), budget),
            fallback=fallback_to_offline,
        )
        if opts.short_summary
        else None
    )
    return _result(
        job,
        written.text,
        short,
        (read_files, modified_files),
        tagged=bool(tags),
        listed=listed,
        method=written.method,
        fallback_reason=written.fallback_reason,
        extra_details=written.extra_details,
        estimator=opts.estimator,
    )


def _given_or(option: bool | None, setting: bool) -> bool:
    """An option the caller set, else the preparation's setting."""
    return setting if option is None else option


def _job(
    preparation: CompactionPreparation,
    opts: SummaryOptions,
    *,
    prompt_override: str | None,
    extra_context: Sequence[str],
) -> _Summarizing:
    return _Summarizing(
        preparation,
        custom_instructions=opts.custom_instructions,
        prompt_override=prompt_override,
        extra_context=extra_context,
        reasoning=opts.reasoning,
        prompts_dir=opts.prompts_dir,
        redactor=opts.redactor,
        context_window=opts.context_window,
    )


@dataclass
class _Written:
    """The summary's text, how it was made, and who wrote it."""

    text: str
    method: SummaryMethod
    writer: Summarizer
    extra_details: dict[str, Any] = field(default_factory=dict)
    fallback_reason: str | None = None


async def _written(
    job: _Summarizing,
    summarizer: Summarizer,
    prefix_summarizer: Summarizer,
    *,
    record_facts: bool,
    fallback_to_offline: bool,
    text_budget: int,
) -> _Written:
    """The summary's text from ``summarizer``; from the offline summarizer when that fails
    and ``fallback_to_offline`` is on."""
    preparation = job.preparation
    try:
        summarized = [*preparation.messages_to_summarize, *preparation.turn_prefix_messages]
        recorded = (
            # The offline summary is the recorded facts already.
            _recorded_facts(job, summarized, preparation.previous_summary)
            if summarizer.method != "offline" and record_facts
            else None
        )
        text, method, extra_details = await _summary_text(
            job, summarizer, prefix_summarizer, recorded, text_budget
        )
    except (ModelError, CompactionError) as exc:
        if (
            not summarizer.fallible
            or not fallback_to_offline
            or isinstance(exc, CompactionCancelledError)
        ):
            raise
        fallback_reason = _one_line(str(exc))
        log.warning(
            "summarizer failed, falling back to the offline summarizer: %s", fallback_reason
        )
        fallback = _offline_summarizer()
        text = await job.text(fallback, fallback, text_budget)
        return _Written(text, "offline-fallback", fallback, fallback_reason=fallback_reason)
    return _Written(text, method, summarizer, extra_details)


async def _short_of(
    job: _Summarizing,
    written: _Written,
    short_summarizer: Summarizer | None,
    *,
    budget: int,
    fallback: bool,
) -> str | None:
    """The short display summary of the written text: by ``short_summarizer`` unless the
    model failed, else by whoever wrote the text."""
    writer = written.writer
    if short_summarizer is not None and written.method != "offline-fallback":
        writer = short_summarizer
    return await _short_summary(job, writer, written.text, budget=budget, fallback=fallback)


async def _summary_text(
    job: _Summarizing,
    summarizer: Summarizer,
    prefix_summarizer: Summarizer,
    recorded: RecordedFacts | None,
    text_budget: int,
) -> tuple[str, SummaryMethod, dict[str, Any]]:
    """The summary's text from ``summarizer`` (a provider's compactor, a model or the offline
    summarizer) with the recorded facts merged in; how it was made; the provider's details."""
    method = summarizer.method
    facts = ""
    extra_details: dict[str, Any] = {}
    if method == "provider":
        if recorded is not None:
            facts = recorded.render(budget_tokens=text_budget // _FACTS_SHARE)
        text, facts, extra_details = await _by_provider(job, summarizer, text_budget, facts)
    else:
        # The recorded facts hold what the offline summary would: they come first in the
        # budget, so a model summary keeps at least what the offline one keeps (issue 25
        # item 8); the model writes in the rest, never less than a quarter of it.
        need = text_tokens(recorded.render(budget_tokens=text_budget)) if recorded else 0
        model_budget = max(text_budget - need, text_budget // _MODEL_SHARE, _MIN_PART_TOKENS)
        text = await job.text(summarizer, prefix_summarizer, model_budget)
        if recorded is not None:
            text = _strip_section(text, recorded.heading)
            # What the model's text holds word for word is not repeated; a terse model
            # leaves the facts more room than they were given.
            room = max(need, text_budget - text_tokens(text) - 1)
            facts = recorded.render(budget_tokens=room, said=text)
    if facts:
        heading = facts.splitlines()[0].strip()
        text = f"{_strip_section(text, heading)}\n\n{facts}"
        method = "hybrid" if method == "model" else method
    return text, method, extra_details


def _result(
    job: _Summarizing,
    text: str,
    short: str | None,
    files: tuple[list[str], list[str]],
    *,
    tagged: bool,
    listed: int,
    method: SummaryMethod,
    fallback_reason: str | None,
    extra_details: dict[str, Any],
    estimator: TokenEstimator | None,
) -> CompactionResult:
    """The result: the text with its file tags, the tokens after, and the details."""
    read_files, modified_files = files
    # Tags that do not fit their share are left out of the text; details keep the lists.
    listed_read, listed_modified = (read_files, modified_files) if tagged else ([], [])
    summary = upsert_file_tags(text, listed_read, listed_modified, max_listed=listed)
    estimate = (estimator or get_estimator("pi")).estimate
    tokens_after = estimate({"role": "compactionSummary", "summary": summary}) + sum(
        estimate(m) for m in job.preparation.recent_messages
    )
    details: dict[str, Any] = {
        "readFiles": read_files,
        "modifiedFiles": modified_files,
        "method": method,
    }
    if fallback_reason is not None:
        details["fallbackReason"] = fallback_reason
    details.update(extra_details)
    return CompactionResult(
        summary=summary,
        first_kept_entry_id=job.preparation.first_kept_entry_id,
        tokens_before=job.preparation.tokens_before,
        details=details,
        short_summary=short,
        tokens_after=tokens_after,
        usage=job.usage,
        method=method,
        fallback_reason=fallback_reason,
        windows=job.windows,
    )


async def _by_provider(
    job: _Summarizing, summarizer: Summarizer, budget: int, facts: str
) -> tuple[str, str, dict[str, Any]]:
    """The provider's compaction of the whole history (split turn included, in one call):
    its readable text with our facts, or, when its item is opaque (OpenAI), the offline
    summary (which has the facts already)."""
    prep = job.preparation
    previous = prep.previous_summary
    request = job.request(
        [*prep.messages_to_summarize, *prep.turn_prefix_messages],
        "update" if previous else "initial",
        budget,
        previous_summary=previous,
        custom_instructions=job.custom_instructions,
    )
    reply = await summarizer.write_summary(request)
    if reply.text:
        return reply.text, facts, dict(reply.details)
    offline = _offline_summarizer()
    return await job.text(offline, offline, budget), "", dict(reply.details)


async def _short_summary(
    job: _Summarizing, client: Summarizer, summary: str, *, budget: int, fallback: bool
) -> str | None:
    try:
        text = await job.short(client, summary, budget)
    except asyncio.CancelledError:
        raise
    except (ModelError, CompactionError) as exc:
        if not fallback or not client.fallible:
            # Unlike the fork, a failed display summary does not fail the compaction.
            log.warning("short summary failed; storing none: %s", exc)
            return None
        text = await job.short(_offline_summarizer(), summary, budget)
    return text.strip() or None
