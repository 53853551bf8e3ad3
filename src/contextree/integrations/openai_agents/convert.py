"""Conversion between OpenAI Agents SDK input items and pi messages (plain dicts both ways).

The SDK keeps a conversation as Responses-API input items, one per thing that happened; pi
keeps one message per turn of a speaker. The mapping:

| SDK item | pi message |
|---|---|
| ``message`` role ``user`` (string or ``input_text`` / data-URL ``input_image`` parts) | ``user`` |
| ``message`` role ``system`` / ``developer`` | ``developer`` (``sdkRole`` keeps which) |
| consecutive ``reasoning``, assistant ``message`` and ``function_call`` items | one ``assistant`` |
| ``function_call_output`` (string or ``input_text`` / ``input_image`` parts) | ``toolResult`` |

Inside an assistant message the blocks keep the order of the items: a ``reasoning`` item is a
``thinking`` block (summary parts joined by blank lines) whose ``thinkingSignature`` is the
item as JSON when it has an id or encrypted content (what pi itself stores for the Responses
API, so either side can send it back); each ``output_text`` part is a ``text`` block whose
``textSignature`` is the message item's id; a ``refusal`` part is a ``text`` block with
``refusal: true`` (it goes back to the SDK as ``output_text``: every server accepts text); a
``function_call`` is a ``toolCall`` block with the ``call_id`` as ``id``, the parsed
``arguments`` and the item id in ``itemId``. Going back, text that came after a tool call in
a pi message is put before the calls (a chat-completions reply is text, then calls; anything
else would split the calls from their results).

What pi cannot express is not stored: ``logprobs``, item ``status``, the SDK's
``provider_data`` (its model name goes to the message's ``model``) and the placeholder id
``__fake_id__`` the SDK gives items of chat-completions models. Every other item type (hosted
tool calls, computer use, MCP, ``item_reference``, server-side ``compaction``...) and
``input_file`` parts raise :class:`UnsupportedItemError` instead of being dropped.

Nothing here imports the SDK: items are the TypedDicts it defines, i.e. plain dicts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, assert_never

from contextree.entries.types import (
    LlmMessage,
    StoredBlock,
    StoredMessage,
    Usage,
    is_assistant_message,
    is_image_content,
    is_text_content,
    is_tool_call_content,
    known_block,
    known_message,
)

__all__ = [
    "FAKE_ITEM_ID",
    "UnsupportedItemError",
    "items_to_messages",
    "messages_to_items",
    "usage_from_sdk",
]

Item = dict[str, Any]
"""One SDK input item (``TResponseInputItem``): a JSON-shaped dict with a ``type`` or ``role``."""

FAKE_ITEM_ID: Final = "__fake_id__"
"""The id the SDK gives items that came from a chat-completions model; carries nothing."""

_DATA_URL: Final = re.compile(r"^data:(?P<mime>[^;,]+);base64,(?P<data>.*)$", re.DOTALL)
_ASSISTANT_SIDE: Final = frozenset({"reasoning", "function_call"})


class UnsupportedItemError(ValueError):
    """An SDK item (or part of one) that a pi session cannot hold; names where it is."""

    def __init__(self, index: int, what: str, hint: str = "") -> None:
        self.index = index
        self.what = what
        message = f"item {index}: {what} cannot be stored in a contextree (pi) session"
        super().__init__(f"{message}; {hint}" if hint else message)


# -- SDK items -> pi messages ------------------------------------------------------------------


def items_to_messages(
    items: Sequence[Mapping[str, Any]],
    *,
    now: Callable[[], int],
    model: str = "unknown",
    provider: str = "openai",
    api: str = "openai-responses",
    tool_names: Mapping[str, str] | None = None,
    usage: Usage | None = None,
) -> list[StoredMessage]:
    """pi messages for ``items``, in order.

    Args:
        now: the timestamp (ms) each new message gets.
        model: the assistant ``model`` when an item's ``provider_data`` names none.
        provider: the assistant messages' ``provider``.
        api: the assistant messages' ``api``.
        tool_names: names of calls made before ``items`` (``call_id`` -> tool name), so a
            ``function_call_output`` whose call was stored earlier gets its ``toolName``.
        usage: the measured usage of the model response these items end with; it goes on
            the last assistant message (the others get zeros).

    Raises:
        UnsupportedItemError: an item type or content part pi cannot express.
    """
    names = dict(tool_names or {})
    messages: list[StoredMessage] = []
    pending: list[tuple[int, Mapping[str, Any]]] = []  # the assistant-side run being grouped

    def flush() -> None:
        if pending:
            messages.append(_assistant(pending, now(), model, provider, api))
            pending.clear()

    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise UnsupportedItemError(index, f"a {type(item).__name__}", "expected a dict")
        kind = item.get("type", "message")
        role = item.get("role")
        if kind in _ASSISTANT_SIDE or (kind == "message" and role == "assistant"):
            if kind == "function_call":
                names[str(item.get("call_id"))] = str(item.get("name"))
            pending.append((index, item))
            continue
        flush()
        if kind == "function_call_output":
            messages.append(_tool_result(index, item, names, now()))
        elif kind == "message" and role == "user":
            messages.append(
                {"role": "user", "content": _user_content(index, item), "timestamp": now()}
            )
        elif kind == "message" and role in ("system", "developer"):
            content = _user_content(index, item)
            blocks = [_text(content)] if isinstance(content, str) else content
            messages.append(
                {"role": "developer", "content": blocks, "sdkRole": role, "timestamp": now()}
            )
        else:
            what = f'item type "{kind}"' if kind != "message" else f'a message with role "{role}"'
            raise UnsupportedItemError(
                index, what, "store messages, function calls and their outputs, and reasoning"
            )
    flush()
    if usage is not None:
        for message in reversed(messages):
            if is_assistant_message(message):
                message["usage"] = dict(usage)
                break
    return messages


def usage_from_sdk(input_tokens: int, output_tokens: int, cached_tokens: int = 0) -> Usage:
    """pi's usage for one SDK request: ``input`` excludes cache reads (pi §2.2)."""
    cached = min(max(cached_tokens, 0), input_tokens)
    return {
        "input": input_tokens - cached,
        "output": output_tokens,
        "cacheRead": cached,
        "cacheWrite": 0,
        "totalTokens": input_tokens + output_tokens,
        "cost": _zero_cost(),
    }


