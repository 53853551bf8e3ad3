"""Many processes on one database session: nothing lost, nothing duplicated, nothing committed
lost when a writer or an import is killed (SIGKILL) halfway."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from contextree.session.tree import SessionTree
from contextree.store.url import open_store

SRC = Path(__file__).resolve().parents[2] / "src"
WORKERS = 8
APPENDS = 2000


def _url(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    name = uuid.uuid4().hex
    if kind == "sqlite":
        return f"sqlite://{tmp_path}/shared.db#{name}"
    return f"{request.getfixturevalue('postgres').url}#{name}"


def _python(script: str, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )


APPENDER = """
    import sys
    from contextree.session.tree import SessionTree
    url, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    tree = SessionTree.open(url, cwd="/w")
    for n in range(count):
        entry_id = tree.append_custom("load", {"w": worker, "n": n})
        if worker < 0:
            print(entry_id, flush=True)  # committed: the append returned
"""


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_eight_processes_lose_and_duplicate_nothing(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = _url(kind, tmp_path, request)
    SessionTree.open(url, cwd="/w").append_custom("start")  # the header exists before the race
    children = [_python(APPENDER, url, str(w), str(APPENDS)) for w in range(WORKERS)]
    for child in children:
        _, err = child.communicate(timeout=600)
        assert child.returncode == 0, err
    tree = SessionTree.open(url, create=False)
    assert not tree.report.messages()
    seen = [
        (e["data"]["w"], e["data"]["n"])
        for e in tree.get_entries()
        if e["type"] == "custom" and e.get("customType") == "load"
    ]
    assert len(seen) == WORKERS * APPENDS
    assert set(seen) == {(w, n) for w in range(WORKERS) for n in range(APPENDS)}
    # Each worker's own appends form one chain: every one is a child of its previous one.
    entries = tree.get_entries()
    by_id = {e["id"]: e for e in entries}
    for entry in entries:
        if entry.get("customType") == "load" and entry["data"]["n"] > 0:
            parent = by_id[entry["parentId"]]
            assert parent["data"] == {"w": entry["data"]["w"], "n": entry["data"]["n"] - 1}


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_killed_appender_loses_no_committed_entry(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = _url(kind, tmp_path, request)
    child = _python(APPENDER, url, "-1", "100000")
    committed: list[str] = []
    assert child.stdout is not None
    for line in child.stdout:
        committed.append(line.strip())
        if len(committed) == 300:
            break
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)  # also closes the pipes
    tree = SessionTree.open(url, create=False)
    assert not tree.report.messages()
    stored = {e["id"] for e in tree.get_entries()}
    assert set(committed) <= stored
    # The dead writer's lock died with it: the next writer gets in at once.
    started = time.monotonic()
    tree.append_custom("after")
    assert time.monotonic() - started < 10


IMPORTER = """
    import sys
    from contextree.store.transfer import copy_session
    source, base = sys.argv[1], sys.argv[2]
    for n in range(1000):
        copy_session(source, f"{base}-{n}")
        print(n, flush=True)
"""


def _big_session(path: Path) -> bytes:
    lines = [
        b'{"type":"session","version":3,"id":"0193a000-0000-7000-8000-00000000000b",'
        b'"timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}'
    ]
    parent = None
    for n in range(20_000):
        key = f"{n:08x}"
        entry = {
            "type": "message",
            "id": key,
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": f"message {n} " + "x" * 100, "timestamp": n},
        }
        lines.append(json.dumps(entry).encode())
        parent = key
    data = b"\n".join(lines) + b"\n"
    path.write_bytes(data)
    return data


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_killed_import_leaves_every_session_whole_or_absent(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    source = tmp_path / "big.jsonl"
    data = _big_session(source)
    base = _url(kind, tmp_path, request)
    kept = open_store(base + "-kept")
    with kept.transaction() as txn:
        txn.replace(b'{"type":"session","version":3,"id":"k"}\n')
    child = _python(IMPORTER, str(source), base)
    assert child.stdout is not None
    done = [int(child.stdout.readline()) for _ in range(2)]
    time.sleep(0.05)  # into the third import
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)  # also closes the pipes
    for n in done:
        assert open_store(f"{base}-{n}").read() == data
    for n in range(done[-1] + 1, done[-1] + 3):
        store = open_store(f"{base}-{n}")
        assert not store.exists() or store.read() == data  # never a part of the file
    assert kept.read() == b'{"type":"session","version":3,"id":"k"}\n'
