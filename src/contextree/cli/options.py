"""Arguments and options shared by several commands.

Their own module: typer resolves a command's annotations in the namespace of the module that
defines it, so ``navigate_cmd`` and ``chat_cmd`` import these at module level.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

__all__ = [
    "SESSION_HELP",
    "BaseUrlOpt",
    "ChatModelOpt",
    "FormatOpt",
    "InstructionsOpt",
    "ModelOpt",
    "OutputFormat",
    "SessionArg",
]

SESSION_HELP = (
    "Session file (.jsonl), or sqlite:///path/file.db#NAME or postgresql://user@host/db#NAME."
)
SessionArg = Annotated[
    str, typer.Argument(metavar="SESSION", help=SESSION_HELP, show_default=False)
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="provider:model (openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, "
        'ollama:llama3.1, remote:URL); default: "model" in settings (CONTEXTREE_MODEL), '
        "else pi's defaultProvider:defaultModel, else compaction.remoteEndpoint, else the "
        "built-in offline summarizer.",
    ),
]
BaseUrlOpt = Annotated[
    str | None, typer.Option(help="Server root for OpenAI-compatible / Anthropic providers.")
]
InstructionsOpt = Annotated[
    str | None, typer.Option("--instructions", "-i", help="What the summary should focus on.")
]
ChatModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="provider:model that holds the conversation (openai:gpt-4o-mini, "
        'anthropic:claude-sonnet-4-5, ollama:llama3.1); default: "model" in settings '
        "(CONTEXTREE_MODEL), else pi's defaultProvider:defaultModel; required, offline and "
        "remote cannot chat.",
    ),
]


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


FormatOpt = Annotated[
    OutputFormat,
    typer.Option(
        "--format", "-f", help="text, or json for programs (schemas: docs/cli-json.md)."
    ),
]
