"""Tool-output pruning (pi-behaviour.md §6) and its lossless form (DESIGN decision 6)."""

from __future__ import annotations

import copy
import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest

from contextree.compaction.prune import (
    apply_prune,
    decide_prune,
    prune_placeholder,
    prune_tool_outputs,
    worth_pruning,
)
from contextree.context.convert import convert_to_llm
from contextree.entries.types import Entry
from contextree.errors import EntryNotFoundError
from contextree.session import SessionTree
from contextree.settings import PruneSettings
from core_helpers import Chain, assistant, chars, read_json_lines, tool_call, tool_result, user

SMALL = PruneSettings(protect_tokens=100, minimum_savings=10)


def _results(chain: Chain, *sizes: int, name: str = "bash") -> list[Entry]:
    """Append one tool call and result per size (tokens), oldest first."""
    out = []
    for size in sizes:
        n = len(chain.entries)
        chain.msg(assistant("", calls=[tool_call(f"c{n}", name)]))
        out.append(chain.msg(tool_result(f"c{n}", chars(size), name=name)))
    return out


def _ids(entries: list[Entry]) -> list[str]:
    return [e["id"] for e in entries]


def test_the_protect_window_is_checked_before_adding() -> None:
    chain = Chain()
    r1, _r2, _r3 = _results(chain, 60, 60, 60)
    decision = decide_prune(chain.entries, SMALL)
    # Newest first: r3 (0 < 100) and r2 (60 < 100, crossing the window) stay protected.
    assert [c.entry["id"] for c in decision.candidates] == [r1["id"]]
    assert [c.tokens for c in decision.candidates] == [60]


def test_protected_tools_are_never_pruned_but_fill_the_window() -> None:
    chain = Chain()
    old = _results(chain, 50)
    reads = _results(chain, 50, name="read")
    _results(chain, 50, name="skill")
    _results(chain, 60)
    decision = decide_prune(chain.entries, SMALL)
    assert _ids([c.entry for c in decision.candidates]) == _ids(old)
    assert reads[0]["id"] not in _ids([c.entry for c in decision.candidates])


def test_already_pruned_results_count_toward_the_window_and_are_not_candidates() -> None:
    chain = Chain()
    r1, r2 = _results(chain, 60, 60)
    pruned = _results(chain, 120)[0]
    pruned["message"]["prunedAt"] = 5
    decision = decide_prune(chain.entries, SMALL)
    # The pruned result alone fills the window, so both older results are candidates.
    assert _ids([c.entry for c in decision.candidates]) == [r2["id"], r1["id"]]


def test_only_tool_results_are_considered() -> None:
    chain = Chain()
    chain.msg(user(chars(500)))
    chain.msg(assistant(chars(500)))
    chain.add("custom_message", customType="x", content=chars(500), display=True)
    assert decide_prune(chain.entries, SMALL).candidates == []
    r1 = _results(chain, 30)[0]
    _results(chain, 110)
    assert _ids([c.entry for c in decide_prune(chain.entries, SMALL).candidates]) == [r1["id"]]


def test_results_no_longer_in_the_context_are_not_walked() -> None:
    # The fork walks the whole path and would prune ``early``; it is not sent to the model
    # any more (nothing is kept before the compaction), so we leave it alone (our deviation).
    chain = Chain()
    _results(chain, 50)
    chain.add("compaction", summary="S", firstKeptEntryId="e003", tokensBefore=1)
    _results(chain, 120)
    assert decide_prune(chain.entries, SMALL).candidates == []


def test_minimum_savings_counts_tokens_minus_the_placeholder() -> None:
    chain = Chain()
    _results(chain, 20)
    _results(chain, 120)
    placeholder_tokens = math.ceil(len(prune_placeholder(20)) / 4)
    assert placeholder_tokens == 8  # "[Output truncated - 20 tokens]" is 30 chars
    saved = 20 - placeholder_tokens
    at_limit = decide_prune(chain.entries, PruneSettings(protect_tokens=100, minimum_savings=saved))
    assert at_limit.tokens_saved == saved
    assert at_limit.pruned_count == 1
    above = decide_prune(
        chain.entries, PruneSettings(protect_tokens=100, minimum_savings=saved + 1)
    )
    assert above.candidates == []
    assert above.tokens_saved == 0


