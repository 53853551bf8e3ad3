"""Run pi 0.73.1's SessionManager as a second writer of a session file (``pi_appender.mjs``),
and check afterwards that pi itself still opens the file and reaches each of its entries."""

from __future__ import annotations

from pathlib import Path

from differential.installs import HERE, Install
from reliability.unlocked import Appender

PI_APPENDER = HERE / "pi_appender.mjs"


def start_pi_appender(
    pi: Install, file: Path, *, turns: int, pause_ms: int, output_bytes: int = 2000
) -> Appender:
    """Start pi appending ``turns`` tool-call/result pairs; returns after the first."""
    args = [str(PI_APPENDER), str(pi.root), str(file), str(turns), str(pause_ms)]
    return Appender.start(
        [pi.command[0], *args, str(output_bytes)],
        cwd=file.parent,
        env={"PATH": "/usr/bin:/bin", "HOME": str(file.parent), "NO_COLOR": "1"},
    )


def assert_pi_reaches(pi: Install, path: Path, pi_ids: list[str], home: Path) -> None:
    """pi opens ``path`` and builds the context of its last entry through all of ``pi_ids``."""
    (answer,) = pi.run([{"file": str(path), "leaves": [pi_ids[-1]]}], home)
    assert set(pi_ids) <= set(answer["ids"])
    on_path = {message.get("$ref") for message in answer["contexts"][pi_ids[-1]]["messages"]}
    assert set(pi_ids) <= on_path, "pi's last entry does not reach all of pi's entries"
