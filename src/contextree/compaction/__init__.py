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
from contextree.compaction.serialize import serialize_conversation
from contextree.compaction.summary_request import Summarizer, SummaryReply, SummaryRequest

__all__ = [
    "CompactionPreparation",
    "CompactionResult",
    "CutPoint",
    "FileOps",
    "ModelSummarizer",
    "NothingToCompact",
    "OfflineSummarizer",
    "PruneDecider",
    "PruneDecision",
    "Summarizer",
    "SummaryOptions",
    "SummaryReply",
    "SummaryRequest",
    "apply_prune",
    "as_summarizer",
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


_PRUNING = frozenset(
    ("PruneDecision", "apply_prune", "decide_prune", "prune_session", "prune_tool_outputs")
)


def __getattr__(name: str) -> object:
    # compact() and the offline summarizer pull in the model-client layer; load them on use
    # so that importing the pure planning functions stays cheap. Pruning too: `compact` does
    # not prune, and its modules' imports were 3-4 ms of the command's start.
    if name in _PRUNING:
        from contextree.compaction import prune

        return getattr(prune, name)
    if name == "PruneDecider":
        from contextree.compaction.prune_decider import PruneDecider

        return PruneDecider
    if name in ("compact", "CompactionResult", "as_summarizer"):
        from contextree.compaction import summarize

        return getattr(summarize, name)
    if name == "compact_session":
        from contextree.compaction.run import compact_session

        return compact_session
    if name == "ModelSummarizer":
        from contextree.compaction.summary_prompt import ModelSummarizer

        return ModelSummarizer
    if name == "OfflineSummarizer":
        from contextree.compaction.offline import OfflineSummarizer

        return OfflineSummarizer
    from contextree.compaction.submodules import submodule  # (when no name above)

    return submodule(__name__, name)
