"""``AgentSession``: the agent loop on a session tree, with the three compaction triggers.

prompt -> model -> tool calls -> tool results -> ... -> stop, every message persisted as it
happens. After each run and before each prompt the session checks its context (§10.2):

- **overflow**: the last reply failed because the prompt did not fit (or silently exceeded the
  window). The failed reply stays in the file but never reaches the model again; the session
  compacts (reason ``overflow``) and retries once per prompt;
- **threshold**: measured usage (minus what pruning saved) crossed the threshold; the session
  prunes, compacts (reason ``threshold``) and, unless ``compaction.autoContinue`` is false,
  sends a synthetic "continue" prompt;
- **manual**: :meth:`AgentSession.compact`.

Summaries go through a :class:`~contextree.runtime.retry.FallbackClient`: the current model,
then the configured fallback models, with retries and backoff.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contextree.compaction.options import (
    resolve_options,
    summary_options,
    take_summary_keywords,
)
from contextree.compaction.prompt_templates import load_prompt
from contextree.compaction.provider_summary import replay_provider_compaction
from contextree.compaction.summarize import CompactionResult
from contextree.context.convert import convert_to_llm, with_recall_hint
from contextree.context.provider import provider_messages
from contextree.entries.ids import now_ms
from contextree.entries.types import LlmMessage, StoredMessage
from contextree.errors import CompactionCancelledError, CompactionError, ContextreeError, ModelError
from contextree.hooks.registry import HookRegistry
from contextree.llm.base import Completion, CompletionRequest, ModelClient
from contextree.llm.errors import is_context_overflow
from contextree.llm.registry import context_window as registry_context_window
from contextree.llm.registry import create_client, parse_model_spec
from contextree.recall.auto import RecalledMessages, compaction_id, recall_before_request
from contextree.recall.tool import RECALL_TOOL_NAME, SessionRecall
from contextree.runtime.events import (
    AGENT_END,
    AGENT_START,
    COMPACTION_END,
    COMPACTION_START,
    MESSAGE,
    RETRY,
    TOOL_END,
    TOOL_START,
    EventHub,
    EventListener,
)
from contextree.runtime.retry import FallbackClient, Sleep
from contextree.runtime.tools.base import (
    Tool,
    ToolContext,
    ToolResult,
    run_tool_call,
    tool_result_message,
    tool_spec,
)
from contextree.runtime.tools.recall import RecallTool
from contextree.runtime.triggers import (
    OVERFLOW_RETRY_FAILED,
    CompactionSkipped,
    CompactionTriggers,
    current_task_cancelling,
)
from contextree.security.redact import Redactor, environment_secrets, redact_stored_message
from contextree.session.tree import SessionTree
from contextree.settings.schema import Settings

__all__ = ["OVERFLOW_RETRY_FAILED", "AgentSession", "TurnOutcome"]

_MAX_AUTO_CONTINUES = 3


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """How a prompt ended."""

    aborted: bool = False
    error: str | None = None


def _api_name(provider: str) -> str:
    return "anthropic-messages" if provider == "anthropic" else "openai-completions"


def request_messages(
    messages: Sequence[StoredMessage], *, recall_hint: bool = False, keep_thinking_turns: int = -1
) -> list[LlmMessage]:
    """The messages sent to the model: the provider view of the context
    (:func:`~contextree.context.provider.provider_messages`). Failed and aborted replies (and
    their tool results) stay in the file but are left out, so a retry after an overflow is not
    the same request; a tool call without a result gets a synthetic error result; thinking
    older than ``keep_thinking_turns`` turns is left out. ``recall_hint``: the summary's
    wrapper says that the recall tool finds what it left out."""
    view = provider_messages(convert_to_llm(messages), keep_thinking_turns=keep_thinking_turns)
    return with_recall_hint(view) if recall_hint else view


class AgentSession:
    """Runs an agent on a :class:`SessionTree` and keeps its context within the window."""

    def __init__(
        self,
        tree: SessionTree,
        client: ModelClient | None,
        *,
        model_spec: str | None = None,
        settings: Settings | None = None,
        tools: Mapping[str, Tool] | None = None,
        tool_context: ToolContext | None = None,
        hooks: HookRegistry | None = None,
        system_prompt: str = "",
        context_window: int | None = None,
        fallback_clients: Sequence[ModelClient] = (),
        available_clients: Sequence[ModelClient] = (),
        summarizer: ModelClient | None = None,
        max_tokens: int | None = None,
        sleep: Sleep = asyncio.sleep,
        now: Callable[[], int] | None = None,
        recall: bool = True,
    ) -> None:
        self.tree = tree
        self.client = client
        self.settings = settings or Settings()
        self.model_spec = model_spec or (client.name if client is not None else None)
        self.tools = dict(tools or {})
        # Offered to the model, with a line in the summary's wrapper, once the path has a
        # compaction (issue 26): what the summary left out can be searched.
        self.recall = (
            SessionRecall(tree, self.settings, literals=environment_secrets(os.environ))
            if recall
            else None
        )
        # What recall found for each user message (recall.auto), sent again as it was.
        self._recalled = RecalledMessages(compaction_id(tree))
        self.tool_context = tool_context
        self.hooks = hooks or HookRegistry()
        self.system_prompt = system_prompt
        self.fallback_clients = list(fallback_clients)
        self.available_clients = list(available_clients)
        if summarizer is None and self.settings.compaction.remote_endpoint:
            # compaction.remoteEndpoint: summaries go to that endpoint; the model still chats.
            summarizer = create_client(f"remote:{self.settings.compaction.remote_endpoint}")
        self.summarizer = summarizer
        self.max_tokens = max_tokens
        self.sleep = sleep
        self._clock = now
        # One redactor (configured patterns and the environment's secret values) for what is
        # stored and for every summary, compaction and branch alike.
        self._stored_redactor = Redactor.from_settings(
            self.settings.redaction, literals=environment_secrets(os.environ)
        )
        self._context_window = context_window
        self._events = EventHub(self.hooks)
        self._queue: list[str] = []
        self._turn_task: asyncio.Task[None] | None = None
        self._abort_requested = False
        self._branch_summarizing = False
        self._triggers = CompactionTriggers(
            tree,
            lambda: self.settings,
            hooks=self.hooks,
            redactor=self._stored_redactor,
            emit=self._emit,
            model=lambda: self.provider_and_model,
            context_window=lambda: self.context_window,
            candidates=self._compaction_candidates,
            sleep=lambda seconds: self.sleep(seconds),
            aborting=lambda: self._abort_requested,
        )

    def _now(self) -> int:
        """Message timestamps in ms (injectable with ``now=``, for deterministic tests)."""
        return self._clock() if self._clock is not None else now_ms()

    # -- state ----------------------------------------------------------------------------------

    @property
    def provider_and_model(self) -> tuple[str, str]:
        if not self.model_spec:
            return "", ""
        provider, model = parse_model_spec(self.model_spec)
        return provider, model

    @property
    def context_window(self) -> int:
        if self._context_window is not None:
            return self._context_window
        if not self.model_spec:
            return 0
        return registry_context_window(self.model_spec, self.settings.context_windows)

    @property
    def is_streaming(self) -> bool:
        return self._turn_task is not None and not self._turn_task.done()

    @property
    def is_compacting(self) -> bool:
        return self._triggers.is_compacting or self._branch_summarizing

    @property
    def queued(self) -> list[str]:
        return list(self._queue)

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Call ``listener`` with every :class:`AgentEvent`; returns an unsubscribe function."""
        return self._events.subscribe(listener)

    async def _emit(self, kind: str, **data: Any) -> None:
        await self._events.emit(kind, **data)

    def context_messages(self) -> list[StoredMessage]:
        return self.tree.build_session_context().messages

    def _last_assistant(self) -> StoredMessage | None:
        for message in reversed(self.context_messages()):
            if message.get("role") == "assistant":
                return message
        return None

    # -- prompting ------------------------------------------------------------------------------

    async def prompt(self, text: str) -> TurnOutcome:
        """Send a user message and run the agent until it stops (or queue it while running)."""
        if self.is_streaming:
            self._queue.append(text)
            return TurnOutcome()
        if self.client is None:
            raise ModelError("none", "No model selected")
        last = self._last_assistant()
        if last is not None:
            await self._check_compaction(last, skip_aborted_check=False)
        # The overflow latch is per prompt and resets with the new user message (§10.2), after
        # the pre-prompt check: that check must not spend this prompt's compact-and-retry on
        # an older overflow whose recovery already failed.
        self._triggers.overflow_recovery_attempted = False
        self._append_user(text)
        return await self._start(self._loop())

    async def continue_(self) -> TurnOutcome:
        """Run the agent again on the current context without a new user message."""
        if self.client is None:
            raise ModelError("none", "No model selected")
        return await self._start(self._loop())

    def abort(self) -> None:
        """Stop the running turn; the aborted reply is persisted as such."""
        if self.is_streaming and self._turn_task is not None:
            self._abort_requested = True
            self._turn_task.cancel()

    def abort_compaction(self) -> None:
        """Cancel a running compaction; nothing is written."""
        self._triggers.cancel()

    async def _start(self, body: Any) -> TurnOutcome:
        self._abort_requested = False
        self._turn_task = asyncio.ensure_future(body)
        await self._emit(AGENT_START)
        try:
            await self._turn_task
        except asyncio.CancelledError:
            if not self._abort_requested:
                raise
            await self._emit(AGENT_END, aborted=True)
            return TurnOutcome(aborted=True)
        finally:
            self._turn_task = None
        last = self._last_assistant()
        error = None
        if last is not None and last.get("stopReason") == "error":
            error = str(last.get("errorMessage") or "model error")
        await self._emit(AGENT_END, aborted=False, error=error)
        return TurnOutcome(error=error)

    def _append_user(self, text: str, *, synthetic: bool = False) -> None:
        message: StoredMessage = {
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "timestamp": self._now(),
        }
        if synthetic:
            message["synthetic"] = True
        self.tree.append_message(message)

    async def _loop(self) -> None:
        auto_continues = 0
        while True:
            await self._turns()
            last = self._last_assistant()
            follow_up = await self._check_compaction(last) if last is not None else None
            if follow_up == "retry":
                continue
            if self._queue:
                self._triggers.overflow_recovery_attempted = False
                self._append_user(self._queue.pop(0))
                continue
            if follow_up == "auto_continue" and auto_continues < _MAX_AUTO_CONTINUES:
                auto_continues += 1
                self._append_user(load_prompt("auto-continue"), synthetic=True)
                continue
            return

    async def _find_recalled(self) -> None:
        """recall.auto before a request (:func:`~contextree.recall.auto.recall_before_request`)."""
        if self.recall is not None and self.settings.recall_auto:
            await recall_before_request(
                self._recalled, self.tree, self.recall, also_visible=self.system_prompt
            )

    def offered_tools(self) -> dict[str, Tool]:
        """The tools of the next request: :attr:`tools`, and ``recall`` once the path has a
        compaction (unless a tool of that name was given)."""
        if self.recall is None or RECALL_TOOL_NAME in self.tools or not self.recall.available():
            return self.tools
        return {**self.tools, RECALL_TOOL_NAME: RecallTool(self.recall)}

    def _request(self) -> CompletionRequest:
        tools = self.offered_tools()
        hint = RECALL_TOOL_NAME in tools and self.recall is not None
        context = self.tree.build_session_context()
        messages = request_messages(
            self._recalled.apply(context.messages, context.entry_ids),
            recall_hint=hint,
            keep_thinking_turns=self.settings.keep_thinking_turns,
        )
        # A compaction the provider wrote goes back to it as its own item.
        provider, _ = self.provider_and_model
        messages = replay_provider_compaction(messages, self.tree.get_branch_view(), provider)
        return CompletionRequest(
            system_prompt=self.system_prompt,
            messages=messages,
            max_tokens=self.max_tokens,
            reasoning=self.tree.build_session_context().thinking_level,
            tools=[tool_spec(tool) for tool in tools.values()],
        )

    def _assistant_message(self, completion: Completion) -> StoredMessage:
        provider, model = self.provider_and_model
        message: StoredMessage = {
            "role": "assistant",
            "content": completion.content,
            "api": _api_name(provider),
            "provider": provider,
            "model": model,
            "usage": dict(completion.usage),
            "stopReason": completion.stop_reason,
            "timestamp": self._now(),
        }
        if completion.error_message:
            message["errorMessage"] = completion.error_message
        return message

    def _failed_message(self, stop_reason: str, error: str) -> StoredMessage:
        provider, model = self.provider_and_model
        return {
            "role": "assistant",
            "content": [],
            "api": _api_name(provider),
            "provider": provider,
            "model": model,
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
            "stopReason": stop_reason,
            "errorMessage": error,
            "timestamp": self._now(),
        }

    async def _persist(self, message: StoredMessage) -> str:
        if self._stored_redactor is not None:
            # A reply that echoes a key, or a tool that prints one, is redacted before it is
            # written: what the session keeps is sent again with every later request.
            message = redact_stored_message(message, self._stored_redactor)
        entry_id = self.tree.append_message(message)
        await self._emit(MESSAGE, message=message, entryId=entry_id)
        return entry_id

    async def _turns(self) -> None:
        """Model calls and tool runs until the model stops asking for tools."""
        assert self.client is not None
        caller = FallbackClient([self.client], self.settings.retry)

        async def sleep(seconds: float) -> None:
            # FallbackClient records the failed attempt before it sleeps.
            failed = caller.attempts[-1]
            await self._emit(
                RETRY, attempt=failed.attempt + 1, delayMs=seconds * 1000, error=failed.error
            )
            await self.sleep(seconds)

        caller.sleep = sleep
        while True:
            await self._find_recalled()
            try:
                completion = await caller.complete(self._request())
            except asyncio.CancelledError:
                await self._persist(self._failed_message("aborted", "Request was aborted"))
                raise
            except ModelError as exc:
                await self._persist(self._failed_message("error", str(exc)))
                return
            message = self._assistant_message(completion)
            await self._persist(message)
            if completion.stop_reason != "error" and not is_context_overflow(
                message, self.context_window
            ):
                # A good reply re-arms overflow recovery (§10.2); a silent overflow does not,
                # so a retry that overflows again cannot loop.
                self._triggers.overflow_recovery_attempted = False
            calls = completion.tool_calls
            if not calls:
                return
            await self._run_tools(calls)

    async def _run_tools(self, calls: list[dict[str, Any]]) -> None:
        context = self.tool_context or ToolContext(cwd=_cwd_of(self.tree))
        for index, call in enumerate(calls):
            await self._emit(TOOL_START, toolCallId=call.get("id"), name=call.get("name"))
            try:
                result = await run_tool_call(self.offered_tools(), call, context)
            except asyncio.CancelledError:
                # Keep the tool-call pairing valid: every call gets a result, even when aborted.
                for pending in calls[index:]:
                    aborted = ToolResult.error("Tool execution was aborted")
                    await self._persist(
                        tool_result_message(pending, aborted, timestamp=self._now())
                    )
                raise
            await self._persist(tool_result_message(call, result, timestamp=self._now()))
            await self._emit(
                TOOL_END,
                toolCallId=call.get("id"),
                name=call.get("name"),
                isError=result.is_error,
            )

    # -- compaction triggers (runtime/triggers.py) ----------------------------------------------

    async def _check_compaction(
        self, message: StoredMessage, *, skip_aborted_check: bool = True
    ) -> str | None:
        return await self._triggers.after_reply(message, skip_aborted_check=skip_aborted_check)

    def _compaction_candidates(self) -> list[ModelClient]:
        return self.summary_candidates() if self.client is not None else []

    def summary_candidates(self) -> list[ModelClient]:
        """§10.4: the current model, the configured fallbacks, then the available model with
        the largest context window that is not already a candidate (duplicates by name removed).
        """
        primary = self.summarizer or self.client
        assert primary is not None
        candidates: list[ModelClient] = []
        for client in (primary, *self.fallback_clients):
            if all(c.name != client.name for c in candidates):
                candidates.append(client)
        others = [c for c in self.available_clients if all(c.name != o.name for o in candidates)]
        if others:
            windows = self.settings.context_windows
            candidates.append(max(others, key=lambda c: registry_context_window(c.name, windows)))
        return candidates

    async def compact(self, instructions: str | None = None) -> CompactionResult:
        """Manual compaction (``/compact``): aborts the running turn first."""
        if self.is_compacting:
            raise CompactionError("Compaction already in progress")
        if self.is_streaming and self._turn_task is not None:
            task = self._turn_task
            self.abort()
            await asyncio.gather(task, return_exceptions=True)
        if self.client is None and self.summarizer is None:
            raise CompactionError("No model selected")
        await self._emit(COMPACTION_START, reason="manual")
        end: dict[str, Any] = {"reason": "manual", "result": None, "willRetry": False}
        try:
            outcome = await self._triggers.compact("manual", instructions)
        except CompactionSkipped as skipped:
            await self._emit(COMPACTION_END, **end, aborted=False, errorMessage=str(skipped))
            raise CompactionError(str(skipped)) from None
        except CompactionCancelledError:
            await self._emit(COMPACTION_END, **end, aborted=True)
            raise
        except asyncio.CancelledError:
            await self._emit(COMPACTION_END, **end, aborted=True)
            if current_task_cancelling():
                raise  # our caller was cancelled: let the cancellation through
            raise CompactionCancelledError() from None
        except ContextreeError as exc:
            await self._emit(
                COMPACTION_END, **end, aborted=False, errorMessage=f"Compaction failed: {exc}"
            )
            raise
        assert outcome is not None
        await self._emit(COMPACTION_END, **{**end, "result": outcome.result}, aborted=False)
        return outcome.result

    async def navigate_tree(self, target_id: str, **options: Any) -> Any:
        """Move in the tree, optionally summarizing the branch left behind (§9.4).

        ``options`` are :func:`~contextree.branching.navigate.navigate_tree`'s keywords; the
        summary's among them (``custom_instructions``, ``redactor`` ...) go over the
        :class:`~contextree.compaction.options.SummaryOptions` of the session's settings."""
        from contextree.branching.navigate import navigate_tree

        if self.is_streaming:
            raise CompactionError("Cannot navigate while the agent is running; abort it first")
        self._branch_summarizing = bool(options.get("summarize"))
        try:
            summary = take_summary_keywords(options)
            summary.setdefault("redactor", self._stored_redactor)
            summary.setdefault("context_window", self.context_window or None)
            return await navigate_tree(
                self.tree,
                target_id,
                client=self.summarizer or self.client,
                options=resolve_options(summary_options(self.settings), summary),
                hooks=self.hooks,
                **options,
            )
        finally:
            self._branch_summarizing = False


def _cwd_of(tree: SessionTree) -> Path:
    cwd = tree.header.get("cwd")
    return Path(cwd) if isinstance(cwd, str) and Path(cwd).is_dir() else Path.cwd()
