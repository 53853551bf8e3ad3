"""Issue 28 point 8: ``export`` refuses a symbolic link as its target unless asked, and a copy
streams the session instead of holding several copies of it in memory."""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_env import clean_cli_env, invoke, ok, reset_consoles
from contextree.store.transfer import copy_session
from contextree.store.url import open_store

HEADER = b'{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/w"}\n'
LINE = (
    b'{"type":"message","id":"a0000001","parentId":null,"timestamp":"t",'
    b'"message":{"role":"user","content":"' + b"x" * 900 + b'","timestamp":0}}\n'
)


@pytest.fixture(autouse=True)
def clean_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    clean_cli_env(tmp_path, monkeypatch)
    yield
    reset_consoles()


@pytest.fixture
def stored(tmp_path: Path) -> str:
    url = f"sqlite://{tmp_path}/s.db#s1"
    with open_store(url).transaction() as txn:
        txn.replace(HEADER + LINE * 3)
    return url


def test_export_to_a_dangling_symlink_creates_nothing(tmp_path: Path, stored: str) -> None:
    link = tmp_path / "out.jsonl"
    link.symlink_to(tmp_path / "elsewhere.jsonl")
    result = invoke("export", stored, link)
    assert result.exit_code == 1
    assert "symbolic link" in result.output and "--follow-symlinks" in result.output
    assert not (tmp_path / "elsewhere.jsonl").exists()
    ok("export", stored, link, "--follow-symlinks")
    assert (tmp_path / "elsewhere.jsonl").read_bytes() == HEADER + LINE * 3


def test_export_force_does_not_replace_what_a_symlink_points_to(
    tmp_path: Path, stored: str
) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_bytes(b"keep me\n")
    link = tmp_path / "out.jsonl"
    link.symlink_to(precious)
    result = invoke("export", stored, link, "--force")
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert precious.read_bytes() == b"keep me\n" and link.is_symlink()
    ok("export", stored, link, "--force", "--follow-symlinks")
    assert precious.read_bytes() == HEADER + LINE * 3 and link.is_symlink()


def test_import_from_a_symlinked_file_still_works(tmp_path: Path) -> None:
    source = tmp_path / "real.jsonl"
    source.write_bytes(HEADER + LINE)
    (tmp_path / "link.jsonl").symlink_to(source)
    ok("import", tmp_path / "link.jsonl", f"sqlite://{tmp_path}/t.db")


@pytest.mark.parametrize("direction", ["import", "export"])
def test_a_copy_streams_the_session(tmp_path: Path, direction: str) -> None:
    data = HEADER + LINE * 24_000  # about 22 MB
    file = tmp_path / "big.jsonl"
    url = f"sqlite://{tmp_path}/big.db#s1"
    if direction == "import":
        file.write_bytes(data)
        source, target = str(file), url
    else:
        with open_store(url).transaction() as txn:
            txn.replace(data)
        source, target = url, str(tmp_path / "out.jsonl")
    tracemalloc.start()
    try:
        copy_session(source, target)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The whole session held even once would be len(data); a copy used to hold 3-4 times it.
    assert peak < len(data) / 3, f"peak {peak:,} bytes for a {len(data):,}-byte session"
    assert open_store(target).read() == data
    assert os.stat(f"{tmp_path}/big.db").st_size > 0


@pytest.mark.parametrize(
    "data",
    [b"", b"a\n", b"a", b"abc\ndef", b"x" * 10 + b"\n" + b"y" * 25 + b"\nz", b"\n\n", b"q" * 30],
)
def test_file_chunks_are_whole_lines_that_join_to_the_file(tmp_path: Path, data: bytes) -> None:
    from contextree.store.jsonl import JsonlFileStore

    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    chunks = list(JsonlFileStore(path).read_chunks(size=4))
    assert b"".join(chunks) == data
    assert all(chunks) and all(chunk.endswith(b"\n") for chunk in chunks[:-1])
