"""An OpenAI Agents SDK ``Session`` whose items live in a contextree session file.

The runner reads the history once per run (``get_items``), appends each turn as it settles
(``add_items``: the user input, then each model response with its tool outputs) and, on a
retried conversation request, pops what it wrote (``pop_item``). This class stores every item
as pi messages through a :class:`~contextree.integrations.core.ManagedSession`, checks the
compaction threshold after every append (with the token usage the SDK measured for the
response) and answers ``get_items`` with the compacted context.

A run that makes many tool calls keeps its whole history in memory between model calls; pass
:meth:`ContextreeSession.model_input_filter` as ``RunConfig(call_model_input_filter=...)`` so
a compaction made during the run also shortens the requests that follow it.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from agents.memory import SessionSettings
from agents.run_config import CallModelData, ModelInputData
from agents.tool import FunctionTool
from agents.tool_context import ToolContext

from contextree.context import convert_to_llm
from contextree.entries.types import (
    LlmMessage,
    StoredMessage,
    Usage,
    entry_message,
    is_assistant_message,
    is_branch_summary_message,
    is_compaction_summary_message,
    is_message_entry,
    is_tool_call_content,
)
from contextree.integrations.core import ManagedSession
from contextree.integrations.openai_agents.convert import (
    Item,
    ItemCache,
    items_to_messages,
    messages_to_items,
    usage_from_sdk,
)
from contextree.recall.tool import (
    RECALL_TOOL_DESCRIPTION,
    RECALL_TOOL_NAME,
    RECALL_TOOL_PARAMETERS,
)

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.run_context import RunContextWrapper

    from contextree.compaction.summarize import CompactionResult

__all__ = ["CLEAR_MARKER", "POP_MARKER", "ContextreeSession"]

CLEAR_MARKER: Final = "openai-agents.clear"
"""``customType`` of the root entry :meth:`ContextreeSession.clear_session` writes."""

POP_MARKER: Final = "openai-agents.pop"
"""``customType`` of the entry :meth:`ContextreeSession.pop_item` writes where the leaf went
back to when nothing of the popped message remains."""


class ContextreeSession:
    """An SDK session (``agents.memory.Session`` protocol) backed by a contextree session.

    Example::

        session = ContextreeSession.open("chat.jsonl", model="openai:gpt-4o")
        result = await Runner.run(agent, "hi", session=session,
                                  run_config=RunConfig(call_model_input_filter=session.model_input_filter))

    Args:
        managed: the contextree session to store items in.
        session_id: what the SDK calls the session; defaults to the file's session id.
        session_settings: the SDK's session settings (``limit``) for ``get_items``.
        provider: the ``provider`` assistant messages are stored with; default: the one of
            ``managed``'s model (``"openai"`` when it has none).
        api: the ``api`` assistant messages are stored with (the SDK's items are Responses-API
            items, whatever model produced them).
        model: the ``model`` assistant messages get when the SDK item names none; default:
            ``managed``'s model (``"unknown"`` when it has none).
        now: the clock (ms) for message timestamps.
    """

    def __init__(
        self,
        managed: ManagedSession,
        *,
        session_id: str | None = None,
        session_settings: SessionSettings | None = None,
        provider: str | None = None,
        api: str = "openai-responses",
        model: str | None = None,
        now: Callable[[], int] | None = None,
    ) -> None:
        self.managed = managed
        self.session_id = session_id if session_id is not None else managed.tree.session_id
        self.session_settings = session_settings
        managed_provider, managed_model = managed.provider_and_model
        self.provider = provider or managed_provider or "openai"
        self.api = api
        self.model = model or managed_model or "unknown"
        self._now = now if now is not None else _milliseconds
        self.compactions: list[CompactionResult] = []
        """What each compaction this object triggered produced, oldest first."""
        self._usage_seen: dict[int, int] = {}  # id(Usage of a run) -> request entries used
        self._items = ItemCache()  # the context's items, each message converted once

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        session_id: str | None = None,
        session_settings: SessionSettings | None = None,
        **options: Any,
    ) -> ContextreeSession:
        """Open (or create on first write) a session file; ``options`` go to
        :meth:`ManagedSession.open` (``model=``, ``summarizer=``, ``settings=``...)."""
        managed = ManagedSession.open(path, **options)
        return cls(managed, session_id=session_id, session_settings=session_settings)

    # -- the Session protocol ------------------------------------------------------------------

    async def get_items(
        self, limit: int | None = None, wrapper: RunContextWrapper[Any] | None = None
    ) -> list[TResponseInputItem]:
        """The compacted context as SDK items (summaries first, then the kept messages),
        provider-valid: every call is answered right after it. With ``limit`` (or the
        settings' ``limit``), the latest ``limit`` items, without a result whose call was cut
        off."""
        items = self._context_items()
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        if limit is not None:
            items = _without_orphan_outputs(items[-limit:] if limit > 0 else [])
        return cast("list[TResponseInputItem]", items)

    async def add_items(
        self, items: list[TResponseInputItem], wrapper: RunContextWrapper[Any] | None = None
    ) -> None:
        """Store ``items`` as pi messages, then compact when the threshold is crossed.

        The measured usage of the response these items come from (the run's latest request,
        read from ``wrapper``) goes on its assistant message, so the threshold uses real
        numbers; without a wrapper the contextree estimate is used.
        """
        if not items:
            return
        raw = [cast("Mapping[str, Any]", item) for item in items]
        messages = items_to_messages(
            raw,
            now=self._now,
            model=self.model,
            provider=self.provider,
            api=self.api,
            tool_names=self._tool_names(raw),
            usage=self._response_usage(raw, wrapper),
        )
        self.managed.append(messages)
        result = await self.managed.maybe_compact()
        if result is not None:
            self.compactions.append(result)

    async def pop_item(
        self, wrapper: RunContextWrapper[Any] | None = None
    ) -> TResponseInputItem | None:
        """Take back the most recent item; ``None`` when the branch holds none.

        The file is append-only: the leaf moves to the parent of the last message, and what
        remains of that message (an assistant message that held several items) is appended
        again as a sibling. The popped item stays in the file on the old branch. When nothing
        remains, a ``custom`` marker (:data:`POP_MARKER`, never sent to the model) is appended
        at the new position instead: a file opens on its last entry, so without it the next
        process (and pi) would find the popped item again.
        """
        tree = self.managed.tree
        for entry in reversed(tree.get_branch_view()):
            if not is_message_entry(entry):
                continue
            message = entry["message"]
            items = messages_to_items(convert_to_llm([message])) if message else []
            if not items:
                continue
            popped = items.pop()
            parent = entry.get("parentId")
            if parent is None:
                tree.reset_leaf()
            else:
                tree.branch(parent)
            if items:
                self.managed.append([_remainder(message, items)])
            else:
                tree.append_custom(POP_MARKER, {"sessionId": self.session_id})
            return cast("TResponseInputItem", popped)
        return None

    async def clear_session(self, wrapper: RunContextWrapper[Any] | None = None) -> None:
        """Start an empty conversation: a new root entry (a ``custom`` marker that never
        reaches the model) becomes the leaf. Nothing is deleted; the old conversation stays
        in the file as another branch, and pi opens the file on the new, empty one."""
        tree = self.managed.tree
        tree.reset_leaf()
        tree.append_custom(CLEAR_MARKER, {"sessionId": self.session_id})

    # -- compaction ----------------------------------------------------------------------------

    async def compact(self, instructions: str | None = None) -> CompactionResult:
        """Compact now (a manual compaction, with optional focus ``instructions``)."""
        result = await self.managed.compact(instructions)
        self.compactions.append(result)
        return result

    async def compact_after_overflow(self) -> CompactionResult | None:
        """Call when a run failed because the request was too long for the model: compacts
        (overflow trigger) so the next run fits. ``None`` when there was nothing to compact."""
        result = await self.managed.maybe_compact(overflow=True)
        if result is not None:
            self.compactions.append(result)
        return result

    def model_input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """A ``RunConfig.call_model_input_filter``: when the session was compacted during the
        run, the request carries the compacted context plus the items not stored yet,
        instead of the run's whole in-memory history. Otherwise the input is unchanged."""
        model_data = data.model_data
        sent = [cast("Mapping[str, Any]", item) for item in model_data.input]
        stored = self._context_items()
        if not stored or not self._has_summary():
            return model_data
        if sent and _key(sent[0]) == _key(stored[0]):
            return model_data  # already the compacted context (read at the start of the run)
        anchor = _key(stored[-1])
        for position in range(len(sent) - 1, -1, -1):
            if _key(sent[position]) == anchor:
                tail = [dict(item) for item in sent[position + 1 :]]
                replaced = cast("list[TResponseInputItem]", stored + tail)
                return ModelInputData(input=replaced, instructions=model_data.instructions)
        return model_data  # the stored tail is not in the request: leave it as the SDK made it

    # -- recall --------------------------------------------------------------------------------

    def recall_tool(self) -> FunctionTool:
        """The ``recall`` function tool, for ``Agent(tools=[...])``: enabled while the
        session's path has a compaction, and from then on the summary's wrapper mentions it;
        the result is bounded (:mod:`contextree.recall.tool`)."""
        managed = self.managed
        managed.offer_recall = True

        async def invoke(ctx: ToolContext[Any], arguments: str) -> str:
            try:
                data = json.loads(arguments or "{}")
            except ValueError:
                return 'recall: the arguments must be a JSON object with a "query" string.'
            query = data.get("query") if isinstance(data, dict) else None
            if not isinstance(query, str):
                return 'recall: the arguments must be a JSON object with a "query" string.'
            limit = data.get("limit")
            count = limit if isinstance(limit, int) and not isinstance(limit, bool) else 5
            return await asyncio.to_thread(managed.recall_text, query, count)

        def enabled(ctx: RunContextWrapper[Any], agent: Any) -> bool:
            return managed.recall_offered()

        return FunctionTool(
            name=RECALL_TOOL_NAME,
            description=RECALL_TOOL_DESCRIPTION,
            params_json_schema=dict(RECALL_TOOL_PARAMETERS),
            on_invoke_tool=invoke,
            strict_json_schema=False,
            is_enabled=enabled,
        )

    # -- helpers -------------------------------------------------------------------------------

    def _context_items(self) -> list[Item]:
        return self._items.items(self.managed.llm_messages())

    def _has_summary(self) -> bool:
        return any(
            is_compaction_summary_message(message) or is_branch_summary_message(message)
            for message in self.managed.context_messages()
        )

    def _tool_names(self, items: Sequence[Mapping[str, Any]]) -> dict[str, str]:
        """Names of the calls that ``items`` answers but that were stored before them."""
        wanted = {
            str(item.get("call_id")) for item in items if item.get("type") == "function_call_output"
        } - {str(item.get("call_id")) for item in items if item.get("type") == "function_call"}
        names: dict[str, str] = {}
        if not wanted:
            return names
        for entry in reversed(self.managed.tree.get_branch_view()):
            message = entry_message(entry)
            if not is_assistant_message(message):
                continue
            for block in message.get("content") or []:
                if is_tool_call_content(block):
                    call_id = str(block.get("id"))
                    if call_id in wanted and call_id not in names:
                        names[call_id] = str(block.get("name"))
            if wanted <= names.keys():
                break
        return names

    def _response_usage(
        self, items: Sequence[Mapping[str, Any]], wrapper: RunContextWrapper[Any] | None
    ) -> Usage | None:
        """The usage of the run's newest model request, once per request."""
        if wrapper is None or not any(_is_model_output(item) for item in items):
            return None
        entries = wrapper.usage.request_usage_entries
        key = id(wrapper.usage)
        if len(entries) <= self._usage_seen.get(key, 0):
            return None
        self._usage_seen = {key: len(entries)}  # one run at a time: forget older runs
        latest = entries[-1]
        details = latest.input_tokens_details
        cached = int(getattr(details, "cached_tokens", 0) or 0)
        return usage_from_sdk(latest.input_tokens, latest.output_tokens, cached)


def _milliseconds() -> int:
    return int(time.time() * 1000)


def _is_model_output(item: Mapping[str, Any]) -> bool:
    kind = item.get("type", "message")
    return kind in ("reasoning", "function_call") or item.get("role") == "assistant"


def _key(item: Mapping[str, Any]) -> tuple[str, ...]:
    """What identifies an item across our conversion and the SDK's own copy of it."""
    kind = str(item.get("type", "message"))
    if kind in ("function_call", "function_call_output"):
        return (kind, str(item.get("call_id")))
    if kind == "reasoning":
        summary = item.get("summary") or []
        return (kind, *(str(part.get("text", "")) for part in summary))
    content = item.get("content")
    if isinstance(content, str):
        texts = [content]
    else:
        texts = [
            str(part.get("text", part.get("refusal", "")))
            for part in content or []
            if isinstance(part, Mapping)
        ]
    return (kind, str(item.get("role")), *texts)


def _without_orphan_outputs(items: list[Item]) -> list[Item]:
    """``items`` without the results whose call is not among them (a limit cut it off)."""
    calls = {item.get("call_id") for item in items if item.get("type") == "function_call"}
    return [
        item
        for item in items
        if item.get("type") != "function_call_output" or item.get("call_id") in calls
    ]


def _prefix(message: StoredMessage, blocks: list[Any], count: int) -> LlmMessage:
    """``message`` (an LLM message as stored) with only its first ``count`` blocks."""
    return cast("LlmMessage", {**message, "content": blocks[:count]})


def _remainder(message: StoredMessage, items: list[Item]) -> StoredMessage:
    """``message`` with only the blocks that give ``items`` (a prefix of its items)."""
    blocks = list(message.get("content") or [])
    count = len(blocks)
    while count > 0 and messages_to_items([_prefix(message, blocks, count)]) != items:
        count -= 1
    rest = {**message, "content": blocks[:count]}
    if is_assistant_message(message):
        calls = any(is_tool_call_content(block) for block in rest["content"])
        rest["stopReason"] = "toolUse" if calls else "stop"
    return rest
