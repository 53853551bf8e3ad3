"""The child side of the crash harness: a zygote that forks one worker per iteration.

``python -m reliability.crash_child`` imports contextree once, then reads JSON commands on
stdin, one per line:

- ``{"op": "run", "task": {...}}`` forks a worker for the task and answers ``{"pid": N}``;
- ``{"op": "reap", "pid": N, "timeout": S}`` waits for that worker (killing it after ``S``
  seconds: a hang is a failure too) and answers ``{"signal": 9 | None, "code": ..., "hung": ...}``.

A worker runs one scenario on a session file and reports what finished to an event file, with
unbuffered writes (the lines survive a SIGKILL of the writer):

- ``I <id>``: an append returned this id; ``T <id> <marker>``: that tool result holds marker;
- ``R <old sha> <new sha> <new size>``: a rewrite is about to be renamed over the session,
  ``D`` once the rename returned; ``OPS <n>``: the worker finished after ``n`` I/O calls.

With ``kill_at = n`` the worker SIGKILLs itself at its n-th ``os.write`` / ``os.pwrite`` /
``os.fsync`` / ``os.replace``; a write is first cut to a random prefix (a torn write).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contextree.branching.navigate import navigate_tree, persist_leaf
from contextree.compaction.offline import OfflineSummarizer
from contextree.compaction.prune import prune_session
from contextree.compaction.run import CompactionOutcome, compact_session
from contextree.session.tree import SessionTree
from contextree.settings.schema import CompactionSettings, PruneSettings
from reliability.common import assistant_call, filler, sha, sized, tool_result, user

Emit = Callable[..., None]

_real_write = os.write
_real_pwrite = os.pwrite
_real_fsync = os.fsync
_real_replace = os.replace


class _Injector:
    """Counts I/O calls and kills the process at the chosen one."""

    def __init__(self, kill_at: int | None, rng: random.Random, session: Path, emit: Emit):
        self.kill_at = kill_at
        self.rng = rng
        self.session = os.path.realpath(session)
        self.emit = emit
        self.ops = 0

    def _due(self) -> bool:
        self.ops += 1
        return self.kill_at is not None and self.ops >= self.kill_at

    @staticmethod
    def _die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(60)  # never reached: SIGKILL cannot be caught

    def write(self, fd: int, data: Any) -> int:
        if self._due():
            view = memoryview(data)
            cut = self.rng.randint(0, len(view))
            if cut:
                _real_write(fd, view[:cut])
            self._die()
        return _real_write(fd, data)

    def pwrite(self, fd: int, data: Any, offset: int) -> int:
        if self._due():
            view = memoryview(data)
            cut = self.rng.randint(0, len(view))
            if cut:
                _real_pwrite(fd, view[:cut], offset)
            self._die()
        return _real_pwrite(fd, data, offset)

    def fsync(self, fd: Any) -> None:
        if self._due():
            self._die()
        _real_fsync(fd)

    def replace(self, src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        announce = os.path.realpath(os.fspath(dst)) == self.session
        if announce:
            new = Path(os.fspath(src)).read_bytes()
            old = Path(self.session).read_bytes() if os.path.exists(self.session) else b""
            self.emit("R", sha(old), sha(new), str(len(new)))
        if self._due():
            if self.rng.random() < 0.5:
                _real_replace(src, dst, *args, **kwargs)
            self._die()
        _real_replace(src, dst, *args, **kwargs)
        if announce:
            self.emit("D")


def _message(rng: random.Random) -> dict[str, Any]:
    return user(filler(rng, sized(rng)))


def _scenario_append(path: Path, rng: random.Random, emit: Emit) -> None:
    tree = SessionTree.open(path, cwd="/work")
    for _ in range(rng.randint(2, 6)):
        emit("I", tree.append_message(_message(rng)))


def _scenario_compact(path: Path, rng: random.Random, emit: Emit) -> None:
    tree = SessionTree.open(path, cwd="/work")
    for _ in range(2):
        emit("I", tree.append_message(_message(rng)))
    settings = CompactionSettings(
        keep_recent_tokens=rng.randint(200, 4000), adjust_keep_recent_by_usage=False
    )
    outcome = asyncio.run(compact_session(tree, OfflineSummarizer(), settings=settings))
    if isinstance(outcome, CompactionOutcome):
        emit("I", outcome.entry["id"])


def _scenario_prune(path: Path, rng: random.Random, emit: Emit) -> None:
    tree = SessionTree.open(path, cwd="/work")
    # Two results at least, each (500 tokens and more) larger than the protected window: the
    # older is always pruned, so there is always a rewrite to interrupt (with one result and a
    # window as large as it, some seeds pruned nothing, and the test that a kill interrupted a
    # rewrite failed for them).
    for _ in range(rng.randint(2, 3)):
        call = f"call-{rng.getrandbits(32):08x}"
        marker = f"MARK{rng.getrandbits(48):012x}"
        emit("I", tree.append_message(assistant_call(call, "cat big.log")))
        result = tool_result(call, f"{marker} " + filler(rng, rng.randint(2_000, 30_000)))
        entry_id = tree.append_message(result)
        emit("I", entry_id)
        emit("T", entry_id, marker)
    prune_session(tree, PruneSettings(protect_tokens=rng.randint(100, 450), minimum_savings=0))


def _scenario_navigate(path: Path, rng: random.Random, emit: Emit) -> None:
    tree = SessionTree.open(path, cwd="/work")
    ids = [record.id for record in tree.records() if record.id is not None]
    if len(ids) < 3:
        emit("I", tree.append_message(_message(rng)))
        return
    # Not the leaf itself: navigating there writes nothing, and the scenario must write.
    target = rng.choice([i for i in ids[-40:] if i != tree.leaf_id])
    result = asyncio.run(
        navigate_tree(
            tree, target, summarize=True, client=OfflineSummarizer(), context_window=128_000
        )
    )
    if result.summary_entry is not None:
        emit("I", result.summary_entry["id"])
    elif not result.cancelled:
        recorded = persist_leaf(tree)
        if recorded is not None:
            emit("I", recorded)
    emit("I", tree.append_message(_message(rng)))


def _scenario_migrate(path: Path, rng: random.Random, emit: Emit) -> None:
    tree = SessionTree.open(path)
    tree.flush()  # the v1 -> v3 migration, one atomic rewrite
    emit("I", tree.append_message(_message(rng)))


SCENARIOS: dict[str, Callable[[Path, random.Random, Emit], None]] = {
    "append": _scenario_append,
    "compact": _scenario_compact,
    "prune": _scenario_prune,
    "navigate": _scenario_navigate,
    "migrate": _scenario_migrate,
}


def _worker(task: dict[str, Any]) -> None:
    events = os.open(task["events"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def emit(*fields: str) -> None:
        _real_write(events, (" ".join(fields) + "\n").encode())

    path = Path(task["path"])
    injector = _Injector(task.get("kill_at"), random.Random(task["seed"] ^ 0x5EED), path, emit)
    os.write = injector.write
    os.pwrite = injector.pwrite
    os.fsync = injector.fsync
    os.replace = injector.replace
    try:
        SCENARIOS[task["scenario"]](path, random.Random(task["seed"]), emit)
    except BaseException:
        emit("E", json.dumps(traceback.format_exc()))
        raise
    emit("OPS", str(injector.ops))


def _reap(pid: int, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    hung = False
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            hung = True
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            break
        time.sleep(0.001)
    return {
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "hung": hung,
    }


def main() -> None:
    for line in sys.stdin:
        command = json.loads(line)
        if command["op"] == "run":
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    _worker(command["task"])
                except BaseException:
                    code = 3
                finally:
                    os._exit(code)
            answer: dict[str, Any] = {"pid": pid}
        elif command["op"] == "reap":
            answer = _reap(command["pid"], command["timeout"])
        else:
            answer = {"error": f"unknown op {command['op']!r}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
