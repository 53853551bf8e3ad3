"""``ManagedSession``: a contextree session that an outside agent framework drives.

A framework keeps its own agent loop; before each model call it hands its conversation over
(new messages are :meth:`ManagedSession.append`-ed in pi's format), asks
:meth:`ManagedSession.maybe_compact` whether the context must be compacted, and sends what
:meth:`ManagedSession.llm_messages` returns. The decision and the compaction are those of
:class:`~contextree.runtime.agent.AgentSession` (one :class:`CompactionTriggers`): pruning
first, the threshold on measured usage where there is some, the summarizer's windows, hooks
and the offline fallback; an overflow reported by the framework compacts once per prompt.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import weakref
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, TypeVar

from contextree.compaction.summarize import CompactionResult
from contextree.context.convert import with_recall_hint
from contextree.context.provider import ProviderView
from contextree.entries.types import LlmMessage, StoredMessage, is_assistant_message
from contextree.errors import CompactionError
from contextree.hooks.registry import HookRegistry
from contextree.llm.base import ModelClient
from contextree.llm.registry import context_window as registry_context_window
from contextree.llm.registry import parse_model_spec
from contextree.recall.auto import RecalledMessages, compaction_id, recall_before_request
from contextree.recall.tool import SessionRecall
from contextree.runtime.events import EventHub, EventListener
from contextree.runtime.triggers import CompactionSkipped, CompactionTriggers
from contextree.security.redact import Redactor, environment_secrets, redact_stored_message
from contextree.session.tree import SessionTree
from contextree.settings.schema import Settings

__all__ = ["ManagedSession"]

_T = TypeVar("_T")


class ManagedSession:
    """A session an outside framework drives: it stores, compacts and returns the context.

    Args:
        tree: the session (``SessionTree.open(path)`` or ``SessionTree.in_memory()``).
        model: the framework's model as ``provider:model`` (e.g. ``"openai:gpt-4o"``); it sets
            the context window (from the registry and ``settings.context_windows``) and the
            ``provider``/``model`` the adapters write on assistant messages.
        summarizer: writes the summaries; default: the built-in offline summarizer (no
            network). Any :class:`~contextree.llm.base.ModelClient` works, e.g.
            ``create_client("openai:gpt-4o-mini")``.
        settings: compaction, pruning, redaction and retry settings (default: built-in;
            ``load_settings(cwd=...).settings`` reads the settings files as the CLI does).
        hooks: the same hooks as our agent (``before_compact``, ``compacting``, ...).
        context_window: overrides the window the model name gives.
        listener: called with every :class:`AgentEvent` (``prune``, ``auto_compaction_*``).
    """

    def __init__(
        self,
        tree: SessionTree,
        *,
        model: str | None = None,
        summarizer: ModelClient | None = None,
        settings: Settings | None = None,
        hooks: HookRegistry | None = None,
        context_window: int | None = None,
        listener: EventListener | None = None,
    ) -> None:
        self.tree = tree
        self.settings = settings or Settings()
        self.model_spec = model
        self.summarizer = summarizer or _offline_summarizer()
        self.hooks = hooks or HookRegistry()
        self._context_window = context_window
        self._sync_loop: asyncio.AbstractEventLoop | None = None  # for the *_sync methods
        self._sync_lock = threading.Lock()
        self._provider_view = ProviderView()  # the last request's view, extended each turn
        self._events = EventHub(self.hooks, [listener] if listener is not None else [])
        # What is stored is sent again with every later request: a reply that echoes a key
        # or a tool that prints one is redacted before it is written, as in our own agent.
        self.redactor = Redactor.from_settings(
            self.settings.redaction, literals=environment_secrets(os.environ)
        )
        self._triggers = CompactionTriggers(
            tree,
            lambda: self.settings,
            hooks=self.hooks,
            redactor=self.redactor,
            emit=self._events.emit,
            model=lambda: self.provider_and_model,
            context_window=lambda: self.context_window,
            candidates=lambda: [self.summarizer],
        )
        self.recall = SessionRecall(tree, self.settings)
        """Recall over this session, for the adapters' ``recall`` tools."""
        self.offer_recall = False
        """Set by an adapter that gives its model the ``recall`` tool: from then on, once the
        path has a compaction, the summary's wrapper says that the tool finds what it left out."""
        self.auto_recall = False
        """Set by an adapter whose session holds the user's new message before the request is
        built (LangChain, pydantic-ai): with :attr:`offer_recall` and ``recall.auto``, the
        message carries what recall finds for its unseen words (:mod:`contextree.recall.auto`).
        The OpenAI Agents SDK adds the new input after the stored history, out of our sight."""
        self._recalled = RecalledMessages(compaction_id(tree))

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, cwd: str | None = None, **options: Any
    ) -> ManagedSession:
        """Open (or create on the first append) the session file at ``path``."""
        return cls(SessionTree.open(os.fspath(path), cwd=cwd), **options)

    # -- state ----------------------------------------------------------------------------------

    @property
    def provider_and_model(self) -> tuple[str, str]:
        """The framework's model as pi names it (``("", "")`` when not given)."""
        if not self.model_spec:
            return "", ""
        return parse_model_spec(self.model_spec)

    @property
    def context_window(self) -> int:
        if self._context_window is not None:
            return self._context_window
        return registry_context_window(self.model_spec or "", self.settings.context_windows)

    @property
    def is_compacting(self) -> bool:
        return self._triggers.is_compacting

    def subscribe(self, listener: EventListener) -> Callable[[], None]:
        """Call ``listener`` with every event; returns an unsubscribe function."""
        return self._events.subscribe(listener)

    # -- the conversation -----------------------------------------------------------------------

    def append(self, messages: Iterable[StoredMessage]) -> list[str]:
        """Append pi messages in order (assistant replies and tool results redacted first).

        A successful assistant reply re-arms overflow recovery, as a good reply does in our
        agent. Returns the new entry ids.
        """
        ids: list[str] = []
        for message in messages:
            if self.redactor is not None:
                message = redact_stored_message(message, self.redactor)
            ids.append(self.tree.append_message(message))
            if is_assistant_message(message) and message.get("stopReason") != "error":
                self._triggers.overflow_recovery_attempted = False
        return ids

    def context_messages(self) -> list[StoredMessage]:
        """What the model sees: the summaries as user-context messages, then kept messages."""
        return self.tree.build_session_context().messages

    def llm_messages(self) -> list[LlmMessage]:
        """:meth:`context_messages` as a provider accepts them (tool-call pairing repaired;
        with :attr:`offer_recall`, the recall line in the summary's wrapper)."""
        context = self.tree.build_session_context()
        messages = self._provider_view.messages(
            self._recalled.apply(context.messages, context.entry_ids),
            keep_thinking_turns=self.settings.keep_thinking_turns,
        )
        return with_recall_hint(messages) if self.recall_offered() else messages

    def recall_offered(self) -> bool:
        """Whether the model is offered ``recall`` now: an adapter gives it the tool and the
        path has a compaction."""
        return self.offer_recall and self.recall.available()

    def recall_text(self, query: str, limit: int = 5) -> str:
        """The ``recall`` tool's result for ``query`` (bounded; see
        :mod:`contextree.recall.tool`)."""
        return self.recall.search_text(query, limit=limit)

    # -- compaction -----------------------------------------------------------------------------

    async def maybe_compact(self, *, overflow: bool = False) -> CompactionResult | None:
        """Compact when the context needs it; the new compaction's result, else ``None``.

        Without ``overflow`` this is the threshold trigger: the latest measured usage plus
        estimates of what follows it (an estimate of everything when that usage predates the
        latest compaction), minus what pruning saves, against the window's threshold.
        ``overflow=True`` says the framework's last request was rejected as too long: compact
        now - once, until a good reply is appended (then ``auto_compaction_end`` carries an
        error and ``None`` is returned, so a framework cannot loop on it).
        """
        if overflow:
            if not self.settings.compaction.enabled:
                return None
            done = await self._triggers.recover_from_overflow()
        else:
            done = await self._triggers.before_request()
        await self._find_recalled()  # (every adapter asks this before it builds a request)
        return self._triggers.last_result if done else None

    async def _find_recalled(self) -> None:
        """recall.auto before a request (:func:`~contextree.recall.auto.recall_before_request`)."""
        if self.auto_recall and self.offer_recall and self.settings.recall_auto:
            await recall_before_request(self._recalled, self.tree, self.recall)

    def maybe_compact_sync(self, *, overflow: bool = False) -> CompactionResult | None:
        """:meth:`maybe_compact` for synchronous callers (also from inside a running loop)."""
        return self._run_sync(lambda: self.maybe_compact(overflow=overflow))

    async def compact(self, instructions: str | None = None) -> CompactionResult:
        """Compact now (manual); raises ``CompactionError`` when there is nothing to do."""
        try:
            outcome = await self._triggers.compact("manual", instructions)
        except CompactionSkipped as skipped:
            raise CompactionError(str(skipped)) from None
        return outcome.result

    def compact_sync(self, instructions: str | None = None) -> CompactionResult:
        """:meth:`compact` for synchronous callers."""
        return self._run_sync(lambda: self.compact(instructions))

    def _run_sync(self, make: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
        """Run a coroutine to completion from synchronous code.

        Outside a running event loop it runs on this session's own loop, made once and kept
        (closed when the session is collected): a framework's sync hook runs once per model
        call, ``asyncio.run`` would make and tear down a loop each time (about half a
        millisecond), and an async client the summarizer or a hook keeps (an
        ``httpx.AsyncClient``) stays on the loop it was made on. Inside a running loop (a sync
        callback of an async framework) that loop cannot be re-entered, so the coroutine runs
        on a fresh loop in a worker thread while the caller waits: the session is not touched
        by anything else meanwhile.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
                return pool.submit(lambda: asyncio.run(make())).result()
        with self._sync_lock:  # one caller at a time, from whichever thread
            loop = self._sync_loop
            if loop is None or loop.is_closed():
                loop = self._sync_loop = asyncio.new_event_loop()
                weakref.finalize(self, loop.close)
            return loop.run_until_complete(make())


def _offline_summarizer() -> ModelClient:
    from contextree.compaction.offline import OfflineSummarizer

    return OfflineSummarizer()
