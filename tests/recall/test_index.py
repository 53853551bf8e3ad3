"""The index is a cache: built on first use, caught up with appends by any writer, rebuilt
when missing, damaged or out of date, and replaced by a plain scan without FTS5."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path

import pytest

from contextree.recall import RecallIndex, index_path, open_recall_index, recall
from contextree.recall import index as index_module
from contextree.session.tree import SessionTree
from contextree.settings.load import Settings
from recall.recall_session import PORT, build, compacted_file, entry_id_holding


def _folded_line(tree: SessionTree, entry_id: str, text: str) -> bytes:
    """A line as pi would append it: a user message on a branch off the folded part."""
    entry = {
        "type": "message",
        "id": entry_id,
        "parentId": tree.get_branch()[0]["id"],
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": text, "timestamp": 0},
    }
    return (json.dumps(entry) + "\n").encode()


def test_built_on_first_use_then_fresh(tmp_path: Path) -> None:
    tree = compacted_file(tmp_path / "s.jsonl")
    first = recall(tree, PORT)
    assert first.sync is not None and first.sync.rebuilt and first.sync.reason == "missing"
    again = recall(SessionTree.open(tmp_path / "s.jsonl"), PORT)
    assert again.sync is not None and again.sync.reason == "fresh"
    assert again.hits == first.hits


def test_the_cache_is_no_file_pi_lists(tmp_path: Path) -> None:
    tree = compacted_file(tmp_path / "s.jsonl")
    recall(tree, PORT)
    cached = index_path(tmp_path / "s.jsonl", Path.home() / ".cache" / "contextree" / "recall")
    assert cached.is_file() and cached.suffix == ".db"
    assert oct(cached.stat().st_mode & 0o777) == "0o600"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_entries_appended_by_another_writer_are_noticed(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    tree = compacted_file(path)
    recall(tree, PORT)
    # pi appends to the file and knows nothing of the index.
    with path.open("ab") as file:
        file.write(_folded_line(tree, "abcd0001", "pi wrote zyxwv_42 here"))
    reopened = SessionTree.open(path)
    # Loaded as the leaf (the last line); searched from the leaf before it, as a branch.
    result = recall(reopened, "zyxwv_42", leaf_id=tree.leaf_id, all_branches=True)
    assert result.sync is not None and result.sync.reason == "appended"
    assert result.sync.added == 1
    assert [hit.entry_id for hit in result.hits] == ["abcd0001"]


def test_our_own_appends_are_indexed_incrementally(tmp_path: Path) -> None:
    tree = compacted_file(tmp_path / "s.jsonl")
    index = open_recall_index(tree)
    assert index.sync(tree).rebuilt
    tree.append_message({"role": "user", "content": "new detail qwerty_9", "timestamp": 0})
    report = index.sync(tree)
    assert (report.rebuilt, report.added, report.reason) == (False, 1, "appended")
    assert index.sync(tree).reason == "fresh"
    index.close()


def test_a_rewritten_session_rebuilds_the_index(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    tree = compacted_file(path)
    recall(tree, PORT)
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data.replace(PORT.encode(), b"9999"))  # a new file: another inode
    result = recall(SessionTree.open(path), "9999")
    assert result.sync is not None and result.sync.rebuilt and result.sync.reason == "rewritten"
    assert result.hits and recall(SessionTree.open(path), PORT).hits == []


def test_a_damaged_index_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    tree = compacted_file(path)
    recall(tree, PORT)
    cached = index_path(path, Path.home() / ".cache" / "contextree" / "recall")
    cached.write_bytes(b"this is not a database" * 100)
    result = recall(SessionTree.open(path), PORT)
    assert result.sync is not None and result.sync.rebuilt and result.hits


def test_other_redaction_rules_rebuild_the_index(tmp_path: Path) -> None:
    tree = compacted_file(tmp_path / "s.jsonl")
    recall(tree, PORT)
    from contextree.security.redact import RedactionSettings

    settings = Settings(redaction=RedactionSettings(patterns=(PORT,)))
    result = recall(tree, PORT, settings=settings)
    assert result.sync is not None and result.sync.reason == "settings changed"
    assert result.hits == []


def test_without_fts5_a_plain_scan_with_a_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "fts5_available", lambda: False)
    tree = compacted_file(tmp_path / "s.jsonl")
    result = recall(tree, PORT)
    assert result.index == "scan"
    assert result.notices == [index_module.NO_FTS5_NOTICE]
    assert [h.entry_id for h in result.hits] == [entry_id_holding(tree, PORT)]
    assert "[8472]" in result.hits[0].snippet


def test_in_memory_sessions_get_an_index_in_memory() -> None:
    tree = build(SessionTree.in_memory(cwd="/w"))
    result = recall(tree, PORT)
    assert result.index == "sqlite-fts5" and len(result.hits) == 1


def test_sqlite_sessions_keep_the_index_in_their_database(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path}/s.db#one"
    tree = build(SessionTree.open(url, cwd="/w"))
    index = open_recall_index(tree)
    assert isinstance(index, RecallIndex)
    result = recall(tree, PORT, index=index)
    assert result.hits
    index.close()
    tables = {
        row[0]
        for row in sqlite3.connect(tmp_path / "s.db").execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
        )
    }
    assert {"ct_recall_state", "ct_recall_docs"} <= tables
    # Another worker appends through the store: noticed and added.
    other = SessionTree.open(url)
    other.append_message({"role": "user", "content": "row detail plugh_7", "timestamp": 0})
    again = recall(SessionTree.open(url), "plugh_7", all_branches=False)
    assert again.sync is not None and again.sync.reason == "appended"


def test_postgres_sessions_use_full_text_search(postgres: object) -> None:
    url = f"{postgres.url}#{uuid.uuid4().hex}"  # type: ignore[attr-defined]
    tree = build(SessionTree.open(url, cwd="/w"))
    result = recall(tree, PORT)
    assert result.index == "postgres"
    assert len(result.hits) == 1 and "[8472]" in result.hits[0].snippet
    assert recall(tree, "src/net/client.py").hits
    assert recall(tree, "ERR_CONN_RESET").hits
    tree.append_message({"role": "user", "content": "after xyzzy_3", "timestamp": 0})
    again = recall(SessionTree.open(url), "xyzzy_3")
    assert again.sync is not None and again.sync.reason == "appended"
    assert recall(SessionTree.open(url), PORT).sync.reason == "fresh"  # type: ignore[union-attr]


def test_two_processes_catching_up_index_an_append_once(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    tree = compacted_file(path)
    first, second = open_recall_index(tree), open_recall_index(tree)
    first.sync(tree)
    tree.append_message({"role": "user", "content": "once only fnord_8", "timestamp": 0})
    stale = second.backend.load_state()
    assert stale is not None
    assert first.sync(tree).reason == "appended"
    # The second had read the state before the first wrote: its add is refused, and it
    # finds the index up to date instead of indexing the entry again.
    assert not second.backend.add([], stale, stale)
    assert second.sync(tree).reason == "fresh"
    assert len(first.search(["fnord_8"], allowed=None)) == 1
    first.close()
    second.close()


def test_damaged_recall_tables_in_a_sqlite_store_are_rebuilt(tmp_path: Path) -> None:
    url = f"sqlite://{tmp_path}/s.db#one"
    tree = build(SessionTree.open(url, cwd="/w"))
    assert recall(tree, PORT).hits
    conn = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    conn.execute("DROP TABLE ct_recall_docs")
    conn.execute("CREATE TABLE ct_recall_docs (unrelated)")  # not what the index expects
    conn.execute("UPDATE ct_recall_state SET size = 0")  # and out of date
    conn.close()
    again = recall(SessionTree.open(url), PORT)
    assert again.hits and again.notices == ["the recall index was damaged; it was rebuilt"]
    assert SessionTree.open(url).get_entries() == tree.get_entries()  # the session is intact
