"""Compaction: cut points, preparation, pruning, serialization, summaries and prompts."""

from contextree.compaction.cut_points import (
    CutPoint,
    find_cut_point,
    find_turn_start_index,
    find_valid_cut_points,
)
from contextree.compaction.file_ops import FileOps, compute_file_lists, upsert_file_tags
from contextree.compaction.options import SummaryOptions, summary_model, summary_options
from contextree.compaction.prepare import (
    CompactionPreparation,
    NothingToCompact,
    prepare_compaction,
)
from contextree.compaction.prune import (
    PruneDecision,
    apply_prune,
    decide_prune,
    prune_session,
    prune_tool_outputs,
)
from contextree.compaction.prune_decider import PruneDecider
from contextree.compaction.serialize import serialize_conversation

__all__ = [
    "CompactionPreparation",
    "CompactionResult",
    "CutPoint",
    "FileOps",
    "NothingToCompact",
    "OfflineSummarizer",
    "PruneDecider",
    "PruneDecision",
    "SummaryOptions",
    "apply_prune",
    "compact",
    "compact_session",
    "compute_file_lists",
    "decide_prune",
    "find_cut_point",
    "find_turn_start_index",
    "find_valid_cut_points",
    "prepare_compaction",
    "prune_session",
    "prune_tool_outputs",
    "serialize_conversation",
    "summary_model",
    "summary_options",
    "upsert_file_tags",
]


def __getattr__(name: str) -> object:
    # compact() and the offline summarizer pull in the model-client layer; load them on use
    # so that importing the pure planning functions stays cheap.
    if name in ("compact", "CompactionResult"):
        from contextree.compaction import summarize

        return getattr(summarize, name)
    if name == "compact_session":
        from contextree.compaction.run import compact_session

        return compact_session
    if name == "OfflineSummarizer":
        from contextree.compaction.offline import OfflineSummarizer

        return OfflineSummarizer
    raise AttributeError(f"module 'contextree.compaction' has no attribute {name!r}")
