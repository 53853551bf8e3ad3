"""Run pi 0.73.1's SessionManager as a second writer of a session file (``pi_appender.mjs``).

pi appends with ``appendFileSync`` and takes no lock; these helpers start it, read the ids it
reports as it goes, and check a file afterwards from both sides: every line pi wrote is there,
once, and pi itself still opens the file and reaches each of its entries.
"""

from __future__ import annotations

import json
import select
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from contextree.session import SessionTree
from contextree.session.check import check_session
from differential.installs import HERE, Install

PI_APPENDER = HERE / "pi_appender.mjs"
_START_TIMEOUT = 60.0

Json = dict[str, Any]


@dataclass
class PiAppender:
    """A running ``pi_appender.mjs``; ``ids`` fills as :meth:`collect` reads its output."""

    process: subprocess.Popen[bytes]
    ids: list[str] = field(default_factory=list)
    finished: bool = False

    @classmethod
    def start(
        cls, pi: Install, file: Path, *, turns: int, pause_ms: int, output_bytes: int = 2000
    ) -> PiAppender:
        """Start pi appending ``turns`` tool-call/result pairs; returns after the first."""
        node = pi.command[0]
        args = [node, str(PI_APPENDER), str(pi.root), str(file), str(turns), str(pause_ms)]
        process = subprocess.Popen(
            [*args, str(output_bytes)],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            cwd=file.parent,
            env={"PATH": "/usr/bin:/bin", "HOME": str(file.parent), "NO_COLOR": "1"},
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
                raise AssertionError(f"pi's appender stopped early (exit {self.process.wait()})")
            if line == "done":
                self.finished = True
            elif line != "ready":
                self.ids.append(line)
            if line == word:
                return
        raise AssertionError(f"pi's appender did not say {word!r} within {timeout:g} s")

    def running(self) -> bool:
        return self.process.poll() is None

    def collect(self, timeout: float = 120.0) -> list[str]:
        """Wait for the appender to finish; every id it appended, in order."""
        if not self.finished:
            self._read_until("done", timeout)
        code = self.process.wait(timeout=timeout)
        self._stdout().close()
        assert code == 0, f"pi's appender exited with {code}"
        return self.ids


def entries_in_file(path: Path) -> list[Json]:
    """Every line of ``path`` as JSON; fails naming the first line that is not."""
    lines = []
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        if raw.strip():
            try:
                lines.append(json.loads(raw))
            except ValueError:
                raise AssertionError(f"{path}:{number} is not JSON: {raw[:120]!r}") from None
    return lines


def assert_both_read(pi: Install, path: Path, pi_ids: list[str], home: Path) -> None:
    """``path`` holds each of ``pi_ids`` exactly once, contextree loads it clean, and pi opens
    it and builds the context of its last entry through all of them."""
    written = [line.get("id") for line in entries_in_file(path)]
    missing = [i for i in pi_ids if i not in written]
    assert not missing, f"{len(missing)} of pi's {len(pi_ids)} entries lost: {missing[:5]}"
    twice = sorted({i for i in pi_ids if written.count(i) > 1})
    assert not twice, f"pi's entries written twice: {twice[:5]}"
    tree = SessionTree.open(path)
    assert tree.report.clean, tree.report.messages()[:5]
    errors = [f.message for f in check_session(tree).errors]
    assert not errors, errors[:5]
    (answer,) = pi.run([{"file": str(path), "leaves": [pi_ids[-1]]}], home)
    assert set(pi_ids) <= set(answer["ids"])
    on_path = {message.get("$ref") for message in answer["contexts"][pi_ids[-1]]["messages"]}
    assert set(pi_ids) <= on_path, "pi's last entry does not reach all of pi's entries"
