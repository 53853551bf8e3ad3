"""pi 0.73.1 writes a lone surrogate when it cuts a string inside an emoji; we read what it
reads (issue 15 item 2).

pi's own ``SessionManager`` writes the session (``pi_write_session.mjs``), with texts cut by
``String.prototype.slice`` in the middle of a surrogate pair. contextree opens the file clean,
its context at the last entry is pi's, and after contextree appends to the file and rewrites
it, pi still reads every entry. A lone surrogate is read as U+FFFD: what node itself sends for
one in any UTF-8 output (an HTTP body to a model, a file), so pi's side is compared after that
same encoding.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from contextree.session import SessionTree
from core_helpers import assistant, user
from differential.compare import for_pi, resolve
from differential.installs import HERE, Install

pytestmark = pytest.mark.differential

Json = dict[str, Any]

_SURROGATE = re.compile("[\ud800-\udfff]")
_CUT = {"$sliceUtf16": ["abcd🤖 robot", 5]}  # "abcd" and the first half of the emoji


def _as_utf8(value: Any) -> Any:
    """``value`` as node would write it to UTF-8: each lone surrogate becomes U+FFFD (in a
    Python string every surrogate code point is a lone one)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_as_utf8(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_utf8(item) for key, item in value.items()}
    return value


def _pi_writes(pi: Install, path: Path, messages: list[Json]) -> list[str]:
    done = subprocess.run(
        [pi.command[0], str(HERE / "pi_write_session.mjs"), str(pi.root), str(path)],
        input=json.dumps(messages).encode(),
        capture_output=True,
        timeout=120,
        check=True,
        cwd=path.parent,
        env={"PATH": "/usr/bin:/bin", "HOME": str(path.parent), "NO_COLOR": "1"},
    )
    return done.stdout.decode().split()


def _context_of(pi: Install, path: Path, leaf: str, home: Path) -> list[Json]:
    (answer,) = pi.run([{"file": str(path), "leaves": [leaf]}], home)
    messages: list[Json] = resolve(answer["contexts"][leaf]["messages"], answer["messages"])
    return messages


def test_pis_cut_emoji_is_read_as_pi_reads_it(pi: Install, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    cut_user = {**user("x"), "content": [{"type": "text", "text": _CUT}]}
    cut_reply = {**assistant("x"), "content": [{"type": "text", "text": _CUT}]}
    ids = _pi_writes(pi, path, [user("first"), assistant("ok"), cut_user, cut_reply])
    assert len(ids) == 4
    assert b"\\ud83e" in path.read_bytes()  # pi wrote the lone surrogate as an escape

    tree = SessionTree.open(path)
    assert tree.report.clean, tree.report.messages()
    assert [e["id"] for e in tree.get_branch()] == ids
    theirs = _context_of(pi, path, ids[-1], tmp_path / "pi-home")
    ours = for_pi(tree.build_session_context().messages)
    assert ours == _as_utf8(theirs)
    assert ours[2]["content"][0]["text"] == "abcd\ufffd"

    # We append and rewrite; pi still reads its entries, the escape byte for byte.
    tree.append_message(user("after"))
    first = tree.get_entries()[0]
    tree.rewrite_entries([{**first, "message": user("first, edited")}])
    assert path.read_bytes().count(b"\\ud83e") == 2
    leaf = tree.leaf_id
    assert leaf is not None
    theirs = _context_of(pi, path, leaf, tmp_path / "pi-home")
    assert [m["role"] for m in theirs] == ["user", "assistant", "user", "assistant", "user"]
    assert for_pi(SessionTree.open(path).build_session_context().messages) == _as_utf8(theirs)
