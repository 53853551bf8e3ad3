"""The plain field-to-field mapping between pydantic-ai parts and pi messages, both ways,
without the extra data that makes a round trip exact (:mod:`.to_pi` and :mod:`.from_pi` add
it, and compare with these to find what only one side has)."""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any, assert_never, cast

from pydantic_ai.messages import (
    BaseToolReturnPart,
    BinaryContent,
    CompactionPart,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    RetryFeedbackPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from contextree.entries.types import (
    JsonDict,
    StoredBlock,
    StoredMessage,
    is_image_content,
    is_text_content,
    is_tool_call_content,
    known_block,
)
from contextree.integrations.pydantic_ai.convert_shared import (
    API_BY_PROVIDER,
    ERROR_OUTCOMES,
    EXTRA_KEY,
    FINISH_BY_STOP,
    RESPONSE_PART,
    STOP_BY_FINISH,
    USER_CONTENT,
    from_ms,
    to_ms,
)

__all__ = [
    "basic_pi_to_request_part",
    "basic_pi_to_response",
    "basic_pi_to_response_part",
    "basic_request_part_to_pi",
    "basic_response_part_to_pi",
    "basic_response_to_pi",
    "blocks_text",
    "pi_content_to_user",
    "plain_json",
    "response_part_from_pi",
    "tool_return_text",
    "usage_from_pi",
    "usage_to_pi",
    "user_content_to_pi",
    "user_item",
]


def basic_request_part_to_pi(part: ModelRequestPart) -> StoredMessage:
    if isinstance(part, UserPromptPart):
        return {
            "role": "user",
            "content": user_content_to_pi(part.content),
            "timestamp": to_ms(part.timestamp),
        }
    if isinstance(part, BaseToolReturnPart):
        text, as_json = tool_return_text(part.content)
        message: StoredMessage = {
            "role": "toolResult",
            "toolCallId": part.tool_call_id,
            "toolName": part.tool_name,
            "content": [{"type": "text", "text": text}],
            "isError": part.outcome in ERROR_OUTCOMES,
            "timestamp": to_ms(part.timestamp),
        }
        if as_json:
            message[EXTRA_KEY] = {"json": True}
        return message
    if isinstance(part, RetryFeedbackPart):
        return {
            "role": "user",
            "content": part.model_response(),
            "timestamp": to_ms(part.timestamp),
        }
    if isinstance(part, CompactionPart):
        return {
            "role": "compactionSummary",
            "summary": part.content or "",
            "tokensBefore": 0,
            "timestamp": 0,
        }
    raise TypeError(f"no pi message for a pydantic-ai {type(part).__name__}")


def user_content_to_pi(content: str | Sequence[UserContent]) -> str | list[StoredBlock]:
    if isinstance(content, str):
        return content
    blocks: list[StoredBlock] = []
    for item in content:
        if isinstance(item, str):
            blocks.append({"type": "text", "text": item})
        elif isinstance(item, BinaryContent) and item.is_image:
            blocks.append({"type": "image", "data": item.base64, "mimeType": item.media_type})
        else:
            # pi has no block for it (a URL, a document, audio...): a text block names it for
            # pi's model, and the item rides along whole.
            dumped = USER_CONTENT.dump_python(item, mode="json")
            url = dumped.get("url")
            label = f"[{dumped.get('kind', 'content')}{f': {url}' if url else ''}]"
            blocks.append({"type": "text", "text": label, EXTRA_KEY: {"item": dumped}})
    return blocks


def tool_return_text(content: Any) -> tuple[str, bool]:
    if isinstance(content, str):
        return content, False
    text = json.dumps(content, ensure_ascii=False) if plain_json(content) else None
    if text is not None:
        return text, True
    return str(content), False


def plain_json(value: Any) -> bool:
    if value is None or isinstance(value, str | bool | int | float):
        return True
    if isinstance(value, list):
        return all(plain_json(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain_json(v) for k, v in value.items())
    return False


def basic_response_to_pi(
    message: ModelResponse, content: list[StoredBlock] | None = None
) -> StoredMessage:
    if content is None:
        content = [
            block
            for part in message.parts
            if (block := basic_response_part_to_pi(part)) is not None
        ]
    stop = STOP_BY_FINISH.get(message.finish_reason or "")
    if stop is None:
        stop = "toolUse" if any(is_tool_call_content(b) for b in content) else "stop"
    provider = message.provider_name or "pydantic-ai"
    out: StoredMessage = {
        "role": "assistant",
        "content": content,
        "api": API_BY_PROVIDER.get(provider, "pydantic-ai"),
        "provider": provider,
        "model": message.model_name or "",
        "usage": usage_to_pi(message.usage),
        "stopReason": stop,
        "timestamp": to_ms(message.timestamp),
    }
    return out


def basic_response_part_to_pi(part: ModelResponsePart) -> StoredBlock | None:
    block: StoredBlock
    if isinstance(part, TextPart):
        block = {"type": "text", "text": part.content}
    elif isinstance(part, ThinkingPart):
        block = {"type": "thinking", "thinking": part.content}
        if part.signature is not None:
            block["thinkingSignature"] = part.signature
    elif isinstance(part, ToolCallPart):
        block = {
            "type": "toolCall",
            "id": part.tool_call_id,
            "name": part.tool_name,
            "arguments": part.args_as_dict(),
        }
    else:
        return None
    return block


def usage_to_pi(usage: RequestUsage) -> JsonDict:
    cached = usage.cache_read_tokens + usage.cache_write_tokens
    return {
        "input": max(0, usage.input_tokens - cached),
        "output": usage.output_tokens,
        "cacheRead": usage.cache_read_tokens,
        "cacheWrite": usage.cache_write_tokens,
        "totalTokens": max(usage.input_tokens, cached) + usage.output_tokens,
    }


def basic_pi_to_request_part(message: StoredMessage) -> ModelRequestPart:
    role = message["role"]
    when = from_ms(message.get("timestamp"))
    if role == "user":
        return UserPromptPart(pi_content_to_user(message.get("content")), timestamp=when)
    if role == "toolResult":
        extra = message.get(EXTRA_KEY)
        as_json = isinstance(extra, dict) and extra.get("json") is True
        text = blocks_text(message.get("content"))
        content: Any = text
        if as_json:
            try:
                content = json.loads(text)
            except ValueError:
                content = text  # redacted or edited since: the text is what there is
        return ToolReturnPart(
            tool_name=str(message.get("toolName", "")),
            content=content,
            tool_call_id=str(message.get("toolCallId", "")),
            timestamp=when,
            outcome="failed" if message.get("isError") else "success",
        )
    if role == "compactionSummary":
        return CompactionPart(content=str(message.get("summary", "")))
    raise ValueError(f"no pydantic-ai part for a pi {role!r} message")


def blocks_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(block.get("text", ""))
        for block in content
        if is_text_content(block)
    )


def pi_content_to_user(content: object) -> str | list[UserContent]:
    if isinstance(content, str):
        return content
    items: list[UserContent] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        extra = block.get(EXTRA_KEY)
        if isinstance(extra, dict) and "item" in extra:
            items.append(user_item(extra["item"]))
        elif is_text_content(block):
            items.append(str(block.get("text", "")))
        elif is_image_content(block):
            data = base64.b64decode(str(block.get("data", "")))
            items.append(BinaryContent(data=data, media_type=str(block.get("mimeType", ""))))
    return items


def user_item(dumped: Any) -> UserContent:
    return USER_CONTENT.validate_python(dumped)


def basic_pi_to_response(message: StoredMessage) -> ModelResponse:
    provider = message.get("provider")
    provider_name = provider if isinstance(provider, str) and provider else None
    parts: list[ModelResponsePart] = []
    for block in message.get("content") or []:
        if isinstance(block, dict):
            part = response_part_from_pi(block, provider_name)
            if part is not None:
                parts.append(part)
    model = message.get("model")
    stop = message.get("stopReason")
    return ModelResponse(
        parts=parts,
        usage=usage_from_pi(message.get("usage")),
        model_name=model if isinstance(model, str) and model else None,
        timestamp=from_ms(message.get("timestamp")),
        provider_name=provider_name,
        finish_reason=FINISH_BY_STOP.get(stop) if isinstance(stop, str) else None,
    )


def response_part_from_pi(block: StoredBlock, provider: str | None) -> ModelResponsePart | None:
    part = basic_pi_to_response_part(block, provider)
    leftovers = block.get(EXTRA_KEY)
    if part is not None and isinstance(leftovers, dict) and leftovers:
        dump = RESPONSE_PART.dump_python(part, mode="json")
        part = RESPONSE_PART.validate_python({**dump, **leftovers})
    return part


def basic_pi_to_response_part(
    block: StoredBlock, provider: str | None
) -> ModelResponsePart | None:
    known = known_block(block)
    if known is None:
        return None  # a block type this format does not define: no part
    match known["type"]:
        case "text":
            return TextPart(str(known.get("text", "")))
        case "thinking":
            signature = known.get("thinkingSignature")
            if isinstance(signature, str) and signature:
                # pydantic-ai sends a signature back only to the provider that made it.
                return ThinkingPart(
                    str(known.get("thinking", "")), signature=signature, provider_name=provider
                )
            return ThinkingPart(str(known.get("thinking", "")))
        case "toolCall":
            arguments: object = known.get("arguments")
            return ToolCallPart(
                tool_name=str(known.get("name", "")),
                args=cast(dict[str, Any], arguments) if isinstance(arguments, dict) else {},
                tool_call_id=str(known.get("id", "")),
            )
        case "image" | "redactedThinking":
            return None  # no response part holds them
        case _:
            assert_never(known)


def usage_from_pi(usage: object) -> RequestUsage:
    if not isinstance(usage, dict):
        return RequestUsage()

    def number(key: str) -> int:
        value = usage.get(key)
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0

    cache_read, cache_write = number("cacheRead"), number("cacheWrite")
    return RequestUsage(
        input_tokens=number("input") + cache_read + cache_write,
        output_tokens=number("output"),
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
    )
