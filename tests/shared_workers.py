"""Several workers on one shared session, on every store (issue 27 item 3).

The overlap is forced, not hoped for: each worker stops at a ``multiprocessing`` barrier at the
point where the race matters (inside its summarizer, or between a prune's decision and its
rewrite) until all workers and the test are there, and goes on only when the test says so.
While they wait, :func:`lock_is_free` checks that no worker holds the session's write lock.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.synchronize
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from contextree.llm.base import Completion, CompletionRequest
from contextree.store.url import open_store

STORES = ["file", "sqlite", "postgres"]
WAIT_S = 120.0
"""How long a barrier waits before it breaks: a worker that never arrives fails the test
instead of hanging it (no timing is asserted)."""

_FORK = multiprocessing.get_context("fork")


def shared_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the shared session lives for the store ``request.param`` names."""
    if request.param == "file":
        return str(tmp_path / "shared.jsonl")
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/shared.db#s"
    server = request.getfixturevalue("postgres")
    return f"{server.url}#{uuid.uuid4().hex}"


def lock_is_free(target: str) -> bool:
    """Take and release the session's write lock, failing at once when another holds it."""
    store = open_store(target, lock_timeout=0.2)
    with store.transaction():
        pass
    return True


class Meeting:
    """Workers wait here for each other and the test; the test lets them go on."""

    def __init__(self, workers: int) -> None:
        self.barrier = _FORK.Barrier(workers + 1, timeout=WAIT_S)
        self.go = _FORK.Event()

    def arrive(self) -> None:
        """A worker: all are here; wait until the test lets them go on."""
        self.barrier.wait()
        if not self.go.wait(WAIT_S):
            raise TimeoutError("the test never let the workers go on")

    def all_here(self) -> None:
        """The test: wait until every worker arrived."""
        self.barrier.wait()


class MeetingClient:
    """A summarizer whose first call answers only once every worker is inside its own first
    call (later calls, such as a compaction's short summary, answer at once)."""

    def __init__(self, meeting: Meeting, text: str) -> None:
        self.name = "meeting"
        self.meeting = meeting
        self.text = text
        self.calls = 0

    async def complete(self, request: CompletionRequest) -> Completion:
        self.calls += 1
        if self.calls == 1:
            self.meeting.arrive()  # blocks the worker's loop: nothing else runs in it meanwhile
        return Completion.from_text(self.text, model=self.name)


def run_workers(
    work: Callable[..., Any],
    calls: list[tuple[Any, ...]],
    meeting: Meeting,
    meanwhile: Callable[[], None],
) -> list[Any]:
    """Run ``work(*args)`` in one forked process per ``calls`` item; once all reached the
    meeting, run ``meanwhile`` in the test, let them go on, and return their results in
    order. A worker's exception fails the test with its traceback."""
    results = _FORK.Queue()
    processes = [
        _FORK.Process(target=_worker, args=(index, work, args, results))
        for index, args in enumerate(calls)
    ]
    for process in processes:
        process.start()
    try:
        meeting.all_here()
        meanwhile()
    finally:
        meeting.go.set()
    got = [results.get(timeout=WAIT_S) for _ in processes]
    for process in processes:
        process.join(WAIT_S)
    by_index = dict(sorted((index, (ok, value)) for index, ok, value in got))
    for ok, value in by_index.values():
        if not ok:
            pytest.fail(f"a worker failed:\n{value}")
    return [value for _, value in by_index.values()]


def _worker(index: int, work: Callable[..., Any], args: tuple[Any, ...], results: Any) -> None:
    try:
        results.put((index, True, work(*args)))
    except BaseException:
        results.put((index, False, traceback.format_exc()))