def test_results_whose_placeholder_is_not_under_half_their_size_are_kept() -> None:
    # Our deviation (docs/compatibility.md, row 15): pi also replaces a 1-token "(no output)"
    # by the 8-token placeholder. A result is pruned only when 2 x placeholder < its tokens.
    assert not worth_pruning(1)
    assert not worth_pruning(16)
    assert worth_pruning(17)
    chain = Chain()
    tiny, at_limit, small = _results(chain, 1, 16, 17)
    _results(chain, 120)
    decision = decide_prune(chain.entries, PruneSettings(protect_tokens=100, minimum_savings=1))
    assert _ids([c.entry for c in decision.candidates]) == [small["id"]]
    assert decision.tokens_saved == 17 - 8
    assert tiny["id"] not in _ids([c.entry for c in decision.candidates])
    assert at_limit["id"] not in _ids([c.entry for c in decision.candidates])


def test_kept_small_results_still_fill_the_protect_window() -> None:
    chain = Chain()
    old = _results(chain, 60)[0]
    _results(chain, *([10] * 12))  # 120 tokens of results too small to prune
    decision = decide_prune(chain.entries, SMALL)
    assert _ids([c.entry for c in decision.candidates]) == [old["id"]]


def test_default_settings_match_the_fork() -> None:
    settings = PruneSettings()
    assert (settings.protect_tokens, settings.minimum_savings) == (40_000, 20_000)
    assert settings.protected_tools == ("skill", "read")
    for old_size, expected in ((19_000, 0), (21_000, 1)):
        chain = Chain()
        _results(chain, old_size, 40_000)
        # The 40000-token result is protected (the window was empty); the older one saves
        # old_size - 8 tokens, which must reach 20000.
        assert decide_prune(chain.entries).pruned_count == expected


def test_apply_uses_the_placeholder_one_stamp_and_keeps_the_original() -> None:
    chain = Chain()
    r1, r2 = _results(chain, 30, 40)
    _results(chain, 120)
    originals = copy.deepcopy([r1, r2])
    clock = itertools.count(1000)
    decision, updated = prune_tool_outputs(chain.entries, SMALL, now=lambda: next(clock))
    assert decision.pruned_count == 2
    assert _ids(updated) == [r2["id"], r1["id"]]
    assert [u["message"]["prunedAt"] for u in updated] == [1000, 1000]  # one stamp per run
    for entry, original in zip(updated, reversed(originals), strict=True):
        tokens = 40 if entry["id"] == r2["id"] else 30
        assert entry["message"]["content"] == [
            {"type": "text", "text": f"[Output truncated - {tokens} tokens]"}
        ]
        assert entry["message"]["prunedContent"] == original["message"]["content"]
        assert {
            k: v
            for k, v in entry["message"].items()
            if k not in ("content", "prunedContent", "prunedAt")
        } == {k: v for k, v in original["message"].items() if k != "content"}
    assert [r1, r2] == originals  # the input entries are not mutated


def test_nothing_worth_pruning_returns_no_entries() -> None:
    chain = Chain()
    _results(chain, 10, 10)
    decision, updated = prune_tool_outputs(chain.entries, SMALL, now=lambda: 1)
    assert (decision.pruned_count, decision.tokens_saved, updated) == (0, 0, [])
    assert apply_prune(decision) == []


def _pruned_session(path: Path) -> tuple[SessionTree, list[str]]:
    tree = SessionTree.open(path, cwd="/work")
    tree.append_message(user("go"))
    ids = []
    for n, size in enumerate((300, 200, 20, 150)):
        tree.append_message(assistant("", calls=[tool_call(f"c{n}")]))
        ids.append(tree.append_message(tool_result(f"c{n}", chars(size), details={"n": n})))
    tree.append_message(assistant("done"))
    return tree, ids


