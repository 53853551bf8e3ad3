"""The console entry point builds only the command its line names (typer would build all 18 on
every call), with the same help, errors and behaviour."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from contextree.cli import app as app_module


@pytest.fixture
def commands() -> Iterator[list[object]]:
    kept = list(app_module.app.registered_commands)
    yield kept
    app_module.app.registered_commands = kept


def _names() -> list[str | None]:
    return [
        info.name or (info.callback.__name__ if info.callback else None)
        for info in app_module.app.registered_commands
    ]


def test_a_named_command_is_the_only_one_built(commands: list[object]) -> None:
    app_module._only_the_named_command(["--debug", "recall", "s.jsonl", "port"])
    assert _names() == ["recall"]


@pytest.mark.parametrize(
    "words", [["--help"], ["bogus", "x"], [], ["--version"], ["s.jsonl", "--debug"]]
)
def test_a_line_without_a_known_command_keeps_them_all(
    commands: list[object], words: list[str]
) -> None:
    app_module._only_the_named_command(words)
    assert len(app_module.app.registered_commands) == len(commands) > 10


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "contextree", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_through_the_entry_point(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    from contextree.session.tree import SessionTree

    SessionTree.open(session, cwd="/w").append_message(
        {"role": "user", "content": "hello", "timestamp": 0}
    )
    assert "Search what compactions folded" in _run("recall", "--help").stdout
    assert "hello" in _run("--debug", "context", str(session)).stdout
    unknown = _run("bogus")
    assert unknown.returncode == 2 and "No such command 'bogus'" in unknown.stderr
