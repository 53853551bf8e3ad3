"""``contextree report`` on a shipped session and on bad input."""

from __future__ import annotations

import json
import re
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from cli_env import invoke, ok
from pi_fixtures import pi_fixture

EXAMPLE = Path(__file__).parents[2] / "examples" / "todo-api-session.jsonl"


def test_json_has_turns_events_and_totals() -> None:
    payload = json.loads(ok("report", EXAMPLE, "--format", "json").stdout)
    assert set(payload) == {
        "turns",
        "events",
        "eventCounts",
        "peakTokens",
        "tokensSaved",
        "model",
        "priced",
        "usdSoFar",
        "html",
    }
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


def _svg(page: str) -> ET.Element:
    return ET.fromstring(re.search(r"<svg.*</svg>", page, re.S).group(0))  # type: ignore[union-attr]


def test_html_page_of_a_pi_session_marks_its_compactions(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    out = ok("report", pi_fixture("before-compaction.jsonl"), "--html", page).stdout
    assert f"wrote {page}" in out
    text = page.read_text(encoding="utf-8")
    assert (
        text.startswith("<!DOCTYPE html>")
        and "<script" not in text
        and "http" not in (text.replace('xmlns="http://www.w3.org/2000/svg"', ""))
    )
    svg = _svg(text)
    marks = [e for e in svg.iter("{http://www.w3.org/2000/svg}line") if e.find("*") is not None]
    assert len(marks) == 2  # the fixture's two compactions, each with its saving as a title
    assert "2 compactions, 0 prunes, 0 branch summaries" in text


def test_html_is_not_written_over_a_file_or_through_a_link(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text("mine")
    refused = invoke("report", EXAMPLE, "--html", page)
    assert refused.exit_code == 1 and "--force" in refused.output
    assert page.read_text() == "mine"
    ok("report", EXAMPLE, "--html", page, "--force")
    assert page.read_text().startswith("<!DOCTYPE html>")
    link = tmp_path / "link.html"
    target = tmp_path / "elsewhere.html"
    link.symlink_to(target)  # dangling
    dangling = invoke("report", EXAMPLE, "--html", link)
    assert dangling.exit_code == 1 and "symbolic link" in dangling.output
    assert not target.exists()
    ok("report", EXAMPLE, "--html", link, "--follow-symlinks")
    assert link.is_symlink() and target.read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "elsewhere.html",
        "link.html",
        "report.html",
    ]


def test_html_escapes_what_the_session_holds(tmp_path: Path) -> None:
    from contextree.session.tree import SessionTree

    url = f"sqlite://{tmp_path}/s.db#<script>alert(1)</script>"
    tree = SessionTree.open(url, cwd="/w")
    tree.append_message({"role": "user", "content": "hi", "timestamp": 0})
    tree.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "<b>hello</b>"}],
            "stopReason": "stop",
            "timestamp": 1,
            "provider": "anthropic",
            "model": "claude-test",
        }
    )
    tree.append_compaction("<img src=x onerror=alert(1)>", tree.get_branch()[0]["id"], 1000)
    page = tmp_path / "p.html"
    ok("report", url, "--html", page)
    text = page.read_text(encoding="utf-8")
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "<img" not in text
    _svg(text)  # still well-formed


def test_money_saved_at_a_known_price_and_none_without(tmp_path: Path) -> None:
    session = pi_fixture("before-compaction.jsonl")
    known = json.loads(
        ok("report", session, "--format", "json", "--model", "anthropic:claude-sonnet-4-5").stdout
    )
    assert known["priced"] and known["eventCounts"]["compaction"] == 2
    first = known["events"][0]
    assert (
        first["usdPerRequest"] > 0
        and first["usdSoFar"] == first["usdPerRequest"] * (first["laterTurns"])
    )
    assert known["usdSoFar"] == sum(e["usdSoFar"] for e in known["events"])
    unknown = json.loads(
        ok("report", session, "--format", "json", "--model", "nobody:no-such-model").stdout
    )
    assert not unknown["priced"] and unknown["usdSoFar"] is None
    assert all(e["usdPerRequest"] is None for e in unknown["events"])
    text = ok("report", session, "--model", "nobody:no-such-model").stdout
    assert "no price known for nobody:no-such-model" in text


def test_report_of_a_postgres_session(postgres: Any, tmp_path: Path) -> None:
    from contextree.store.transfer import copy_session

    url = f"{postgres.url}#report-{uuid.uuid4().hex[:8]}"
    copy_session(pi_fixture("before-compaction.jsonl"), url)
    from_file = json.loads(
        ok("report", pi_fixture("before-compaction.jsonl"), "--format", "json").stdout
    )
    from_db = json.loads(
        ok("report", url, "--format", "json", "--html", tmp_path / "p.html").stdout
    )
    assert from_db["turns"] == from_file["turns"] and from_db["events"] == from_file["events"]
    assert (tmp_path / "p.html").read_text(encoding="utf-8").count("stroke-dasharray") == 2
