"""A fresh clone has no ``../shared``: the tests that read pi's files skip with one reason, and
nothing fails (issue 24 point 1: a helper imported under another name escaped the guard)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import pi_fixtures

TESTS = Path(__file__).resolve().parent


def test_pi_fixture_skips_when_the_folder_is_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pi_fixtures, "PI_FIXTURES", tmp_path / "absent")
    with pytest.raises(pytest.skip.Exception):
        pi_fixtures.pi_fixture("before-compaction.jsonl")


def test_a_missing_file_in_a_present_folder_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pi_fixtures, "PI_FIXTURES", tmp_path)
    with pytest.raises(FileNotFoundError, match=r"large-session\.jsonl"):
        pi_fixtures.pi_fixture("large-session.jsonl")


def test_cli_tests_pass_without_shared(tmp_path: Path) -> None:
    """The two files that failed on a fresh clone (they copy fixtures through
    ``copy_pi_fixture`` imported as ``copy``) pass with their fixture tests skipped."""
    env = {**os.environ, "CONTEXTREE_TEST_PI_FIXTURES": str(tmp_path / "absent")}
    files = [TESTS / "cli" / "test_cli.py", TESTS / "cli" / "test_pi_user_expectations.py"]
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", *files]
    done = subprocess.run(
        command, cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " failed" not in done.stdout
    assert "SKIPPED" in done.stdout and "which is absent" in done.stdout
