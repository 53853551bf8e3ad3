"""After ``contextree compact`` wrote a file session, the entry point ends the process at once
(``exit_now``) instead of letting the interpreter free the decoded session object by object;
the output is printed and the entry written first. Dry runs and failures end as usual."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cli_env import copy_pi_fixture as copy
from cli_env import ok
from contextree.cli import app, entry
from contextree.cli.common import state

pytestmark = pytest.mark.usefixtures("clean_cli")


def _run(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[list[bool], int | str | None]:
    monkeypatch.setattr(sys, "argv", ["contextree", *args])
    # main() registers only the command it runs: the other tests' commands are put back.
    monkeypatch.setattr(app.app, "registered_commands", list(app.app.registered_commands))
    exits: list[bool] = []
    monkeypatch.setattr(entry, "exit_now", lambda: exits.append(True))  # not pytest's process
    with pytest.raises(SystemExit) as ended:  # what follows exit_now when it returns
        entry.main()
    return exits, ended.value.code


def _last_type(path: Path) -> str:
    return str(json.loads(path.read_text(encoding="utf-8").splitlines()[-1])["type"])


def test_compact_of_a_file_session_ends_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = copy("large-session.jsonl", tmp_path)
    exits, code = _run(monkeypatch, "compact", str(path), "--quiet")
    assert (exits, code) == ([True], 0)
    assert "Compacted" in capsys.readouterr().out
    assert _last_type(path) == "compaction"


def test_a_dry_run_ends_as_usual(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = copy("large-session.jsonl", tmp_path)
    before = path.read_bytes()
    assert _run(monkeypatch, "compact", str(path), "--dry-run") == ([], 0)
    assert path.read_bytes() == before


def test_a_new_command_line_holds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = copy("large-session.jsonl", tmp_path)
    _run(monkeypatch, "compact", str(path), "--quiet")
    assert state.held_to_exit
    ok("compact", path, "--dry-run")
    assert not state.held_to_exit


def test_the_collector_runs_again_unless_the_process_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    path = copy("large-session.jsonl", tmp_path)
    left: list[bool] = []
    # At exit_now the collector is still paused (its pass would be wasted on a process that
    # ends); when the process goes on after all (here, exit_now returns), main resumes it.
    monkeypatch.setattr(entry, "exit_now", lambda: left.append(gc.isenabled()))
    monkeypatch.setattr(sys, "argv", ["contextree", "compact", str(path), "--quiet"])
    monkeypatch.setattr(app.app, "registered_commands", list(app.app.registered_commands))
    with pytest.raises(SystemExit):
        entry.main()
    assert left == [False]
    assert gc.isenabled()
    assert not state.ends_process
    ok("compact", path, "--quiet")  # run as a test's runner runs it: resumed when it returns
    assert gc.isenabled()
