"""``ContextreeMiddleware``: LangChain agent middleware whose history lives in a session file.

LangChain 1.x manages conversation history with agent middleware (``create_agent(...,
middleware=[...])``); its own ``SummarizationMiddleware`` rewrites the agent state with a
summary. This middleware replaces it with contextree's pipeline (pruning, threshold and
overflow triggers, summaries, hooks) and a pi session file as the record:

- ``wrap_model_call``: the state's messages that the session does not hold yet are appended
  (converted to pi's format), the threshold trigger runs, and the model gets the session's
  provider view (the summary and the kept messages, tool-call pairing repaired) instead of
  the raw state. A ``ContextOverflowError`` (or a provider error whose text says the prompt
  is too long) compacts once and retries the call. The reply is appended with its measured
  usage before the agent sees it.
- ``after_agent``: what arrived after the last model call (a ``return_direct`` tool's result)
  is appended.

The agent state itself is left as LangGraph keeps it: the session file is what gets compacted.
``SystemMessage``s in the state are not session content (pi keeps the system prompt out of the
conversation); they go first in every request, in their order.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, cast

import msgspec
from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.runtime import Runtime

from contextree.entries.types import (
    LlmMessage,
    StoredMessage,
    entry_message,
    is_assistant_message,
)
from contextree.integrations.core import ManagedSession
from contextree.integrations.langchain.convert import from_langchain, to_langchain
from contextree.llm.errors import is_overflow_text
from contextree.recall.tool import (
    RECALL_TOOL_DESCRIPTION,
    RECALL_TOOL_NAME,
    RECALL_TOOL_PARAMETERS,
)

__all__ = ["ContextreeMiddleware"]

_LANGCHAIN_KEY = "langchain"
_ENCODER = msgspec.json.Encoder()

ModelResult = ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]


class ContextreeMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Agent middleware that stores the conversation in a contextree session and sends the
    model the compacted context.

    Args:
        session: a :class:`~contextree.integrations.core.ManagedSession`, or the path of a
            session file (opened with ``ManagedSession.open(path, **options)``).
        **options: ``ManagedSession`` options when ``session`` is a path (``model``,
            ``summarizer``, ``settings``, ``hooks``, ``context_window``, ``listener``).

    Works with ``invoke``/``stream`` and ``ainvoke``/``astream``. Put it first in
    ``middleware=[...]`` so the requests other middleware see are already compacted.
    """

    def __init__(
        self,
        session: ManagedSession | str | os.PathLike[str],
        *,
        recall: bool = True,
        **options: Any,
    ) -> None:
        super().__init__()
        if isinstance(session, ManagedSession):
            if options:
                raise TypeError("options go to ManagedSession.open; pass a path, not a session")
            self.session = session
        else:
            self.session = ManagedSession.open(session, **options)
        # The recall tool (issue 26), registered with the agent by create_agent and listed in
        # a request only while the session's path has a compaction.
        self.tools = [_recall_tool(self.session)] if recall else []
        self.session.offer_recall = recall
        self.session.auto_recall = recall
        self._known: set[str] | None = None  # LangChain ids the session holds (read lazily)
        self._previous: list[LlmMessage] = []  # keeps the dicts _by_identity's ids name alive
        self._by_identity: dict[int, BaseMessage] = {}
        self._by_value: dict[bytes, BaseMessage] = {}

    # -- LangChain hooks ---------------------------------------------------------------------

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResult:
        """Store new messages, compact when needed, call the model on the session context."""
        self._store(request.state.get("messages", ()))
        self.session.maybe_compact_sync()
        try:
            response = handler(self._request(request))
        except Exception as exc:
            if not _is_overflow(exc) or self.session.maybe_compact_sync(overflow=True) is None:
                raise
            response = handler(self._request(request))
        return self._stored_response(response)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResult:
        """The async twin of :meth:`wrap_model_call` (``ainvoke`` / ``astream``)."""
        self._store(request.state.get("messages", ()))
        await self.session.maybe_compact()
        try:
            response = await handler(self._request(request))
        except Exception as exc:
            if not _is_overflow(exc) or await self.session.maybe_compact(overflow=True) is None:
                raise
            response = await handler(self._request(request))
        return self._stored_response(response)

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Store what came after the last model call (e.g. a ``return_direct`` tool result)."""
        self._store(state.get("messages", ()))
        return None

    async def aafter_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """The async twin of :meth:`after_agent`."""
        self._store(state.get("messages", ()))
        return None

    # -- the session -------------------------------------------------------------------------

    def context(self) -> list[BaseMessage]:
        """What the model is sent next (without system messages), as LangChain messages.

        The messages are shared with the previous request where the pi message is the same
        object (the session's context is stable between turns, and converting a long
        context anew costs tens of milliseconds); treat them as read-only, as LangChain
        treats the state's messages it passes in requests.
        """
        llm = self.session.llm_messages()
        # Most messages are the very dicts of the last request, found by identity (the dicts
        # of the last request are held in ``_previous``, so their ids cannot be reused). Some
        # are rebuilt every time (a pruned result's placeholder, a repaired call): those are
        # found by value. ``map`` keeps the per-message work in C: a long context costs well
        # under a millisecond when nothing changed.
        ids = list(map(id, llm))
        found: list[BaseMessage | None] = list(map(self._by_identity.get, ids))
        misses = [index for index, hit in enumerate(found) if hit is None]
        by_value: dict[bytes, BaseMessage] = {}
        if misses:
            values = list(map(_ENCODER.encode, (llm[index] for index in misses)))
            for index, value in zip(misses, values, strict=True):
                converted = self._by_value.get(value) or by_value.get(value)
                if converted is None:
                    converted = to_langchain(llm[index])
                by_value[value] = converted
                found[index] = converted
        messages = cast("list[BaseMessage]", found)
        # Only what this context holds: the caches never grow past it.
        self._previous = llm
        self._by_identity = dict(zip(ids, messages, strict=True))
        self._by_value = by_value
        return messages

    def _request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        system = [m for m in request.state.get("messages", ()) if isinstance(m, SystemMessage)]
        messages: list[AnyMessage] = [*system, *self.context()]  # type: ignore[list-item]
        if self.tools and not self.session.recall_offered():
            tools = [t for t in request.tools if not any(t is own for own in self.tools)]
            return request.override(messages=messages, tools=tools)
        return request.override(messages=messages)

    def _stored_response(self, response: ModelResponse[Any]) -> ModelResponse[Any]:
        # The reply goes into the file now, with its usage, so the next threshold check
        # measures it. An id is given where the model set none: add_messages would give it a
        # fresh one, and the next sync would store the reply twice.
        result = [
            message if message.id else message.model_copy(update={"id": f"lc_{uuid.uuid4()}"})
            for message in response.result
        ]
        self._store(result)
        if all(new is old for new, old in zip(result, response.result, strict=True)):
            return response
        return ModelResponse(result=result, structured_response=response.structured_response)

    def _known_ids(self) -> set[str]:
        if self._known is None:
            # Once per middleware: the LangChain ids already on the session's branch, so a
            # state restored by a checkpointer (or a re-run) is not stored twice.
            known: set[str] = set()
            for entry in self.session.tree.get_branch():
                message = entry_message(entry)
                if message is None:
                    continue
                fields = message.get(_LANGCHAIN_KEY)
                if isinstance(fields, dict) and isinstance(fields.get("id"), str):
                    known.add(fields["id"])
            self._known = known
        return self._known

    def _store(self, messages: Iterable[BaseMessage]) -> None:
        known = self._known_ids()
        new: list[BaseMessage] = []
        for message in messages:
            if isinstance(message, SystemMessage):
                continue
            if message.id is None:
                # LangGraph's add_messages gives every message it keeps an id; one without
                # gets one here, the same way, so it is recognized on the next call.
                message.id = str(uuid.uuid4())
            if message.id not in known:
                new.append(message)
        if not new:
            return
        self.session.append(self._convert(new))
        known.update(message.id for message in new if message.id is not None)

    def _convert(self, messages: Sequence[BaseMessage]) -> list[StoredMessage]:
        names = self._tool_names(messages)
        provider, model = self.session.provider_and_model
        converted: list[StoredMessage] = []
        for message in messages:
            pi = from_langchain(message, tool_names=names)
            if is_assistant_message(pi) and provider and pi.get("provider") == "langchain":
                pi = {**pi, "provider": provider, "model": model}
            converted.append(pi)
        return converted

    def _tool_names(self, messages: Sequence[BaseMessage]) -> dict[str, str]:
        names: dict[str, str] = {}
        for message in messages:
            if isinstance(message, AIMessage):
                names.update((c["id"], c["name"]) for c in message.tool_calls if c["id"])
        return names


def _recall_tool(session: ManagedSession) -> BaseTool:
    """``recall`` as a LangChain tool on ``session`` (see :mod:`contextree.recall.tool`)."""

    def recall(query: str, limit: int = 5) -> str:
        return session.recall_text(query, limit)

    async def arecall(query: str, limit: int = 5) -> str:
        return await asyncio.to_thread(session.recall_text, query, limit)

    return StructuredTool.from_function(
        func=recall,
        coroutine=arecall,
        name=RECALL_TOOL_NAME,
        description=RECALL_TOOL_DESCRIPTION,
        args_schema=dict(RECALL_TOOL_PARAMETERS),
    )


def _is_overflow(exc: BaseException) -> bool:
    # ChatOpenAI and ChatAnthropic raise ContextOverflowError; other providers' errors are
    # recognized by pi's overflow wording.
    return isinstance(exc, ContextOverflowError) or is_overflow_text(str(exc))
