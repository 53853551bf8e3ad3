"""``SessionHistory``: a pydantic-ai agent's conversation kept in a contextree session.

pydantic-ai 2 replaced ``Agent(history_processors=...)`` with capabilities: a history processor
is ``capabilities=[ProcessHistory(fn)]``, and compaction belongs in a capability's
``prepare_model_request`` hook (it runs once per attempt, with the serving model). This module
gives both forms, on one :class:`~contextree.integrations.core.ManagedSession`:

- :class:`SessionHistory` is the capability. Before every attempt at a model request it
  appends the messages the session does not have yet, compacts when the context is over the
  threshold, and replaces the run's history with the session's context (summary first, then
  the kept messages, tool-call pairing repaired). After every response it appends the response
  with its measured usage, so the threshold works on real numbers. A request the provider
  rejects as too long compacts once and is attempted again.
- :meth:`SessionHistory.processor` is the same as a plain history processor, for
  ``ProcessHistory``. A processor does not see a run's final response: call
  :meth:`SessionHistory.record` with ``result.new_messages()`` after the run.

Messages that came from the session carry ``metadata["contextree"]["session"]`` (the
session's id; pydantic-ai never sends metadata to a model), which is how a message passed back
in ``message_history`` is told apart from a new one. Messages without it are new and stored.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from pydantic_ai import RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import (
    ModelContextWindowExceededError,
    ModelHTTPError,
    RetryModelRequest,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    SystemPromptPart,
)
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import FunctionToolset

from contextree.compaction.summarize import CompactionResult
from contextree.entries.types import StoredMessage, is_assistant_message
from contextree.integrations.core import ManagedSession
from contextree.integrations.pydantic_ai.convert import (
    METADATA_KEY,
    ConversionCache,
    model_messages_to_pi,
    pi_to_model_messages,
)
from contextree.llm.errors import is_overflow_text
from contextree.recall.tool import RECALL_TOOL_DESCRIPTION, RECALL_TOOL_NAME

__all__ = ["SessionHistory"]


class SessionHistory(AbstractCapability[Any]):
    """A pydantic-ai capability that stores the conversation in a contextree session and
    sends the model the session's (compacted) context.

    ::

        history = SessionHistory.open("chat.jsonl", model="openai:gpt-4o")
        agent = Agent("openai:gpt-4o", capabilities=[history], tools=[...])
        agent.run_sync("Fix the failing test")   # no message_history: the session is it
        agent.run_sync("Now add a changelog line")

    Args:
        session: the session to drive; :meth:`open` makes one from a path.
    """

    def __init__(self, session: ManagedSession, *, recall: bool = True) -> None:
        self.session = session
        self.recall = recall
        """Give the agent the ``recall`` tool (:meth:`get_toolset`), offered to the model once
        the session has a compaction."""
        self.last_compaction: CompactionResult | None = None
        """The result of the latest compaction this history ran, if any."""
        self._session_id = session.tree.session_id
        self._system_prompts: list[SystemPromptPart] = []
        self._pending: list[ModelMessage] = []
        self._cache = ConversionCache()
        self._known: dict[int, ModelMessage] = {}  # id -> message, for the ones last handed out

    @classmethod
    def open(cls, path: str | os.PathLike[str], **options: Any) -> SessionHistory:
        """A history on the session file at ``path`` (created on the first append);
        ``options`` go to :class:`~contextree.integrations.core.ManagedSession`."""
        return cls(ManagedSession.open(path, **options))

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds a live session: not something an agent spec can describe

    # -- the conversation ----------------------------------------------------------------------

    def is_stored(self, message: ModelMessage) -> bool:
        """Whether ``message`` came from (or was already written to) this session."""
        if self._known.get(id(message)) is message:
            return True  # handed out by messages() or recorded: no need to read metadata
        own = (message.metadata or {}).get(METADATA_KEY)
        return isinstance(own, dict) and own.get("session") == self._session_id

    def record(self, messages: Iterable[ModelMessage]) -> list[str]:
        """Append the messages the session does not have yet, in order; returns their entry
        ids. Each one is marked as stored (in its ``metadata``), so it is never stored twice."""
        messages = list(messages)
        self._remember_system_prompts(messages)
        new = [*self._pending, *(m for m in messages if not self.is_stored(m))]
        if not new:
            return []
        try:
            pi = model_messages_to_pi(self._without_standing_prompts(new))
        except ValueError:
            # Only parts pi has no message for (a request of system prompts): they are stored
            # with the next message that has one.
            self._pending = new
            return []
        self._pending = []
        ids = self.session.append(self._with_model(message) for message in pi)
        for message in new:
            self._mark(message)
            self._known[id(message)] = message
        return ids

    def messages(self) -> list[ModelMessage]:
        """The session's context as pydantic-ai messages: what the model is sent. Pass it as
        ``message_history`` to an agent without this capability, or inspect it."""
        out = pi_to_model_messages(self.session.llm_messages(), cache=self._cache)
        for message in self._cache.fresh:  # the others were marked when they were made
            self._mark(message)
        self._known = {id(message): message for message in out}
        if self._system_prompts and out and isinstance(out[0], ModelRequest):
            # The agent's current system prompts open the conversation, also after the
            # messages they first came with were compacted away.
            first = out[0]
            rest = first.parts[len(_leading_system_prompts(first.parts)) :]
            parts: list[ModelRequestPart] = [*self._system_prompts, *rest]
            first.parts = parts
        return out

    async def processor(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """A pydantic-ai history processor: store, compact if needed, return the context."""
        self.record(messages)
        await self._compact()
        return self.messages()

    async def compact(self, instructions: str | None = None) -> CompactionResult:
        """Compact now (manual); raises ``CompactionError`` when there is nothing to do."""
        self.last_compaction = await self.session.compact(instructions)
        return self.last_compaction

    async def _compact(self, *, overflow: bool = False) -> CompactionResult | None:
        result = await self.session.maybe_compact(overflow=overflow)
        if result is not None:
            self.last_compaction = result
        return result

    # -- capability hooks ----------------------------------------------------------------------

    def get_toolset(self) -> FunctionToolset[Any] | None:
        """The ``recall`` tool (unless ``recall=False``): listed for the model only while the
        session's path has a compaction; its result is bounded (:mod:`contextree.recall.tool`)."""
        if not self.recall:
            return None
        session = self.session
        session.offer_recall = True
        session.auto_recall = True

        async def recall(query: str, limit: int = 5) -> str:
            return await asyncio.to_thread(session.recall_text, query, limit)

        async def only_after_a_compaction(
            ctx: RunContext[Any], tool: ToolDefinition
        ) -> ToolDefinition | None:
            return tool if session.recall_offered() else None

        tool = Tool(
            recall,
            name=RECALL_TOOL_NAME,
            description=RECALL_TOOL_DESCRIPTION,
            prepare=only_after_a_compaction,
        )
        return FunctionToolset([tool])

    async def prepare_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        # Per attempt, so an attempt after an overflow compaction sends the new context.
        messages = await self.processor(list(request_context.messages))
        request_context.messages = messages
        ctx.messages[:] = messages  # the run's history is the session's context
        return request_context

    async def after_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        response: ModelResponse,
    ) -> ModelResponse:
        self.record([response])
        return response

    async def on_model_request_error(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        error: Exception,
    ) -> ModelResponse:
        # The provider said the context is too long: compact (once, until a good reply) and
        # make the attempt again on the compacted context.
        if _is_overflow(error) and await self._compact(overflow=True) is not None:
            raise RetryModelRequest() from error
        raise error

    # -- helpers -------------------------------------------------------------------------------

    def _mark(self, message: ModelMessage) -> None:
        metadata = dict(message.metadata or {})
        own = dict(metadata.get(METADATA_KEY) or {})
        own["session"] = self._session_id
        metadata[METADATA_KEY] = own
        message.metadata = metadata

    def _without_standing_prompts(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """``messages`` without the system prompts the agent puts before each run's first
        prompt (it does so whenever it is given no history). The session keeps them once,
        with its first message; :meth:`messages` puts the agent's current ones first."""
        out: list[ModelMessage] = []
        keep_first = self.session.tree.leaf_id is None
        for index, message in enumerate(messages):
            if isinstance(message, ModelRequest) and not (keep_first and index == 0):
                head = _leading_system_prompts(message.parts)
                if head and len(head) < len(message.parts):
                    rest: list[ModelRequestPart] = list(message.parts[len(head) :])
                    message = replace(message, parts=rest)
            out.append(message)
        return out

    def _remember_system_prompts(self, messages: Sequence[ModelMessage]) -> None:
        first = messages[0] if messages else None
        if not isinstance(first, ModelRequest):
            return
        head = _leading_system_prompts(first.parts)
        if head:
            self._system_prompts = head

    def _with_model(self, message: StoredMessage) -> StoredMessage:
        """An assistant message without a provider or model gets the session's."""
        if not is_assistant_message(message):
            return message
        provider, model = self.session.provider_and_model
        out = dict(message)
        if provider and out.get("provider") == "pydantic-ai":
            out["provider"] = provider
        if model and not out.get("model"):
            out["model"] = model
        return out


def _leading_system_prompts(parts: Sequence[ModelRequestPart]) -> list[SystemPromptPart]:
    head: list[SystemPromptPart] = []
    for part in parts:
        if not isinstance(part, SystemPromptPart):
            break
        head.append(part)
    return head


def _is_overflow(error: Exception) -> bool:
    if isinstance(error, ModelContextWindowExceededError):
        return True
    if isinstance(error, ModelHTTPError) and error.status_code in (400, 413):
        return is_overflow_text(f"{error} {error.body}")
    return False
