"""pydantic-ai ``ModelMessage``s -> pi messages (the mapping is in :mod:`.convert`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import (
    BaseToolReturnPart,
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    RetryFeedbackPart,
    UserPromptPart,
)

from contextree.entries.types import JsonDict, StoredBlock, StoredMessage, is_assistant_message
from contextree.integrations.pydantic_ai.basic import (
    basic_pi_to_request_part,
    basic_pi_to_response,
    basic_pi_to_response_part,
    basic_request_part_to_pi,
    basic_response_part_to_pi,
    basic_response_to_pi,
)
from contextree.integrations.pydantic_ai.convert_shared import (
    EMPTY_REQUEST,
    EXTRA_KEY,
    METADATA_KEY,
    REQUEST,
    REQUEST_PART,
    RESPONSE,
    RESPONSE_PART,
    dump_leftovers,
)

__all__ = ["model_messages_to_pi"]


@dataclass
class _RequestOut:
    """The pi messages of one ``ModelRequest`` while it is converted."""

    messages: list[StoredMessage] = field(default_factory=list)
    riders: list[tuple[int, JsonDict]] = field(default_factory=list)


def model_messages_to_pi(messages: Iterable[ModelMessage]) -> list[StoredMessage]:
    """pi messages (``user``, ``assistant``, ``toolResult``, ``compactionSummary``) for
    pydantic-ai messages; :func:`pi_to_model_messages` gives the originals back.

    Raises ``TypeError`` for an object that is not a ``ModelRequest`` or ``ModelResponse``.
    """
    out: list[StoredMessage] = []
    pending: list[JsonDict] = []  # requests with no part pi has a message for
    for message in messages:
        if isinstance(message, ModelResponse):
            converted = [_response_to_pi(message)]
        elif isinstance(message, ModelRequest):
            # After a reply (or at the start) a request begins by itself; only a request right
            # after another one needs its start marked.
            implied = not pending and (not out or is_assistant_message(out[-1]))
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
    return [REQUEST_PART.dump_python(part, mode="json") for part in message.parts]


def _request_dump_without_parts(message: ModelRequest, parts: list[JsonDict]) -> JsonDict:
    dump = REQUEST.dump_python(message, mode="json")
    dump["parts"] = parts
    return _strip_own_metadata(dump)


def _strip_own_metadata(dump: JsonDict) -> JsonDict:
    metadata = dump.get("metadata")
    if isinstance(metadata, dict) and METADATA_KEY in metadata:
        rest = {k: v for k, v in metadata.items() if k != METADATA_KEY}
        dump = {**dump, "metadata": rest or None}
    return dump


def _with_extra(message: StoredMessage, extra: JsonDict) -> StoredMessage:
    merged = {**message.get(EXTRA_KEY, {}), **extra}
    return {**message, EXTRA_KEY: merged}


def _pi_records(metadata: dict[str, Any] | None) -> Any:
    if isinstance(metadata, dict):
        own = metadata.get(METADATA_KEY)
        if isinstance(own, dict):
            return own.get("pi")
    return None


def _restore_pi(message: StoredMessage, record: Any) -> StoredMessage:
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


def _request_to_pi(message: ModelRequest, *, implied_start: bool) -> list[StoredMessage]:
    records = _pi_records(message.metadata)
    records = records if isinstance(records, list) else []
    carriers: list[ModelRequestPart] = []
    out = _RequestOut()
    for position, part in enumerate(message.parts):
        if _is_carrier(part):
            carriers.append(part)
        else:
            out.riders.append((position, REQUEST_PART.dump_python(part, mode="json")))
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
    dump = _strip_own_metadata(REQUEST.dump_python(message, mode="json"))
    meta = dump_leftovers(dump, EMPTY_REQUEST, skip=("parts",))
    extra: JsonDict = {"request": meta} if meta or not implied_start else {}
    if out.riders:
        extra["riders"] = [[position, part] for position, part in out.riders]
    if extra:
        out.messages[0] = _with_extra(out.messages[0], extra)
    return out.messages


def _request_part_to_pi(part: ModelRequestPart) -> StoredMessage:
    message = basic_request_part_to_pi(part)
    original = REQUEST_PART.dump_python(part, mode="json")
    rebuilt = REQUEST_PART.dump_python(basic_pi_to_request_part(message), mode="json")
    leftovers = dump_leftovers(original, rebuilt)
    if leftovers:
        message[EXTRA_KEY] = {**message.get(EXTRA_KEY, {}), "part": leftovers}
    return message


def _response_to_pi(message: ModelResponse) -> StoredMessage:
    content: list[StoredBlock] = []
    riders: list[list[Any]] = []
    for position, part in enumerate(message.parts):
        block = _response_part_to_pi(part, message.provider_name)
        if block is None:
            riders.append([position, RESPONSE_PART.dump_python(part, mode="json")])
        else:
            content.append(block)
    out = basic_response_to_pi(message, content)
    original = _strip_own_metadata(RESPONSE.dump_python(message, mode="json"))
    rebuilt = RESPONSE.dump_python(basic_pi_to_response(out), mode="json")
    extra: JsonDict = {}
    leftovers = dump_leftovers(original, rebuilt, skip=("parts",))
    if leftovers:
        extra["response"] = leftovers
    if riders:
        extra["riders"] = riders
    if extra:
        out[EXTRA_KEY] = extra
    return _restore_pi(out, _pi_records(message.metadata))


def _response_part_to_pi(part: ModelResponsePart, provider: str | None) -> StoredBlock | None:
    block = basic_response_part_to_pi(part)
    if block is None:
        return None
    original = RESPONSE_PART.dump_python(part, mode="json")
    back = basic_pi_to_response_part(block, provider)
    rebuilt = RESPONSE_PART.dump_python(back, mode="json") if back is not None else {}
    leftovers = dump_leftovers(original, rebuilt)
    if leftovers:
        block[EXTRA_KEY] = leftovers
    return block
