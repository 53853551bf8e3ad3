"""Fixtures for the CLI tests: a clean environment to run the app in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_env import clean_cli_env, reset_consoles


@pytest.fixture
def clean_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No real settings, keys or terminal size leak in; yields the working directory.

    Modules that want it for every test say ``pytestmark = pytest.mark.usefixtures("clean_cli")``
    (not autouse for the folder: the store and differential tests need their CONTEXTREE_*
    variables).
    """
    work = clean_cli_env(tmp_path, monkeypatch)
    yield work
    reset_consoles()
