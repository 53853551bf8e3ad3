"""What both directions of the pydantic-ai <-> pi conversion share: the keys extra data
travels under, the pydantic adapters, the maps between finish and stop reasons, timestamps,
and how a round trip compares dumps."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Final

import pydantic
from pydantic_ai.messages import (
    FinishReason,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    UserContent,
)

from contextree.entries.types import JsonDict

__all__ = [
    "API_BY_PROVIDER",
    "EMPTY_REQUEST",
    "ERROR_OUTCOMES",
    "EXTRA_KEY",
    "FINISH_BY_STOP",
    "MESSAGE_ROLES",
    "METADATA_KEY",
    "MISSING",
    "REQUEST",
    "REQUEST_PART",
    "RESPONSE",
    "RESPONSE_PART",
    "STOP_BY_FINISH",
    "USER_CONTENT",
    "dump_leftovers",
    "from_ms",
    "iso_ms",
    "normalized",
    "to_ms",
]


EXTRA_KEY: Final = "pydanticAi"
"""Key of a pi message or content block that holds what only pydantic-ai has."""

METADATA_KEY: Final = "contextree"
"""Key of ``ModelRequest.metadata`` / ``ModelResponse.metadata`` that holds what only pi has."""

REQUEST = pydantic.TypeAdapter(ModelRequest)
RESPONSE = pydantic.TypeAdapter(ModelResponse)
REQUEST_PART = pydantic.TypeAdapter(ModelRequestPart)
USER_CONTENT = pydantic.TypeAdapter(UserContent)
EMPTY_REQUEST: Final = REQUEST.dump_python(ModelRequest(parts=[]), mode="json")
RESPONSE_PART = pydantic.TypeAdapter(ModelResponsePart)

API_BY_PROVIDER: Final = {
    "openai": "openai-completions",
    "azure": "openai-completions",
    "anthropic": "anthropic-messages",
    "google-gla": "google-generative-ai",
    "google-vertex": "google-vertex",
    "google": "google-generative-ai",
    "mistral": "mistral-conversations",
}
STOP_BY_FINISH: Final[dict[str, str]] = {
    "stop": "stop",
    "length": "length",
    "tool_call": "toolUse",
    "content_filter": "error",
    "error": "error",
}
FINISH_BY_STOP: Final[dict[str, FinishReason]] = {
    "stop": "stop",
    "length": "length",
    "toolUse": "tool_call",
    "error": "error",
    "aborted": "error",
}
MISSING: Final = object()
ERROR_OUTCOMES: Final = ("failed", "retried")
MESSAGE_ROLES: Final = ("user", "toolResult", "compactionSummary")


# -- time ------------------------------------------------------------------------------------


def to_ms(moment: datetime | None) -> int:
    if moment is None:
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def from_ms(ms: object) -> datetime:
    if isinstance(ms, bool) or not isinstance(ms, int | float):
        return datetime.fromtimestamp(0, UTC)
    return datetime.fromtimestamp(int(ms) / 1000, UTC)


# -- comparing dumps (what a round trip must give back) --------------------------------------


def normalized(value: Any) -> Any:
    """A JSON dump with what pi cannot tell apart made equal: timestamps to the millisecond,
    tool-call arguments as an object whether they came as a JSON string or a dict."""
    if isinstance(value, dict):
        out = {key: normalized(item) for key, item in value.items()}
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
            out["timestamp"] = iso_ms(out["timestamp"])
        return out
    if isinstance(value, list):
        return [normalized(item) for item in value]
    return value


def iso_ms(text: str) -> str:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    return from_ms(to_ms(moment)).isoformat()


def dump_leftovers(original: JsonDict, rebuilt: JsonDict, skip: Iterable[str] = ()) -> JsonDict:
    """The keys of ``original`` whose (normalized) values ``rebuilt`` does not give back."""
    skipped = set(skip)
    ours, theirs = normalized(original), normalized(rebuilt)
    return {
        key: value
        for key, value in original.items()
        if key not in skipped and ours[key] != theirs.get(key)
    }
