"""``contextree report`` on a shipped session and on bad input."""

from __future__ import annotations

import json
from pathlib import Path

from cli_env import invoke, ok

EXAMPLE = Path(__file__).parents[2] / "examples" / "todo-api-session.jsonl"


def test_json_has_turns_events_and_totals() -> None:
    payload = json.loads(ok("report", EXAMPLE, "--format", "json").stdout)
    assert set(payload) == {"turns", "events", "peakTokens", "tokensSaved"}
    assert payload["turns"], "the example has assistant turns"
    assert payload["peakTokens"] == max(t["tokens"] for t in payload["turns"])


def test_text_ends_with_totals() -> None:
    out = ok("report", EXAMPLE).stdout
    assert out.strip().splitlines()[-1].startswith("turns ")


def test_missing_session_is_one_line_error(tmp_path: Path) -> None:
    result = invoke("report", tmp_path / "nope.jsonl")
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
