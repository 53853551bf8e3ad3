"""The whole-command rows (issue 27): ``contextree compact`` and ``contextree context`` in a
fresh process each run.

- ``compact_cli``: the whole command on a copy of the generated session (a new copy per run:
  the command appends its compaction entry), with the default settings and so the built-in
  offline summarizer (no ``CONTEXTREE_*`` variable, an empty home and working directory), median
  of :data:`REPEAT` runs after one warm-up, wall time: start-up, imports, open, cycle check,
  plan, redaction, summary, append and the printed result;
- ``compact_cli_cpu``: its CPU time (user + system), the figure to read on a machine shared
  with other work.

- ``context_cli``: ``python -m contextree context SESSION`` into a pipe (what a script that
  reads the context runs), same environment, median of :data:`CONTEXT_REPEAT` runs after one
  warm-up, wall time; ``context_cli_cpu``: its CPU time.

Python may write its bytecode (as an installed package has it: ``pip install`` compiles every
module), and the warm-up run makes sure it has. ``python -m bench.cli_commands SESSION.jsonl``
prints the figures for one file.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["CONTEXT_REPEAT", "REPEAT", "measure_compact_cli", "measure_context_cli"]

REPEAT = 3
CONTEXT_REPEAT = 5


def _environment(home: Path) -> dict[str, str]:
    # The defaults and the offline summarizer: no CONTEXTREE_* setting, an empty home (no pi
    # or contextree user settings) and an empty working directory (no project settings).
    src = Path(__file__).resolve().parent.parent / "src"
    env = {name: value for name, value in os.environ.items() if not name.startswith("CONTEXTREE_")}
    env.update(PYTHONPATH=str(src), HOME=str(home))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _once(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, capture_output=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def measure_compact_cli(path: Path, workdir: Path, repeat: int = REPEAT) -> dict[str, float]:
    """Median wall and CPU seconds of ``contextree compact`` on copies of ``path``."""
    home = workdir / "compact-home"
    home.mkdir(parents=True, exist_ok=True)
    env = _environment(home)
    copy = workdir / f"compact-{path.name}"
    command = [sys.executable, "-m", "contextree", "compact", str(copy), "--quiet"]
    walls, cpus = [], []
    try:
        for run in range(repeat + 1):
            shutil.copyfile(path, copy)
            wall, cpu = _once(command, env, home)
            if run:  # the first run warms up the bytecode and the page cache
                walls.append(wall)
                cpus.append(cpu)
    finally:
        copy.unlink(missing_ok=True)
        shutil.rmtree(home, ignore_errors=True)
    return {"compact_cli": statistics.median(walls), "compact_cli_cpu": statistics.median(cpus)}


def measure_context_cli(
    path: Path, workdir: Path, repeat: int = CONTEXT_REPEAT
) -> dict[str, float]:
    """Median wall and CPU seconds of ``contextree context`` on ``path`` (read only)."""
    home = workdir / "context-home"
    home.mkdir(parents=True, exist_ok=True)
    env = _environment(home)
    command = [sys.executable, "-m", "contextree", "context", str(path.resolve())]
    walls, cpus = [], []
    try:
        for run in range(repeat + 1):
            wall, cpu = _once(command, env, home)
            if run:  # the first run warms up the bytecode and the page cache
                walls.append(wall)
                cpus.append(cpu)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return {"context_cli": statistics.median(walls), "context_cli_cpu": statistics.median(cpus)}


if __name__ == "__main__":
    import tempfile

    if len(sys.argv) != 2:
        sys.exit("usage: python -m bench.cli_commands SESSION.jsonl")
    with tempfile.TemporaryDirectory() as scratch:
        figures = measure_context_cli(Path(sys.argv[1]), Path(scratch))
        figures.update(measure_compact_cli(Path(sys.argv[1]), Path(scratch)))
    for name in ("context", "compact"):
        wall, cpu = figures[f"{name}_cli"], figures[f"{name}_cli_cpu"]
        print(f"{name} CLI: {wall:.2f} s wall, {cpu:.2f} s CPU")