def _zero_cost() -> dict[str, float]:
    return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}


def _text(text: str) -> StoredBlock:
    return {"type": "text", "text": text}


def _image(index: int, part: Mapping[str, Any]) -> StoredBlock:
    url = part.get("image_url")
    match = _DATA_URL.match(url) if isinstance(url, str) else None
    if match is None:
        raise UnsupportedItemError(
            index, "an input_image that is not a base64 data: URL", "pass the image inline"
        )
    block: StoredBlock = {"type": "image", "data": match["data"], "mimeType": match["mime"]}
    detail = part.get("detail")
    if detail not in (None, "auto"):
        block["detail"] = detail
    return block


def _input_parts(index: int, parts: Iterable[Any]) -> list[StoredBlock]:
    blocks: list[StoredBlock] = []
    for part in parts:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind in ("input_text", "output_text", "text"):
            blocks.append(_text(str(part.get("text", ""))))
        elif kind == "input_image":
            blocks.append(_image(index, part))
        else:
            raise UnsupportedItemError(index, f'a content part of type "{kind}"')
    return blocks


def _user_content(index: int, item: Mapping[str, Any]) -> str | list[StoredBlock]:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return _input_parts(index, content)
    raise UnsupportedItemError(index, f"message content of type {type(content).__name__}")


def _tool_result(
    index: int, item: Mapping[str, Any], names: Mapping[str, str], timestamp: int
) -> StoredMessage:
    call_id = str(item.get("call_id"))
    output = item.get("output")
    if isinstance(output, str):
        content = [_text(output)]
    elif isinstance(output, list):
        content = _input_parts(index, output)
    else:
        raise UnsupportedItemError(index, f"function_call_output of type {type(output).__name__}")
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": names.get(call_id, ""),
        "content": content,
        "isError": False,
        "timestamp": timestamp,
    }


def _item_id(item: Mapping[str, Any]) -> str | None:
    value = item.get("id")
    return value if isinstance(value, str) and value and value != FAKE_ITEM_ID else None


def _assistant(
    run: list[tuple[int, Mapping[str, Any]]], timestamp: int, model: str, provider: str, api: str
) -> StoredMessage:
    blocks: list[StoredBlock] = []
    for index, item in run:
        kind = item.get("type", "message")
        if kind == "reasoning":
            blocks.append(_thinking(item))
        elif kind == "function_call":
            blocks.append(_tool_call(item))
        else:
            blocks.extend(_output_parts(index, item))
        provider_data = item.get("provider_data")
        if isinstance(provider_data, Mapping) and isinstance(provider_data.get("model"), str):
            model = provider_data["model"]
    calls = any(is_tool_call_content(block) for block in blocks)
    return {
        "role": "assistant",
        "content": blocks,
        "api": api,
        "provider": provider,
        "model": model,
        "usage": usage_from_sdk(0, 0),
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": timestamp,
    }


