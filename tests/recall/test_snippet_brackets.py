"""A snippet's own brackets are text, not match marks: ``recall`` used to print
``Fix items[idx] and [bold]zzz[/bold]`` as ``Fix itemsidx and boldzzz/bold`` and a redaction
marker as ``REDACTED:openai_key``. The backends mark matches with control characters that
:func:`~contextree.recall.base.marked_hit` turns into brackets, keeping where they are; the text
output bolds those and prints everything else as it is (``--format json`` is unchanged)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_env import clean_cli_env, invoke, reset_consoles
from contextree.recall import index as index_module
from contextree.recall import recall
from contextree.recall.base import MARK_END, MARK_START, marked_hit
from contextree.recall.scan import snippet_around
from contextree.session.tree import SessionTree
from recall.recall_session import fold_away

TEXT = "Fix items[idx] and [bold]zzz[/bold] now; key sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


@pytest.fixture(autouse=True)
def clean_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    clean_cli_env(tmp_path, monkeypatch)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    yield
    reset_consoles()


def _folded(tree: SessionTree) -> SessionTree:
    tree.append_message({"role": "user", "content": TEXT, "timestamp": 1})
    return fold_away(tree, "## Goal\nFix it.")


def _shown(snippet: str, marks: tuple[tuple[int, int], ...]) -> list[str]:
    return [snippet[start:end] for start, end in marks]


def test_marks_become_brackets_and_their_places_are_kept() -> None:
    hit = marked_hit("e1", "user", "t", f"a[b] {MARK_START}zzz{MARK_END} [c]", 1.0)
    assert hit.snippet == "a[b] [zzz] [c]"
    assert _shown(hit.snippet, hit.marks) == ["[zzz]"]
    stray = marked_hit("e1", "user", "t", f"x{MARK_END}y {MARK_START}open", 1.0)
    assert stray.snippet == "xy [open]" and _shown(stray.snippet, stray.marks) == ["[open]"]


def test_the_scan_snippet_marks_as_asked() -> None:
    assert snippet_around("see [bold]zzz", "zzz") == "see [bold][zzz]"
    marked = snippet_around("see [bold]zzz", "zzz", marks=(MARK_START, MARK_END))
    assert marked == f"see [bold]{MARK_START}zzz{MARK_END}"


@pytest.mark.parametrize("backend", ["sqlite-fts5", "scan"])
def test_each_backend_marks_only_the_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    if backend == "scan":
        monkeypatch.setattr(index_module, "fts5_available", lambda: False)
    tree = _folded(SessionTree.open(tmp_path / "s.jsonl", cwd="/w"))
    result = recall(tree, "zzz")
    assert result.index == backend
    (hit,) = result.hits
    assert "items[idx]" in hit.snippet and "[REDACTED:" in hit.snippet
    assert _shown(hit.snippet, hit.marks) == ["[zzz]"]


def test_postgres_marks_only_the_match(postgres: object) -> None:
    url = f"{postgres.url}#{uuid.uuid4().hex}"  # type: ignore[attr-defined]
    tree = _folded(SessionTree.open(url, cwd="/w"))
    result = recall(tree, "zzz")
    assert result.index == "postgres"
    (hit,) = result.hits  # ts_headline cuts at word counts: the snippet starts mid-text
    assert "[zzz][/bold] now; key [REDACTED:" in hit.snippet
    assert _shown(hit.snippet, hit.marks) == ["[zzz]"]


@pytest.mark.parametrize("query", ["zzz", "items", "REDACTED"])
def test_recall_prints_the_snippet_verbatim(tmp_path: Path, query: str) -> None:
    path = tmp_path / "s.jsonl"
    _folded(SessionTree.open(path, cwd="/w"))
    result = invoke("recall", path, query)
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("    ")]
    assert line.startswith("    Fix items[idx] and [bold]zzz[/bold] now; key [REDACTED:")
    snippet = json.loads(invoke("recall", path, "zzz", "-f", "json").stdout)["hits"][0]["snippet"]
    assert "items[idx] and [bold][zzz][/bold]" in snippet  # the JSON marks as before


MARKUP = "see [bold]zzz[/bold], [red]x[/], items[idx] and [/] alone"


@pytest.mark.parametrize(
    "command",
    [("info",), ("tree",), ("context",), ("check",), ("expand", "@first"), ("sessions",)],
    ids=" ".join,
)
def test_other_commands_print_text_with_brackets_verbatim(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    # Names, cwd, messages and summaries hold what people wrote: never read as rich markup.
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = folder / "s.jsonl"
    tree = SessionTree.open(path, cwd=f"/w/{MARKUP}")
    first = tree.append_message({"role": "user", "content": MARKUP, "timestamp": 1})
    tree.append_session_info(f"name {MARKUP}")
    tree.append_message({"role": "user", "content": f"next {MARKUP}", "timestamp": 2})
    # A label whose target is missing: check names the target.
    label = {"type": "label", "id": "1abe1000", "parentId": tree.leaf_id, "timestamp": "t"}
    tree.append_entry({**label, "targetId": f"gone {MARKUP}", "label": "x"})
    name, *rest = command
    args = [path, *(first if arg == "@first" else arg for arg in rest)]
    result = invoke(name, *(args if name != "sessions" else [folder]))
    assert result.exit_code == 0, result.output
    assert "see [bold]zzz[/bold]" in result.output  # short: every command's cut previews hold it
