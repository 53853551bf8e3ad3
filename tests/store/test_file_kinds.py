"""What the file store does with files that are not plain session files (issue 15 item 8): a
FIFO is refused at once instead of blocking, a rewrite through a symlink replaces the file it
points to, and temporary copies left by killed rewrites go at the next write."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from contextree.errors import SessionFileError
from contextree.session.tree import SessionTree
from core_helpers import Chain, assistant, header, jsonl, user

SRC = Path(__file__).resolve().parents[2] / "src"


def _session(path: Path) -> Path:
    chain = Chain()
    chain.msg(user("hello"))
    chain.msg(assistant("hi"))
    path.write_bytes(jsonl(header(), *chain.entries))
    return path


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(SessionFileError, match="not a regular file"):
        SessionTree.open(fifo)
    # The command line answers too, instead of waiting for a writer forever.
    done = subprocess.run(
        [sys.executable, "-m", "contextree", "info", str(fifo)],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(SRC)},
    )  # fmt: skip
    assert done.returncode == 1
    assert "not a regular file" in done.stderr and "Traceback" not in done.stderr


def test_a_rewrite_through_a_symlink_replaces_the_target(tmp_path: Path) -> None:
    target = _session(tmp_path / "real.jsonl")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    tree = SessionTree.open(link)
    first = tree.get_entries()[0]
    tree.rewrite_entries([{**first, "message": {**first["message"], "content": "edited"}}])
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert b"edited" in target.read_bytes()
    tree.append_message({"role": "user", "content": "after"})
    assert b"after" in target.read_bytes()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_temporary_copies_of_killed_rewrites_go_at_the_next_write(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl")
    stale = tmp_path / ".s.jsonl.0123abcd.tmp"
    stale.write_bytes(b"half a rewrite")
    other = tmp_path / ".other.jsonl.0123abcd.tmp"
    other.write_bytes(b"another session's")
    tree = SessionTree.open(path)
    assert stale.exists()  # reading changes nothing
    tree.append_message({"role": "user", "content": "more"})
    assert not stale.exists() and other.exists()
