"""A clean environment for CLI tests, and helpers to invoke the app in it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from contextree.cli.app import app, state


def clean_cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No real settings, keys or terminal size leak in; returns the working directory.

    Call :func:`reset_consoles` afterwards: the consoles read the width and colour settings
    when they are created, so they are made afresh for each test.
    """
    for name in list(os.environ):
        if name.startswith("CONTEXTREE_") or name.endswith("_API_KEY"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CONTEXTREE_HOME", str(home / ".config" / "contextree"))
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    reset_consoles()
    return work


def copy_pi_fixture(name: str, folder: Path) -> Path:
    """A copy of pi's fixture ``name`` in ``folder`` (the original must never change)."""
    from pi_fixtures import pi_fixture

    target = folder / name
    shutil.copyfile(pi_fixture(name), target)
    return target


def session_file(folder: Path, stamp: str, first: str, mtime: float) -> Path:
    """A two-message session in ``folder`` named as pi names them, modified at ``mtime``."""
    from contextree.session.tree import SessionTree
    from core_helpers import assistant, user

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2026-01-01T{stamp}-000Z_{first.replace(' ', '-')}.jsonl"
    tree = SessionTree.open(path, cwd=str(Path.cwd()))
    tree.append_message(user(first))
    tree.append_message(assistant("ok"))
    os.utime(path, (mtime, mtime))
    return path


def reset_consoles() -> None:
    """Fresh consoles, and no ``--debug`` left over from an earlier test (the flag is only
    set again when the root callback runs, which an early error skips)."""
    state.__dict__.pop("console", None)
    state.__dict__.pop("errors", None)
    state.debug = False


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def ok(*args: str | Path) -> Result:
    """Invoke and require success without a traceback."""
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return result
