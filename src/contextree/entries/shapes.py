"""Message and content-block shapes that the provider mappings rely on.

pi's context keeps whatever a message entry holds, but a request to OpenAI or Anthropic needs
``content`` as a string or a list of blocks of the kinds its role can carry. A file damaged by
hand or by another tool can hold a number there; :func:`message_problem` names the field, so
``contextree check`` reports it and ``contextree context --format openai`` refuses with the
entry's line instead of failing inside the mapping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from contextree.entries.types import is_assistant_message, is_tool_result_message

__all__ = ["message_oddities", "message_problem"]

_USER_BLOCKS: Final = frozenset({"text", "image"})
_ASSISTANT_BLOCKS: Final = frozenset({"text", "thinking", "redactedThinking", "toolCall"})

_BLOCKS_BY_ROLE: Final[Mapping[str, frozenset[str]]] = {
    "user": _USER_BLOCKS,
    "developer": _USER_BLOCKS,
    "toolResult": _USER_BLOCKS,
    "assistant": _ASSISTANT_BLOCKS,
    # custom messages become user messages with their blocks as they are
    "custom": _USER_BLOCKS,
    "hookMessage": _USER_BLOCKS,
}
"""The block types each role's content may hold. Roles not listed (``bashExecution``, the
summaries, unknown ones) are converted from string fields or not sent at all."""

_STRING_FIELDS: Final[Mapping[str, str]] = {"text": "text", "image": "data", "toolCall": "name"}
"""The string field each block type is sent by."""

_CONTENT_OPTIONAL: Final = frozenset({"custom", "hookMessage"})
"""Roles whose non-list, non-string content is dropped by the conversion (pi's rule), not
sent: any value is fine there."""


_TOOL_RESULT_NAMED: Final = (("toolName", "read as a result with no tool name"),)
_ASSISTANT_NAMED: Final = (("stopReason", "read as an unknown stop reason: the reply is sent"),)
"""String fields pi compares (``===``, ``includes``) and never sends, by role, with what a
value of another JSON type reads as. Such a value harms no request, so it is an oddity, not
damage."""


def _kind(value: object) -> str:
    """A JSON type name for ``value`` as a file holds it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _block_problem(block: object, where: str, allowed: frozenset[str], role: str) -> str | None:
    if not isinstance(block, dict):
        return f"{where} must be an object, found {_kind(block)}"
    kind = block.get("type")
    if not isinstance(kind, str):
        return f'{where} has no string "type"'
    if kind not in allowed:
        return f'{where}: a {role} message cannot carry a block of type "{kind}"'
    key = _STRING_FIELDS.get(kind)
    if key is not None and not isinstance(block.get(key), str):
        return f'{where} has no string "{key}"'
    if kind == "toolCall":
        arguments = block.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            return f"{where}.arguments must be an object, found {_kind(arguments)}"
    return None


def message_problem(message: Mapping[str, object]) -> str | None:
    """Why a provider request cannot carry ``message`` (naming the field, e.g.
    ``message.content must be a string or a list of blocks, found number``), or ``None``.

    A pruned tool result is sent as its placeholder text, so its content is not checked.
    """
    role = message.get("role")
    if not isinstance(role, str) or role not in _BLOCKS_BY_ROLE:
        return None
    if role == "toolResult" and message.get("prunedAt") is not None:
        return None
    content = message.get("content")
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        if role in _CONTENT_OPTIONAL:
            return None
        return f"message.content must be a string or a list of blocks, found {_kind(content)}"
    allowed = _BLOCKS_BY_ROLE[role]
    for index, block in enumerate(content):
        problem = _block_problem(block, f"message.content[{index}]", allowed, role)
        if problem is not None:
            return problem
    return None


def message_oddities(message: Mapping[str, object]) -> list[str]:
    """Fields of ``message`` of a JSON type pi never writes there that are read as absent,
    each named with what it reads as (``message.toolName must be a string, found array (read
    as a result with no tool name)``). A missing field is no oddity."""
    if is_tool_result_message(message):
        named = _TOOL_RESULT_NAMED
    elif is_assistant_message(message):
        named = _ASSISTANT_NAMED
    else:
        return []
    found: list[str] = []
    for key, reading in named:
        value = message.get(key, "")
        if not isinstance(value, str):
            found.append(f"message.{key} must be a string, found {_kind(value)} ({reading})")
    return found
