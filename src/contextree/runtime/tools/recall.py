"""The ``recall`` tool of the built-in agent: search what compactions folded away."""

from __future__ import annotations

import asyncio

from contextree.recall.tool import (
    RECALL_TOOL_DESCRIPTION,
    RECALL_TOOL_NAME,
    RECALL_TOOL_PARAMETERS,
    SessionRecall,
)
from contextree.runtime.tools.base import (
    JsonSchema,
    ToolArguments,
    ToolContext,
    ToolResult,
    get_int,
    get_str,
)

__all__ = ["RecallTool"]


class RecallTool:
    """``recall``: excerpts of the condensed part of the session (see
    :mod:`contextree.recall.tool`)."""

    name = RECALL_TOOL_NAME
    description = RECALL_TOOL_DESCRIPTION
    parameters: JsonSchema = RECALL_TOOL_PARAMETERS

    def __init__(self, recall: SessionRecall) -> None:
        self.recall = recall

    async def run(self, arguments: ToolArguments, ctx: ToolContext) -> ToolResult:
        query = get_str(arguments, "query")
        limit = get_int(arguments, "limit", minimum=1) or 5
        # SQLite work off the event loop: a first call may build the index.
        text = await asyncio.to_thread(self.recall.search_text, query, limit=limit)
        return ToolResult.text(text)
