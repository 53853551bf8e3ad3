"""Concurrent writers: several processes append to one session while the CLI rewrites it.

Appender processes (``python -m reliability.concurrency``) each open the session through the
library and append tool-call / tool-result pairs and user messages, recording every returned id
(and the marker inside each tool output) with an unbuffered write. Meanwhile the parent runs
``contextree`` commands on the same file, one after another: ``prune`` (an atomic rewrite),
``compact``, ``navigate --summarize`` and ``check --repair``. Then it checks that every line
parses (nothing torn), every returned id is there, no tool output was lost, the tree is clean
and ``contextree check`` finds no damage.
"""

from __future__ import annotations

import json
import os
import random
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reliability.common import (
    assistant_call,
    child_env,
    filler,
    python,
    text_of,
    tool_result,
    user,
)

_CLI_ENV = {
    "CONTEXTREE_PRUNING_PROTECT_TOKENS": "300",
    "CONTEXTREE_PRUNING_MINIMUM_SAVINGS": "0",
    "COLUMNS": "200",
    "NO_COLOR": "1",
}


@dataclass
class ConcurrencyStats:
    writers: int = 0
    appends: int = 0
    """Appends that returned an id (each must be in the file)."""
    cli_runs: dict[str, int] = field(default_factory=dict)
    lines: int = 0
    torn_lines: int = 0
    lost: int = 0
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _appender(path: str, worker: int, ids_file: str, stop_file: str, minimum: int) -> None:
    """Append until ``stop_file`` exists and at least ``minimum`` entries were written."""
    from contextree.session.tree import SessionTree

    rng = random.Random(worker)
    out = os.open(ids_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    tree = SessionTree.open(path, cwd="/work")
    count = 0
    while count < minimum or not os.path.exists(stop_file):
        call = f"w{worker}-c{count}"
        marker = f"W{worker}M{count}"
        first = tree.append_message(assistant_call(call, f"cat log{count}"))
        text = f"{marker} " + filler(rng, rng.randint(500, 6_000))
        second = tree.append_message(tool_result(call, text))
        third = tree.append_message(user(f"w{worker} message {count}"))
        os.write(out, f"{first}\n{second} {marker}\n{third}\n".encode())
        count += 3
        if count == 3:
            sys.stdout.write("ready\n")
            sys.stdout.flush()
        time.sleep(0.004)  # pace the writers so the file stays small while the CLI runs


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python(), "-m", "contextree", *args],
        cwd=cwd,
        env=child_env(**_CLI_ENV, HOME=str(cwd), CONTEXTREE_HOME=str(cwd / "home")),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _read_ids(files: list[Path]) -> tuple[list[str], dict[str, str]]:
    ids: list[str] = []
    markers: dict[str, str] = {}
    for file in files:
        if not file.exists():
            continue
        for line in file.read_text().splitlines():
            entry_id, _, marker = line.partition(" ")
            ids.append(entry_id)
            if marker:
                markers[entry_id] = marker
    return ids, markers


def run_concurrency(
    workdir: Path, *, writers: int = 3, minimum: int = 60, rounds: int = 1, seed: int = 0
) -> ConcurrencyStats:
    """Run ``writers`` appenders against ``rounds`` of CLI rewrites; see the module doc."""
    from contextree.session.check import check_session
    from contextree.session.tree import SessionTree

    rng = random.Random(seed)
    stats = ConcurrencyStats(writers=writers)
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "shared.jsonl"
    stop = workdir / "stop"
    ids_files = [workdir / f"ids-{k}" for k in range(writers)]
    procs = [
        subprocess.Popen(
            [
                python(),
                "-m",
                "reliability.concurrency",
                str(path),
                str(k),
                str(ids_files[k]),
                str(stop),
                str(minimum),
            ],
            env=child_env(),
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        for k in range(writers)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            ready, _, _ = select.select([proc.stdout], [], [], 120)
            if not ready or proc.stdout.readline().strip() != b"ready":
                stats.problems.append("an appender did not start")
        for _ in range(rounds):
            ids, _ = _read_ids(ids_files)
            target = rng.choice(ids)
            commands = [
                ["prune", str(path)],
                ["compact", str(path), "--keep-recent", "400", "--quiet"],
                ["navigate", str(path), target, "--summarize"],
                ["check", str(path), "--repair"],
                ["prune", str(path)],
            ]
            for args in commands:
                result = _cli(args, workdir)
                stats.cli_runs[args[0]] = stats.cli_runs.get(args[0], 0) + 1
                if result.returncode != 0 or "Traceback" in result.stderr:
                    stats.problems.append(
                        f"contextree {' '.join(args[:1])} failed ({result.returncode}): "
                        f"{result.stderr.strip()[-500:]} {result.stdout.strip()[-800:]}"
                    )
    finally:
        stop.touch()
        for proc in procs:
            try:
                code = proc.wait(timeout=300)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
            if code != 0:
                stats.problems.append(f"an appender exited with {code}")

    raw_lines = path.read_bytes().split(b"\n")
    if raw_lines[-1] != b"":
        stats.problems.append("the file does not end with a newline")
    objects = []
    for number, raw in enumerate(raw_lines[:-1], start=1):
        try:
            objects.append(json.loads(raw))
        except ValueError:
            stats.torn_lines += 1
            stats.problems.append(f"line {number} does not parse: {raw[:80]!r}")
    stats.lines = len(objects)
    if [o.get("type") for o in objects].count("session") != 1 or objects[0]["type"] != "session":
        stats.problems.append("the file does not have exactly one header, first")
    ids, markers = _read_ids(ids_files)
    stats.appends = len(ids)
    tree = SessionTree.open(path)
    lost = [i for i in ids if not tree.has_entry(i)]
    stats.lost = len(lost)
    if lost:
        stats.problems.append(f"{len(lost)} appended entries lost: {lost[:5]}")
    for entry_id, marker in markers.items():
        entry = tree.get_entry(entry_id)
        if entry is not None and marker not in text_of(entry.get("message")):
            stats.problems.append(f"the tool output of {entry_id} was lost")
    if not tree.report.clean:
        stats.problems.append(f"the tree is not clean: {tree.report.messages()[:3]}")
    errors = [f.message for f in check_session(tree).errors]
    if errors:
        stats.problems.append(f"check finds damage: {errors[:3]}")
    return stats


if __name__ == "__main__":
    _appender(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]))
