"""Issue 24 point 8: ``--format json`` for info, tree, check, compact, prune and navigate, with
the keys docs/cli-json.md documents (every documented key present, parsed as JSON)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from cli_env import invoke, ok
from core_helpers import Chain, assistant, chars, header, jsonl, tool_call, tool_result, user

pytestmark = pytest.mark.usefixtures("clean_cli")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "todo-api-session.jsonl"
DOC = (ROOT / "docs" / "cli-json.md").read_text(encoding="utf-8")


def _json(*args: str | Path, code: int = 0) -> Any:
    result = invoke(*args)
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def _example(tmp_path: Path) -> Path:
    return Path(shutil.copyfile(EXAMPLE, tmp_path / "s.jsonl"))


def _documented(keys: set[str]) -> None:
    for key in keys:
        assert re.search(f'["`]{key}["`]', DOC), f"{key} is not in docs/cli-json.md"


def test_info(tmp_path: Path) -> None:
    info = _json("info", "--format", "json", _example(tmp_path))
    _documented(set(info) | set(info["context"]))
    assert info["entries"] == 131 and info["leafId"] == "e9571c7d"
    assert info["context"]["messages"] == 119 and info["context"]["tokens"] == 48551
    assert sum(info["messageRoles"].values()) + sum(info["entryTypes"].values()) == 131
    assert info["problems"] == 0


def test_tree(tmp_path: Path) -> None:
    tree = _json("tree", "-f", "json", _example(tmp_path))
    _documented(set(tree) | set(tree["entries"][0]))
    assert len(tree["entries"]) == 131
    ids = {e["id"] for e in tree["entries"]}
    assert all(e["parentId"] is None or e["parentId"] in ids for e in tree["entries"])
    path = [e for e in tree["entries"] if e["onLeafPath"]]
    assert path[-1]["id"] == tree["leafId"]


def test_check_and_repair(tmp_path: Path) -> None:
    path = _example(tmp_path)
    clean = _json("check", "--format", "json", path)
    _documented(set(clean))
    assert clean == {"source": str(path), "damaged": False, "errors": 0, "warnings": 0,
                     "findings": []}
    with path.open("ab") as handle:
        handle.write(b"not json\n")
    damaged = _json("check", "--format", "json", path, code=1)
    (finding,) = damaged["findings"]
    _documented(set(finding))
    assert finding["severity"] == "error" and finding["line"] == 133
    repaired = _json("check", "--repair", "--format", "json", path)
    _documented(set(repaired))
    assert repaired["changed"] and repaired["rejected"][0]["line"] == 133
    assert Path(repaired["backup"]).exists() and not repaired["damaged"]


def test_compact_dry_run_then_run(tmp_path: Path) -> None:
    path = _example(tmp_path)
    plan = _json("compact", "--dry-run", "--format", "json", path)
    _documented(set(plan) | set(plan["kept"]))
    assert plan["dryRun"] and not plan["compacted"]
    assert plan["estimatedAfter"] == plan["kept"]["tokens"] + plan["summaryBudget"]
    assert path.read_bytes() == EXAMPLE.read_bytes()
    done = _json("compact", "--format", "json", path)
    _documented(set(done))
    assert done["compacted"] and done["method"] == "offline"
    assert done["firstKeptEntryId"] == plan["firstKeptEntryId"]
    last = json.loads(path.read_bytes().splitlines()[-1])
    assert last["id"] == done["entryId"] and last["summary"] == done["summary"]
    again = _json("compact", "--format", "json", path)
    _documented(set(again))
    assert again == {"dryRun": False, "compacted": False, "reason": "already_compacted",
                     "message": "Already compacted"}


def _tool_session(path: Path) -> Path:
    chain = Chain()
    chain.msg(user("go"))
    for n in range(3):
        chain.msg(assistant("", calls=[tool_call(f"c{n}")]))
        chain.msg(tool_result(f"c{n}", chars(100)))
    chain.msg(assistant("done"))
    path.write_bytes(jsonl(header(), *chain.entries))
    return path


def test_prune(tmp_path: Path) -> None:
    path = _tool_session(tmp_path / "t.jsonl")
    args = ["--protect-tokens", "100", "--minimum-savings", "0", "--format", "json"]
    planned = _json("prune", "--dry-run", *args, path)
    _documented(set(planned) | set(planned["entries"][0]))
    assert planned["dryRun"] and planned["pruned"] == 2 and planned["reason"] is None
    done = _json("prune", *args, path)
    assert not done["dryRun"] and done["entries"] == planned["entries"]
    nothing = _json("prune", "--format", "json", path)
    assert nothing["pruned"] == 0 and "protected window" in nothing["reason"]


def test_navigate(tmp_path: Path) -> None:
    path = _example(tmp_path)
    summarized = _json("navigate", "--summarize", "--format", "json", path, "736dbdcd")
    _documented(set(summarized))
    assert summarized["oldLeafId"] == "e9571c7d" and summarized["summaryEntryId"]
    assert summarized["summary"] and summarized["leafEntryId"] is None
    moved = _json("navigate", "--format", "json", path, "e9571c7d")
    assert moved["newLeafId"] == "e9571c7d"
    assert re.fullmatch(r"[0-9a-f]{8}", moved["leafEntryId"])


def test_errors_stay_one_line_on_stderr_in_json_mode(tmp_path: Path) -> None:
    result = invoke("info", "--format", "json", tmp_path / "none.jsonl")
    assert result.exit_code == 1
    assert result.output.startswith("error: ") and len(result.output.splitlines()) == 1
    ok("info", "--format", "text", _example(tmp_path))


def test_the_dry_runs_carry_the_cost_report_and_each_output_its_reason(tmp_path: Path) -> None:
    """Issue 30 point 6: ``cost.before``, ``cost.after`` and ``cost.breakEvenTurn`` in both
    dry runs; each output a dry prune lists has its ``reason``."""
    plan = _json("compact", "--dry-run", "--format", "json", _example(tmp_path))
    cost = plan["cost"]
    _documented(set(cost) | set(cost["before"]))
    assert cost["before"]["inputTokens"] > cost["after"]["inputTokens"]
    assert "breakEvenTurn" in cost
    path = _tool_session(tmp_path / "t.jsonl")
    args = ["--protect-tokens", "100", "--minimum-savings", "0", "--format", "json"]
    planned = _json("prune", "--dry-run", *args, path)
    assert {entry["reason"] for entry in planned["entries"]} == {"old"}
    assert {"before", "after", "breakEvenTurn"} <= set(planned["cost"])
    assert "cost" not in _json("prune", *args, path)
