"""Recall redacts the environment's secret values as ``compact`` does.

``contextree compact`` and the chat agent blank out the values of ``*_PASS``, ``*_TOKEN``...
variables wherever they appear (``environment_secrets``); the recall index was built with the
configured patterns only, so a value a tool printed bare (``echo $DB_PASS``) was written to
the index and shown by ``contextree recall`` and by the agent's recall tool, while the summary
of the same entry said ``[REDACTED:secret]``.
"""

from __future__ import annotations

import json
from pathlib import Path

from contextree.recall.tool import SessionRecall
from contextree.session.tree import SessionTree
from reliability.fuzzing import run_cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "todo-api-session.jsonl"
SECRET = "Qx7-plainvalue-Secret42"
TOOL_RESULT_ID = "8f3d8c4f"  # a bash result the offline compaction folds


def _compacted_session(tmp_path: Path, env: dict[str, str]) -> Path:
    lines = []
    for line in EXAMPLE.read_text().splitlines():
        entry = json.loads(line)
        if entry.get("id") == TOOL_RESULT_ID:
            entry["message"]["content"] = [{"type": "text", "text": f"$ echo $DB_PASS\n{SECRET}\n"}]
            line = json.dumps(entry)
        lines.append(line)
    session = tmp_path / "s.jsonl"
    session.write_text("\n".join(lines) + "\n")
    outcome = run_cli(["compact", str(session), "--quiet"], env=env)
    assert outcome.exit_code == 0, outcome.stderr
    assert "[REDACTED:secret]" in session.read_text().splitlines()[-1]
    return session


def test_recall_neither_indexes_nor_prints_a_secret_of_the_environment(tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    env = {"DB_PASS": SECRET, "CONTEXTREE_RECALL_INDEX_DIR": str(index_dir)}
    session = _compacted_session(tmp_path, env)
    outcome = run_cli(["recall", str(session), "echo DB_PASS"], env=env)
    assert outcome.exit_code == 0, outcome.stderr
    assert TOOL_RESULT_ID in outcome.stdout
    assert SECRET not in outcome.stdout and "[REDACTED:secret]" in outcome.stdout
    for part in "Qx7", "plainvalue", "Secret42":
        assert part.lower() not in outcome.stdout.lower()
    stored = b"".join(path.read_bytes() for path in index_dir.iterdir())
    assert b"plainvalue" not in stored


def test_the_agents_recall_tool_redacts_them_before_cutting_an_excerpt(tmp_path: Path) -> None:
    session = _compacted_session(tmp_path, {"DB_PASS": SECRET})
    tree = SessionTree.open(session)
    recall = SessionRecall(tree, literals=[SECRET])
    try:
        text = recall.search_text("echo DB_PASS")
    finally:
        recall.close()
    assert TOOL_RESULT_ID in text or "echo" in text
    assert "plainvalue" not in text and "[REDACTED:secret]" in text


def test_an_index_built_while_a_secret_had_another_value_is_rebuilt(tmp_path: Path) -> None:
    # The index's key holds how many secrets there are and how long, never a hash of them: an
    # index built while DB_PASS held another value of the same length kept this one unredacted.
    index_dir = tmp_path / "index"
    other = "Zz9-othersvalue-Word777"
    assert len(other) == len(SECRET)
    session = _compacted_session(tmp_path, {"DB_PASS": SECRET})
    env = {"CONTEXTREE_RECALL_INDEX_DIR": str(index_dir)}
    first = run_cli(["recall", str(session), "echo DB_PASS"], env={**env, "DB_PASS": other})
    assert first.exit_code == 0, first.stderr
    again = run_cli(["recall", str(session), "echo DB_PASS"], env={**env, "DB_PASS": SECRET})
    assert again.exit_code == 0, again.stderr
    assert TOOL_RESULT_ID in again.stdout
    assert SECRET not in again.stdout and "[REDACTED:secret]" in again.stdout
    stored = b"".join(path.read_bytes() for path in index_dir.iterdir())
    assert b"plainvalue" not in stored
