"""Conversion between pydantic-ai ``ModelMessage``s and pi session messages.

What both sides can express maps field to field:

| pydantic-ai | pi |
|---|---|
| ``ModelRequest`` > ``UserPromptPart`` (text, images as ``BinaryContent``) | ``user`` |
| ``ModelRequest`` > ``ToolReturnPart`` (``outcome`` failed/retried: ``isError``) | ``toolResult`` |
| ``ModelRequest`` > ``RetryFeedbackPart`` | ``user`` (the text the model is shown) |
| ``ModelRequest`` > ``CompactionPart`` (a summary no provider wrote) | ``compactionSummary`` |
| ``ModelResponse`` > ``TextPart``, ``ThinkingPart``, ``ToolCallPart`` | ``assistant`` blocks |
| ``ModelResponse.usage`` (input includes cached tokens) | ``usage`` (``input`` excludes them) |
| ``finish_reason`` ``stop``, ``length``, ``tool_call``, ``error`` | ``stopReason`` ``stop``, |
| | ``length``, ``toolUse``, ``error`` |

Timestamps are kept to the millisecond (pi's precision).

Everything only one side has travels along so that a round trip gives back what went in:

- pydantic-ai only (ids, ``run_id``, ``provider_details``, system prompts, request boundaries,
  parts pi has no block for): under the ``"pydanticAi"`` key of the pi message or block. pi
  ignores keys it does not know; contextree keeps them. System prompts and other parts pi has
  no message for ride on the first pi message of their request, with their positions.
- pi only (``api``, ``errorMessage``, tool ``details``, roles pydantic-ai has no part for):
  under ``metadata["contextree"]["pi"]`` of the ``ModelRequest`` / ``ModelResponse``, which
  pydantic-ai never sends to a model. A pi message pydantic-ai cannot express (``bashExecution``,
  ``custom``, ``branchSummary``...) becomes the user text contextree would send for it.

The text of a message is never copied into that extra data, so redacting what the session
stores (``contextree.security``) redacts all of it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, cast

import pydantic
from pydantic_ai.messages import (
    BaseToolReturnPart,
    BinaryContent,
    CompactionPart,
    FinishReason,
    ModelMessage,
    ModelRequest,
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

from contextree.context import convert_to_llm
from contextree.entries.types import AgentMessage, ContentBlock, JsonDict

__all__ = [
    "EXTRA_KEY",
    "METADATA_KEY",
    "ConversionCache",
    "model_messages_to_pi",
    "pi_to_model_messages",
]

EXTRA_KEY: Final = "pydanticAi"
"""Key of a pi message or content block that holds what only pydantic-ai has."""

METADATA_KEY: Final = "contextree"
"""Key of ``ModelRequest.metadata`` / ``ModelResponse.metadata`` that holds what only pi has."""

_REQUEST = pydantic.TypeAdapter(ModelRequest)
_RESPONSE = pydantic.TypeAdapter(ModelResponse)
_REQUEST_PART = pydantic.TypeAdapter(ModelRequestPart)
_USER_CONTENT = pydantic.TypeAdapter(UserContent)
_EMPTY_REQUEST: Final = _REQUEST.dump_python(ModelRequest(parts=[]), mode="json")
_RESPONSE_PART = pydantic.TypeAdapter(ModelResponsePart)

_API_BY_PROVIDER: Final = {
    "openai": "openai-completions",
    "azure": "openai-completions",
    "anthropic": "anthropic-messages",
    "google-gla": "google-generative-ai",
    "google-vertex": "google-vertex",
    "google": "google-generative-ai",
    "mistral": "mistral-conversations",
}
_STOP_BY_FINISH: Final[dict[str, str]] = {
    "stop": "stop",
    "length": "length",
    "tool_call": "toolUse",
    "content_filter": "error",
    "error": "error",
}
_FINISH_BY_STOP: Final[dict[str, FinishReason]] = {
    "stop": "stop",
    "length": "length",
    "toolUse": "tool_call",
    "error": "error",
    "aborted": "error",
}
_MISSING: Final = object()
_ERROR_OUTCOMES: Final = ("failed", "retried")
_MESSAGE_ROLES: Final = ("user", "toolResult", "compactionSummary")


# -- time ------------------------------------------------------------------------------------


def _ms(moment: datetime | None) -> int:
    if moment is None:
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def _datetime(ms: object) -> datetime:
    if isinstance(ms, bool) or not isinstance(ms, int | float):
        return datetime.fromtimestamp(0, UTC)
    return datetime.fromtimestamp(int(ms) / 1000, UTC)


# -- comparing dumps (what a round trip must give back) --------------------------------------


def _normalized(value: Any) -> Any:
    """A JSON dump with what pi cannot tell apart made equal: timestamps to the millisecond,
    tool-call arguments as an object whether they came as a JSON string or a dict."""
    if isinstance(value, dict):
        out = {key: _normalized(item) for key, item in value.items()}
        if out.get("part_kind") in ("tool-call", "builtin-tool-call") and isinstance(
            out.get("args"), str
        ):
            try:
                parsed = json.loads(out["args"])
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                out["args"] = parsed
        if isinstance(out.get("timestamp"), str):
            out["timestamp"] = _iso_ms(out["timestamp"])
        return out
    if isinstance(value, list):
        return [_normalized(item) for item in value]
    return value


def _iso_ms(text: str) -> str:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    return _datetime(_ms(moment)).isoformat()


def _leftovers(original: JsonDict, rebuilt: JsonDict, skip: Iterable[str] = ()) -> JsonDict:
    """The keys of ``original`` whose (normalized) values ``rebuilt`` does not give back."""
    skipped = set(skip)
    ours, theirs = _normalized(original), _normalized(rebuilt)
    return {
        key: value
        for key, value in original.items()
        if key not in skipped and ours[key] != theirs.get(key)
    }


# -- pydantic-ai -> pi -----------------------------------------------------------------------


@dataclass
class _RequestOut:
    """The pi messages of one ``ModelRequest`` while it is converted."""

    messages: list[AgentMessage] = field(default_factory=list)
    riders: list[tuple[int, JsonDict]] = field(default_factory=list)


def model_messages_to_pi(messages: Iterable[ModelMessage]) -> list[AgentMessage]:
    """pi messages (``user``, ``assistant``, ``toolResult``, ``compactionSummary``) for
    pydantic-ai messages; :func:`pi_to_model_messages` gives the originals back.

    Raises ``TypeError`` for an object that is not a ``ModelRequest`` or ``ModelResponse``.
    """
    out: list[AgentMessage] = []
    pending: list[JsonDict] = []  # requests with no part pi has a message for
    for message in messages:
        if isinstance(message, ModelResponse):
            converted = [_response_to_pi(message)]
        elif isinstance(message, ModelRequest):
            # After a reply (or at the start) a request begins by itself; only a request right
            # after another one needs its start marked.
            implied = not pending and (not out or out[-1].get("role") == "assistant")
            converted = _request_to_pi(message, implied_start=implied)
            if not converted:
                pending.append(_request_dump_without_parts(message, _REQUEST_PART_DUMPS(message)))
                continue
        else:
            raise TypeError(
                "expected a pydantic-ai ModelRequest or ModelResponse, "
                f"got {type(message).__name__}"
            )
        if pending:
            converted[0] = _with_extra(converted[0], {"requestsBefore": pending})
            pending = []
        out.extend(converted)
    if pending and out:
        out[-1] = _with_extra(out[-1], {"requestsAfter": pending})
    elif pending:
        raise ValueError(
            "these pydantic-ai messages hold only parts pi has no message for "
            "(system prompts, instruction deltas...); there is nothing to store them on"
        )
    return out


def _REQUEST_PART_DUMPS(message: ModelRequest) -> list[JsonDict]:
    return [_REQUEST_PART.dump_python(part, mode="json") for part in message.parts]


def _request_dump_without_parts(message: ModelRequest, parts: list[JsonDict]) -> JsonDict:
    dump = _REQUEST.dump_python(message, mode="json")
    dump["parts"] = parts
    return _strip_own_metadata(dump)


def _strip_own_metadata(dump: JsonDict) -> JsonDict:
    metadata = dump.get("metadata")
    if isinstance(metadata, dict) and METADATA_KEY in metadata:
        rest = {k: v for k, v in metadata.items() if k != METADATA_KEY}
        dump = {**dump, "metadata": rest or None}
    return dump


def _with_extra(message: AgentMessage, extra: JsonDict) -> AgentMessage:
    merged = {**message.get(EXTRA_KEY, {}), **extra}
    return {**message, EXTRA_KEY: merged}


def _pi_records(metadata: dict[str, Any] | None) -> Any:
    if isinstance(metadata, dict):
        own = metadata.get(METADATA_KEY)
        if isinstance(own, dict):
            return own.get("pi")
    return None


def _restore_pi(message: AgentMessage, record: Any) -> AgentMessage:
    """Put back the pi-only fields :func:`pi_to_model_messages` recorded for this message."""
    if not isinstance(record, dict):
        return message
    out = {**message, **record.get("fields", {})}
    for key in record.get("absent", ()):
        out.pop(key, None)
    return out


def _is_carrier(part: ModelRequestPart) -> bool:
    return isinstance(part, UserPromptPart | BaseToolReturnPart | RetryFeedbackPart) or (
        isinstance(part, CompactionPart) and part.content is not None and part.id is None
    )


def _request_to_pi(message: ModelRequest, *, implied_start: bool) -> list[AgentMessage]:
    records = _pi_records(message.metadata)
    records = records if isinstance(records, list) else []
    carriers: list[ModelRequestPart] = []
    out = _RequestOut()
    for position, part in enumerate(message.parts):
        if _is_carrier(part):
            carriers.append(part)
        else:
            out.riders.append((position, _REQUEST_PART.dump_python(part, mode="json")))
    # One record per pi message the request was made from (None: nothing pi-only). A message
    # pydantic-ai has no part for comes back whole; its user text, if it had one, is skipped.
    cursor = 0
    for record in records:
        if isinstance(record, dict) and "message" in record:
            out.messages.append(record["message"])
            cursor += 0 if record.get("noPart") else 1
            continue
        if cursor < len(carriers):
            out.messages.append(_restore_pi(_request_part_to_pi(carriers[cursor]), record))
            cursor += 1
    out.messages.extend(_request_part_to_pi(part) for part in carriers[cursor:])
    if not out.messages:
        return []
    dump = _strip_own_metadata(_REQUEST.dump_python(message, mode="json"))
    meta = _leftovers(dump, _EMPTY_REQUEST, skip=("parts",))
    extra: JsonDict = {"request": meta} if meta or not implied_start else {}
    if out.riders:
        extra["riders"] = [[position, part] for position, part in out.riders]
    if extra:
        out.messages[0] = _with_extra(out.messages[0], extra)
    return out.messages


def _request_part_to_pi(part: ModelRequestPart) -> AgentMessage:
    message = _basic_request_part_to_pi(part)
    original = _REQUEST_PART.dump_python(part, mode="json")
    rebuilt = _REQUEST_PART.dump_python(_basic_pi_to_request_part(message), mode="json")
    leftovers = _leftovers(original, rebuilt)
    if leftovers:
        message[EXTRA_KEY] = {**message.get(EXTRA_KEY, {}), "part": leftovers}
    return message


def _basic_request_part_to_pi(part: ModelRequestPart) -> AgentMessage:
    if isinstance(part, UserPromptPart):
        return {
            "role": "user",
            "content": _user_content_to_pi(part.content),
            "timestamp": _ms(part.timestamp),
        }
    if isinstance(part, BaseToolReturnPart):
        text, as_json = _tool_return_text(part.content)
        message: AgentMessage = {
            "role": "toolResult",
            "toolCallId": part.tool_call_id,
            "toolName": part.tool_name,
            "content": [{"type": "text", "text": text}],
            "isError": part.outcome in _ERROR_OUTCOMES,
            "timestamp": _ms(part.timestamp),
        }
        if as_json:
            message[EXTRA_KEY] = {"json": True}
        return message
    if isinstance(part, RetryFeedbackPart):
        return {
            "role": "user",
            "content": part.model_response(),
            "timestamp": _ms(part.timestamp),
        }
    if isinstance(part, CompactionPart):
        return {
            "role": "compactionSummary",
            "summary": part.content or "",
            "tokensBefore": 0,
            "timestamp": 0,
        }
    raise TypeError(f"no pi message for a pydantic-ai {type(part).__name__}")


def _user_content_to_pi(content: str | Sequence[UserContent]) -> str | list[ContentBlock]:
    if isinstance(content, str):
        return content
    blocks: list[ContentBlock] = []
    for item in content:
        if isinstance(item, str):
            blocks.append({"type": "text", "text": item})
        elif isinstance(item, BinaryContent) and item.is_image:
            blocks.append({"type": "image", "data": item.base64, "mimeType": item.media_type})
        else:
            # pi has no block for it (a URL, a document, audio...): a text block names it for
            # pi's model, and the item rides along whole.
            dumped = _USER_CONTENT.dump_python(item, mode="json")
            url = dumped.get("url")
            label = f"[{dumped.get('kind', 'content')}{f': {url}' if url else ''}]"
            blocks.append({"type": "text", "text": label, EXTRA_KEY: {"item": dumped}})
    return blocks


def _tool_return_text(content: Any) -> tuple[str, bool]:
    if isinstance(content, str):
        return content, False
    text = json.dumps(content, ensure_ascii=False) if _plain_json(content) else None
    if text is not None:
        return text, True
    return str(content), False


def _plain_json(value: Any) -> bool:
    if value is None or isinstance(value, str | bool | int | float):
        return True
    if isinstance(value, list):
        return all(_plain_json(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain_json(v) for k, v in value.items())
    return False


def _response_to_pi(message: ModelResponse) -> AgentMessage:
    content: list[ContentBlock] = []
    riders: list[list[Any]] = []
    for position, part in enumerate(message.parts):
        block = _response_part_to_pi(part, message.provider_name)
        if block is None:
            riders.append([position, _RESPONSE_PART.dump_python(part, mode="json")])
        else:
            content.append(block)
    out = _basic_response_to_pi(message, content)
    original = _strip_own_metadata(_RESPONSE.dump_python(message, mode="json"))
    rebuilt = _RESPONSE.dump_python(_basic_pi_to_response(out), mode="json")
    extra: JsonDict = {}
    leftovers = _leftovers(original, rebuilt, skip=("parts",))
    if leftovers:
        extra["response"] = leftovers
    if riders:
        extra["riders"] = riders
    if extra:
        out[EXTRA_KEY] = extra
    return _restore_pi(out, _pi_records(message.metadata))


def _basic_response_to_pi(
    message: ModelResponse, content: list[ContentBlock] | None = None
) -> AgentMessage:
    if content is None:
        content = [
            block
            for part in message.parts
            if (block := _basic_response_part_to_pi(part)) is not None
        ]
    stop = _STOP_BY_FINISH.get(message.finish_reason or "")
    if stop is None:
        stop = "toolUse" if any(b["type"] == "toolCall" for b in content) else "stop"
    provider = message.provider_name or "pydantic-ai"
    out: AgentMessage = {
        "role": "assistant",
        "content": content,
        "api": _API_BY_PROVIDER.get(provider, "pydantic-ai"),
        "provider": provider,
        "model": message.model_name or "",
        "usage": _usage_to_pi(message.usage),
        "stopReason": stop,
        "timestamp": _ms(message.timestamp),
    }
    return out


def _response_part_to_pi(part: ModelResponsePart, provider: str | None) -> ContentBlock | None:
    block = _basic_response_part_to_pi(part)
    if block is None:
        return None
    original = _RESPONSE_PART.dump_python(part, mode="json")
    back = _basic_pi_to_response_part(block, provider)
    rebuilt = _RESPONSE_PART.dump_python(back, mode="json") if back is not None else {}
    leftovers = _leftovers(original, rebuilt)
    if leftovers:
        block[EXTRA_KEY] = leftovers
    return block


def _basic_response_part_to_pi(part: ModelResponsePart) -> ContentBlock | None:
    block: ContentBlock
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


def _usage_to_pi(usage: RequestUsage) -> JsonDict:
    cached = usage.cache_read_tokens + usage.cache_write_tokens
    return {
        "input": max(0, usage.input_tokens - cached),
        "output": usage.output_tokens,
        "cacheRead": usage.cache_read_tokens,
        "cacheWrite": usage.cache_write_tokens,
        "totalTokens": max(usage.input_tokens, cached) + usage.output_tokens,
    }


# -- pi -> pydantic-ai -----------------------------------------------------------------------


class ConversionCache:
    """Remembers what the last conversion made, so that converting a context that grew by a
    turn converts only the new turn. A list that starts with the last one (compared by value,
    which is cheap when the dicts are the same objects) reuses everything but its last run of
    messages; any other list reuses the runs whose pi messages are equal to ones converted
    last time. The messages it hands out again are the same objects: treat them as read-only
    (pydantic-ai treats its history as append-only)."""

    def __init__(self) -> None:
        self._runs: dict[tuple[Any, ...], tuple[list[AgentMessage], list[ModelMessage]]] = {}
        self._last: list[AgentMessage] = []
        self._last_start = 0  # where the last run of ``_last`` starts
        self._out: list[ModelMessage] = []
        self._out_before_last = 0  # how many of ``_out`` the runs before the last one made
        self.fresh: list[ModelMessage] = []
        """The messages the latest conversion made anew (not handed out before)."""


def pi_to_model_messages(
    messages: Iterable[AgentMessage], *, cache: ConversionCache | None = None
) -> list[ModelMessage]:
    """pydantic-ai messages for pi messages: ``assistant`` -> ``ModelResponse``, the messages
    between two replies -> one ``ModelRequest`` (or several, where they came from several).

    Roles pydantic-ai has no part for become the user text contextree sends for them
    (``convert_to_llm``); roles no model sees are kept in the request's metadata only.
    Raises ``ValueError`` naming the message for a value that is not a pi message.
    ``cache`` reuses what an earlier call converted (see :class:`ConversionCache`).
    """
    messages = list(messages)
    if cache is None:
        _check(messages, 0)
        return _convert_pi(messages)
    last = cache._last
    if last and len(messages) >= len(last) and messages[: len(last)] == last:
        # The same context and then some: only the last run can have grown.
        start = cache._last_start
        _check(messages, len(last))
        prefix = cache._out[: cache._out_before_last]
        runs = _runs(messages[start:])
        tail_start = start
    else:
        _check(messages, 0)
        prefix, runs, tail_start = [], _runs(messages), 0
    out = list(prefix)
    used: dict[tuple[Any, ...], tuple[list[AgentMessage], list[ModelMessage]]] = {}
    fresh: list[ModelMessage] = []
    before_last = len(out)
    for run in runs:
        key = tuple((m["role"], m.get("timestamp"), m.get("toolCallId")) for m in run)
        hit = cache._runs.get(key)
        if hit is not None and hit[0] == run:
            converted = hit[1]
        else:
            converted = _convert_pi(run)
            fresh.extend(converted)
        used[key] = (run, converted)
        before_last = len(out)
        out.extend(converted)
    tail_start += sum(len(run) for run in runs[:-1])
    if prefix:
        cache._runs.update(used)  # the prefix's runs stay; a full conversion drops stale ones
    else:
        cache._runs = used
    cache._last, cache._last_start = messages, tail_start
    cache._out, cache._out_before_last = out, before_last
    cache.fresh = fresh
    return out


def _check(messages: list[AgentMessage], start: int) -> None:
    for index in range(start, len(messages)):
        message = messages[index]
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ValueError(f"message {index}: expected a pi message (a dict with a role)")


def _runs(messages: list[AgentMessage]) -> list[list[AgentMessage]]:
    """``messages`` cut where :func:`_convert_pi` starts a new pydantic-ai message, so that
    each run converts on its own to what it gives within the whole list."""
    runs: list[list[AgentMessage]] = []
    current: list[AgentMessage] = []
    for message in messages:
        extra = message.get(EXTRA_KEY)
        extra = extra if isinstance(extra, dict) else {}
        starts = (
            message["role"] == "assistant"
            or (current and current[-1]["role"] == "assistant")
            or "request" in extra
            or "riders" in extra
            or "requestsBefore" in extra
        )
        if starts and current:
            runs.append(current)
            current = []
        current.append(message)
        if extra.get("requestsAfter"):
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return runs


def _convert_pi(messages: list[AgentMessage]) -> list[ModelMessage]:
    out: list[ModelMessage] = []
    parts: list[ModelRequestPart] = []
    records: list[Any] = []
    meta: JsonDict | None = None
    riders: list[Any] = []
    open_request = False

    def flush() -> None:
        nonlocal parts, records, meta, riders, open_request
        if open_request:
            out.append(_build_request(parts, records, meta, riders))
        parts, records, meta, riders, open_request = [], [], None, [], False

    for message in messages:
        extra = message.get(EXTRA_KEY)
        extra = extra if isinstance(extra, dict) else {}
        for request in extra.get("requestsBefore", ()):
            flush()
            out.append(_REQUEST.validate_python(request))
        if message["role"] == "assistant":
            flush()
            out.append(_pi_to_response(message))
        else:
            if "request" in extra or "riders" in extra or not open_request:
                flush()
                open_request = True
                meta = extra.get("request") if isinstance(extra.get("request"), dict) else None
                riders = list(extra.get("riders", ()))
            part, record = _pi_to_request_part(message)
            if part is not None:
                parts.append(part)
            records.append(record)
        if extra.get("requestsAfter"):
            flush()
            out.extend(_REQUEST.validate_python(r) for r in extra["requestsAfter"])
    flush()
    return out


def _build_request(
    parts: list[ModelRequestPart], records: list[Any], meta: JsonDict | None, riders: list[Any]
) -> ModelRequest:
    # Parts that produced no pi message go back where they were.
    for position, dumped in sorted(riders, key=lambda rider: int(rider[0])):
        parts.insert(min(int(position), len(parts)), _REQUEST_PART.validate_python(dumped))
    if meta:
        request = _REQUEST.validate_python({**meta, "parts": []})
        request.parts = parts
    else:
        request = ModelRequest(parts=parts)
    if any(record is not None for record in records):
        own = {"pi": records}
        request.metadata = {**(request.metadata or {}), METADATA_KEY: own}
    return request


def _pi_to_request_part(message: AgentMessage) -> tuple[ModelRequestPart | None, Any]:
    """The part for one pi message, and what to record so that it comes back as it was."""
    role = message["role"]
    if role in _MESSAGE_ROLES:
        part = _request_part_from_pi(message)
        return part, _pi_record(message, _basic_request_part_to_pi(part))
    # A role pydantic-ai has no part for: the user text contextree would send, if any.
    llm = convert_to_llm([message])
    record: JsonDict = {"message": message}
    if not llm:
        record["noPart"] = True
        return None, record
    return UserPromptPart(
        _pi_content_to_user(llm[0].get("content")), timestamp=_datetime(message.get("timestamp"))
    ), record


def _without_extra(value: Any) -> Any:
    if isinstance(value, list):
        return [
            {k: v for k, v in item.items() if k != EXTRA_KEY} if isinstance(item, dict) else item
            for item in value
        ]
    return value


def _pi_record(original: AgentMessage, rebuilt: AgentMessage) -> Any:
    """What pydantic-ai cannot hold of ``original``: the fields ``rebuilt`` (its basic pi form
    made back from pydantic-ai) lacks or has otherwise, and the keys it has that ``original``
    had not. ``None`` when there is nothing."""
    fields = {
        key: value
        for key, value in original.items()
        if key != EXTRA_KEY and _without_extra(rebuilt.get(key, _MISSING)) != _without_extra(value)
    }
    absent = [key for key in rebuilt if key != EXTRA_KEY and key not in original]
    if not fields and not absent:
        return None
    record: JsonDict = {}
    if fields:
        record["fields"] = fields
    if absent:
        record["absent"] = absent
    return record


def _request_part_from_pi(message: AgentMessage) -> ModelRequestPart:
    part = _basic_pi_to_request_part(message)
    extra = message.get(EXTRA_KEY)
    leftovers = extra.get("part") if isinstance(extra, dict) else None
    if isinstance(leftovers, dict) and leftovers:
        dump = _REQUEST_PART.dump_python(part, mode="json")
        part = _REQUEST_PART.validate_python({**dump, **leftovers})
    return part


def _basic_pi_to_request_part(message: AgentMessage) -> ModelRequestPart:
    role = message["role"]
    when = _datetime(message.get("timestamp"))
    if role == "user":
        return UserPromptPart(_pi_content_to_user(message.get("content")), timestamp=when)
    if role == "toolResult":
        extra = message.get(EXTRA_KEY)
        as_json = isinstance(extra, dict) and extra.get("json") is True
        text = _blocks_text(message.get("content"))
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


def _blocks_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, dict) and block.get("type") == "text"
    )


def _pi_content_to_user(content: object) -> str | list[UserContent]:
    if isinstance(content, str):
        return content
    items: list[UserContent] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        extra = block.get(EXTRA_KEY)
        if isinstance(extra, dict) and "item" in extra:
            items.append(_user_item(extra["item"]))
        elif block.get("type") == "text":
            items.append(str(block.get("text", "")))
        elif block.get("type") == "image":
            data = base64.b64decode(str(block.get("data", "")))
            items.append(BinaryContent(data=data, media_type=str(block.get("mimeType", ""))))
    return items


def _user_item(dumped: Any) -> UserContent:
    return _USER_CONTENT.validate_python(dumped)


def _pi_to_response(message: AgentMessage) -> ModelResponse:
    response = _basic_pi_to_response(message)
    extra = message.get(EXTRA_KEY)
    extra = extra if isinstance(extra, dict) else {}
    leftovers = extra.get("response")
    riders = extra.get("riders")
    if leftovers or riders:
        dump = _RESPONSE.dump_python(response, mode="json")
        dump.update(leftovers or {})
        parts = list(dump["parts"])
        for position, part in sorted(riders or (), key=lambda rider: int(rider[0])):
            parts.insert(min(int(position), len(parts)), part)
        dump["parts"] = parts
        response = _RESPONSE.validate_python(dump)
    record = _pi_record(message, _basic_response_to_pi(response))
    if record is not None:
        response.metadata = {**(response.metadata or {}), METADATA_KEY: {"pi": record}}
    return response


def _basic_pi_to_response(message: AgentMessage) -> ModelResponse:
    provider = message.get("provider")
    provider_name = provider if isinstance(provider, str) and provider else None
    parts: list[ModelResponsePart] = []
    for block in message.get("content") or []:
        if isinstance(block, dict):
            part = _response_part_from_pi(block, provider_name)
            if part is not None:
                parts.append(part)
    model = message.get("model")
    stop = message.get("stopReason")
    return ModelResponse(
        parts=parts,
        usage=_usage_from_pi(message.get("usage")),
        model_name=model if isinstance(model, str) and model else None,
        timestamp=_datetime(message.get("timestamp")),
        provider_name=provider_name,
        finish_reason=_FINISH_BY_STOP.get(stop) if isinstance(stop, str) else None,
    )


def _response_part_from_pi(block: ContentBlock, provider: str | None) -> ModelResponsePart | None:
    part = _basic_pi_to_response_part(block, provider)
    leftovers = block.get(EXTRA_KEY)
    if part is not None and isinstance(leftovers, dict) and leftovers:
        dump = _RESPONSE_PART.dump_python(part, mode="json")
        part = _RESPONSE_PART.validate_python({**dump, **leftovers})
    return part


def _basic_pi_to_response_part(
    block: ContentBlock, provider: str | None
) -> ModelResponsePart | None:
    kind = block.get("type")
    if kind == "text":
        return TextPart(str(block.get("text", "")))
    if kind == "thinking":
        signature = block.get("thinkingSignature")
        if isinstance(signature, str) and signature:
            # pydantic-ai sends a signature back only to the provider that made it.
            return ThinkingPart(
                str(block.get("thinking", "")), signature=signature, provider_name=provider
            )
        return ThinkingPart(str(block.get("thinking", "")))
    if kind == "toolCall":
        arguments = block.get("arguments")
        return ToolCallPart(
            tool_name=str(block.get("name", "")),
            args=cast(dict[str, Any], arguments) if isinstance(arguments, dict) else {},
            tool_call_id=str(block.get("id", "")),
        )
    return None


def _usage_from_pi(usage: object) -> RequestUsage:
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
