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
