"""The default system prompt of ``contextree chat`` (our own words)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from contextree.runtime.tools.base import Tool

__all__ = ["default_system_prompt"]

_TEMPLATE = """\
You are a careful coding agent working in the directory {cwd} on the user's machine.
You can call tools to read, write and edit files and to run shell commands. Read before you
edit, keep changes small and focused, run the project's checks after changing code, and say
plainly what you did and what is left. When something is ambiguous, ask the user instead of
guessing. Available tools:
{tools}"""


def default_system_prompt(cwd: Path, tools: Mapping[str, Tool]) -> str:
    """A short system prompt naming the working directory and the tools."""
    listing = "\n".join(f"- {name}: {tool.description}" for name, tool in tools.items())
    return _TEMPLATE.format(cwd=cwd, tools=listing or "- (none)")
