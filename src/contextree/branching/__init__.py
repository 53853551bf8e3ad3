"""Branch summarization: collect, prepare and summarize an abandoned branch; ``navigate_tree``.

Moving the leaf elsewhere in the tree abandons a branch; a branch summary keeps what happened
there in the context of the new position (pi-behaviour.md §9).
"""

from typing import TYPE_CHECKING

from contextree.branching.collect import BranchCollection, collect_entries_for_branch_summary
from contextree.branching.prepare import BranchPreparation, prepare_branch_entries

if TYPE_CHECKING:
    from contextree.branching.navigate import (
        LEAF_CUSTOM_TYPE,
        NavigationResult,
        TreePreparation,
        navigate_tree,
        persist_leaf,
        resolve_entry_id,
    )
    from contextree.branching.summarize import BranchSummaryResult, generate_branch_summary
    from contextree.branching.uncompact import UncompactResult, uncompact, uncompact_json

__all__ = [
    "LEAF_CUSTOM_TYPE",
    "BranchCollection",
    "BranchPreparation",
    "BranchSummaryResult",
    "NavigationResult",
    "TreePreparation",
    "UncompactResult",
    "collect_entries_for_branch_summary",
    "generate_branch_summary",
    "navigate_tree",
    "persist_leaf",
    "prepare_branch_entries",
    "resolve_entry_id",
    "uncompact",
    "uncompact_json",
]

_LAZY = {
    "BranchSummaryResult": "summarize",
    "generate_branch_summary": "summarize",
    "LEAF_CUSTOM_TYPE": "navigate",
    "NavigationResult": "navigate",
    "TreePreparation": "navigate",
    "navigate_tree": "navigate",
    "persist_leaf": "navigate",
    "resolve_entry_id": "navigate",
    "UncompactResult": "uncompact",
    "uncompact": "uncompact",
    "uncompact_json": "uncompact",
}


def __getattr__(name: str) -> object:
    # Summaries and navigation pull in the model-client layer; load them on use so that the
    # pure collect/prepare functions stay cheap to import.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'contextree.branching' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"contextree.branching.{module}"), name)
