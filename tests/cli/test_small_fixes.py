"""Issue 24 point 9: one line per entry in ``tree`` at 80 columns, and an install hint that
fits how contextree was installed. (The LangChain example's "1 compaction" is checked in
tests/integrations/test_examples.py.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import contextree
from cli_env import ok, reset_consoles
from contextree.cli import extras
from contextree.cli.extras import install_command

pytestmark = pytest.mark.usefixtures("clean_cli")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "todo-api-session.jsonl"


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_every_entry_takes_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    reset_consoles()
    path = Path(shutil.copyfile(EXAMPLE, tmp_path / "s.jsonl"))
    lines = ok("tree", "--fold", "0", path).stdout.splitlines()
    assert max(len(line) for line in lines) <= columns
    # the title, 131 entries and the two "branch N" lines of the one fork
    assert len(lines) == 1 + 131 + 2
    assert lines[-1].endswith("◀ leaf")


def test_the_hint_from_a_checkout_installs_the_checkout(tmp_path: Path) -> None:
    root = Path(contextree.__file__).resolve().parents[2]
    assert extras.checkout_root() == root
    assert install_command("tui", cwd=root) == 'pip install -e ".[tui]"'
    assert install_command("tui", cwd=tmp_path) == f'pip install -e "{root}[tui]"'


def test_the_hint_from_an_installed_copy_names_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "lib" / "python3.11" / "site-packages" / "contextree"
    site.mkdir(parents=True)
    monkeypatch.setattr(contextree, "__file__", str(site / "__init__.py"))
    assert extras.checkout_root() is None
    assert install_command("tui") == 'pip install "contextree[tui]"'
