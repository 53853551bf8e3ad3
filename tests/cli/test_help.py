"""Every command loads and documents itself (catches import-time and annotation errors)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from contextree.cli.app import app
from contextree.cli.entry import TOP_HELP, render_top_help

COMMANDS = [
    "info",
    "tree",
    "context",
    "check",
    "compact",
    "prune",
    "serve",
    "config",
    "navigate",
    "chat",
    "import",
    "export",
    "recall",
    "expand",
    "uncompact",
]


def test_root_help_lists_every_command() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in COMMANDS:
        assert command in result.output


@pytest.mark.parametrize("command", COMMANDS)
def test_command_help(command: str) -> None:
    result = CliRunner().invoke(app, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage" in result.output


def test_the_stored_top_help_is_what_typer_prints() -> None:
    # `contextree --help` prints top_help.txt without importing typer (issue 12 point 8).
    assert TOP_HELP.read_text(encoding="utf-8") == render_top_help(), (
        "the command line changed: regenerate with `python -m contextree.cli.entry`"
    )


def _run_entry(args: list[str], columns: int) -> subprocess.CompletedProcess[str]:
    code = "import sys; from contextree.cli.entry import main; sys.argv[0] = 'contextree'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": str(columns)},
        check=False,
    )


def test_help_on_a_wide_terminal_comes_from_the_stored_text_without_typer() -> None:
    probe = (
        "import sys; from contextree.cli.entry import main; main(); print('typer' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "120"},
        check=True,
    )
    assert done.stdout == TOP_HELP.read_text(encoding="utf-8") + "False\n"


def test_help_on_a_narrow_terminal_and_other_commands_go_through_typer() -> None:
    narrow = _run_entry(["--help"], 60)
    assert narrow.returncode == 0 and "Usage: contextree" in narrow.stdout
    assert narrow.stdout != TOP_HELP.read_text(encoding="utf-8")  # wrapped to 60 columns
    assert "contextree" in _run_entry(["--version"], 120).stdout
    assert _run_entry(["info", "--help"], 120).stdout.startswith("Usage: contextree info")
