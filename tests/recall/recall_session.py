"""A session whose first turn is compacted away, holding details the summary drops.

The summary is a model's terse one (a scripted client, without recorded facts): the offline
summarizer keeps statements with specific values such as these, and what recall is for is
what a summary left out.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contextree.compaction import compact_session
from contextree.llm.openai_compat import OpenAIClient
from contextree.llm.scripted import ScriptedClient
from contextree.runtime.agent import AgentSession
from contextree.runtime.tools import ToolContext
from contextree.session.tree import SessionTree
from contextree.settings import CompactionSettings

if TYPE_CHECKING:
    from fakes.fake_llm import FakeLLMServer

PORT = "8472"
ERROR = "ERR_CONN_RESET"
PATH = "src/net/client.py"
TOOL_DETAIL = "magic_retry_budget"
_MODEL = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-test"}


def add_turns(tree: SessionTree, count: int, *, start: int = 0) -> None:
    """``count`` filler turns (a user request and a reply each, ~400 tokens)."""
    for i in range(start, start + count):
        tree.append_message(
            {"role": "user", "content": f"step {i}: go on " + "filler " * 200, "timestamp": i}
        )
        tree.append_message(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"done {i} " + "ok " * 200}],
                "stopReason": "stop",
                "timestamp": i,
                **_MODEL,
            }
        )


def build(tree: SessionTree) -> SessionTree:
    """The details (a port, an error code, a path, a tool output), filler turns, then a
    compaction that keeps only the newest turns."""
    tree.append_message(
        {"role": "user", "content": f"Please fix the retry logic in {PATH}", "timestamp": 1}
    )
    tree.append_message(
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"The flaky port is {PORT}; logs show {ERROR}."},
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": PATH}},
            ],
            "stopReason": "toolUse",
            "timestamp": 2,
            **_MODEL,
        }
    )
    tree.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": f"retries = 7  # {TOOL_DETAIL}\n"}],
            "timestamp": 3,
        }
    )
    return fold_away(tree, "## Goal\nFix the retry logic; it works now.")


def fold_away(tree: SessionTree, summary: str) -> SessionTree:
    """Thirty filler turns, then a compaction with the terse ``summary`` that keeps only the
    newest turns: what came before is folded away."""
    add_turns(tree, 30)
    settings = CompactionSettings(keep_recent_tokens=2000, record_facts=False)
    asyncio.run(compact_session(tree, ScriptedClient(default=summary), settings=settings))
    return tree


def compacted_file(path: Path) -> SessionTree:
    """:func:`build` in a JSONL file at ``path``."""
    return build(SessionTree.open(path, cwd="/work"))


def entry_id_holding(tree: SessionTree, text: str) -> str:
    """The id of the first entry whose line mentions ``text``."""
    import json

    for entry in tree.get_entries():
        if text in json.dumps(entry):
            return str(entry["id"])
    raise AssertionError(f"no entry holds {text!r}")


def agent_on(tree: SessionTree, fake: FakeLLMServer, tmp_path: Path, **kw: Any) -> AgentSession:
    """The built-in agent on ``tree``, talking to the fake OpenAI-compatible server."""
    client = OpenAIClient("gpt-x", base_url=fake.url, api_key="")
    return AgentSession(
        tree,
        client,
        model_spec="openai:gpt-x",
        tool_context=ToolContext(tmp_path),
        system_prompt="SYSTEM",
        context_window=200_000,
        **kw,
    )
