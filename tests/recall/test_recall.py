"""recall finds what a compaction folded away and its summary dropped: exact identifiers,
paths, numbers and tool outputs, on the path or (``all_branches``) on other branches."""

from __future__ import annotations

from pathlib import Path

import pytest

from contextree.recall import folded_entry_ids, query_terms, recall, recall_json
from contextree.security.redact import RedactionSettings
from contextree.session.tree import SessionTree
from contextree.settings.load import Settings
from recall.recall_session import (
    ERROR,
    PATH,
    PORT,
    TOOL_DETAIL,
    add_turns,
    compacted_file,
    entry_id_holding,
)


@pytest.fixture
def tree(tmp_path: Path) -> SessionTree:
    return compacted_file(tmp_path / "s.jsonl")


def test_finds_a_statement_the_summary_dropped(tree: SessionTree) -> None:
    summary = str(tree.latest_compaction()["summary"])  # type: ignore[index]
    assert PORT not in summary and TOOL_DETAIL not in summary
    result = recall(tree, PORT)
    assert [hit.entry_id for hit in result.hits] == [entry_id_holding(tree, PORT)]
    hit = result.hits[0]
    assert hit.role == "assistant" and f"[{PORT}]" in hit.snippet and hit.timestamp
    assert result.index == "sqlite-fts5" and not result.any_term


@pytest.mark.parametrize(
    ("query", "holder"),
    [(ERROR, ERROR), (PATH, PATH), ("client.py", PATH), (TOOL_DETAIL, TOOL_DETAIL)],
)
def test_exact_identifiers_paths_and_tool_outputs_match(
    tree: SessionTree, query: str, holder: str
) -> None:
    ids = [hit.entry_id for hit in recall(tree, query).hits]
    assert entry_id_holding(tree, holder) in ids


def test_a_term_must_match_whole_not_as_a_prefix(tree: SessionTree) -> None:
    assert recall(tree, "847").hits == []
    assert recall(tree, "CONN_RES").hits == []


def test_only_folded_entries_are_searched(tree: SessionTree) -> None:
    in_context = {i for i in tree.build_session_context().entry_ids if i}
    folded = folded_entry_ids(tree)
    assert folded and not folded & in_context
    # "done 32" is in a kept turn: in the context, so not recalled.
    assert recall(tree, '"done 32"').hits == []
    assert recall(tree, '"done 0"').hits


def test_every_term_else_any_term(tree: SessionTree) -> None:
    assert recall(tree, f"{PORT} {ERROR}").hits
    fallback = recall(tree, f"{PORT} zebra")
    assert fallback.any_term and fallback.hits and fallback.complete == 0


def test_entries_holding_some_terms_fill_the_page_after_those_holding_all(
    tree: SessionTree,
) -> None:
    # Only the reply "done 3 ok ok ..." holds all three terms; other replies hold two.
    result = recall(tree, "done ok 3", limit=5)
    assert result.complete == 1 and not result.any_term
    assert len(result.hits) == 5 and len({hit.entry_id for hit in result.hits}) == 5
    assert result.hits[0].entry_id == entry_id_holding(tree, "done 3 ")
    payload = recall_json(result)
    assert [hit["everyTerm"] for hit in payload["hits"]] == [True, False, False, False, False]  # type: ignore[index, union-attr]


def test_a_page_full_of_complete_hits_gets_no_partial_ones(tree: SessionTree) -> None:
    result = recall(tree, "done ok", limit=4)
    assert result.complete == 4 and len(result.hits) == 4


def test_no_compaction_means_nothing_is_folded(tmp_path: Path) -> None:
    tree = SessionTree.open(tmp_path / "plain.jsonl", cwd="/w")
    add_turns(tree, 2)
    result = recall(tree, "filler")
    assert result.searched == 0 and result.hits == []


def test_all_branches_searches_a_branch_left_behind(tree: SessionTree) -> None:
    leaf = tree.leaf_id
    assert leaf is not None
    tree.append_message({"role": "user", "content": "abandoned idea quux_4711", "timestamp": 9})
    tree.branch(leaf)
    tree.append_message({"role": "user", "content": "another way", "timestamp": 10})
    assert recall(tree, "quux_4711").hits == []
    assert [h.role for h in recall(tree, "quux_4711", all_branches=True).hits] == ["user"]


def test_leaf_option_searches_from_another_position(tree: SessionTree) -> None:
    compaction = tree.latest_compaction()
    assert compaction is not None
    before = str(compaction["parentId"])
    assert recall(tree, PORT, leaf_id=before).searched == 0  # no compaction before it


def test_redaction_applies_to_what_is_indexed(tmp_path: Path) -> None:
    tree = SessionTree.open(tmp_path / "s.jsonl", cwd="/w")
    tree.append_message(
        {"role": "user", "content": "the key is sk-proj-abcdefghijklmnop1234567890", "timestamp": 0}
    )
    add_turns(tree, 30)
    import asyncio

    from contextree.compaction import OfflineSummarizer, compact_session
    from contextree.settings import CompactionSettings

    asyncio.run(
        compact_session(
            tree, OfflineSummarizer(), settings=CompactionSettings(keep_recent_tokens=2000)
        )
    )
    result = recall(tree, '"the key is"')
    assert result.hits and "sk-proj" not in result.hits[0].snippet
    assert "REDACTED" in result.hits[0].snippet
    cache = tmp_path / "home-cache"
    settings = Settings(recall_index_dir=str(cache))
    recall(tree, "key", settings=settings)
    stored = b"".join(p.read_bytes() for p in cache.iterdir())
    assert b"abcdefghijklmnop1234567890" not in stored
    custom = Settings(
        recall_index_dir=str(cache), redaction=RedactionSettings(patterns=(r"the key",))
    )
    assert recall(tree, '"the key"', settings=custom).hits == []


def test_query_terms() -> None:
    assert query_terms('port 8472 "two words" ... src/a.py') == [
        "port",
        "8472",
        "two words",
        "src/a.py",
    ]


def test_json_shape(tree: SessionTree) -> None:
    payload = recall_json(recall(tree, PORT))
    assert payload["hits"][0]["entryId"] == entry_id_holding(tree, PORT)  # type: ignore[index]
    assert set(payload) == {
        "query",
        "terms",
        "searched",
        "allBranches",
        "anyTerm",
        "complete",
        "index",
        "notices",
        "hits",
    }
