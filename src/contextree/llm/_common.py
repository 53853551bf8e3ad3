"""Small helpers the wire-format mappings share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contextree.entries.types import StopReason, StoredBlock, Usage
from contextree.errors import ModelResponseError
from contextree.llm.base import Completion


def reasoning_level(reasoning: str | None) -> str | None:
    """The thinking level to send, or ``None`` when reasoning is unset or ``"off"``."""
    if reasoning is None or reasoning.strip().lower() in ("", "off", "none"):
        return None
    return reasoning.strip().lower()


def count(value: Any) -> int:
    """A token count from a provider's usage object (missing or odd values count 0)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(0, int(value))


def user_text(content: Any, *, what: str) -> str:
    """The text of pi user content (a string, or text blocks joined with ``"\\n"``)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ValueError(f"{what}: content must be a string or a list of blocks, got {content!r}")
    parts = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind != "text":
            raise ValueError(f'{what}: cannot send a content block of type "{kind}" as text')
        parts.append(str(block.get("text", "")))
    return "\n".join(parts)


def block_type(block: Any, *, what: str) -> str:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        raise ValueError(f"{what}: a content block must be a dict with a type, got {block!r}")
    kind: str = block["type"]
    return kind


def build_completion(
    name: str,
    *,
    content: list[StoredBlock],
    usage: Usage,
    stop_reason: StopReason,
    error_message: str | None,
    model: str,
    provider_stop_reason: str | None,
) -> Completion:
    """A completion, or :class:`ModelResponseError` when the model said nothing at all.

    An empty answer cut off by the token limit is returned (stop reason ``"length"``): with
    no output it is pi's silent-overflow signal (§10.2), which the caller must see.
    """
    has_text = any(b["type"] == "text" and b.get("text") for b in content)
    has_calls = any(b["type"] == "toolCall" for b in content)
    if not has_text and not has_calls and stop_reason not in ("length", "error"):
        raise ModelResponseError(
            name,
            "the provider returned an empty completion "
            f"(stop reason {provider_stop_reason or 'none'})",
        )
    extra: dict[str, Any] = {}
    if provider_stop_reason is not None:
        extra["providerStopReason"] = provider_stop_reason
    return Completion(
        content=content,
        usage=usage,
        stop_reason=stop_reason,
        error_message=error_message,
        model=model,
        extra=extra,
    )


def json_object(name: str, data: Any) -> Mapping[str, Any]:
    """A provider's answer, which must be a JSON object (else :class:`ModelResponseError`)."""
    if not isinstance(data, Mapping):
        raise ModelResponseError(name, "the response is not a JSON object")
    return data


def response_completion(
    name: str,
    data: Mapping[str, Any],
    content: list[StoredBlock],
    usage: Usage,
    *,
    stop: tuple[StopReason, str | None],
    raw_stop: str | None,
    model: str,
) -> Completion:
    """The completion of a whole (not streamed) answer ``data``: ``stop`` is the stop reason
    and its error message, ``raw_stop`` the provider's own; the model is the one the answer
    names, else ``model``."""
    stop_reason, error_message = stop
    return build_completion(
        name,
        content=content,
        usage=usage,
        stop_reason=stop_reason,
        error_message=error_message,
        model=str(data.get("model") or model),
        provider_stop_reason=raw_stop,
    )
