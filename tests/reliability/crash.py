"""Crash safety: kill session operations with SIGKILL at random points, then check the file.

Every iteration forks a worker (see :mod:`reliability.crash_child`) that runs one scenario -
append, compact, prune (an atomic rewrite), navigate with a branch summary, or the v1 -> v3
migration of a copy of pi's ``large-session.jsonl`` - and kills it:

- *at an I/O call* (even iterations): the worker dies at its n-th write, fsync or rename, a
  write first cut to a random prefix; n is drawn from the calls a dry run made, so every
  iteration is reproducible from the seed;
- *after a delay* (odd iterations): the parent kills the worker after a random part of its
  dry-run time, which can land anywhere, inside Python code too.

After each kill :func:`verify` checks the invariants of issue 6: the file opens; every entry
whose append returned is there; at most one new bad line, and only as the last line, cut off or
ended early by the blank padding of an interrupted append (issue 15 item 8); a
rewrite left the old or the new bytes, never a mix; pruned tool output is still in the entry;
``contextree check`` finds nothing but the torn lines; a line appended the way pi appends
(without ending a torn line first) is read; and a new append works and is clean.
The append, compact, prune and navigate scenarios share one session file that grows across
iterations (a new one every 40), so later iterations start from files earlier kills left.
Scenarios take turns; the kind of kill alternates.

:func:`kill_at_every_io` is the exhaustive variant for one scenario: it kills a fresh copy of a
starting file at each of the scenario's I/O calls in turn, so no point of a rewrite is missed.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from contextree.session.check import check_session
from contextree.session.tree import SessionTree
from contextree.store.index import BadLine
from reliability.common import child_env, file_sha, python, sha, text_of, user

SHARED_SCENARIOS = ("append", "compact", "prune", "navigate")
SCENARIOS = (*SHARED_SCENARIOS, "migrate")
ROTATE_EVERY = 40
_REPLY_TIMEOUT = 60.0
_RUN_TIMEOUT = 60.0


@dataclass
class CrashStats:
    """What a campaign did and found; ``problems`` must stay empty."""

    seed: int
    iterations: int = 0
    killed: int = 0
    """Workers that died by SIGKILL (the rest finished first)."""
    killed_at_io: int = 0
    killed_by_timer: int = 0
    completed: int = 0
    entries_confirmed: int = 0
    """Appends that returned before the kill (each must survive)."""
    entries_lost: int = 0
    partial_last_lines: int = 0
    rewrites_interrupted: int = 0
    """Kills between the announcement of a rename and its return: old or new bytes only."""
    migrations_checked: int = 0
    stray_temp_files: int = 0
    """Temporary copies interrupted rewrites left (never read; ``check --repair`` removes them)."""
    per_scenario: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "problems"} | {
            "problems": list(self.problems)
        }


class Zygote:
    """The parent's handle on ``python -m reliability.crash_child``."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen(
            [python(), "-m", "reliability.crash_child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=child_env(),
        )

    def _ask(self, command: dict[str, Any]) -> dict[str, Any]:
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None and stdout is not None
        stdin.write((json.dumps(command) + "\n").encode())
        stdin.flush()
        answer: dict[str, Any] = json.loads(_read_line(stdout, _REPLY_TIMEOUT))
        return answer

    def spawn(self, task: dict[str, Any]) -> int:
        return int(self._ask({"op": "run", "task": task})["pid"])

    def reap(self, pid: int) -> dict[str, Any]:
        return self._ask({"op": "reap", "pid": pid, "timeout": _RUN_TIMEOUT})

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()

    def __enter__(self) -> Zygote:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read_line(stream: IO[bytes], timeout: float) -> str:
    ready, _, _ = select.select([stream], [], [], timeout)
    if not ready:
        raise TimeoutError("the crash zygote did not answer in time")
    line = stream.readline()
    if not line:
        raise RuntimeError("the crash zygote exited")
    return line.decode()


@dataclass
class Events:
    ids: list[str] = field(default_factory=list)
    markers: dict[str, str] = field(default_factory=dict)
    rewrite: tuple[str, str, int] | None = None
    """The last announced rename: old sha, new sha, new size."""
    rewrite_done: bool = False
    rewrites: int = 0
    ops: int | None = None
    error: str | None = None


