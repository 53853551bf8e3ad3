"""The comparisons with pi 0.73.1, shared by the generated sessions, the fixtures and the files
contextree writes: per leaf the context, the LLM messages and their serialization; per leaf and
keep budget ``prepare_compaction``; per (old leaf, target) the branch collection."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from contextree.branching import collect_entries_for_branch_summary
from contextree.compaction.cut_points import find_turn_start_index
from contextree.compaction.prepare import (
    CompactionPreparation,
    NothingToCompact,
    prepare_compaction,
)
from contextree.compaction.serialize import serialize_conversation
from contextree.context import build_session_context, convert_to_llm
from contextree.entries.types import Entry
from contextree.session import SessionTree
from contextree.settings import CompactionSettings
from differential.compare import (
    first_difference,
    for_pi,
    pi_wording,
    pruned_as_sent,
    resolve,
    text_hash,
)

Json = dict[str, Any]

_MESSAGE_LIKE = ("message", "branch_summary", "custom_message")


def pi_settings(keep: int) -> CompactionSettings:
    """pi 0.73.1's compaction settings with ``keep``: no measured-usage adjustment (§4.4)."""
    return CompactionSettings(keep_recent_tokens=keep, adjust_keep_recent_by_usage=False)


def _text(value: str, hashed: bool) -> str:
    return text_hash(value) if hashed else value


def check_contexts(
    tree: SessionTree, answer: Json, *, hashed: bool = False, whole_list: bool = True
) -> int:
    """Every leaf pi reported: our context, LLM messages and serialization equal pi's.

    ``hashed``: pi reported texts as hashes (``hashText``); ``whole_list``: also build each
    context with the list function over all entries. Returns how many leaves were compared.
    """
    stored = answer["messages"]
    entries = tree.get_entries() if whole_list else None
    for leaf, theirs in answer["contexts"].items():
        context = tree.build_session_context(leaf)
        ours = for_pi(context.messages)
        expected = resolve(theirs["messages"], stored)
        assert ours == expected, f"context of {leaf}: {first_difference(ours, expected)}"
        if entries is not None:
            # The list function over the whole file gives the same as the tree's lazy path.
            assert build_session_context(entries, leaf).messages == context.messages
        assert context.thinking_level == (theirs["thinkingLevel"] or "off"), leaf
        model = theirs["model"]
        ours_model = (
            {"provider": context.model.provider, "modelId": context.model.model_id}
            if context.model
            else None
        )
        assert ours_model == model, f"model of {leaf}"
        with pi_wording():
            llm = convert_to_llm(context.messages)
            llm_expected = pruned_as_sent(resolve(theirs["llm"], stored))
            assert llm == llm_expected, (
                f"LLM messages of {leaf}: {first_difference(llm, llm_expected)}"
            )
            if "serialized" in theirs:
                text = _text(serialize_conversation(llm), hashed)
                assert text == theirs["serialized"], f"serialization of {leaf}"
    return len(answer["contexts"])


def _first_message_like(path: list[Entry], index: int) -> int:
    for i in range(index, len(path)):
        if path[i].get("type") in _MESSAGE_LIKE:
            return i
    return index


def check_prepare(tree: SessionTree, answer: Json, *, hashed: bool = False) -> dict[str, int]:
    """Every (leaf, keep) pi prepared: ours equals pi's, apart from the documented decisions.

    - decision 4: where we find nothing to summarize, pi's lists are empty too;
    - decision 2: where pi reports a split turn whose kept region starts (after metadata) at
      a turn start, we report none and summarize pi's history plus its "turn prefix".

    Returns counts of the cases met, so a test can see that both kinds were exercised.
    """
    stored = answer["messages"]
    seen = {"equal": 0, "nothing": 0, "split_turn_rule": 0, "none": 0}
    for leaf, by_keep in answer["prepare"].items():
        path = tree.get_branch(leaf)
        for keep, theirs in by_keep.items():
            ours = prepare_compaction(path, pi_settings(int(keep)))
            where = f"prepare_compaction({leaf}, keep={keep})"
            if theirs is None:
                assert isinstance(ours, NothingToCompact), where
                assert ours.reason in ("already_compacted", "needs_migration"), where
                seen["none"] += 1
                continue
            summarize = resolve(theirs["messagesToSummarize"], stored)
            prefix = resolve(theirs["turnPrefixMessages"], stored)
            if isinstance(ours, NothingToCompact):
                assert ours.reason == "nothing_to_compact", where
                assert summarize == [] and prefix == [], f"{where}: pi summarizes something"
                seen["nothing"] += 1
                continue
            assert isinstance(ours, CompactionPreparation)
            assert ours.first_kept_entry_id == theirs["firstKeptEntryId"], where
            assert ours.tokens_before == theirs["tokensBefore"], where
            assert ours.previous_summary == theirs["previousSummary"], where
            ops = ours.file_ops
            assert {
                "read": sorted(ops.read),
                "written": sorted(ops.written),
                "edited": sorted(ops.edited),
            } == theirs["fileOps"], where
            if ours.is_split_turn == theirs["isSplitTurn"]:
                assert for_pi(ours.messages_to_summarize) == summarize, where
                assert for_pi(ours.turn_prefix_messages) == prefix, where
                with pi_wording():
                    history = serialize_conversation(convert_to_llm(ours.messages_to_summarize))
                    turn = serialize_conversation(convert_to_llm(ours.turn_prefix_messages))
                assert _text(history, hashed) == theirs["summarizeText"], where
                assert _text(turn, hashed) == theirs["prefixText"], where
                seen["equal"] += 1
                continue
            # Decision 2: pi splits, we do not, and only where the kept region's first
            # message entry starts a turn.
            assert theirs["isSplitTurn"] and not ours.is_split_turn, where
            cut = ours.first_kept_entry_index
            start = _first_message_like(path, cut)
            assert find_turn_start_index(path, start, start) == start, where
            assert for_pi(ours.messages_to_summarize) == summarize + prefix, where
            assert ours.turn_prefix_messages == [], where
            seen["split_turn_rule"] += 1
    return seen


def check_branches(tree: SessionTree, answer: Json) -> int:
    """Every (old leaf, target) pi collected: the same entries and common ancestor."""
    for old_leaf, target, ids, ancestor in answer["branch"]:
        ours = collect_entries_for_branch_summary(tree, old_leaf, target)
        assert [e.get("id") for e in ours.entries] == ids, (old_leaf, target)
        assert ours.common_ancestor_id == ancestor, (old_leaf, target)
    return len(answer["branch"])


def branch_pairs(tree: SessionTree, extra: Iterable[str] = ()) -> list[list[str]]:
    """Moves worth comparing: from every tip (and ``extra``) to every entry."""
    ids = [str(e["id"]) for e in tree.get_entries()]
    olds = dict.fromkeys([*tree.leaves(), *extra])
    return [[old, target] for old in olds for target in ids]