def _thinking(item: Mapping[str, Any]) -> StoredBlock:
    summary = item.get("summary") or []
    texts = [str(part.get("text", "")) for part in summary if isinstance(part, Mapping)]
    if not texts:  # models that expose raw reasoning text instead of a summary
        content = item.get("content") or []
        texts = [str(part.get("text", "")) for part in content if isinstance(part, Mapping)]
    signature = {key: value for key, value in item.items() if key != "provider_data"}
    if signature.get("id") == FAKE_ITEM_ID:
        del signature["id"]
    block: StoredBlock = {"type": "thinking", "thinking": "\n\n".join(texts)}
    if signature.keys() - {"type", "summary"}:
        # Only an item with something to send back (id, encrypted content, raw text) is
        # signed; plain summaries stay unsigned thinking, as other providers' thinking is.
        block["thinkingSignature"] = json.dumps(signature, ensure_ascii=False)
    return block


def _tool_call(item: Mapping[str, Any]) -> StoredBlock:
    raw = item.get("arguments")
    block: StoredBlock = {
        "type": "toolCall",
        "id": str(item.get("call_id")),
        "name": str(item.get("name")),
    }
    try:
        arguments = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except ValueError:
        arguments = None
    if isinstance(arguments, dict):
        block["arguments"] = arguments
    else:
        # pi wants an object; keep what the model wrote so the call goes back as it was.
        block["arguments"] = {}
        block["rawArguments"] = raw
    item_id = _item_id(item)
    if item_id is not None:
        block["itemId"] = item_id
    return block


def _output_parts(index: int, item: Mapping[str, Any]) -> list[StoredBlock]:
    content = item.get("content")
    if isinstance(content, str):
        parts: list[Any] = [{"type": "output_text", "text": content}]
    elif isinstance(content, list):
        parts = content
    else:
        raise UnsupportedItemError(index, f"message content of type {type(content).__name__}")
    item_id = _item_id(item)
    blocks: list[StoredBlock] = []
    for part in parts:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind in ("output_text", "input_text", "text"):
            block = _text(str(part.get("text", "")))
            annotations = part.get("annotations")
            if annotations:
                block["annotations"] = annotations
        elif kind == "refusal":
            block = {"type": "text", "text": str(part.get("refusal", "")), "refusal": True}
        else:
            raise UnsupportedItemError(index, f'an assistant content part of type "{kind}"')
        if item_id is not None:
            block["textSignature"] = item_id
        blocks.append(block)
    return blocks


# -- pi messages -> SDK items ------------------------------------------------------------------


def messages_to_items(messages: Iterable[LlmMessage]) -> list[Item]:
    """SDK input items for pi LLM messages (``user``, ``developer``, ``assistant``,
    ``toolResult``), in order; the inverse of :func:`items_to_messages`.

    Messages of any other role raise ``ValueError``: convert session messages with
    ``convert_to_llm`` (or take ``ManagedSession.llm_messages()``) first.
    """
    items: list[Item] = []
    for index, message in enumerate(messages):
        items.extend(_message_items(message, index))
    return items


class ItemCache:
    """:func:`messages_to_items` for a context asked for every turn, converting each message
    object once.

    Between two turns a session's LLM messages are mostly the very same dicts (stored
    messages are never changed in place; a pruned or repaired one is a new dict), so the items
    made for a message are remembered by its identity, the message held with them so that its
    ``id`` is not reused meanwhile. What a call did not ask for is forgotten at the next call.
    The items handed out are the same dicts each time: treat them as read-only (the SDK copies
    an item before it changes one; copying 2,700 items here made every turn pay for the
    garbage collector's passes over a large session).
    """

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[int, tuple[LlmMessage, list[Item]]] = {}

    def items(self, messages: Iterable[LlmMessage]) -> list[Item]:
        """What ``messages_to_items(messages)`` gives (same errors)."""
        known, kept = self._known, {}
        items: list[Item] = []
        for index, message in enumerate(messages):
            key = id(message)
            hit = known.get(key)
            if hit is None or hit[0] is not message:
                hit = (message, _message_items(message, index))
            kept[key] = hit
            items.extend(hit[1])
        self._known = kept
        return items


def _message_items(message: LlmMessage, index: int) -> list[Item]:
    known = known_message(message)
    if known is not None:
        match known["role"]:
            case "user":
                return [{"role": "user", "content": _to_input_content(known.get("content"))}]
            case "developer":
                sdk_role = known.get("sdkRole")
                return [
                    {
                        "role": sdk_role if sdk_role in ("system", "developer") else "developer",
                        "content": _to_input_content(known.get("content")),
                    }
                ]
            case "assistant":
                return _assistant_items(known.get("content") or [])
            case "toolResult":
                return [_output_item(known)]
            case (
                "bashExecution"
                | "pythonExecution"
                | "custom"
                | "hookMessage"
                | "branchSummary"
                | "compactionSummary"
                | "fileMention"
            ):
                pass  # a session role: convert_to_llm turns it into an LLM one first
            case _:
                assert_never(known)
    role = message.get("role")  # for the error only: a known session role or an unknown one
    raise ValueError(f"message {index}: role {role!r} is not an LLM message role")


