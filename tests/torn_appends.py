"""A kill in the middle of one of our appends, simulated in-process, and pi's next append
(issue 15 item 8); shared by ``tests/store/test_torn_appends.py`` and the real-pi check in
``tests/differential/test_pi_torn_append.py``.

``os.write`` / ``os.pwrite`` write part of their bytes at the chosen call and raise
:class:`Killed`; pi's side is a plain ``open(path, "a").write(line + "\\n")``, as
``appendFileSync`` does it: no lock, and a torn last line is not ended first.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from contextree.session.tree import SessionTree
from core_helpers import Chain, assistant, header, jsonl, user

PI_TEXT = "written by pi after the kill"


class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs, and no ``except Exception`` catches it."""


_real_write = os.write
_real_pwrite = os.pwrite

Cut = Callable[[int], int]
CUTS: dict[str, Cut] = {
    "nothing": lambda n: 0,
    "one byte": lambda n: 1,
    "half": lambda n: n // 2,
    "all but one byte": lambda n: n - 1,
    "all": lambda n: n,
}


class Injector:
    """Counts the writes of an append and 'kills' it at the n-th, after part of its bytes."""

    def __init__(self, kill_at: int | None = None, cut: Cut = CUTS["half"]) -> None:
        self.kill_at = kill_at
        self.cut = cut
        self.calls = 0

    def _due(self) -> bool:
        self.calls += 1
        return self.calls == self.kill_at

    def write(self, fd: int, data: Any) -> int:
        if self._due():
            view = memoryview(data)
            if keep := self.cut(len(view)):
                _real_write(fd, view[:keep])
            raise Killed
        return _real_write(fd, data)

    def pwrite(self, fd: int, data: Any, offset: int) -> int:
        if self._due():
            view = memoryview(data)
            if keep := self.cut(len(view)):
                _real_pwrite(fd, view[:keep], offset)
            raise Killed
        return _real_pwrite(fd, data, offset)


def start_session(path: Path) -> list[str]:
    chain = Chain()
    chain.msg(user("hello"))
    chain.msg(assistant("hi"))
    path.write_bytes(jsonl(header(), *chain.entries))
    return [entry["id"] for entry in chain.entries]


def big_message() -> dict[str, Any]:
    return user("a large tool output " + "x" * 20_000)


def append_killed(path: Path, injector: Injector, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = SessionTree.open(path)
    tree.append_message(user("small, before the kill"))
    with monkeypatch.context() as patch:
        patch.setattr(os, "write", injector.write)
        patch.setattr(os, "pwrite", injector.pwrite)
        with contextlib.suppress(Killed):
            tree.append_message(big_message())
    tree.store.close()  # the process is gone: its descriptors and its lock with it


def pi_append(path: Path, parent: str | None) -> str:
    entry = {
        "type": "message",
        "id": "feedf00d",
        "parentId": parent,
        "timestamp": "2026-01-01T00:10:00.000Z",
        "message": {"role": "user", "content": PI_TEXT, "timestamp": 1},
    }
    with open(path, "a") as handle:  # pi: appendFileSync(path, line), no lock, no repair
        handle.write(json.dumps(entry) + "\n")
    return "feedf00d"
