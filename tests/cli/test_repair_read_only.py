"""``check --repair`` on a file this user may not write: with nothing to repair it says so
and exits 0, as it does in a read-only directory (it used to fail with "permission denied;
cannot write the session"); with something to repair it fails and changes nothing.

Root may write any file, so as root the denial is simulated where a non-root user meets it:
``os.access`` and the store's open for writing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_env import invoke
from contextree.errors import SessionFileError
from contextree.store.jsonl import JsonlFileStore
from core_helpers import Chain, assistant, header, jsonl, user

pytestmark = pytest.mark.usefixtures("clean_cli")


@pytest.fixture
def read_only(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Files added to the returned list cannot be written (chmod 0444, and for root the same
    denial simulated)."""
    denied: list[Path] = []
    if os.geteuid() != 0:
        return denied
    access = os.access

    def fake_access(path: object, mode: int, *args: object, **kwargs: object) -> bool:
        if mode & os.W_OK and Path(str(path)) in denied:
            return False
        return access(path, mode, *args, **kwargs)  # type: ignore[arg-type]

    opening = JsonlFileStore._open

    def fake_open(self: JsonlFileStore) -> int:
        if self.path in denied:
            raise SessionFileError(self.path, "permission denied; cannot write the session")
        return opening(self)

    monkeypatch.setattr(os, "access", fake_access)
    monkeypatch.setattr(JsonlFileStore, "_open", fake_open)
    return denied


def _session(path: Path, *extra: bytes) -> Path:
    chain = Chain()
    chain.msg(user("hello"))
    chain.msg(assistant("world"))
    path.write_bytes(jsonl(header(), *chain.entries) + b"".join(extra))
    path.chmod(0o444)
    return path


def test_nothing_to_repair_needs_no_write_access(tmp_path: Path, read_only: list[Path]) -> None:
    path = _session(tmp_path / "s.jsonl")
    read_only.append(path)
    before = path.read_bytes()
    result = invoke("check", "--repair", path)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"{path}: nothing to repair; the file was not changed"
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "s.jsonl", "work"]


def test_a_repair_that_must_write_fails_and_changes_nothing(
    tmp_path: Path, read_only: list[Path]
) -> None:
    path = _session(tmp_path / "s.jsonl", b"not json\n")
    read_only.append(path)
    before = path.read_bytes()
    result = invoke("check", "--repair", path)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"error: {path}: permission denied; cannot write the session")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "s.jsonl", "work"]
