"""The built-in coding tools ``read``, ``write``, ``edit`` and ``bash``, and the tool protocol.

File tools take a ``path`` argument (what file-operation tracking reads, pi-behaviour.md §8) and
stay inside the working directory unless ``ToolContext.allow_outside_cwd`` is set
(``tools.allowOutsideCwd``). :func:`run_tool_call` runs one ``toolCall`` block and turns every
failure into an ``isError`` result.
"""

from contextree.runtime.tools.base import (
    JsonSchema,
    Tool,
    ToolArguments,
    ToolContext,
    ToolError,
    ToolResult,
    run_tool_call,
    tool_result_message,
    tool_spec,
    validate_arguments,
)
from contextree.runtime.tools.bash import BashTool, CommandOutput, run_command
from contextree.runtime.tools.files import DEFAULT_READ_LIMIT, EditTool, ReadTool, WriteTool
from contextree.runtime.tools.paths import resolve_path
from contextree.runtime.tools.recall import RecallTool

__all__ = [
    "DEFAULT_READ_LIMIT",
    "BashTool",
    "CommandOutput",
    "EditTool",
    "JsonSchema",
    "ReadTool",
    "RecallTool",
    "Tool",
    "ToolArguments",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "WriteTool",
    "builtin_tools",
    "resolve_path",
    "run_command",
    "run_tool_call",
    "tool_result_message",
    "tool_spec",
    "validate_arguments",
]


def builtin_tools() -> dict[str, Tool]:
    """A fresh ``{name: tool}`` mapping of ``read``, ``write``, ``edit`` and ``bash``."""
    tools: list[Tool] = [ReadTool(), WriteTool(), EditTool(), BashTool()]
    return {tool.name: tool for tool in tools}
