"""The compaction triggers of a session (§10.2-10.4): overflow, threshold and manual.

:class:`CompactionTriggers` decides when a session must compact and runs the compaction with
the summarizer candidates of its host, reporting through the host's events. It is shared by
:class:`~contextree.runtime.agent.AgentSession` (our own agent loop) and
:class:`~contextree.integrations.core.ManagedSession` (a session that an outside agent
framework drives), so both compact on exactly the same rules.

- **overflow**: the last reply failed because the prompt did not fit (or silently exceeded the
  window); compact (reason ``overflow``) and retry, once per prompt;
- **threshold**: measured usage minus what pruning saved crossed the threshold; prune, compact
  (reason ``threshold``) and, unless ``compaction.autoContinue`` is false, continue;
- **manual**: :meth:`CompactionTriggers.compact`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

from contextree.compaction.options import summary_options
from contextree.compaction.prepare import NothingToCompact
from contextree.compaction.prune import prune_session
from contextree.compaction.prune_decider import PruneDecider
from contextree.compaction.run import CompactionOutcome, compact_session
from contextree.compaction.summarize import (
    CompactionResult,
    as_summarizer,
    local_turn_prefix_summarizer,
)
from contextree.compaction.summary_request import Summarizer
from contextree.entries.ids import iso_to_ms
from contextree.entries.types import StoredEntry, StoredMessage
from contextree.errors import CompactionCancelledError, ContextreeError
from contextree.hooks.registry import HookRegistry
from contextree.llm.base import ModelClient
from contextree.llm.errors import is_context_overflow
from contextree.llm.registry import context_window as registry_context_window
from contextree.runtime.events import AUTO_COMPACTION_END, AUTO_COMPACTION_START, PRUNE
from contextree.runtime.retry import FallbackClient, Sleep
from contextree.security.redact import Redactor
from contextree.session.tree import SessionTree
from contextree.settings.schema import Settings
from contextree.tokens.estimate import get_estimator
from contextree.tokens.memo import MemoizedEstimator
from contextree.tokens.thresholds import should_compact
from contextree.tokens.usage import calculate_context_tokens, estimate_context_tokens

__all__ = [
    "OVERFLOW_RETRY_FAILED",
    "CompactionSkipped",
    "CompactionTriggers",
    "FollowUp",
]

OVERFLOW_RETRY_FAILED = (
    "Context overflow recovery failed: the context still does not fit after one compaction; "
    "reduce the context or switch to a model with a larger window"
)

FollowUp = Literal["retry", "auto_continue"]
"""What the agent loop runs after a compaction: the failed request again, or a continue."""

Emit = Callable[..., Awaitable[None]]


class CompactionSkipped(Exception):
    """prepare_compaction found nothing to do (the message says why)."""


class CompactionTriggers:
    """Decides when a session compacts and runs the compaction.

    The host supplies what changes over a session's life as callables: its settings, the model
    in use (``model()`` -> ``(provider, model)``), its context window, the summarizer candidates
    (tried in order by a :class:`FallbackClient`; none means auto-compaction is skipped).
    ``emit(kind, **data)`` reports the ``prune`` / ``auto_compaction_*`` events;
    ``aborting()`` tells whether a cancellation belongs to the host's whole turn (it then
    propagates) rather than to the compaction alone.
    """

    def __init__(
        self,
        tree: SessionTree,
        settings: Callable[[], Settings],
        *,
        hooks: HookRegistry,
        redactor: Redactor | None,
        emit: Emit,
        model: Callable[[], tuple[str, str]],
        context_window: Callable[[], int],
        candidates: Callable[[], Sequence[ModelClient]],
        sleep: Sleep = asyncio.sleep,
        aborting: Callable[[], bool] = lambda: False,
    ) -> None:
        self.tree = tree
        self._settings = settings
        self.hooks = hooks
        self.redactor = redactor
        self._emit = emit
        self._model = model
        self._context_window = context_window
        self._candidates = candidates
        self.sleep = sleep
        self._aborting = aborting
        self.overflow_recovery_attempted = False
        # Checked before every model call: the tool results' estimates are remembered. The
        # estimator is the one tokens.estimator names, as the compactions' own.
        self._estimator = MemoizedEstimator(get_estimator(settings().estimator))
        self._prune_decider = PruneDecider(self._estimator)
        self.task: asyncio.Task[Any] | None = None
        self.last_result: CompactionResult | None = None
        """The result of the latest compaction this object ran."""

    @property
    def settings(self) -> Settings:
        return self._settings()

    @property
    def is_compacting(self) -> bool:
        return self.task is not None and not self.task.done()

    def cancel(self) -> None:
        """Cancel a running compaction; nothing is written."""
        if self.task is not None and not self.task.done():
            self.task.cancel()

    def latest_compaction(self) -> StoredEntry | None:
        """The latest compaction on the current branch, decoding only that entry."""
        return self.tree.latest_compaction()

    # -- the triggers ---------------------------------------------------------------------------

    async def after_reply(
        self, message: StoredMessage, *, skip_aborted_check: bool = True
    ) -> FollowUp | None:
        """§10.2 after a reply: overflow recovery or threshold compaction.

        Returns the follow-up the agent loop runs next, or ``None``.
        """
        if skip_aborted_check and message.get("stopReason") == "aborted":
            return None
        settings = self.settings.compaction
        latest = self.latest_compaction()
        if _predates(message, latest):
            return None  # the reply predates the latest compaction: its usage is stale
        provider, model = self._model()
        same_model = message.get("provider") == provider and message.get("model") == model
        if same_model and is_context_overflow(message, self._context_window()):
            if not settings.enabled:
                return None
            # Before a prompt, a repeated failure was already reported when it happened.
            done = await self.recover_from_overflow(report_repeat=skip_aborted_check)
            return "retry" if done else None
        if not settings.enabled:
            return None
        tokens = await self._reply_tokens(message, latest)
        if tokens is None or not self._over_threshold(tokens):
            return None
        done = await self.run_auto("threshold", will_retry=False)
        if done and settings.auto_continue:
            return "auto_continue"
        return None

    async def recover_from_overflow(self, *, report_repeat: bool = True) -> bool:
        """Compact for a prompt that did not fit; ``True`` when it compacted.

        Once per prompt: until the host re-arms :attr:`overflow_recovery_attempted` (a good
        reply, a new prompt), a second overflow only reports :data:`OVERFLOW_RETRY_FAILED`
        (when ``report_repeat``), so a retry that overflows again cannot loop.
        """
        if self.overflow_recovery_attempted:
            if report_repeat:
                await self._emit(
                    AUTO_COMPACTION_END,
                    result=None,
                    aborted=False,
                    willRetry=False,
                    errorMessage=OVERFLOW_RETRY_FAILED,
                )
            return False
        self.overflow_recovery_attempted = True
        return await self.run_auto("overflow", will_retry=True)

    async def before_request(self) -> bool:
        """The threshold trigger before a request is sent; ``True`` when it compacted.

        For hosts that do not see every reply as it arrives (an outside framework hands over
        its history just before each model call): the context is measured as the latest
        valid usage plus estimates of the messages after it - an estimate of everything when
        that usage predates the latest compaction - minus what pruning saves.
        """
        if not self.settings.compaction.enabled:
            return False
        self._estimator.next_generation()
        messages = self.tree.build_session_context().messages
        estimate = estimate_context_tokens(messages, self._estimator)
        tokens = estimate.tokens
        if estimate.last_usage_index is not None:
            source = messages[estimate.last_usage_index]
            if _predates(source, self.latest_compaction()):
                # Usage measured before the latest compaction describes the old context.
                tokens = estimate_context_tokens(
                    [_without_usage(message) for message in messages], self._estimator
                ).tokens
        tokens = max(0, tokens - await self._prune())
        if not self._over_threshold(tokens):
            return False
        return await self.run_auto("threshold", will_retry=False)

    def _over_threshold(self, tokens: int) -> bool:
        settings = self.settings.compaction
        return should_compact(
            tokens,
            self._context_window(),
            enabled=settings.enabled,
            reserve_tokens=settings.reserve_tokens,
            threshold_percent=settings.threshold_percent,
            threshold_tokens=settings.threshold_tokens,
        )

    async def _reply_tokens(self, message: StoredMessage, latest: StoredEntry | None) -> int | None:
        if message.get("stopReason") == "error":
            # No usage on a failed reply: estimate from the last successful one (pi 0.73.1).
            messages = self.tree.build_session_context().messages
            estimate = estimate_context_tokens(messages, self._estimator)
            if estimate.last_usage_index is None:
                return None
            if _predates(messages[estimate.last_usage_index], latest):
                return None
            return estimate.tokens
        usage = message.get("usage")
        if not isinstance(usage, dict):
            return None
        return max(0, calculate_context_tokens(usage) - await self._prune())

    async def _prune(self) -> int:
        """Prune old tool outputs when enabled; the tokens it saved."""
        if not self.settings.prune.enabled:
            return 0
        decision = prune_session(self.tree, self.settings.prune, decider=self._prune_decider)
        if decision.pruned_count:
            await self._emit(
                PRUNE, prunedCount=decision.pruned_count, tokensSaved=decision.tokens_saved
            )
        return decision.tokens_saved

    # -- running a compaction -------------------------------------------------------------------

    def _one_client(self, candidates: Sequence[ModelClient]) -> ModelClient | Summarizer:
        if candidates and not as_summarizer(candidates[0]).fallible:
            # A first candidate that cannot fail (the offline summarizer) is never retried and
            # the fallbacks after it are never reached: used as it is, so that it reads the
            # messages, not a prompt, and its summary says it is the offline one.
            return candidates[0]
        return FallbackClient(candidates, self.settings.retry, self.sleep)

    async def compact(self, reason: str, instructions: str | None) -> CompactionOutcome:
        """Run one compaction in its own task (so it can be cancelled on its own).

        Raises :class:`CompactionSkipped` when there is nothing to compact.
        """
        candidates = list(self._candidates())
        windows = self.settings.context_windows
        # The smallest candidate window plans the summary windows; an overflow reply from a
        # candidate with a smaller real window halves them further.
        window = min(registry_context_window(c.name, windows) for c in candidates)
        client = self._one_client(candidates)
        # A remote endpoint never gets a split turn's prefix (§7.6): the other candidates
        # summarize it, else the offline summarizer.
        prefix: ModelClient | Summarizer | None = None
        first = candidates[0]
        if not as_summarizer(first).summarizes_turn_prefix:
            local = [c for c in candidates if as_summarizer(c).summarizes_turn_prefix]
            prefix = self._one_client(local) if local else local_turn_prefix_summarizer(first)
        task = asyncio.ensure_future(
            compact_session(
                self.tree,
                client,
                settings=self.settings.compaction,
                options=summary_options(
                    self.settings,
                    custom_instructions=instructions,
                    context_window=window,
                    redactor=self.redactor,
                ),
                hooks=self.hooks,
                reason=reason,
                turn_prefix_summarizer=prefix,
            )
        )
        self.task = task
        try:
            outcome = await task
        finally:
            self.task = None
        if isinstance(outcome, NothingToCompact):
            if outcome.reason == "already_compacted":
                raise CompactionSkipped("Already compacted")
            raise CompactionSkipped(outcome.message)
        self.last_result = outcome.result
        return outcome

    async def run_auto(self, reason: str, *, will_retry: bool) -> bool:
        """§10.3: compact on the session's own initiative; events instead of exceptions."""
        await self._emit(AUTO_COMPACTION_START, reason=reason, action="context-full")
        end: dict[str, Any] = {"result": None, "aborted": False, "willRetry": will_retry}
        if not self._candidates():
            await self._emit(AUTO_COMPACTION_END, **end, skipped=True)
            return False
        try:
            outcome = await self.compact(reason, None)
        except CompactionSkipped:
            await self._emit(AUTO_COMPACTION_END, **end, skipped=True)
            return False
        except CompactionCancelledError:
            await self._emit(AUTO_COMPACTION_END, **{**end, "aborted": True})
            return False
        except asyncio.CancelledError:
            await self._emit(AUTO_COMPACTION_END, **{**end, "aborted": True})
            if self._aborting() or current_task_cancelling():
                raise  # the turn itself was aborted, not only the compaction
            return False
        except ContextreeError as exc:
            prefix = (
                "Context overflow recovery failed"
                if reason == "overflow"
                else "Auto-compaction failed"
            )
            await self._emit(AUTO_COMPACTION_END, **end, errorMessage=f"{prefix}: {exc}")
            return False
        await self._emit(AUTO_COMPACTION_END, **{**end, "result": outcome.result})
        return True


def current_task_cancelling() -> bool:
    """Whether the running task itself is being cancelled (not only an awaited child)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _predates(message: StoredMessage, compaction: StoredEntry | None) -> bool:
    """Whether ``message`` is no newer than ``compaction`` (so its usage measured the old
    context); a message without a timestamp counts as old."""
    if compaction is None:
        return False
    stamp = message.get("timestamp")
    message_ms = stamp if isinstance(stamp, int | float) else 0
    return message_ms <= iso_to_ms(compaction.get("timestamp"))


def _without_usage(message: StoredMessage) -> StoredMessage:
    if message.get("role") != "assistant" or "usage" not in message:
        return message
    return {key: value for key, value in message.items() if key != "usage"}
