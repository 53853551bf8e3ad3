"""A session written the way contextree's own commands write one: appends, a compaction with
the offline summarizer (``compact_session``), a move with a branch summary (``navigate_tree``),
a move recorded on disk (``persist_leaf``), labels, a prune (one atomic rewrite) and a second
compaction. No model is called."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

from contextree.branching.navigate import navigate_tree, persist_leaf
from contextree.compaction.offline import OfflineSummarizer
from contextree.compaction.prune import prune_session
from contextree.compaction.run import CompactionOutcome, compact_session
from contextree.session import SessionTree
from contextree.settings import CompactionSettings, PruneSettings

Json = dict[str, Any]

_calls = itertools.count(1)


def _user(text: str) -> Json:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def _assistant(text: str, calls: list[Json] | None = None, total: int = 3000) -> Json:
    content: list[Json] = [{"type": "text", "text": text}, *(calls or [])]
    return {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "openai",
        "model": "gpt-4o-mini",
        "usage": {
            "input": total - 100,
            "output": 100,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": total,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": 2,
    }


def _turn(tree: SessionTree, ask: str, tool: str, path: str, output: str) -> str:
    """A user turn with one tool call and its result; returns the user message's id."""
    user_id = tree.append_message(_user(ask))
    call_id = f"call_{next(_calls)}"
    arguments: Json = {"path": path} if tool != "bash" else {"command": f"pytest {path}"}
    call = {"type": "toolCall", "id": call_id, "name": tool, "arguments": arguments}
    tree.append_message(_assistant(f"Running {tool} on {path}.", [call]))
    tree.append_message(
        {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": tool,
            "content": [{"type": "text", "text": output}],
            "isError": False,
            "timestamp": 3,
        }
    )
    tree.append_message(_assistant(f"Done with {path}."))
    return user_id


def _compact(tree: SessionTree, keep: int) -> CompactionOutcome:
    outcome = asyncio.run(
        compact_session(
            tree,
            OfflineSummarizer(),
            settings=CompactionSettings(keep_recent_tokens=keep, adjust_keep_recent_by_usage=False),
        )
    )
    assert isinstance(outcome, CompactionOutcome), outcome
    return outcome


def write_session(tree: SessionTree) -> dict[str, str]:
    """Continue ``tree`` with contextree's workflows; returns ids of landmarks."""
    marks: dict[str, str] = {}
    log = "\n".join(f"line {i}: all good" for i in range(400))
    marks["first"] = _turn(
        tree,
        "Fix the parser in src/parse.py. Do not touch tests/golden.txt.",
        "read",
        "src/parse.py",
        "def parse(s):\n    return s.split()\n" * 40,
    )
    _turn(tree, "Now edit it to handle quotes.", "edit", "src/parse.py", "Applied 1 edit.")
    _turn(tree, "Run the tests.", "bash", "tests/test_parse.py", log)
    tree.append_thinking_level_change("high")
    marks["compaction"] = _compact(tree, 600).entry["id"]
    marks["after"] = _turn(tree, "Also update the README.", "write", "README.md", "Wrote README.md")
    _turn(tree, "Run the tests again.", "bash", "tests", log)
    marks["abandoned"] = str(tree.leaf_id)
    # Back to the first request after the compaction, leaving a summary of the branch.
    result = asyncio.run(
        navigate_tree(
            tree, marks["after"], summarize=True, client=OfflineSummarizer(), label="retry"
        )
    )
    assert result.summary_entry is not None
    marks["branch_summary"] = str(result.summary_entry["id"])
    _turn(tree, "Instead, document the parser in docs/parser.md.", "write", "docs/parser.md", "ok")
    _turn(tree, "Check the docs build.", "bash", "docs", log)
    _turn(tree, "Run the full suite.", "bash", "tests", log)
    tree.append_label(marks["first"], "start")
    marks["tip"] = str(tree.leaf_id)
    # A move without a summary, recorded on disk (decision 8), then back to the tip.
    asyncio.run(navigate_tree(tree, marks["abandoned"]))
    marks["leaf_marker"] = str(persist_leaf(tree))
    asyncio.run(navigate_tree(tree, marks["tip"]))
    persist_leaf(tree)
    decision = prune_session(tree, PruneSettings(protect_tokens=500, minimum_savings=100))
    assert decision.pruned_count > 0
    _turn(tree, "Summarize what changed.", "read", "docs/parser.md", "# Parser\n" * 50)
    marks["second_compaction"] = _compact(tree, 300).entry["id"]
    tree.append_message(_user("Thanks, that is all."))
    return marks


def new_session(path: Path) -> SessionTree:
    """A new file-backed session at ``path``."""
    return SessionTree.open(path, cwd="/work/project")
