"""``coding_agent``: an :class:`AgentSession` with the built-in coding tools, as
``contextree chat`` runs it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from contextree.llm.base import ModelClient
from contextree.runtime.agent import AgentSession
from contextree.runtime.system_prompt import default_system_prompt
from contextree.runtime.tools import builtin_tools
from contextree.runtime.tools.base import ToolContext
from contextree.session.tree import SessionTree
from contextree.settings.schema import Settings

__all__ = ["coding_agent"]


def coding_agent(
    tree: SessionTree,
    client: ModelClient,
    *,
    cwd: Path,
    settings: Settings,
    model_spec: str | None = None,
    system_prompt: str | None = None,
    fallback_clients: Sequence[ModelClient] = (),
) -> AgentSession:
    """An agent that works in ``cwd`` with ``read``, ``write``, ``edit`` and ``bash``.

    File tools stay inside ``cwd`` unless ``tools.allowOutsideCwd`` is set; the system prompt
    defaults to :func:`~contextree.runtime.system_prompt.default_system_prompt` (the working
    directory and the tools); summaries go to ``compaction.remoteEndpoint`` when it is set.
    """
    tools = builtin_tools()
    return AgentSession(
        tree,
        client,
        model_spec=model_spec,
        settings=settings,
        tools=tools,
        tool_context=ToolContext(cwd=cwd, allow_outside_cwd=settings.allow_outside_cwd),
        system_prompt=system_prompt or default_system_prompt(cwd, tools),
        fallback_clients=fallback_clients,
    )
