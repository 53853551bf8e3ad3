"""Arguments and options shared by several commands.

Their own module: typer resolves a command's annotations in the namespace of the module that
defines it, so ``navigate_cmd`` and ``chat_cmd`` import these at module level.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

__all__ = [
    "SESSION_HELP",
    "BaseUrlOpt",
    "ChatModelOpt",
    "CompactDryRunOpt",
    "FormatOpt",
    "InstructionsOpt",
    "KeepRecentOpt",
    "ModelOpt",
    "NoFallbackOpt",
    "NoUsageAdjustOpt",
    "OutputFormat",
    "PromptsDirOpt",
    "QuietOpt",
    "ReserveTokensOpt",
    "SessionArg",
    "ShowDroppedOpt",
    "SummaryTokensOpt",
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
    typer.Option("--format", "-f", help="text, or json for programs (schemas: docs/cli-json.md)."),
]

# -- compact ------------------------------------------------------------------------------------

CompactDryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Show the plan; write nothing, call no model.")
]

KeepRecentOpt = Annotated[
    int | None,
    typer.Option(min=-1, help="Tokens of recent history to keep verbatim; -1: the default."),
]

ReserveTokensOpt = Annotated[
    int | None,
    typer.Option(
        min=-1, help="Tokens reserved for the summary and the next turn; -1: the default."
    ),
]

NoUsageAdjustOpt = Annotated[
    bool,
    typer.Option("--no-usage-adjust", help="Do not shrink the keep budget by measured usage."),
]

PromptsDirOpt = Annotated[
    Path | None, typer.Option(help="Directory of <name>.md files overriding our prompts.")
]

SummaryTokensOpt = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="The summary's token budget (max_tokens for models); default "
        "compaction.summaryTokens, else 0.8 x reserve tokens, at most 8,192.",
    ),
]

NoFallbackOpt = Annotated[
    bool,
    typer.Option(
        "--no-fallback",
        help="Fail when the model fails, instead of summarizing with the offline summarizer.",
    ),
]

QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Do not print the summary.")]

ShowDroppedOpt = Annotated[
    bool,
    typer.Option("--show-dropped", help="List each message that leaves the model's view."),
]