def read_events(path: Path) -> Events:
    events = Events()
    if not path.exists():
        return events
    for raw in path.read_bytes().split(b"\n"):
        fields = raw.decode().split(" ")
        match fields:
            case ["I", entry_id]:
                events.ids.append(entry_id)
            case ["T", entry_id, marker]:
                events.markers[entry_id] = marker
            case ["R", old, new, size]:
                events.rewrite, events.rewrite_done = (old, new, int(size)), False
                events.rewrites += 1
            case ["D"]:
                events.rewrite_done = True
            case ["OPS", count]:
                events.ops = int(count)
            case ["E", text]:
                events.error = json.loads(text)
    return events


@dataclass
class SessionState:
    """What the parent knows about a shared session file across iterations."""

    path: Path
    confirmed: set[str] = field(default_factory=set)
    markers: dict[str, str] = field(default_factory=dict)
    bad_lines: int = 0


def _run(
    zygote: Zygote,
    task: dict[str, Any],
    *,
    delay: float | None = None,
) -> tuple[dict[str, Any], float]:
    """Run a task to its end (or kill it after ``delay`` seconds); ``(exit, seconds)``."""
    started = time.perf_counter()
    pid = zygote.spawn(task)
    if delay is not None:
        time.sleep(delay)  # the kill point itself: a random moment of the worker's run
        with contextlib.suppress(ProcessLookupError):  # the zygote reaps only when asked
            os.kill(pid, signal.SIGKILL)
    status = zygote.reap(pid)
    return status, time.perf_counter() - started


def _dry_run(
    zygote: Zygote, scenario: str, path: Path, seed: int, scratch: Path
) -> tuple[int, float]:
    """How many I/O calls and seconds the scenario takes on a copy of ``path``."""
    copy = scratch / "dry.jsonl"
    events_file = scratch / "dry.events"
    for stale in (copy, events_file):
        stale.unlink(missing_ok=True)
    if path.exists():
        shutil.copyfile(path, copy)
    task = {"scenario": scenario, "path": str(copy), "events": str(events_file), "seed": seed}
    status, seconds = _run(zygote, task)
    events = read_events(events_file)
    if status.get("code") != 0 or events.ops is None:
        raise AssertionError(f"dry run of {scenario} failed: {status} {events.error}")
    for leftover in scratch.glob(".dry.jsonl.*.tmp"):
        leftover.unlink()
    return events.ops, seconds


def pi_style_append(path: Path, parent: str | None) -> str:
    """Append one entry the way pi does (``appendFileSync``: no lock, a torn last line is not
    ended first); its id."""
    entry_id = os.urandom(4).hex()
    entry = {
        "type": "custom",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "customType": "pi-after-kill",
    }
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")
    return entry_id


def interrupted_fill(bad: BadLine) -> bool:
    """An append killed while it filled in its reserved line: the entry's start, then the
    blank padding that was not overwritten yet, and the newline (see JsonlFileStore)."""
    return bad.raw.endswith(b" ")


def verify(state: SessionState, events: Events, where: str) -> tuple[list[str], dict[str, int]]:
    """Check a shared session after a kill; returns problems and counters."""
    problems: list[str] = []
    counts = {"lost": 0, "partial": 0, "interrupted": 0}
    path = state.path
    if events.rewrite is not None and not events.rewrite_done:
        counts["interrupted"] = 1
        old, new, _ = events.rewrite
        now = file_sha(path)
        if now not in (old, new):
            problems.append(
                f"{where}: an interrupted rewrite left neither the old nor the new file"
            )
    if not path.exists() or path.stat().st_size == 0:
        if state.confirmed:
            problems.append(f"{where}: the session file is gone or empty")
        return problems, counts
    try:
        tree = SessionTree.open(path)
    except Exception as exc:
        return [f"{where}: the session does not open: {exc!r}"], counts
    missing = sorted(i for i in state.confirmed if not tree.has_entry(i))
    if missing:
        counts["lost"] = len(missing)
        problems.append(f"{where}: {len(missing)} confirmed entries lost: {missing[:5]}")
    bad = len(tree.report.bad_lines)
    new_bad = bad - state.bad_lines
    items = list(tree.records())
    last_is_bad = tree.report.partial_last_line and bool(tree.report.bad_lines)
    if new_bad > 1:
        problems.append(f"{where}: {new_bad} new bad lines after one kill")
    elif new_bad == 1:
        counts["partial"] = 1
        last_bad = tree.report.bad_lines[-1]
        last_line = max([last_bad.line, *(r.line or 0 for r in items)])
        torn = last_is_bad or interrupted_fill(last_bad)
        if not (torn and last_bad.line == last_line):
            problems.append(f"{where}: a bad line that is not the partial last line: {last_bad}")
    for entry_id, marker in state.markers.items():
        entry = tree.get_entry(entry_id)
        if entry is not None and marker not in text_of(entry.get("message")):
            problems.append(f"{where}: tool output of {entry_id} lost by pruning")
    errors = [
        f.message
        for f in check_session(tree).errors
        if not f.message.startswith("unreadable line skipped")
    ]
    if errors:
        problems.append(f"{where}: check finds damage: {errors[:3]}")
    # pi appends next, without ending a torn line first: its line must stay readable.
    foreign = pi_style_append(path, tree.leaf_id)
    # A later append must work, whatever the kill left behind, and leave no new bad line.
    probe = SessionTree.open(path).append_message(user(f"probe after {where}"))
    again = SessionTree.open(path)
    if not again.has_entry(foreign):
        problems.append(f"{where}: a line appended the way pi appends after the kill was lost")
    if not again.has_entry(probe) or again.report.partial_last_line:
        problems.append(f"{where}: the append after the kill did not land cleanly")
    if len(again.report.bad_lines) != bad:
        problems.append(f"{where}: the appends after the kill changed the bad lines")
    state.confirmed.update((foreign, probe))
    state.bad_lines = len(again.report.bad_lines)
    return problems, counts


