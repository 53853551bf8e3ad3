"""Issue 12: the command line as pi users expect it (each numbered point has tests here)."""

from __future__ import annotations

import builtins
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from cli_env import clean_cli_env, invoke, ok, reset_consoles
from pi_fixtures import pi_fixture


@pytest.fixture(autouse=True)
def clean_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    clean_cli_env(tmp_path, monkeypatch)
    yield
    reset_consoles()


def copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copyfile(pi_fixture(name), target)
    return target


# -- 1. text in square brackets is printed literally ------------------------------------------


def test_missing_textual_message_keeps_the_extra_in_brackets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    path = copy("before-compaction.jsonl", tmp_path)
    real_import = builtins.__import__

    def no_textual(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "textual" or name.startswith("textual."):
            raise ModuleNotFoundError(f"No module named {name!r}", name="textual")
        return real_import(name, *args, **kwargs)

    for module in [m for m in sys.modules if m.startswith(("textual", "contextree.cli.tree_"))]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setattr(builtins, "__import__", no_textual)
    result = invoke("tree", path, "-i")
    assert result.exit_code == 1
    assert 'pip install "contextree[tui]"' in result.stderr


def test_chat_help_keeps_bracketed_arguments() -> None:
    from contextree.cli.chat import HELP, ChatApp

    console = Console(record=True, width=120, color_system=None)
    ui = ChatApp.__new__(ChatApp)
    ui.console = console
    import asyncio

    assert asyncio.run(ui._command("help", ""))
    out = console.export_text()
    assert "/compact [instructions]" in out
    assert "/navigate ID [--summarize]" in out
    assert out.strip() == HELP.strip()


def test_session_values_with_brackets_are_printed_as_they_are(tmp_path: Path) -> None:
    from contextree.session.tree import SessionTree

    path = tmp_path / "s.jsonl"
    tree = SessionTree.open(path, cwd="/work/[bold]x[/bold]")
    tree.append_message({"role": "user", "content": "hi [red]there[/red]", "timestamp": 1})
    tree.append_session_info("[b]named[/b]")
    info = ok("info", path).stdout
    assert "[b]named[/b]" in info
    assert "/work/[bold]x[/bold]" in info
    context = ok("context", path).stdout
    assert "hi [red]there[/red]" in context


def test_error_lines_keep_brackets(tmp_path: Path) -> None:
    missing = tmp_path / "[x].jsonl"
    result = invoke("info", missing)
    assert result.exit_code == 1
    assert "[x].jsonl" in result.stderr
