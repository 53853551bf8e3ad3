"""``contextree recall``, ``expand`` and ``uncompact``: text and JSON, one-line errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_env import clean_cli_env, invoke, ok, reset_consoles
from contextree.session.tree import SessionTree
from recall.recall_session import PORT, TOOL_DETAIL, compacted_file, entry_id_holding


@pytest.fixture(autouse=True)
def clean_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    clean_cli_env(tmp_path, monkeypatch)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    yield
    reset_consoles()


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    compacted_file(path)
    return path


def test_recall_text(session: Path) -> None:
    tree = SessionTree.open(session)
    out = ok("recall", session, PORT).output
    assert f'1 hit for "{PORT}" (every term) among' in out
    assert entry_id_holding(tree, PORT) in out and "assistant" in out
    assert f"The flaky port is {PORT}" in out


def test_recall_text_says_where_hits_holding_some_terms_begin(session: Path) -> None:
    out = ok("recall", session, "done ok 3", "--limit", "3").output
    assert '3 hits for "done ok 3" (the first holds every term, the other 2 some)' in out
    out = ok("recall", session, "done ok", "--limit", "2").output
    assert '2 hits for "done ok" (every term)' in out
    out = ok("recall", session, f"{PORT} zebra").output
    assert "(none holds every term; these hold some)" in out


def test_recall_json(session: Path) -> None:
    payload = json.loads(ok("recall", session, TOOL_DETAIL, "--format", "json").output)
    assert [h["role"] for h in payload["hits"]] == ["toolResult"]
    assert payload["index"] == "sqlite-fts5"


def test_recall_nothing_folded_and_no_match(tmp_path: Path, session: Path) -> None:
    assert "No match for" in ok("recall", session, "zebra").output
    plain = tmp_path / "plain.jsonl"
    tree = SessionTree.open(plain, cwd="/w")
    tree.append_message({"role": "user", "content": "hello", "timestamp": 0})
    assert "Nothing is folded out of the context" in ok("recall", plain, "hello").output


def test_recall_usage_errors_exit_2(session: Path) -> None:
    result = invoke("recall", session, "...")
    assert result.exit_code == 2 and "no letter or digit" in result.output
    assert invoke("recall", session, PORT, "--limit", "0").exit_code == 2
    missing = invoke("recall", session.with_name("nope.jsonl"), PORT)
    assert missing.exit_code == 1 and "Traceback" not in missing.output
    assert "nope.jsonl" in missing.output


def test_expand(session: Path) -> None:
    tree = SessionTree.open(session)
    target = entry_id_holding(tree, PORT)
    out = ok("expand", session, target[:5], "--around", "1").output
    assert f"> {target}" in out and "(not in context)" in out
    assert "Please fix the retry logic" in out and TOOL_DETAIL in out
    payload = json.loads(ok("expand", session, target, "-f", "json").output)
    assert payload["entryId"] == target
    assert [e["target"] for e in payload["entries"]] == [True]
    assert payload["entries"][0]["entry"]["message"]["role"] == "assistant"
    assert invoke("expand", session, "zzzz").exit_code == 1


def test_uncompact_moves_the_leaf_before_the_compaction(session: Path) -> None:
    before = SessionTree.open(session)
    compaction = before.latest_compaction()
    assert compaction is not None
    out = ok("uncompact", session).output
    assert f"Undid compaction {compaction['id']}" in out
    after = SessionTree.open(session)
    assert after.latest_compaction() is None
    assert (
        after.build_session_context().messages
        == before.build_session_context(str(compaction["parentId"])).messages
    )
    assert len(after.get_entries()) == len(before.get_entries()) + 1  # nothing deleted
    result = invoke("uncompact", session, "--format", "json")
    # Nothing left to undo: every documented key is there, null (docs/cli-json.md).
    assert result.exit_code == 1 and json.loads(result.output) == {
        "undone": None,
        "oldLeafId": None,
        "newLeafId": None,
        "leftBehind": None,
        "leafEntryId": None,
    }


def test_uncompact_json(session: Path) -> None:
    compaction = SessionTree.open(session).latest_compaction()
    assert compaction is not None
    payload = json.loads(ok("uncompact", session, "-f", "json").output)
    assert payload["undone"]["compactionId"] == compaction["id"]
    assert payload["newLeafId"] == compaction["parentId"] and payload["leafEntryId"]


def test_recall_leaf_prefix_and_all_branches(session: Path) -> None:
    tree = SessionTree.open(session)
    leaf = tree.leaf_id
    assert leaf is not None
    tree.append_message({"role": "user", "content": "side idea plover_12", "timestamp": 0})
    tree.branch(leaf)
    tree.append_message({"role": "user", "content": "main line", "timestamp": 0})
    from contextree.branching.navigate import persist_leaf

    persist_leaf(tree)
    assert "No match" in ok("recall", session, "plover_12").output
    assert "side idea" in ok("recall", session, "plover_12", "--all-branches").output
    compaction = tree.latest_compaction()
    assert compaction is not None
    before = str(compaction["parentId"])
    out = ok("recall", session, PORT, "--leaf", before[:6]).output
    assert "Nothing is folded out of the context on this path" in out


def test_expand_follows_a_branch_off_the_path(session: Path) -> None:
    tree = SessionTree.open(session)
    leaf = tree.leaf_id
    assert leaf is not None
    side = tree.append_message({"role": "user", "content": "branch one", "timestamp": 0})
    tree.append_message({"role": "user", "content": "branch two", "timestamp": 0})
    tree.branch(leaf)
    from contextree.branching.navigate import persist_leaf

    persist_leaf(tree)
    out = ok("expand", session, side, "--around", "1").output
    assert f"> {side}" in out and "branch two" in out and "(not in context)" in out


def test_recall_warns_of_damage_also_when_the_scope_is_kept(session: Path) -> None:
    lines = session.read_bytes().splitlines(keepends=True)
    session.write_bytes(lines[0] + b"{not json\n" + b"".join(lines[1:]))
    for _ in range(2):  # the second call reads the scope back from the index
        result = ok("recall", session, PORT)
        assert f"{session}:2: skipped" in result.stderr
        assert "The flaky port is" in result.stdout


def test_recall_refuses_a_looping_path_as_info_does(session: Path) -> None:
    with session.open("ab") as file:
        for entry_id, parent in (("a0000000", "b0000000"), ("b0000000", "a0000000")):
            entry = {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:00.000Z",
                "message": {"role": "user", "content": "loop", "timestamp": 0},
            }
            file.write((json.dumps(entry) + "\n").encode())
    said = {invoke(*args).output for args in (("info", session), ("recall", session, PORT))}
    assert len(said) == 1
    line = said.pop()
    assert line.startswith("error: ") and "its parent chain loops back on itself" in line
