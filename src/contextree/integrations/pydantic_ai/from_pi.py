"""pi messages -> pydantic-ai ``ModelMessage``s (the mapping is in :mod:`.convert`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    UserPromptPart,
)

from contextree.context import convert_to_llm
from contextree.entries.types import AgentMessage, JsonDict, StoredMessage, is_assistant_message
from contextree.integrations.pydantic_ai.basic import (
    basic_pi_to_request_part,
    basic_pi_to_response,
    basic_request_part_to_pi,
    basic_response_to_pi,
    pi_content_to_user,
)
from contextree.integrations.pydantic_ai.convert_shared import (
    EXTRA_KEY,
    MESSAGE_ROLES,
    METADATA_KEY,
    MISSING,
    REQUEST,
    REQUEST_PART,
    RESPONSE,
    from_ms,
)

__all__ = ["ConversionCache", "pi_to_model_messages"]


class ConversionCache:
    """Remembers what the last conversion made, so that converting a context that grew by a
    turn converts only the new turn. A list that starts with the last one (compared by value,
    which is cheap when the dicts are the same objects) reuses everything but its last run of
    messages; any other list reuses the runs whose pi messages are equal to ones converted
    last time. The messages it hands out again are the same objects: treat them as read-only
    (pydantic-ai treats its history as append-only)."""

    def __init__(self) -> None:
        self._runs: dict[tuple[Any, ...], tuple[list[StoredMessage], list[ModelMessage]]] = {}
        self._last: list[StoredMessage] = []
        self._last_start = 0  # where the last run of ``_last`` starts
        self._out: list[ModelMessage] = []
        self._out_before_last = 0  # how many of ``_out`` the runs before the last one made
        self.fresh: list[ModelMessage] = []
        """The messages the latest conversion made anew (not handed out before)."""


def pi_to_model_messages(
    messages: Iterable[StoredMessage | AgentMessage], *, cache: ConversionCache | None = None
) -> list[ModelMessage]:
    """pydantic-ai messages for pi messages: ``assistant`` -> ``ModelResponse``, the messages
    between two replies -> one ``ModelRequest`` (or several, where they came from several).

    Roles pydantic-ai has no part for become the user text contextree sends for them
    (``convert_to_llm``); roles no model sees are kept in the request's metadata only.
    Raises ``ValueError`` naming the message for a value that is not a pi message.
    ``cache`` reuses what an earlier call converted (see :class:`ConversionCache`).
    """
    messages = cast("list[StoredMessage]", list(messages))  # typed or as stored: read as stored
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
    used: dict[tuple[Any, ...], tuple[list[StoredMessage], list[ModelMessage]]] = {}
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


def _check(messages: list[StoredMessage], start: int) -> None:
    for index in range(start, len(messages)):
        message = messages[index]
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ValueError(f"message {index}: expected a pi message (a dict with a role)")


def _runs(messages: list[StoredMessage]) -> list[list[StoredMessage]]:
    """``messages`` cut where :func:`_convert_pi` starts a new pydantic-ai message, so that
    each run converts on its own to what it gives within the whole list."""
    runs: list[list[StoredMessage]] = []
    current: list[StoredMessage] = []
    for message in messages:
        extra = message.get(EXTRA_KEY)
        extra = extra if isinstance(extra, dict) else {}
        starts = (
            is_assistant_message(message)
            or (current and is_assistant_message(current[-1]))
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


def _convert_pi(messages: list[StoredMessage]) -> list[ModelMessage]:
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
            out.append(REQUEST.validate_python(request))
        replies = is_assistant_message(message)  # a bool: ``message`` stays a stored dict
        if replies:
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
            out.extend(REQUEST.validate_python(r) for r in extra["requestsAfter"])
    flush()
    return out


def _build_request(
    parts: list[ModelRequestPart], records: list[Any], meta: JsonDict | None, riders: list[Any]
) -> ModelRequest:
    # Parts that produced no pi message go back where they were.
    for position, dumped in sorted(riders, key=lambda rider: int(rider[0])):
        parts.insert(min(int(position), len(parts)), REQUEST_PART.validate_python(dumped))
    if meta:
        request = REQUEST.validate_python({**meta, "parts": []})
        request.parts = parts
    else:
        request = ModelRequest(parts=parts)
    if any(record is not None for record in records):
        own = {"pi": records}
        request.metadata = {**(request.metadata or {}), METADATA_KEY: own}
    return request


def _pi_to_request_part(message: StoredMessage) -> tuple[ModelRequestPart | None, Any]:
    """The part for one pi message, and what to record so that it comes back as it was."""
    role = message["role"]
    if role in MESSAGE_ROLES:
        part = _request_part_from_pi(message)
        return part, _pi_record(message, basic_request_part_to_pi(part))
    # A role pydantic-ai has no part for: the user text contextree would send, if any.
    llm = convert_to_llm([message])
    record: JsonDict = {"message": message}
    if not llm:
        record["noPart"] = True
        return None, record
    return UserPromptPart(
        pi_content_to_user(llm[0].get("content")), timestamp=from_ms(message.get("timestamp"))
    ), record


def _without_extra(value: Any) -> Any:
    if isinstance(value, list):
        return [
            {k: v for k, v in item.items() if k != EXTRA_KEY} if isinstance(item, dict) else item
            for item in value
        ]
    return value


def _pi_record(original: StoredMessage, rebuilt: StoredMessage) -> Any:
    """What pydantic-ai cannot hold of ``original``: the fields ``rebuilt`` (its basic pi form
    made back from pydantic-ai) lacks or has otherwise, and the keys it has that ``original``
    had not. ``None`` when there is nothing."""
    fields = {
        key: value
        for key, value in original.items()
        if key != EXTRA_KEY and _without_extra(rebuilt.get(key, MISSING)) != _without_extra(value)
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


def _request_part_from_pi(message: StoredMessage) -> ModelRequestPart:
    part = basic_pi_to_request_part(message)
    extra = message.get(EXTRA_KEY)
    leftovers = extra.get("part") if isinstance(extra, dict) else None
    if isinstance(leftovers, dict) and leftovers:
        dump = REQUEST_PART.dump_python(part, mode="json")
        part = REQUEST_PART.validate_python({**dump, **leftovers})
    return part


def _pi_to_response(message: StoredMessage) -> ModelResponse:
    response = basic_pi_to_response(message)
    extra = message.get(EXTRA_KEY)
    extra = extra if isinstance(extra, dict) else {}
    leftovers = extra.get("response")
    riders = extra.get("riders")
    if leftovers or riders:
        dump = RESPONSE.dump_python(response, mode="json")
        dump.update(leftovers or {})
        parts = list(dump["parts"])
        for position, part in sorted(riders or (), key=lambda rider: int(rider[0])):
            parts.insert(min(int(position), len(parts)), part)
        dump["parts"] = parts
        response = RESPONSE.validate_python(dump)
    record = _pi_record(message, basic_response_to_pi(response))
    if record is not None:
        response.metadata = {**(response.metadata or {}), METADATA_KEY: {"pi": record}}
    return response
