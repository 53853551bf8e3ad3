"""Small builders for branch-navigation tests: messages and trees with readable shapes."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from contextree.entries.types import AgentMessage
from contextree.session.tree import SessionTree

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def user(text: str) -> AgentMessage:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def assistant(text: str = "", *calls: tuple[str, dict[str, Any]]) -> AgentMessage:
    content: list[dict[str, Any]] = []
    if text:
        content.append({"type": "text", "text": text})
    for index, (name, arguments) in enumerate(calls):
        content.append(
            {"type": "toolCall", "id": f"call{index}", "name": name, "arguments": arguments}
        )
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "openai",
        "model": "gpt-4o-mini",
        "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": 2,
    }


def tool_result(text: str, name: str = "read") -> AgentMessage:
    return {
        "role": "toolResult",
        "toolCallId": "call0",
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 3,
    }


def linear(tree: SessionTree, *messages: AgentMessage) -> list[str]:
    """Append ``messages`` one after another at the leaf; their ids in order."""
    return [tree.append_message(message) for message in messages]


def two_branches(tree: SessionTree) -> dict[str, str]:
    """u1 - a1 - u2 - a2 (branch A, the leaf) and u1 - a1 - u3 - a3 (branch B).

    Branch A reads and edits ``src/a.py``; branch B reads ``docs/b.md``. The leaf ends on a2.
    """
    ids: dict[str, str] = {}
    ids["u1"], ids["a1"] = linear(tree, user("Start the project"), assistant("Started."))
    ids["u3"], ids["a3"] = linear(
        tree,
        user("Write the docs"),
        assistant("Reading docs.", ("read", {"path": "docs/b.md"})),
    )
    tree.branch(ids["a1"])
    ids["u2"], ids["a2"] = linear(
        tree,
        user("Fix the parser"),
        assistant("Fixed it.", ("read", {"path": "src/a.py"}), ("edit", {"path": "src/a.py"})),
    )
    return ids
