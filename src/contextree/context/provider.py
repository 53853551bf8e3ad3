"""The provider view: LLM messages as a provider will accept them.

``build_session_context`` and ``convert_to_llm`` give pi's context exactly, and pi's context can
hold things that OpenAI and Anthropic reject with a 400: a reply that failed or was aborted
part way (often with half a tool call), a tool call whose result never arrived (the agent
crashed or was stopped between the call and its result), a tool result whose call is gone,
a user message between a call and its result, or a tool-call id used twice.
:func:`provider_messages` turns ``convert_to_llm`` output into a list that every provider takes:

1. **Failed replies are left out.** An assistant message with ``stopReason`` ``error`` or
   ``aborted`` is dropped, and so are the tool results that answer it. The reply stays in the
   file; only the request leaves it out, so a retry is not the same failing request. (pi
   0.73.1 drops the reply when it sends, but keeps its results, which then answer nothing;
   oh-my-pi keeps the reply and answers its calls with ``aborted``.)
2. **Every tool call gets exactly one result, right after its message.** The results of an
   assistant message are the tool results up to the next assistant message (its *batch*),
   paired by id, first come first paired; they follow the assistant message directly, in the
   order of the calls. A call without a result gets a synthetic error result
   (:data:`MISSING_RESULT_TEXT`, ``isError`` and ``synthetic`` set). The call is not dropped:
   dropping it would rewrite a message the model wrote (Anthropic requires the latest
   assistant message with thinking to come back unmodified) and would hide that the model
   asked for something; an error result tells the model the truth, that the call gave
   nothing. pi 0.73.1 and oh-my-pi do the same when they send (``transformMessages`` of
   ``pi-ai``, "No result provided").
3. **Tool results with no call in their batch are dropped**: orphans (their call was
   compacted away or belongs to a dropped reply), duplicates, and results that arrive after the
   next assistant message.
4. **Messages between a call and its results move after the results**, in their order (a
   user's steering message, a ``!bash`` run, a hook's message): nothing the user said is lost,
   and the results are still adjacent to their call.
5. **Tool-call ids are unique**: a call whose id is empty or was already used in the request
   (some servers number calls ``call_0``, ``call_1`` in every reply) gets a fresh id, and its
   result the same one. Ids count as equal when they are equal after Anthropic's id rewrite
   (``[a-zA-Z0-9_-]``, at most 64 characters), so they also stay unique there.

6. **Old thinking can be left out** (``keep_thinking_turns``, the ``context.keepThinkingTurns``
   setting; off by default): see :mod:`contextree.context.thinking`.

An assistant message is never split: its thinking, text and tool-call blocks stay together,
in order (only a duplicate id is replaced). Consecutive messages of one role are left as they
are; the Anthropic mapping merges them (``contextree.llm.anthropic.to_anthropic_messages``).

Unchanged messages are returned as they are (the same dicts), changed ones are copies; treat the
result as read-only. The input is never modified.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any, Final

from contextree.context.convert import convert_message
from contextree.context.thinking import drop_old_thinking
from contextree.entries.types import (
    AssistantMessage,
    LlmMessage,
    StoredMessage,
    ToolCallContent,
    ToolResultMessage,
    is_assistant_message,
    is_tool_call_content,
    is_tool_result_message,
)

__all__ = ["DROPPED_STOP_REASONS", "MISSING_RESULT_TEXT", "ProviderView", "provider_messages"]

DROPPED_STOP_REASONS: Final = frozenset({"error", "aborted"})
"""Assistant stop reasons whose message (and its tool results) the provider view leaves out."""

MISSING_RESULT_TEXT: Final = "No result was recorded for this tool call; it may not have run."
"""The text of the synthetic error result given to a tool call that has none."""

_ID_CHARS: Final = re.compile(r"[^a-zA-Z0-9_-]")
_MAX_ID: Final = 64


def provider_messages(
    messages: Iterable[LlmMessage], *, keep_thinking_turns: int = -1
) -> list[LlmMessage]:
    """``messages`` (``convert_to_llm`` output) as a list a provider accepts (module docstring);
    thinking older than the last ``keep_thinking_turns`` turns left out (< 1: all kept)."""
    return drop_old_thinking(_provide(list(messages), set()), keep_thinking_turns)


class ProviderView:
    """:func:`provider_messages` of ``convert_to_llm(context)`` for a context that grows.

    A host asks for the provider view of a session's context before every model call, and
    between two calls the context usually only gains messages at its end. Everything before
    the last assistant message of the previous context is then known already: an assistant
    message's batch ends at the next assistant message, so only the last batch can change
    when messages are added, and it alone is worked out again. Any other change (a
    compaction, another branch, a pruned result: the context's messages are not the same
    objects) starts over. The result is exactly ``provider_messages(convert_to_llm(context))``
    (with the same ``keep_thinking_turns``).
    """

    __slots__ = ("_context", "_settled", "_settled_ids", "_settled_out")

    def __init__(self) -> None:
        self._context: list[StoredMessage] = []
        # context[:_settled] is done: it gave _settled_out, using _settled_ids; _context holds
        # those messages and the assistant message that closes them.
        self._settled = 0
        self._settled_out: list[LlmMessage] = []
        self._settled_ids: set[str] = set()

    def messages(
        self, context: Sequence[StoredMessage], *, keep_thinking_turns: int = -1
    ) -> list[LlmMessage]:
        """The provider view of ``context`` (a fresh list; the messages are read-only)."""
        settled, known = self._settled, self._context
        # The settled messages and the assistant message after them, which closes their last
        # batch: when that one is replaced (a user message, say), a later result may answer
        # a call of the settled part again.
        if len(known) > len(context) or not all(
            map(operator.is_, islice(context, len(known)), known)
        ):
            settled, self._settled_out, self._settled_ids = 0, [], set()
        converted: list[tuple[int, LlmMessage]] = []
        for position in range(settled, len(context)):
            llm_message = convert_message(context[position])
            if llm_message is not None:
                converted.append((position, llm_message))
        last = next(
            (i for i in range(len(converted) - 1, 0, -1) if is_assistant_message(converted[i][1])),
            0,
        )
        if last:
            # What comes before the last assistant message settles.
            self._settled_out = [
                *self._settled_out,
                *_provide([m for _, m in converted[:last]], self._settled_ids),
            ]
            settled = converted[last][0]
        self._context = list(islice(context, settled + 1)) if settled else []
        self._settled = settled
        rest = _provide([m for _, m in converted[last:]], set(self._settled_ids))
        # Thinking is cleared on the whole list: which turns are old changes with every turn.
        return drop_old_thinking([*self._settled_out, *rest], keep_thinking_turns)


def _provide(items: list[LlmMessage], used_ids: set[str]) -> list[LlmMessage]:
    """The provider loop over ``items``, taking and marking ids in ``used_ids``."""
    out: list[LlmMessage] = []
    index = 0
    while index < len(items):
        message = items[index]
        if not is_assistant_message(message):
            # Before the first assistant message: a tool result here answers nothing.
            if not is_tool_result_message(message):
                out.append(message)
            index += 1
            continue
        end = index + 1
        while end < len(items) and not is_assistant_message(items[end]):
            end += 1
        batch = items[index + 1 : end]
        # A damaged file can hold any JSON value here; only a string names a reason (pi
        # compares with ===, so anything else is an unknown reason and the reply is sent).
        if _text(message.get("stopReason")) in DROPPED_STOP_REASONS:
            out.extend(m for m in batch if not is_tool_result_message(m))
        else:
            out.extend(_answered(message, batch, used_ids))
        index = end
    return out


def _answered(
    message: AssistantMessage, batch: list[LlmMessage], used_ids: set[str]
) -> list[LlmMessage]:
    """The assistant message, one result per call in call order, then the batch's others."""
    content: object = message.get("content")  # a damaged file may hold anything here
    calls = (
        [(i, block) for i, block in enumerate(content) if is_tool_call_content(block)]
        if isinstance(content, list)
        else []
    )
    waiting: dict[str, list[int]] = {}
    for position, (_, block) in enumerate(calls):
        waiting.setdefault(_text(block.get("id")), []).append(position)
    answers: list[ToolResultMessage | None] = [None] * len(calls)
    others: list[LlmMessage] = []
    for item in batch:
        if is_tool_result_message(item):
            queue = waiting.get(_text(item.get("toolCallId")))
            if queue:
                answers[queue.pop(0)] = item
            continue  # an orphan or a duplicate
        others.append(item)

    new_content: list[Any] | None = None
    results: list[LlmMessage] = []
    for (block_index, block), answer in zip(calls, answers, strict=True):
        call_id = _unique_id(_text(block.get("id")), used_ids)
        if call_id != block.get("id"):
            if new_content is None:
                new_content = list(content) if isinstance(content, list) else []
            new_content[block_index] = {**block, "id": call_id}
        if answer is None:
            results.append(_missing_result(message, block, call_id))
        elif answer.get("toolCallId") != call_id:
            results.append({**answer, "toolCallId": call_id})
        else:
            results.append(answer)
    assistant: AssistantMessage = (
        message if new_content is None else {**message, "content": new_content}
    )
    return [assistant, *results, *others]


def _missing_result(
    message: AssistantMessage, call: ToolCallContent, call_id: str
) -> ToolResultMessage:
    result: ToolResultMessage = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": _text(call.get("name")),
        "content": [{"type": "text", "text": MISSING_RESULT_TEXT}],
        "isError": True,
    }
    if "timestamp" in message:
        result["timestamp"] = message["timestamp"]
    result["synthetic"] = True
    return result


def _id_key(call_id: str) -> str:
    """The id as Anthropic's mapping sends it (``contextree.llm.anthropic``)."""
    return _ID_CHARS.sub("_", call_id)[:_MAX_ID] or "tool_call"


def _unique_id(call_id: str, used_ids: set[str]) -> str:
    """``call_id``, or a fresh id when it is empty or taken; the id's key is marked used."""
    key = _id_key(call_id)
    if call_id and key not in used_ids:
        used_ids.add(key)
        return call_id
    number = 1
    while True:
        suffix = f"_{number}"
        candidate = key[: _MAX_ID - len(suffix)] + suffix
        if candidate not in used_ids:
            used_ids.add(candidate)
            return candidate
        number += 1


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
