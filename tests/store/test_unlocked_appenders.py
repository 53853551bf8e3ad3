"""Rewrites keep the appends of a writer that takes no lock (issue 15 item 1).

pi appends with ``appendFileSync(path)`` and never takes our advisory lock, so an append it
starts just before our rename lands in the old inode. The rewrite copies such bytes over to
the new file; this test runs an unlocked appender (one ``open(path, "a")`` per line, as pi
does) against a loop of atomic rewrites and counts every line it wrote.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import contextree.store.jsonl as jsonl_store
from contextree.session.tree import SessionTree
from core_helpers import Chain, assistant, header, jsonl, user

APPENDER = r"""
import json, sys, time
path, count = sys.argv[1], int(sys.argv[2])
parent = sys.argv[3]
for n in range(count):
    entry = {"type": "custom", "id": f"p{n:07d}", "parentId": parent,
             "timestamp": "2026-01-01T00:00:00.000Z", "customType": "pi-like", "data": {"n": n}}
    with open(path, "a") as handle:  # pi: appendFileSync(path, line), no lock
        handle.write(json.dumps(entry) + "\n")
    parent = entry["id"]
    time.sleep(0.002)
"""


def test_rewrites_keep_every_line_an_unlocked_writer_appended(tmp_path: Path) -> None:
    chain = Chain()
    chain.msg(user("hello"))
    chain.msg(assistant("hi"))
    path = tmp_path / "s.jsonl"
    path.write_bytes(jsonl(header(), *chain.entries))
    count = 400
    last = chain.entries[-1]["id"]
    writer = subprocess.Popen([sys.executable, "-c", APPENDER, str(path), str(count), last])
    tree = SessionTree.open(path)
    rewrites = 0
    try:
        while writer.poll() is None:
            first = tree.get_entries()[0]
            text = f"rewrite {rewrites}"
            tree.rewrite_entries([{**first, "message": {**first["message"], "content": text}}])
            rewrites += 1
            time.sleep(0.001)
    finally:
        writer.wait(timeout=60)
    assert rewrites > 20
    lines = [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    appended = [line["id"] for line in lines if line.get("customType") == "pi-like"]
    assert sorted(appended) == [f"p{n:07d}" for n in range(count)]
    assert len(appended) == len(set(appended))  # nothing carried twice


def _two_line_session(path: Path) -> SessionTree:
    chain = Chain()
    chain.msg(user("hello"))
    chain.msg(assistant("hi"))
    path.write_bytes(jsonl(header(), *chain.entries))
    return SessionTree.open(path)


def _rename_first(tree: SessionTree, text: str) -> None:
    first = tree.get_entries()[0]
    tree.rewrite_entries([{**first, "message": {**first["message"], "content": text}}])


def test_a_rewrite_nobody_appends_to_waits_one_pause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = _two_line_session(tmp_path / "s.jsonl")
    pauses: list[float] = []
    monkeypatch.setattr(jsonl_store.time, "sleep", pauses.append)
    _rename_first(tree, "quiet")
    assert pauses == [jsonl_store._CARRY_PAUSE_S]


def test_the_carry_over_follows_a_writer_that_keeps_appending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    tree = _two_line_session(path)
    parent = tree.get_entries()[-1]["id"]
    lines = [
        json.dumps(
            {
                "type": "custom",
                "id": f"c000000{n}",
                "parentId": parent,
                "timestamp": "2026-01-01T00:00:00.000Z",
                "customType": "late",
            }
        ).encode()
        for n in range(3)
    ]
    writes = [lines[0] + b"\n", lines[1][:20], lines[1][20:] + b"\n", lines[2] + b"\n"]
    pauses: list[float] = []
    # Opened before the rename: its appends land in the old inode.
    with open(path, "ab") as late:

        def pause(seconds: float) -> None:
            pauses.append(seconds)
            if writes:  # one write per pause, a line split across two of them
                late.write(writes.pop(0))
                late.flush()

        monkeypatch.setattr(jsonl_store.time, "sleep", pause)
        _rename_first(tree, "busy")
    assert len(pauses) == 5  # four that saw the old inode grow, one quiet one
    kept = [line.get("id") for line in map(json.loads, path.read_bytes().splitlines())]
    assert kept[-3:] == ["c0000000", "c0000001", "c0000002"]
