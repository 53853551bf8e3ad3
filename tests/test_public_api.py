"""Every name a package exports exists, so ``__all__`` and the real exports cannot drift."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = [
    "contextree",
    "contextree.entries",
    "contextree.store",
    "contextree.session",
    "contextree.context",
    "contextree.tokens",
    "contextree.settings",
    "contextree.hooks",
    "contextree.llm",
    "contextree.compaction",
    "contextree.branching",
    "contextree.runtime.tools",
    "contextree.errors",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_name_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported, f"{name} declares no __all__"
    assert len(set(exported)) == len(exported)
    for attribute in exported:
        assert getattr(module, attribute, None) is not None, f"{name}.{attribute} is missing"


def test_the_design_api_names_exist() -> None:
    from contextree import SessionTree
    from contextree.branching import collect_entries_for_branch_summary, prepare_branch_entries
    from contextree.compaction import (
        compact,
        find_cut_point,
        prepare_compaction,
        prune_tool_outputs,
        serialize_conversation,
    )
    from contextree.context import convert_to_llm
    from contextree.runtime.agent import AgentSession
    from contextree.tokens import estimate_tokens

    for method in (
        "open",
        "in_memory",
        "append_message",
        "append_compaction",
        "branch",
        "branch_with_summary",
        "get_branch",
        "get_tree",
        "build_session_context",
    ):
        assert callable(getattr(SessionTree, method))
    assert all(
        callable(f)
        for f in (
            collect_entries_for_branch_summary,
            prepare_branch_entries,
            compact,
            find_cut_point,
            prepare_compaction,
            prune_tool_outputs,
            serialize_conversation,
            convert_to_llm,
            estimate_tokens,
            AgentSession,
        )
    )
