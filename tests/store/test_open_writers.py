"""Finding other processes' write-only handles on a file (the rewrite's carry-over waits for
them; issue 15 item 1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from contextree.store.open_writers import count_write_only_holders

pytestmark = pytest.mark.skipif(not Path("/proc/self/fdinfo").is_dir(), reason="needs /proc")

HOLDER = (
    "import sys; f = open(sys.argv[1], sys.argv[2]); print('open', flush=True); sys.stdin.read()"
)


def _identity(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def _hold(path: Path, mode: str) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "open\n"
    return holder


def _release(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.close()
    holder.wait(timeout=30)
    holder.stdout.close()


def test_counts_write_only_handles_of_other_processes(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"{}\n")
    identity = _identity(path)
    assert count_write_only_holders(path, identity) == 0
    appender = _hold(path, "a")
    try:
        assert count_write_only_holders(path, identity) == 1
    finally:
        _release(appender)
    assert count_write_only_holders(path, identity) == 0


def test_readers_and_read_write_handles_do_not_count(tmp_path: Path) -> None:
    # Our own stores open sessions read-write and take the lock, so they never write into a
    # replaced file; readers cannot write at all.
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"{}\n")
    identity = _identity(path)
    holders = [_hold(path, "rb"), _hold(path, "r+b")]
    try:
        assert count_write_only_holders(path, identity) == 0
    finally:
        for holder in holders:
            _release(holder)


def test_a_handle_on_the_replaced_file_still_counts(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"{}\n")
    old = _identity(path)
    appender = _hold(path, "a")
    try:
        new = tmp_path / "new"
        new.write_bytes(b"{}\n")
        os.replace(new, path)  # what a rewrite does: the handle now names a deleted file
        assert count_write_only_holders(path, old) == 1
        assert count_write_only_holders(path, _identity(path)) == 0
    finally:
        _release(appender)


def test_a_file_of_the_same_name_elsewhere_does_not_count(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    mine, other = tmp_path / "a" / "s.jsonl", tmp_path / "b" / "s.jsonl"
    mine.write_bytes(b"{}\n")
    other.write_bytes(b"{}\n")
    appender = _hold(other, "a")
    try:
        assert count_write_only_holders(mine, _identity(mine)) == 0
    finally:
        _release(appender)