def _verify_migration(
    path: Path, original: bytes, events: Events, where: str
) -> tuple[list[str], int]:
    problems: list[str] = []
    interrupted = 0
    data = path.read_bytes()
    if events.rewrite is None:
        if data != original:
            problems.append(f"{where}: the v1 file changed before the migration was renamed")
    else:
        old, new, size = events.rewrite
        if old != sha(original):
            problems.append(f"{where}: the rewrite started from unexpected bytes")
        if not events.rewrite_done:
            interrupted = 1
            if sha(data) not in (old, new):
                problems.append(f"{where}: interrupted migration left a mix of old and new")
        elif sha(data[:size]) != new:
            problems.append(f"{where}: the migrated file is not the announced content")
    try:
        tree = SessionTree.open(path)
    except Exception as exc:
        return [*problems, f"{where}: the migrated session does not open: {exc!r}"], interrupted
    missing = [i for i in events.ids if not tree.has_entry(i)]
    if missing:
        problems.append(f"{where}: confirmed entries lost after migration: {missing}")
    if len(tree) < 1018:
        problems.append(f"{where}: {1018 - len(tree)} migrated entries missing")
    bad = [b for b in tree.report.bad_lines if not isinstance(b, BadLine) or b.line != 0]
    torn = tree.report.partial_last_line or (bad and interrupted_fill(bad[-1]))
    if len(bad) > 1 or (bad and not torn):
        problems.append(f"{where}: unexpected bad lines after migration: {bad[:2]}")
    if not tree.needs_rewrite:  # pi appends only to a v3 file (it migrates a v1 one first)
        foreign = pi_style_append(path, tree.leaf_id)
        if not SessionTree.open(path).has_entry(foreign):
            problems.append(f"{where}: a line appended the way pi appends after the kill was lost")
    return problems, interrupted


