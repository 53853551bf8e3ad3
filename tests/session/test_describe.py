"""``describe_session``: what ``contextree info`` shows, computed in the library (issue 12
point 9: the command stays thin) and counted as the other commands count (point 4)."""

from __future__ import annotations

from pathlib import Path

from contextree.context.convert import convert_to_llm
from contextree.session.describe import describe_session
from contextree.session.tree import SessionTree
from contextree.tokens.usage import estimate_current_tokens
from core_helpers import assistant, user
from pi_fixtures import pi_fixture_or_skip


def test_a_small_session(tmp_path: Path) -> None:
    tree = SessionTree.open(tmp_path / "s.jsonl", cwd="/work")
    tree.append_message(user("hello"))
    tree.append_message(assistant("hi"))
    tree.append_message(
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "a",
            "exitCode": 0,
            "excludeFromContext": True,  # in the session context, never sent
            "timestamp": 1,
        }
    )
    tree.append_session_info("first try")
    tree.append_thinking_level_change("high")

    info = describe_session(tree)

    assert info.session_id == tree.session_id
    assert info.name == "first try"
    assert (info.version, info.migrated_from, info.cwd) == ("3", None, "/work")
    assert info.entries == 5
    assert info.message_roles == {"user": 1, "assistant": 1, "bashExecution": 1}
    assert info.entry_types == {"session_info": 1, "thinking_level_change": 1}
    assert (info.leaves, info.leaf_id) == (1, tree.leaf_id)
    assert info.thinking_level == "high"
    assert info.context_messages == 2
    assert info.problems == 0


def test_the_counts_agree_with_the_context_on_pis_file() -> None:
    tree = SessionTree.open(pi_fixture_or_skip("before-compaction.jsonl"), create=False)
    context = tree.build_session_context()

    info = describe_session(tree)

    assert info.context_messages == len(convert_to_llm(context.messages)) == 446
    assert info.estimate == estimate_current_tokens(context.messages)
    assert info.estimate.tokens == 180_820
    assert info.entries == len(tree) == 1002
    assert sum(info.message_roles.values()) + sum(info.entry_types.values()) == info.entries
    assert info.migrated_from == 1
    assert info.model == "anthropic/claude-opus-4-5"