def _to_input_part(block: Mapping[str, Any]) -> Item:
    if is_image_content(block):
        part: Item = {
            "type": "input_image",
            "image_url": f"data:{block.get('mimeType')};base64,{block.get('data')}",
            "detail": block.get("detail", "auto"),
        }
        return part
    return {"type": "input_text", "text": str(block.get("text", ""))}


def _to_input_content(content: Any) -> str | list[Item]:
    if isinstance(content, str):
        return content
    blocks = [block for block in content or [] if isinstance(block, Mapping)]
    return [_to_input_part(block) for block in blocks]


def _output_item(message: Mapping[str, Any]) -> Item:
    blocks = [block for block in message.get("content") or [] if isinstance(block, Mapping)]
    output: str | list[Item]
    if all(is_text_content(block) for block in blocks) and len(blocks) == 1:
        output = str(blocks[0].get("text", ""))
    elif not blocks:
        output = ""
    else:
        output = [_to_input_part(block) for block in blocks]
    return {
        "type": "function_call_output",
        "call_id": str(message.get("toolCallId")),
        "output": output,
    }


def _assistant_items(blocks: Iterable[Any]) -> list[Item]:
    items: list[Item] = []
    message: Item | None = None  # the message item consecutive text blocks go into
    for item in blocks:
        if not isinstance(item, Mapping):
            continue
        block = known_block(item)
        if block is None:
            message = None  # a block type this format does not define: no item, ends the text
            continue
        match block["type"]:
            case "text":
                # A refusal goes back as text: the SDK sends a refusal part as an assistant
                # message without content, which OpenAI-compatible servers need not accept.
                annotations: Any = block.get("annotations") or []
                part: Item = {
                    "type": "output_text",
                    "text": str(block.get("text", "")),
                    "annotations": list(annotations),
                }
                signature = block.get("textSignature")
                if message is None or message.get("id") != signature:
                    message = _message_item(signature)
                    items.append(message)
                message["content"].append(part)
            case "thinking":
                message = None
                items.append(_reasoning_item(block))
            case "toolCall":
                message = None
                items.append(_call_item(block))
            case "image" | "redactedThinking":
                message = None  # no SDK input item
            case _:
                assert_never(block)
    return _text_before_calls(items)


def _text_before_calls(items: list[Item]) -> list[Item]:
    """Text that followed a call moves before the first call: a chat-completions request
    holds one assistant message per reply (text, then calls), and the SDK's converter would
    otherwise start a second one between the calls and their results."""
    first_call = next((i for i, item in enumerate(items) if item["type"] == "function_call"), None)
    if first_call is None:
        return items
    late = [item for item in items[first_call:] if item["type"] == "message"]
    if not late:
        return items
    rest = [item for item in items[first_call:] if item["type"] != "message"]
    merged: list[Item] = []
    for item in items[:first_call] + late:
        previous = merged[-1] if merged else None
        same = previous is not None and previous["type"] == "message" == item["type"]
        if previous is not None and same and previous.get("id") == item.get("id"):
            previous["content"] = [*previous["content"], *item["content"]]
            continue
        merged.append(item)
    return merged + rest


def _message_item(signature: Any) -> Item:
    item: Item = {"type": "message", "role": "assistant", "content": [], "status": "completed"}
    # The Responses API wants an id on an output message; without ours, the SDK's placeholder.
    item["id"] = signature if isinstance(signature, str) and signature else FAKE_ITEM_ID
    return item


def _reasoning_item(block: Mapping[str, Any]) -> Item:
    text = str(block.get("thinking", ""))
    item: Item = {}
    signature = block.get("thinkingSignature")
    if isinstance(signature, str):
        try:
            parsed = json.loads(signature)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("type") == "reasoning":
            item = parsed
    if not item:
        item = {"type": "reasoning", "summary": []}
    summary = item.get("summary") or []
    joined = "\n\n".join(str(part.get("text", "")) for part in summary if isinstance(part, Mapping))
    if joined != text and not (not summary and _raw_text(item) == text):
        # The block's text changed (redacted, edited): it wins over the stored item.
        item["summary"] = [{"type": "summary_text", "text": text}] if text else []
        item.pop("content", None)
    item.setdefault("id", FAKE_ITEM_ID)
    return item


def _raw_text(item: Mapping[str, Any]) -> str:
    content = item.get("content") or []
    return "\n\n".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))


def _call_item(block: Mapping[str, Any]) -> Item:
    raw = block.get("rawArguments")
    arguments = raw if isinstance(raw, str) else json.dumps(block.get("arguments") or {})
    item: Item = {
        "type": "function_call",
        "call_id": str(block.get("id")),
        "name": str(block.get("name")),
        "arguments": arguments,
    }
    item_id = block.get("itemId")
    if isinstance(item_id, str) and item_id:
        item["id"] = item_id
    return item
