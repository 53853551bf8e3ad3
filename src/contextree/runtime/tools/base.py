"""The tool protocol, its result and context values, and the runner for one toolCall block.

A tool receives the ``arguments`` object of a pi ``toolCall`` block (pi-behaviour.md §2.1) and
returns a :class:`ToolResult` whose ``content`` is a list of pi content blocks (``text`` or
``image``), ready for a ``toolResult`` message (§2.2). :func:`run_tool_call` is the one place that
turns every failure - unknown tool, invalid arguments, :class:`ToolError`, unexpected exceptions -
into an ``isError`` result, so the agent loop never has to catch anything but cancellation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from contextree.entries.types import JsonDict, StoredBlock, StoredMessage
from contextree.errors import ToolError
from contextree.llm.base import ToolSpec

__all__ = [
    "JsonSchema",
    "Tool",
    "ToolArguments",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "get_int",
    "get_number",
    "get_str",
    "run_tool_call",
    "tool_result_message",
    "tool_spec",
    "validate_arguments",
]

JsonSchema = dict[str, Any]
"""A JSON schema object; tools use ``type``, ``properties``, ``required`` and ``minimum``."""

ToolArguments = dict[str, Any]
"""The ``arguments`` object of a ``toolCall`` block."""


@dataclass(frozen=True)
class ToolResult:
    """What a tool returns: pi content blocks plus optional structured details."""

    content: list[StoredBlock]
    """``{"type": "text", "text"}`` and ``{"type": "image", "data", "mimeType"}`` blocks."""
    is_error: bool = False
    """Written as the ``isError`` field of the toolResult message."""
    details: JsonDict | None = None
    """Tool-specific data for UIs and hooks (``{"diff"}`` for edit, ``{"exitCode"}`` for bash)."""

    @classmethod
    def text(
        cls, text: str, *, is_error: bool = False, details: JsonDict | None = None
    ) -> ToolResult:
        """A result with one text block."""
        return cls([{"type": "text", "text": text}], is_error=is_error, details=details)

    @classmethod
    def error(cls, message: str) -> ToolResult:
        """An ``isError`` result with one text block."""
        return cls.text(message, is_error=True)


@dataclass(frozen=True)
class ToolContext:
    """Where and within which limits a tool runs; built once per agent session."""

    cwd: Path
    """The working directory: relative paths resolve against it, bash runs in it."""
    _: KW_ONLY
    allow_outside_cwd: bool = False
    """Let file tools touch paths outside ``cwd`` (setting ``tools.allowOutsideCwd``)."""
    max_output_chars: int = 50_000
    """Characters of tool output sent to the model; the rest is dropped with a notice."""
    bash_timeout: float = 120.0
    """Seconds a bash command may run when the call gives no ``timeout``."""
    env: Mapping[str, str] | None = None
    """Environment of bash commands; ``None`` inherits the current process environment."""


@runtime_checkable
class Tool(Protocol):
    """A tool the model can call by ``name``."""

    name: str
    """The ``toolCall.name`` that selects this tool."""
    description: str
    """Told to the model: what the tool does and when to use it."""
    parameters: JsonSchema
    """JSON schema of the ``arguments`` object (``type: object``)."""

    async def run(self, arguments: ToolArguments, ctx: ToolContext) -> ToolResult:
        """Do the work; raise :class:`ToolError` for a failure the model should see."""
        ...


def tool_spec(tool: Tool) -> ToolSpec:
    """The ``{"name", "description", "parameters"}`` dict a model request lists tools with."""
    return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}


def tool_result_message(call: StoredBlock, result: ToolResult, *, timestamp: int) -> StoredMessage:
    """Build the pi ``toolResult`` message (§2.2 key order) answering a ``toolCall`` block.

    Args:
        call: the assistant's ``toolCall`` block.
        result: what :func:`run_tool_call` returned for it.
        timestamp: milliseconds since the epoch.
    """
    message: StoredMessage = {
        "role": "toolResult",
        "toolCallId": call.get("id", ""),
        "toolName": call.get("name", ""),
        "content": result.content,
    }
    if result.details is not None:
        message["details"] = result.details
    message["isError"] = result.is_error
    message["timestamp"] = timestamp
    return message


async def run_tool_call(
    tools: Mapping[str, Tool], call: StoredBlock, ctx: ToolContext
) -> ToolResult:
    """Run the tool a ``toolCall`` block names and return its result.

    Every failure becomes an ``isError`` result with a one-line message: an unknown tool name,
    arguments that do not match the tool's schema, a :class:`ToolError` or any other exception
    raised by the tool. Cancellation (:class:`asyncio.CancelledError`) propagates.
    """
    name = call.get("name")
    tool = tools.get(name) if isinstance(name, str) else None
    if tool is None:
        available = ", ".join(sorted(tools)) or "none"
        return ToolResult.error(f'Tool "{name}" not found; available tools: {available}')
    try:
        arguments = validate_arguments(tool, call.get("arguments"))
        return await tool.run(arguments, ctx)
    except ToolError as exc:
        return ToolResult.error(str(exc))
    except Exception as exc:
        # A bug in a tool must not end the agent's turn; the model sees the failure instead.
        return ToolResult.error(f"{tool.name} failed: {type(exc).__name__}: {_one_line(str(exc))}")


def validate_arguments(tool: Tool, arguments: object) -> ToolArguments:
    """Check ``arguments`` against the tool's schema and return a normalized copy.

    Checks that every ``required`` key is present and that each known property has its schema
    ``type`` (and ``minimum``). Like pi's validator (AJV with type coercion), an integer sent as
    a numeric string or an integral float is accepted; an optional property sent as ``null``
    counts as absent. Unknown keys are kept.

    Raises:
        ToolError: naming the tool, the argument and what was expected and found.
    """
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ToolError(
            f"{tool.name}: arguments must be a JSON object, got {_json_type(arguments)}"
        )
    schema = tool.parameters
    properties: dict[str, JsonSchema] = schema.get("properties", {})
    required: list[str] = schema.get("required", [])
    result: ToolArguments = {}
    for key, value in arguments.items():
        if value is None and key not in required:
            continue
        prop = properties.get(key)
        result[key] = _check_value(tool.name, key, value, prop) if prop else value
    missing = [key for key in required if key not in result]
    if missing:
        names = ", ".join(f'"{key}"' for key in missing)
        plural = "s" if len(missing) > 1 else ""
        raise ToolError(f"{tool.name}: missing required argument{plural} {names}")
    return result


def get_str(arguments: ToolArguments, key: str) -> str:
    """A required string argument."""
    value = arguments.get(key)
    if not isinstance(value, str):
        raise ToolError(f'argument "{key}" must be a string, got {_json_type(value)}')
    return value


def get_int(arguments: ToolArguments, key: str, *, minimum: int | None = None) -> int | None:
    """An optional integer argument (``None`` when absent)."""
    value = arguments.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f'argument "{key}" must be an integer, got {_json_type(value)}')
    if minimum is not None and value < minimum:
        raise ToolError(f'argument "{key}" must be at least {minimum}, got {value}')
    return value


def get_number(arguments: ToolArguments, key: str) -> float | None:
    """An optional number argument (``None`` when absent)."""
    value = arguments.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError(f'argument "{key}" must be a number, got {_json_type(value)}')
    return float(value)


_SCHEMA_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
}


def _check_value(tool: str, key: str, value: Any, prop: JsonSchema) -> Any:
    expected = prop.get("type")
    coerced = _coerce(value, expected)
    if coerced is _INVALID:
        wanted = _SCHEMA_TYPE_NAMES.get(str(expected), str(expected))
        raise ToolError(
            f'{tool}: argument "{key}" must be {wanted}, got {_json_type(value)} {_preview(value)}'
        )
    minimum = prop.get("minimum")
    if minimum is not None and isinstance(coerced, int | float) and coerced < minimum:
        raise ToolError(f'{tool}: argument "{key}" must be at least {minimum}, got {coerced}')
    return coerced


_INVALID = object()


def _coerce(value: Any, expected: object) -> Any:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    match expected:
        case None:
            return value
        case "string":
            return value if isinstance(value, str) else _INVALID
        case "integer":
            if is_number and float(value).is_integer():
                return int(value)
            if isinstance(value, str):
                try:
                    return int(value.strip())
                except ValueError:
                    return _INVALID
            return _INVALID
        case "number":
            if is_number:
                return value
            if isinstance(value, str):
                try:
                    return float(value.strip())
                except ValueError:
                    return _INVALID
            return _INVALID
        case "boolean":
            return value if isinstance(value, bool) else _INVALID
        case "object":
            return value if isinstance(value, dict) else _INVALID
        case "array":
            return value if isinstance(value, list) else _INVALID
        case _:
            # A schema type we do not check (a union list, "null"): accept as sent.
            return value


def _json_type(value: object) -> str:
    match value:
        case None:
            return "null"
        case bool():
            return "boolean"
        case int() | float():
            return "number"
        case str():
            return "string"
        case list():
            return "array"
        case dict():
            return "object"
        case _:
            return type(value).__name__


def _preview(value: object, limit: int = 40) -> str:
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    text = _one_line(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _one_line(text: str) -> str:
    return " ".join(text.split())
