"""Every command loads and documents itself (catches import-time and annotation errors)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from contextree.cli.app import app

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
