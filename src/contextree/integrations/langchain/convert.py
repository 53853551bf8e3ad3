"""Conversion between LangChain messages and pi messages, both ways.

LangChain side: ``HumanMessage``, ``AIMessage`` (``tool_calls``, ``usage_metadata``, reasoning
content blocks), ``ToolMessage``. pi side: ``user``, ``assistant``, ``toolResult`` dicts
(pi-behaviour.md §2). What both sides can express maps field to field:

================================  ==============================================================
LangChain                         pi
================================  ==============================================================
text / ``str`` content            ``text`` blocks (``str`` user content stays a ``str``)
image block (base64)              ``image {data, mimeType}``
reasoning block (``extras``       ``thinking {thinking, thinkingSignature?}``
``signature``)
``tool_calls`` ``{id, name,       ``toolCall {id, name, arguments}``
args}``
``invalid_tool_calls``            ``toolCall`` with ``arguments: {}`` and the raw text in
                                  ``rawArguments`` (the model's call is kept, not dropped)
``usage_metadata``                ``usage``: ``input`` = ``input_tokens`` - cache read - cache
                                  creation, ``cacheRead``, ``cacheWrite``, ``output``
``response_metadata`` model name  ``provider``, ``model``, ``api``, ``stopReason``
/ provider / finish reason
``ToolMessage`` ``tool_call_id``, ``toolCallId``, ``toolName``, ``isError``, ``details``
``name``, ``status``, JSON
``artifact``
message ``id``, ``name``          ``langchain: {id, name}`` (an extra key pi keeps and ignores)
``HumanMessage``                  ``developer`` (oh-my-pi's role, also what the Agents SDK
                                  adapter stores system items as): sent as user text, as
                                  contextree's own OpenAI mapping sends it
================================  ==============================================================

Everything pi has and LangChain has no field for (``timestamp``, ``api``, ``usage.cost``,
``errorMessage``, block keys such as ``textSignature``) travels in
``response_metadata["contextree"]`` (and in a block's ``extras``), so pi -> LangChain -> pi
gives back the same message. LangChain -> pi -> LangChain gives back the same content blocks,
tool calls, usage, ids and names; provider-specific ``response_metadata`` is not stored.

Nothing is dropped silently: a block neither side can carry (an image given only by URL, a
server-side tool call, a ``SystemMessage``, which pi keeps out of the session) raises
:class:`MessageConversionError`, naming the message and the block.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, assert_never, cast

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.messages.ai import InputTokenDetails, UsageMetadata

from contextree.entries.types import (
    JsonDict,
    LlmMessage,
    StoredBlock,
    StoredMessage,
    ToolCallContent,
    Usage,
    is_developer_message,
    is_tool_call_content,
    known_block,
    known_message,
)

__all__ = [
    "PI_METADATA_KEY",
    "MessageConversionError",
    "from_langchain",
    "from_langchain_messages",
    "to_langchain",
    "to_langchain_messages",
]

PI_METADATA_KEY = "contextree"
"""The ``response_metadata`` key holding the pi fields LangChain has no field for."""

_LANGCHAIN_KEY = "langchain"  # the pi message key holding the LangChain id and name

_USER_KEYS = frozenset({"role", "content", _LANGCHAIN_KEY})
_ASSISTANT_KEYS = frozenset({"role", "content", "provider", "model", _LANGCHAIN_KEY})
_TOOL_KEYS = frozenset(
    {"role", "content", "toolCallId", "toolName", "isError", "details", _LANGCHAIN_KEY}
)


class MessageConversionError(ValueError):
    """A message (or one of its blocks) that the other side cannot represent."""


def _now_ms() -> int:
    return int(time.time() * 1000)


# -- LangChain -> pi ---------------------------------------------------------------------------


def from_langchain(
    message: BaseMessage,
    *,
    now: Callable[[], int] = _now_ms,
    tool_names: Mapping[str, str] | None = None,
) -> StoredMessage:
    """The pi message for one LangChain message.

    Args:
        message: a ``HumanMessage``, ``AIMessage`` or ``ToolMessage``.
        now: the timestamp (ms) for a message that carries none from an earlier conversion.
        tool_names: tool-call id -> tool name, for a ``ToolMessage`` without ``name``.

    Raises:
        MessageConversionError: for a ``SystemMessage`` (system prompts are not session
            content), another message type, or a block pi cannot store.
    """
    if isinstance(message, HumanMessage):
        return _user_from_langchain(message, now)
    if isinstance(message, AIMessage):
        return _assistant_from_langchain(message, now)
    if isinstance(message, ToolMessage):
        return _tool_from_langchain(message, now, tool_names or {})
    if isinstance(message, SystemMessage):
        raise MessageConversionError(
            "a SystemMessage has no place in a pi session (pi keeps the system prompt out of "
            "the conversation); pass it as create_agent(system_prompt=...) instead"
        )
    raise MessageConversionError(
        f"{_describe(message)}: only HumanMessage, AIMessage and ToolMessage can be stored "
        "in a pi session"
    )


def from_langchain_messages(
    messages: Iterable[BaseMessage], *, now: Callable[[], int] = _now_ms
) -> list[StoredMessage]:
    """:func:`from_langchain` over a conversation; tool names come from the calls before."""
    names: dict[str, str] = {}
    converted: list[StoredMessage] = []
    for message in messages:
        if isinstance(message, AIMessage):
            names.update((call["id"], call["name"]) for call in message.tool_calls if call["id"])
        converted.append(from_langchain(message, now=now, tool_names=names))
    return converted


def _pi_extras(message: BaseMessage) -> JsonDict:
    extras = message.response_metadata.get(PI_METADATA_KEY)
    return dict(extras) if isinstance(extras, Mapping) else {}


def _langchain_fields(message: BaseMessage) -> JsonDict:
    fields: JsonDict = {}
    if message.id is not None:
        fields["id"] = message.id
    if message.name is not None:
        fields["name"] = message.name
    return fields


def _finish(
    message: BaseMessage, pi: JsonDict, base: JsonDict, now: Callable[[], int]
) -> StoredMessage:
    # pi's own fields first in pi's key order, then what an earlier conversion carried over.
    result: StoredMessage = {**base}
    for key, value in pi.items():
        result.setdefault(key, value)
    result.setdefault("timestamp", now())
    if fields := _langchain_fields(message):
        result[_LANGCHAIN_KEY] = fields
    return result


def _user_from_langchain(message: HumanMessage, now: Callable[[], int]) -> StoredMessage:
    content: str | list[StoredBlock]
    if isinstance(message.content, str):
        content = message.content
    else:
        content = _user_blocks(message, what=_describe(message))
    pi = _pi_extras(message)
    role = "developer" if pi.pop("role", None) == "developer" else "user"
    return _finish(message, pi, {"role": role, "content": content}, now)


def _user_blocks(message: BaseMessage, *, what: str) -> list[StoredBlock]:
    blocks: list[StoredBlock] = []
    for index, block in enumerate(message.content_blocks):
        kind = block.get("type")
        where = f"{what}, block {index}"
        if kind == "text":
            blocks.append(_with_extras({"type": "text", "text": block.get("text", "")}, block))
        elif kind == "image":
            blocks.append(_image_from_langchain(cast("Mapping[str, Any]", block), where=where))
        else:
            raise MessageConversionError(
                f"{where}: a {kind!r} block cannot be stored in a pi session "
                "(pi user and tool content holds text and base64 images)"
            )
    return blocks


def _image_from_langchain(block: Mapping[str, Any], *, where: str) -> StoredBlock:
    data = block.get("base64")
    mime = block.get("mime_type")
    if not isinstance(data, str) or not isinstance(mime, str):
        source = "a URL" if block.get("url") else "a file id" if block.get("file_id") else "no data"
        raise MessageConversionError(
            f"{where}: an image given by {source} cannot be stored in a pi session "
            "(pi stores images as base64 data with a MIME type)"
        )
    return _with_extras({"type": "image", "data": data, "mimeType": mime}, block)


def _with_extras(pi_block: StoredBlock, block: Mapping[str, Any]) -> StoredBlock:
    extras = block.get("extras")
    if isinstance(extras, Mapping):
        stored = extras.get(PI_METADATA_KEY)
        if isinstance(stored, Mapping):
            for key, value in stored.items():
                pi_block.setdefault(key, value)
    return pi_block


def _assistant_from_langchain(message: AIMessage, now: Callable[[], int]) -> StoredMessage:
    what = _describe(message)
    content: list[StoredBlock] = []
    blocks = list(message.content_blocks)
    # content_blocks lists the parsed tool calls but not always the invalid ones.
    listed = {b.get("id") for b in blocks if b.get("type") == "invalid_tool_call"}
    blocks += [
        cast("Any", call) for call in message.invalid_tool_calls if call.get("id") not in listed
    ]
    for index, block in enumerate(blocks):
        kind = block.get("type")
        raw = cast("Mapping[str, Any]", block)
        if kind == "text":
            content.append(_with_extras({"type": "text", "text": raw.get("text", "")}, raw))
        elif kind == "reasoning":
            content.append(_thinking_from_langchain(raw))
        elif kind == "tool_call":
            content.append(
                _with_extras(
                    {
                        "type": "toolCall",
                        "id": raw.get("id") or "",
                        "name": raw.get("name", ""),
                        "arguments": dict(raw.get("args") or {}),
                    },
                    raw,
                )
            )
        elif kind == "invalid_tool_call":
            # The model asked for a call whose arguments did not parse. Keep the call (its
            # result, or the provider view's synthetic one, tells the model it failed).
            content.append(
                {
                    "type": "toolCall",
                    "id": raw.get("id") or "",
                    "name": raw.get("name") or "",
                    "arguments": {},
                    "rawArguments": raw.get("args") or "",
                }
            )
        else:
            raise MessageConversionError(
                f"{what}, block {index}: a {kind!r} block cannot be stored in a pi session "
                "(pi assistant content holds text, thinking and tool calls)"
            )
    pi = _pi_extras(message)
    metadata = message.response_metadata
    provider = pi.pop("provider", None) or metadata.get("model_provider") or "langchain"
    model = pi.pop("model", None) or metadata.get("model_name") or "unknown"
    has_calls = any(is_tool_call_content(block) for block in content)
    base: StoredMessage = {
        "role": "assistant",
        "content": content,
        "api": pi.pop("api", None) or _api_name(str(provider)),
        "provider": provider,
        "model": model,
        "usage": _usage_from_langchain(message.usage_metadata, pi.pop("usage", None)),
        "stopReason": pi.pop("stopReason", None) or _stop_reason(metadata, has_calls),
    }
    return _finish(message, pi, base, now)


def _thinking_from_langchain(block: Mapping[str, Any]) -> StoredBlock:
    thinking: StoredBlock = {"type": "thinking", "thinking": block.get("reasoning", "")}
    extras = block.get("extras")
    if isinstance(extras, Mapping) and isinstance(extras.get("signature"), str):
        thinking["thinkingSignature"] = extras["signature"]
    return _with_extras(thinking, block)


def _api_name(provider: str) -> str:
    # The api names pi writes; LangChain's ChatOpenAI speaks chat completions by default.
    return "anthropic-messages" if provider == "anthropic" else "openai-completions"


def _stop_reason(metadata: Mapping[str, Any], has_calls: bool) -> str:
    finish = metadata.get("finish_reason") or metadata.get("stop_reason")
    if finish in ("length", "max_tokens"):
        return "length"
    if has_calls:
        return "toolUse"
    return "stop"


def _usage_from_langchain(usage: UsageMetadata | None, stored: object) -> Usage:
    if isinstance(stored, Mapping) and _usage_to_langchain(stored) == usage:
        return dict(stored)  # an earlier conversion's exact pi usage (cost and all)
    if usage is None:
        return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    details = usage.get("input_token_details") or {}
    cache_read = int(details.get("cache_read") or 0)
    cache_write = int(details.get("cache_creation") or 0)
    # LangChain counts cached input inside input_tokens; pi's "input" is the uncached part.
    fresh = max(int(usage.get("input_tokens") or 0) - cache_read - cache_write, 0)
    output = int(usage.get("output_tokens") or 0)
    return {
        "input": fresh,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": fresh + output + cache_read + cache_write,
    }


def _tool_from_langchain(
    message: ToolMessage, now: Callable[[], int], names: Mapping[str, str]
) -> StoredMessage:
    what = _describe(message)
    if isinstance(message.content, str):
        content: list[StoredBlock] = [{"type": "text", "text": message.content}]
    else:
        content = _user_blocks(message, what=what)
    pi = _pi_extras(message)
    base: StoredMessage = {
        "role": "toolResult",
        "toolCallId": message.tool_call_id,
        "toolName": message.name or names.get(message.tool_call_id, ""),
        "content": content,
    }
    if message.artifact is not None and _is_json(message.artifact):
        base["details"] = message.artifact
    elif "details" in pi:
        base["details"] = pi.pop("details")
    base["isError"] = message.status == "error"
    result = _finish(message, pi, base, now)
    # The LangChain name is the tool name: store it once, as pi's toolName.
    fields = result.get(_LANGCHAIN_KEY)
    if isinstance(fields, dict) and fields.get("name") == result["toolName"]:
        del fields["name"]
        if not fields:
            del result[_LANGCHAIN_KEY]
    return result


def _is_json(value: object) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def _describe(message: BaseMessage) -> str:
    ident = f" {message.id}" if message.id else ""
    return f"{type(message).__name__}{ident}"


# -- pi -> LangChain ---------------------------------------------------------------------------


def to_langchain(message: LlmMessage) -> BaseMessage:
    """The LangChain message for one pi ``user``, ``assistant`` or ``toolResult`` message
    (and ``developer``, which contextree sends as user text: a ``HumanMessage`` that
    remembers its role).

    Other roles (summaries, ``bashExecution``, custom messages) become one of these
    through ``contextree.context.convert_to_llm`` first.

    Raises:
        MessageConversionError: for another role or a content block LangChain's standard
            blocks cannot hold.
    """
    known = known_message(message)
    if known is not None:
        match known["role"]:
            case "user" | "developer":
                return _user_to_langchain(known)
            case "assistant":
                return _assistant_to_langchain(known)
            case "toolResult":
                return _tool_to_langchain(known)
            case (
                "bashExecution"
                | "pythonExecution"
                | "custom"
                | "hookMessage"
                | "branchSummary"
                | "compactionSummary"
                | "fileMention"
            ):
                pass  # a session role: the error below
            case _:
                assert_never(known)
    role = message.get("role")  # for the error only: a session role or an unknown one
    raise MessageConversionError(
        f"a pi {role!r} message has no LangChain counterpart; convert the context with "
        "contextree.context.convert_to_llm first"
    )


def to_langchain_messages(messages: Iterable[LlmMessage]) -> list[BaseMessage]:
    """:func:`to_langchain` over a list of LLM messages."""
    return [to_langchain(message) for message in messages]


def _identity(message: LlmMessage) -> tuple[str | None, str | None]:
    fields = message.get(_LANGCHAIN_KEY)
    if not isinstance(fields, Mapping):
        return None, None
    ident, name = fields.get("id"), fields.get("name")
    return (ident if isinstance(ident, str) else None, name if isinstance(name, str) else None)


def _leftovers(message: LlmMessage, known: frozenset[str]) -> JsonDict:
    return {key: value for key, value in message.items() if key not in known}


def _block_extras(block: Mapping[str, Any], known: frozenset[str]) -> dict[str, Any]:
    rest = {key: value for key, value in block.items() if key not in known}
    return {PI_METADATA_KEY: rest} if rest else {}


_TEXT_KEYS = frozenset({"type", "text"})
_IMAGE_KEYS = frozenset({"type", "data", "mimeType"})
_THINKING_KEYS = frozenset({"type", "thinking", "thinkingSignature"})
_CALL_KEYS = frozenset({"type", "id", "name", "arguments"})


def _text_to_langchain(block: Mapping[str, Any]) -> dict[str, Any]:
    """A pi text block as a v1 text block; keys LangChain has no place for go in ``extras``."""
    text: dict[str, Any] = {"type": "text", "text": block.get("text", "")}
    if extras := _block_extras(block, _TEXT_KEYS):
        text["extras"] = extras
    return text


def _blocks_to_langchain(content: Sequence[Any], *, what: str) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for index, item in enumerate(content):
        block = known_block(item)
        if block is not None:
            match block["type"]:
                case "text":
                    blocks.append(_text_to_langchain(block))
                    continue
                case "image":
                    image: dict[str, Any] = {
                        "type": "image",
                        "base64": block.get("data", ""),
                        "mime_type": block.get("mimeType", ""),
                    }
                    if extras := _block_extras(block, _IMAGE_KEYS):
                        image["extras"] = extras
                    blocks.append(image)
                    continue
                case "thinking" | "redactedThinking" | "toolCall":
                    pass  # not in user or tool-result content: the error below
                case _:
                    assert_never(block)
        raise MessageConversionError(
            f"{what}, block {index}: a {_block_kind(item)!r} block has no LangChain "
            "counterpart here"
        )
    return blocks


def _block_kind(block: object) -> object:
    """The ``type`` a block claims, for an error message (any value, or ``None``)."""
    return block.get("type") if isinstance(block, Mapping) else None


def _user_to_langchain(message: LlmMessage) -> HumanMessage:
    ident, name = _identity(message)
    raw = message.get("content", "")
    content: str | list[str | dict[str, Any]]
    if isinstance(raw, str):
        content = raw
    else:
        content = list(_blocks_to_langchain(raw, what="pi user message"))
    extras = _leftovers(message, _USER_KEYS)
    if is_developer_message(message):
        extras["role"] = "developer"
    metadata = _metadata(extras)
    return HumanMessage(content=content, id=ident, name=name, response_metadata=metadata)


def _metadata(extras: JsonDict) -> dict[str, Any]:
    return {PI_METADATA_KEY: extras} if extras else {}


def _assistant_to_langchain(message: LlmMessage) -> AIMessage:
    ident, name = _identity(message)
    # v1 standard blocks in pi's order (tool calls included, as v1 content holds them), marked
    # ``output_version: v1`` so ``content_blocks`` reads them back as they are. Chat models
    # turn v1 content into their wire format (ChatOpenAI drops reasoning for chat completions).
    content: list[str | dict[str, Any]] = []
    calls: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    blocks: Any = message.get("content") or []  # read as the file holds it
    for index, item in enumerate(blocks):
        block = known_block(item)
        if block is not None:
            match block["type"]:
                case "text":
                    content.append(_text_to_langchain(block))
                    continue
                case "thinking":
                    content.append(_thinking_to_langchain(block))
                    continue
                case "toolCall":
                    content.append(_call_to_langchain(block, calls, invalid))
                    continue
                case "image" | "redactedThinking":
                    pass  # not in an assistant message LangChain holds: the error below
                case _:
                    assert_never(block)
        raise MessageConversionError(
            f"pi assistant message, block {index}: a {_block_kind(item)!r} block has no "
            "LangChain counterpart"
        )
    metadata: dict[str, Any] = {
        "output_version": "v1",
        "model_provider": message.get("provider"),
        "model_name": message.get("model"),
    }
    metadata.update(_metadata(_leftovers(message, _ASSISTANT_KEYS)))
    return AIMessage(
        content=content,
        tool_calls=calls,
        invalid_tool_calls=invalid,
        usage_metadata=_usage_to_langchain(message.get("usage")),
        response_metadata=metadata,
        id=ident,
        name=name,
    )


def _call_to_langchain(
    block: ToolCallContent, calls: list[ToolCall], invalid: list[InvalidToolCall]
) -> dict[str, Any]:
    """The v1 block for a pi tool call, recorded in ``calls`` (or ``invalid``, for a call
    whose arguments did not parse: it keeps them as ``rawArguments``)."""
    stored: Any = block  # read as the file holds it: rawArguments is not a pi field
    if "rawArguments" in stored:
        bad = InvalidToolCall(
            type="invalid_tool_call",
            id=stored.get("id") or None,
            name=stored.get("name") or None,
            args=stored["rawArguments"],
            error=None,
        )
        invalid.append(bad)
        return dict(bad)
    call = ToolCall(
        type="tool_call",
        id=stored.get("id") or None,
        name=stored.get("name", ""),
        args=dict(stored.get("arguments") or {}),
    )
    entry: dict[str, Any] = dict(call)
    if extras := _block_extras(stored, _CALL_KEYS):
        entry["extras"] = extras
    calls.append(call)
    return entry


def _thinking_to_langchain(block: Mapping[str, Any]) -> dict[str, Any]:
    reasoning: dict[str, Any] = {"type": "reasoning", "reasoning": block.get("thinking", "")}
    extras: dict[str, Any] = {}
    if isinstance(block.get("thinkingSignature"), str):
        extras["signature"] = block["thinkingSignature"]
    extras.update(_block_extras(block, _THINKING_KEYS))
    if extras:
        reasoning["extras"] = extras
    return reasoning


def _usage_to_langchain(usage: object) -> UsageMetadata | None:
    if not isinstance(usage, Mapping):
        return None
    fresh = _count(usage.get("input"))
    cache_read = _count(usage.get("cacheRead"))
    cache_write = _count(usage.get("cacheWrite"))
    output = _count(usage.get("output"))
    total_input = fresh + cache_read + cache_write
    usage_metadata = UsageMetadata(
        input_tokens=total_input, output_tokens=output, total_tokens=total_input + output
    )
    details = InputTokenDetails()
    if cache_read:
        details["cache_read"] = cache_read
    if cache_write:
        details["cache_creation"] = cache_write
    if details:
        usage_metadata["input_token_details"] = details
    return usage_metadata


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _tool_to_langchain(message: LlmMessage) -> ToolMessage:
    ident, _name = _identity(message)
    blocks = _blocks_to_langchain(message.get("content") or [], what="pi toolResult message")
    content: str | list[str | dict[str, Any]]
    if len(blocks) == 1 and blocks[0]["type"] == "text" and "extras" not in blocks[0]:
        content = cast("str", blocks[0]["text"])
    elif not blocks:
        content = []
    else:
        content = list(blocks)
    status: Literal["success", "error"] = "error" if message.get("isError") else "success"
    return ToolMessage(
        content=content,
        tool_call_id=str(message.get("toolCallId", "")),
        name=message.get("toolName"),
        status=status,
        artifact=message.get("details"),
        id=ident,
        response_metadata=_metadata(_leftovers(message, _TOOL_KEYS)),
    )
