"""Compact a session end to end: prepare, hooks, summarize, append, notify (§10.1 steps 5-9).

This is what ``contextree compact`` and the agent runtime call. Nothing is written unless the
summary was produced: a cancellation (by a hook or of the awaiting task) leaves the file as it
was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Unpack

from contextree.compaction.dropped import DroppedFromView, dropped_from_view
from contextree.compaction.options import SummaryKeywords, SummaryOptions, resolve_options
from contextree.compaction.prepare import (
    CompactionPreparation,
    NothingToCompact,
    prepare_compaction,
)
from contextree.compaction.summarize import CompactionResult, compact
from contextree.compaction.summary_request import Summarizer
from contextree.context.build import SessionContext
from contextree.entries.types import StoredEntry
from contextree.errors import CompactionCancelledError
from contextree.hooks.events import (
    BeforeCompactEvent,
    CompactingEvent,
    SessionCompactEvent,
)
from contextree.hooks.registry import (
    BEFORE_COMPACT,
    COMPACT,
    COMPACTING,
    HookRegistry,
)
from contextree.hooks.results import before_compact_result, compacting_result, hook_compaction
from contextree.llm.base import ModelClient
from contextree.session.rebase import CompactedElsewhereError, WriteMark
from contextree.session.tree import SessionTree
from contextree.settings.schema import CompactionSettings

__all__ = [
    "CompactionOutcome",
    "CompactionPlan",
    "compact_session",
    "plan_compaction",
    "result_from_hook",
]


@dataclass(frozen=True, slots=True)
class CompactionOutcome:
    """A saved compaction: the result, the new entry, and the context after it."""

    # The preparation and the context hold whole histories: out of the repr, which
    # asyncio.run builds for its task's result (0.13 s for a 100k-entry session).
    result: CompactionResult
    entry: StoredEntry
    preparation: CompactionPreparation = field(repr=False)
    context: SessionContext = field(repr=False)
    dropped: DroppedFromView | None = field(default=None, repr=False)
    """What left the model's view, and which user messages the summary does not carry."""


@dataclass(frozen=True, slots=True)
class CompactionPlan:
    """What a compaction would do (``compact --dry-run``): nothing written, no model called."""

    preparation: CompactionPreparation
    path: Sequence[StoredEntry]
    """The branch the preparation indexes into (root to leaf; decoded as it is read)."""
    summary_budget: int
    """The summary's token budget, as the run would ask for it."""


def plan_compaction(
    tree: SessionTree,
    *,
    settings: CompactionSettings | None = None,
    options: SummaryOptions | None = None,
) -> CompactionPlan | NothingToCompact:
    """Plan a compaction of the current branch of ``tree`` without writing or summarizing.

    The cut point and the budget are the ones :func:`compact_session` with the same
    ``settings`` and ``options`` would use (hooks aside: they may cancel or replace the run).
    """
    return _plan(tree, settings or CompactionSettings(), options or SummaryOptions())


def _plan(
    tree: SessionTree, settings: CompactionSettings, opts: SummaryOptions
) -> CompactionPlan | NothingToCompact:
    path = tree.get_branch_view()
    preparation = prepare_compaction(path, settings, estimator=opts.estimator)
    if isinstance(preparation, NothingToCompact):
        return preparation
    return CompactionPlan(preparation, path, opts.summary_budget(settings))


def result_from_hook(value: Any, preparation: CompactionPreparation) -> CompactionResult:
    """A hook-supplied compaction (dict with pi's camelCase keys, an object with snake_case
    attributes, or a result) used verbatim."""
    if isinstance(value, CompactionResult):
        return CompactionResult(
            summary=value.summary,
            first_kept_entry_id=value.first_kept_entry_id,
            tokens_before=value.tokens_before,
            details=value.details,
            short_summary=value.short_summary,
            tokens_after=value.tokens_after,
            preserve_data=value.preserve_data,
            from_extension=True,
            method="hook",
        )
    given = hook_compaction(value)
    return CompactionResult(
        summary=given.summary,
        first_kept_entry_id=given.first_kept_entry_id or preparation.first_kept_entry_id,
        tokens_before=(
            given.tokens_before if given.tokens_before is not None else preparation.tokens_before
        ),
        details=given.details,
        short_summary=given.short_summary,
        preserve_data=given.preserve_data,
        from_extension=True,
        method="hook",
    )


