"""Writers that take no lock: an appender that never takes our lock (as pi) against rewrites.

pi appends each entry with ``appendFileSync(path, line)`` (open, write, close) and never takes
contextree's lock, so an append it opened the file for just before one of our renames lands in
the old inode. This harness runs such an appender - pi 0.73.1's own ``SessionManager``
(``tests/differential/pi_appender.mjs``) or, without pi, this module run as a script, which
appends the same entries the same way - while the parent rewrites the file in a loop (the
library's prune and rewrite, and now and then the ``contextree prune`` command), then checks
that every entry the appender wrote is in the file exactly once, nothing is torn, every tool
output marker is still there and the tree loads clean.

Both appenders print each id on its own line once written, ``ready`` after the first turn and
``done`` at the end::

    python -m reliability.unlocked FILE TURNS PAUSE_MS BYTES
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from reliability.common import assistant_call, child_env, python, text_of, tool_result

_START_TIMEOUT = 60.0
MARK = "PI-MARK-"
"""Each tool output starts with ``PI-MARK-<turn> ``, so pruned outputs can still be found."""

_CLI_ENV = {"CONTEXTREE_PRUNING_PROTECT_TOKENS": "300", "CONTEXTREE_PRUNING_MINIMUM_SAVINGS": "0"}


@dataclass
class Appender:
    """A running appender process; ``ids`` fills as :meth:`collect` reads its output."""

    process: subprocess.Popen[bytes]
    ids: list[str] = field(default_factory=list)
    finished: bool = False

    @classmethod
    def start(cls, command: list[str], *, cwd: Path, env: dict[str, str]) -> Appender:
        """Start ``command``; returns once it has written its first turn."""
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd=cwd, env=env
        )
        appender = cls(process)
        appender._read_until("ready", _START_TIMEOUT)
        return appender

    def _stdout(self) -> IO[bytes]:
        assert self.process.stdout is not None
        return self.process.stdout

    def _read_until(self, word: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        stdout = self._stdout()
        while time.monotonic() < deadline:
            ready, _, _ = select.select([stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            line = stdout.readline().decode().strip()
            if not line:
                raise AssertionError(f"the appender stopped early (exit {self.process.wait()})")
            if line == "done":
                self.finished = True
            elif line != "ready":
                self.ids.append(line)
            if line == word:
                return
        raise AssertionError(f"the appender did not say {word!r} within {timeout:g} s")

    def running(self) -> bool:
        return self.process.poll() is None

    def collect(self, timeout: float = 120.0) -> list[str]:
        """Wait for the appender to finish; every id it appended, in order."""
        if not self.finished:
            self._read_until("done", timeout)
        code = self.process.wait(timeout=timeout)
        self._stdout().close()
        assert code == 0, f"the appender exited with {code}"
        return self.ids


def python_appender_command(
    file: Path, *, turns: int, pause_ms: int, output_bytes: int
) -> list[str]:
    """This module as an appender that writes the way pi does (one ``open(path, "a")`` per
    line, no lock)."""
    args = [str(file), str(turns), str(pause_ms), str(output_bytes)]
    return [python(), "-m", "reliability.unlocked", *args]


def start_session(path: Path) -> None:
    """A session pi would append to: a header, a user message and an assistant reply."""
    lines = [
        {"type": "session", "version": 3, "id": "unlocked", "timestamp": "2026-01-01T00:00:00.000Z",
         "cwd": str(path.parent)},
        {"type": "message", "id": "a0000001", "parentId": None,
         "timestamp": "2026-01-01T00:00:00.000Z",
         "message": {"role": "user", "content": "run the logs", "timestamp": 0}},
        {"type": "message", "id": "a0000002", "parentId": "a0000001",
         "timestamp": "2026-01-01T00:00:01.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "on it"}],
                     "api": "openai-completions", "provider": "openai", "model": "gpt-4o-mini",
                     "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                     "stopReason": "stop", "timestamp": 0}},
    ]  # fmt: skip
    path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines))


def rewrite_once(path: Path, round_number: int) -> bool:
    """What ``contextree prune`` does (open, prune, one atomic rewrite); when there is nothing
    to prune, rewrite the first message instead. Returns whether it pruned."""
    from contextree.compaction.prune import prune_session
    from contextree.session import SessionTree
    from contextree.settings import PruneSettings

    tree = SessionTree.open(path)
    try:
        if prune_session(tree, PruneSettings(protect_tokens=300, minimum_savings=0)).pruned_count:
            return True
        first = tree.get_entries()[0]
        message = {**first["message"], "content": [{"type": "text", "text": f"r{round_number}"}]}
        tree.rewrite_entries([{**first, "message": message}])
        return False
    finally:
        tree.store.close()  # type: ignore[attr-defined]


@dataclass
class UnlockedStats:
    appended: int = 0
    """Entries the appender wrote (each must be in the file once)."""
    rewrites: int = 0
    prunes: int = 0
    cli_prunes: int = 0
    lost: int = 0
    twice: int = 0
    torn_lines: int = 0
    problems: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "ids"}


def race_rewrites(path: Path, appender: Appender, turns: int, home: Path) -> UnlockedStats:
    """Rewrite ``path`` in a loop while ``appender`` runs; then check what it wrote."""
    stats = UnlockedStats()
    while appender.running():
        if stats.rewrites % 40 == 20:
            # Now and then the command itself, in its own process.
            done = subprocess.run(
                [python(), "-m", "contextree", "prune", str(path)],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
                env=child_env(HOME=str(home), **_CLI_ENV),
            )
            if done.returncode != 0:
                stats.problems.append(f"contextree prune exited {done.returncode}: {done.stderr}")
            stats.cli_prunes += 1
        elif rewrite_once(path, stats.rewrites):
            stats.prunes += 1
        stats.rewrites += 1
    stats.ids = appender.collect()
    stats.appended = len(stats.ids)
    _check(path, stats, turns)
    return stats


def _check(path: Path, stats: UnlockedStats, turns: int) -> None:
    from contextree.session import SessionTree
    from contextree.session.check import check_session

    lines: list[dict[str, Any]] = []
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            lines.append(json.loads(raw))
        except ValueError:
            stats.torn_lines += 1
            stats.problems.append(f"{path}:{number} is not JSON: {raw[:120]!r}")
    written = [line.get("id") for line in lines]
    stats.lost = sum(1 for i in stats.ids if i not in written)
    stats.twice = sum(1 for i in set(stats.ids) if written.count(i) > 1)
    if stats.lost or stats.twice:
        stats.problems.append(f"{stats.lost} entries lost, {stats.twice} written twice")
    if stats.appended != 2 * turns:
        stats.problems.append(f"the appender wrote {stats.appended} entries, not {2 * turns}")
    tree = SessionTree.open(path)
    if not tree.report.clean:
        stats.problems.extend(tree.report.messages()[:5])
    stats.problems.extend(f.message for f in check_session(tree).errors[:5])
    outputs = "\n".join(
        text_of(line.get("message")) for line in lines if line.get("type") == "message"
    )
    missing = [n for n in range(turns) if f"{MARK}{n} " not in outputs]
    if missing:
        stats.problems.append(f"tool outputs lost: turns {missing[:5]}")


def _append_like_pi(file: str, turns: int, pause_ms: int, size: int) -> None:
    """The script: pi's turns (a tool call, then its result), one ``open(path, "a")`` each."""
    lines = Path(file).read_bytes().splitlines()
    parent = json.loads(lines[-1])["id"]
    for turn in range(turns):
        call_id = f"py_call_{turn}"
        call = assistant_call(call_id, f"cat log{turn}")
        result = tool_result(call_id, f"{MARK}{turn} " + "x" * size)
        for n, message in enumerate((call, result)):
            entry_id = f"{turn:06x}{n:02x}"
            entry = {"type": "message", "id": entry_id, "parentId": parent,
                     "timestamp": "2026-01-01T00:00:02.000Z", "message": message}  # fmt: skip
            with open(file, "a", encoding="utf-8") as handle:  # appendFileSync: no lock
                handle.write(json.dumps(entry, separators=(",", ":")) + "\n")
            print(entry_id, flush=True)
            parent = entry_id
        if turn == 0:
            print("ready", flush=True)
        time.sleep(pause_ms / 1000)
    print("done", flush=True)


if __name__ == "__main__":
    file_arg, turns_arg, pause_arg, size_arg = sys.argv[1:5]
    _append_like_pi(file_arg, int(turns_arg), int(pause_arg), int(size_arg))