def test_pruning_survives_a_rewrite_and_reopen_losslessly(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    tree, ids = _pruned_session(path)
    before = {line.get("id"): line for line in read_json_lines(path)}
    raw_before = path.read_bytes().splitlines()
    decision, updated = prune_tool_outputs(
        tree.get_branch(), PruneSettings(protect_tokens=100, minimum_savings=10), now=lambda: 77
    )
    # Newest first: 150 (protected), 20 (170 >= 100: candidate), 200, 300.
    assert _ids([c.entry for c in decision.candidates]) == [ids[2], ids[1], ids[0]]
    tree.rewrite_entries(updated)

    reopened = SessionTree.open(path)
    assert reopened.report.clean
    raw_after = path.read_bytes().splitlines()
    assert len(raw_after) == len(raw_before)
    for n, entry_id in enumerate(ids[:3]):
        message = reopened.get_entry(entry_id)["message"]  # type: ignore[index]
        tokens = (300, 200, 20)[n]
        assert message["content"] == [{"type": "text", "text": prune_placeholder(tokens)}]
        assert message["prunedContent"] == before[entry_id]["message"]["content"]
        assert message["prunedAt"] == 77
        assert message["details"] == {"n": n}
    assert reopened.get_entry(ids[3]) == before[ids[3]]
    changed = {json.dumps(json.loads(line)) for line in raw_after} - {
        json.dumps(json.loads(line)) for line in raw_before
    }
    assert len(changed) == 3  # only the pruned lines differ

    llm = convert_to_llm(reopened.build_session_context().messages)
    results = {m["toolCallId"]: m for m in llm if m["role"] == "toolResult"}
    assert results["c0"]["content"] == [{"type": "text", "text": "[Output truncated - 300 tokens]"}]
    assert results["c2"]["content"] == [{"type": "text", "text": "[Output truncated - 20 tokens]"}]
    assert "prunedContent" not in results["c0"]
    assert results["c3"]["content"] == [{"type": "text", "text": chars(150)}]

    # A second run finds nothing new: pruned results are never candidates again.
    again, more = prune_tool_outputs(reopened.get_branch(), SMALL, now=lambda: 78)
    assert (again.pruned_count, more) == (0, [])


def test_rewrite_of_unknown_entries_is_refused(tmp_path: Path) -> None:
    tree, _ = _pruned_session(tmp_path / "s.jsonl")
    data = (tmp_path / "s.jsonl").read_bytes()
    ghost: dict[str, Any] = {"type": "message", "id": "ghost", "parentId": None}
    with pytest.raises(EntryNotFoundError):
        tree.rewrite_entries([ghost])
    assert (tmp_path / "s.jsonl").read_bytes() == data


def test_only_the_current_context_is_pruned() -> None:
    # Our deviation from the fork: results before the latest compaction's kept region are not
    # sent to the model any more, so they are neither candidates nor counted as savings.
    chain = Chain()
    forgotten = _results(chain, 80, 80, 80)
    chain.msg(user("next task"))
    kept_start = chain.entries[-1]["id"]
    kept = _results(chain, 25)
    chain.add(
        "compaction",
        summary="s",
        firstKeptEntryId=kept_start,
        tokensBefore=1,
        fromHook=False,
        fromExtension=False,
    )
    recent = _results(chain, 60, 60, 60)
    decision = decide_prune(chain.entries, SMALL)
    chosen = _ids([c.entry for c in decision.candidates])
    assert chosen == _ids(recent[:1]) + _ids(kept)
    assert not set(chosen) & set(_ids(forgotten))


def test_no_placeholder_on_pis_fixture_is_as_long_as_its_output() -> None:
    # Issue 12: on before-compaction, 31 of 117 pruned outputs got a placeholder at least as
    # long as the original ("(no output)" -> "[Output truncated - 3 tokens]").
    from pi_fixtures import pi_fixture

    tree = SessionTree.open(pi_fixture("before-compaction.jsonl"), create=False)
    everything = PruneSettings(protect_tokens=0, minimum_savings=0, protected_tools=())
    decision, updated = prune_tool_outputs(tree.get_branch_view(), everything)
    assert decision.candidates
    assert len(updated) == decision.pruned_count
    for candidate in decision.candidates:
        assert 2 * math.ceil(len(prune_placeholder(candidate.tokens)) / 4) < candidate.tokens


def test_a_saved_original_is_never_overwritten_when_prunedat_was_lost() -> None:
    # issue 15 item 8: a line with prunedContent but no prunedAt (edited by hand, or by a tool
    # that kept only pi's keys) is already pruned; pruning it again would replace the saved
    # original with the placeholder.
    chain = Chain()
    old = _results(chain, 60)[0]
    old["message"]["prunedContent"] = [{"type": "text", "text": "the real original"}]
    _results(chain, 120)
    decision = decide_prune(chain.entries, SMALL)
    assert old["id"] not in _ids([c.entry for c in decision.candidates])
    # And apply_prune, given such an entry anyway, keeps the original it holds.
    from contextree.compaction.prune import PruneCandidate, PruneDecision

    (updated,) = apply_prune(PruneDecision([PruneCandidate(old, 60)], 50))
    assert updated["message"]["prunedContent"] == [{"type": "text", "text": "the real original"}]
    assert updated["message"]["prunedAt"] is not None