async def compact_session(
    tree: SessionTree,
    summarizer: ModelClient | Summarizer,
    *,
    settings: CompactionSettings | None = None,
    options: SummaryOptions | None = None,
    hooks: HookRegistry | None = None,
    turn_prefix_summarizer: ModelClient | Summarizer | None = None,
    reason: str = "manual",
    extra_context: Sequence[str] = (),
    **keywords: Unpack[SummaryKeywords],
) -> CompactionOutcome | NothingToCompact:
    """Compact the current branch of ``tree`` and append the compaction entry.

    ``settings`` (``compaction.*``) choose what is summarized; ``options`` how
    (:class:`~contextree.compaction.options.SummaryOptions`, e.g.
    ``summary_options(load_settings().settings)``; its ``None`` budget, fallback and facts
    follow ``settings``). ``keywords`` are the options' fields one by one (the older
    spelling), applied over ``options``; see :func:`~contextree.compaction.summarize.compact`.

    Returns :class:`NothingToCompact` when there is nothing to do. Raises
    :class:`CompactionCancelledError` when a hook cancels, ``CompactionError`` when a
    summarization call fails (and the fallback is off); in both cases nothing is written.
    """
    opts = resolve_options(options, keywords)
    settings = settings or CompactionSettings()
    hooks = hooks or HookRegistry()
    # Taken before the path is read: what other writers append from here on is news when the
    # entry is written (a shared session; see SessionTree.append_compaction).
    mark = tree.write_mark()
    plan = _plan(tree, settings, opts)
    if isinstance(plan, NothingToCompact):
        return plan
    preparation, path = plan.preparation, plan.path

    decision = await hooks.run_before(
        BEFORE_COMPACT,
        BeforeCompactEvent(preparation, path, opts.custom_instructions, reason),
    )
    before = before_compact_result(decision) if decision is not None else None
    if before is not None and before.cancel:
        raise CompactionCancelledError()
    supplied = before.compaction if before is not None else None

    preserve: dict[str, Any] | None = None
    if supplied is not None:
        result = result_from_hook(supplied, preparation)
    else:
        result, preserve = await _summarize_steered(
            tree,
            preparation,
            summarizer,
            hooks,
            opts,
            turn_prefix_summarizer=turn_prefix_summarizer,
            extra_context=extra_context,
        )

    preserve_data = result.preserve_data
    if preserve is not None:
        preserve_data = {**preserve, **(preserve_data or {})}
    try:
        entry_id = _append(tree, result, preserve_data, mark)
    except CompactedElsewhereError as lost:
        return NothingToCompact("compacted_elsewhere", str(lost))
    entry = tree.get_entry(entry_id)
    assert entry is not None
    dropped = dropped_from_view(preparation, path, result.summary)
    await hooks.emit(COMPACT, SessionCompactEvent(entry, result.from_extension, dropped))
    context = tree.build_session_context()
    return CompactionOutcome(result, entry, preparation, context, dropped)


async def _summarize_steered(
    tree: SessionTree,
    preparation: CompactionPreparation,
    summarizer: ModelClient | Summarizer,
    hooks: HookRegistry,
    opts: SummaryOptions,
    *,
    turn_prefix_summarizer: ModelClient | Summarizer | None,
    extra_context: Sequence[str],
) -> tuple[CompactionResult, dict[str, Any] | None]:
    """Summarize with the model, steered by the ``session_compacting`` hooks (more context, a
    prompt of their own, data to preserve); the result and the hooks' data to preserve."""
    steer = await hooks.run_last_truthy(
        COMPACTING,
        CompactingEvent(
            tree.session_id,
            [*preparation.messages_to_summarize, *preparation.turn_prefix_messages],
        ),
    )
    lines = list(extra_context)
    prompt: str | None = None
    preserve: dict[str, Any] | None = None
    if steer is not None:
        steering = compacting_result(steer)
        lines.extend(steering.context)
        prompt = steering.prompt
        preserve = steering.preserve_data
    result = await compact(
        preparation,
        summarizer,
        options=opts,
        turn_prefix_summarizer=turn_prefix_summarizer,
        prompt_override=prompt,
        extra_context=lines,
    )
    return result, preserve


def _append(
    tree: SessionTree,
    result: CompactionResult,
    preserve_data: dict[str, Any] | None,
    mark: WriteMark,
) -> str:
    return tree.append_compaction(
        result.summary,
        result.first_kept_entry_id,
        result.tokens_before,
        result.details,
        result.from_extension,
        short_summary=result.short_summary,
        preserve_data=preserve_data,
        # oh-my-pi's display fields; "soft" is its name for a summary written in place.
        tokens_after=result.tokens_after or None,
        method=None if result.from_extension else "soft",
        planned_at=mark,
    )