def run_crash_campaign(
    workdir: Path,
    *,
    iterations: int,
    seed: int,
    v1_fixture: Path,
    progress: Callable[[str], None] | None = None,
) -> CrashStats:
    """Kill ``iterations`` workers at random points; every check's failure is in ``problems``."""
    rng = random.Random(seed)
    stats = CrashStats(seed=seed)
    original_v1 = v1_fixture.read_bytes()
    scratch = workdir / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    state = SessionState(workdir / "shared-0.jsonl")
    with Zygote() as zygote:
        for index in range(iterations):
            if index and index % ROTATE_EVERY == 0:
                state = SessionState(workdir / f"shared-{index // ROTATE_EVERY}.jsonl")
            scenario = SCENARIOS[index % len(SCENARIOS)]
            task_seed = rng.getrandbits(32)
            where = f"seed {seed} iteration {index} ({scenario}, task seed {task_seed})"
            if scenario == "migrate":
                path = workdir / f"migrate-{index}.jsonl"
                path.write_bytes(original_v1)
                path.chmod(0o600)
            else:
                path = state.path
            ops, seconds = _dry_run(zygote, scenario, path, task_seed, scratch)
            events_file = workdir / f"events-{index}"
            task: dict[str, Any] = {
                "scenario": scenario,
                "path": str(path),
                "events": str(events_file),
                "seed": task_seed,
            }
            delay: float | None = None
            if index % 2 == 0:
                task["kill_at"] = rng.randint(1, max(1, ops))
            else:
                delay = rng.uniform(0.0, seconds)
            status, _ = _run(zygote, task, delay=delay)
            events = read_events(events_file)
            stats.iterations += 1
            stats.per_scenario[scenario] = stats.per_scenario.get(scenario, 0) + 1
            if status.get("hung"):
                stats.problems.append(f"{where}: the worker hung")
            if status.get("signal") == signal.SIGKILL:
                stats.killed += 1
                if delay is None:
                    stats.killed_at_io += 1
                else:
                    stats.killed_by_timer += 1
            elif status.get("code") == 0:
                stats.completed += 1
            else:
                stats.problems.append(f"{where}: the worker failed: {status} {events.error}")
            if scenario == "migrate":
                problems, interrupted = _verify_migration(path, original_v1, events, where)
                stats.migrations_checked += 1
                stats.rewrites_interrupted += interrupted
                stats.entries_confirmed += len(events.ids)
                stats.stray_temp_files += _remove_temps(path)
                path.unlink()
            else:
                state.confirmed.update(events.ids)
                state.markers.update(events.markers)
                stats.entries_confirmed += len(events.ids)
                problems, counts = verify(state, events, where)
                stats.entries_lost += counts["lost"]
                stats.partial_last_lines += counts["partial"]
                stats.rewrites_interrupted += counts["interrupted"]
                stats.stray_temp_files += _remove_temps(path)
            events_file.unlink(missing_ok=True)
            stats.problems.extend(problems)
            if progress is not None and (index + 1) % 25 == 0:
                progress(f"crash: {index + 1}/{iterations} iterations, {stats.killed} killed")
    return stats


def _remove_temps(path: Path) -> int:
    """Count (and remove) the temporary files interrupted rewrites left beside ``path``."""
    leftovers = list(path.parent.glob(f".{path.name}.*.tmp"))
    for leftover in leftovers:
        leftover.unlink()
    return len(leftovers)


def kill_at_every_io(
    workdir: Path, *, scenario: str, start: Path, seed: int, limit: int = 200
) -> CrashStats:
    """Kill ``scenario`` at its 1st, 2nd, ... I/O call (up to ``limit``), each on a fresh copy
    of ``start``; after each kill the same checks as the campaign run."""
    stats = CrashStats(seed=seed)
    scratch = workdir / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    original = start.read_bytes()
    with Zygote() as zygote:
        ops, _ = _dry_run(zygote, scenario, start, seed, scratch)
        for kill_at in range(1, min(ops, limit) + 1):
            where = f"{scenario} killed at I/O call {kill_at} of {ops} (seed {seed})"
            path = workdir / f"{scenario}.jsonl"
            path.write_bytes(original)
            path.chmod(0o600)
            events_file = workdir / "events"
            events_file.unlink(missing_ok=True)
            task = {
                "scenario": scenario,
                "path": str(path),
                "events": str(events_file),
                "seed": seed,
                "kill_at": kill_at,
            }
            status, _ = _run(zygote, task)
            events = read_events(events_file)
            stats.iterations += 1
            if status.get("signal") == signal.SIGKILL:
                stats.killed += 1
                stats.killed_at_io += 1
            else:
                stats.problems.append(f"{where}: the worker was not killed: {status}")
            stats.entries_confirmed += len(events.ids)
            if scenario == "migrate":
                problems, interrupted = _verify_migration(path, original, events, where)
                stats.migrations_checked += 1
            else:
                state = SessionState(path)
                before = SessionTree.in_memory(original)
                state.confirmed = {r.id for r in before.records() if r.id is not None}
                state.bad_lines = len(before.report.bad_lines)
                state.confirmed.update(events.ids)
                state.markers.update(events.markers)
                problems, counts = verify(state, events, where)
                interrupted = counts["interrupted"]
                stats.entries_lost += counts["lost"]
                stats.partial_last_lines += counts["partial"]
            stats.rewrites_interrupted += interrupted
            stats.stray_temp_files += _remove_temps(path)
            stats.problems.extend(problems)
    return stats
