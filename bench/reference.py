"""contextree beside pi and oh-my-pi on one session file: open, path, compaction planning.

Each system runs in a fresh process per repeat and times its own calls: opening the session,
the first root-to-leaf path (contextree ``get_branch``, pi ``getBranch``), planning a
compaction of that path with the default settings (``prepare_compaction`` /
``prepareCompaction``) and a second path call. The row issue 27 asks about is "path + prepare
after open": the first path and the planning, what a process pays once the session is open;
beside it the whole (open + path + prepare), since pi's open does the reading that our lazy
open leaves to the first path.
contextree runs twice: opening lazily (the default: the path's lines are read on the first
path) and with ``preload=True`` (read on open, as pi's open reads every line).

    python -m bench.reference SESSION.jsonl [--repeat N] [--pi DIR] [--omp DIR]

``--pi`` / ``--omp`` (default: ``CONTEXTREE_PI_DIR`` / ``CONTEXTREE_OMP_DIR``, else
``.ci-node/pi`` and ``.ci-node/omp`` as ``.ci/run`` installs them) hold the npm installs of pi
0.73.1 and oh-my-pi 18.2.3; a system that is not installed is left out with a note. Every run
works on a copy of the session (pi rewrites v1/v2 files when it opens them).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["measure_reference"]

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
FIELDS = ("open", "branch", "prepare", "branch_again")
_SCRIPT = str(HERE / "reference.mjs")
"""Times pi (under node) or oh-my-pi (under bun) the way ``_OURS`` times contextree."""

_OURS = """
import hashlib, json, sys, time
from contextree.compaction.prepare import prepare_compaction
from contextree.session.tree import SessionTree
from contextree.settings.schema import CompactionSettings
ms = lambda: time.perf_counter() * 1000
opened = ms()
tree = SessionTree.open(sys.argv[1], create=False, preload=PRELOAD)
branched = ms()
branch = tree.get_branch()
prepared = ms()
prepare_compaction(branch, CompactionSettings())
again = ms()
tree.get_branch()
done = ms()
ids = "\\n".join(str(entry.get("id")) for entry in branch)
print(json.dumps({"open": branched - opened, "branch": prepared - branched,
                  "prepare": again - prepared, "branch_again": done - again,
                  "length": len(branch), "path": hashlib.sha256(ids.encode()).hexdigest()}))
"""


PI_VERSION = "0.73.1"
OMP_VERSION = "18.2.3"
TIMEOUT_S = 300


def _version(package: Path) -> str | None:
    try:
        return str(json.loads((package / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def _commands(pi: Path | None, omp: Path | None) -> tuple[dict[str, list[str]], list[str]]:
    """The command of each system that can run here (the file goes last), and notes."""
    commands = {
        "contextree": [sys.executable, "-c", _OURS.replace("PRELOAD", "False")],
        # Reading and decoding on open what the path and its context need, as pi does.
        "contextree, preload=True": [sys.executable, "-c", _OURS.replace("PRELOAD", "True")],
    }
    notes = []
    node = shutil.which("node")
    pi_package = (pi or Path("-")) / "node_modules" / "@mariozechner" / "pi-coding-agent"
    if pi is None or node is None or _version(pi_package) != PI_VERSION:
        notes.append(f"pi left out: no node, or no pi {PI_VERSION} installed at {pi}")
    else:
        commands[f"pi {PI_VERSION} (node)"] = [node, _SCRIPT, "pi", str(pi)]
    omp_package = (omp or Path("-")) / "node_modules" / "@oh-my-pi" / "pi-coding-agent"
    bun = (omp or Path("-")) / "node_modules" / ".bin" / "bun"
    if omp is None or not bun.exists() or _version(omp_package) != OMP_VERSION:
        notes.append(f"oh-my-pi left out: no oh-my-pi {OMP_VERSION} with bun at {omp}")
    else:
        commands[f"oh-my-pi {OMP_VERSION} (bun)"] = [str(bun), _SCRIPT, "omp", str(omp)]
    return commands, notes


def _run(command: list[str], session: Path, scratch: Path) -> dict[str, Any]:
    copy = scratch / session.name
    shutil.copyfile(session, copy)
    env = dict(os.environ, HOME=str(scratch), PYTHONPATH=str(REPO / "src"), NO_COLOR="1")
    try:
        done = subprocess.run(
            [*command, str(copy)],
            capture_output=True,
            text=True,
            env=env,
            cwd=scratch,
            check=False,
            timeout=TIMEOUT_S,
        )
    finally:
        copy.unlink(missing_ok=True)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{command[0]} exited {done.returncode}: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def measure_reference(
    session: Path, repeat: int = 3, *, pi: Path | None = None, omp: Path | None = None
) -> tuple[dict[str, dict[str, float]], list[str], dict[str, str]]:
    """Median milliseconds of each step for each system, notes on systems left out, and each
    system's path (a SHA-256 of its entry ids, root first: the same for all three)."""
    commands, notes = _commands(pi, omp)
    medians: dict[str, dict[str, float]] = {}
    paths: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name, command in commands.items():
            runs = [_run(command, session, Path(scratch)) for _ in range(repeat)]
            medians[name] = {f: statistics.median(float(r[f]) for r in runs) for f in FIELDS}
            medians[name]["length"] = float(runs[0]["length"])
            paths[name] = str(runs[0]["path"])
    return medians, notes, paths


def _install(given: str | None, variable: str, name: str) -> Path | None:
    found = given or os.environ.get(variable)
    if found:
        return Path(found)
    default = REPO / ".ci-node" / name
    return default if default.is_dir() else None


def _table(medians: dict[str, dict[str, float]]) -> str:
    header = (
        "| system | open | first path | prepare | path + prepare after open "
        "| open + path + prepare | path again | path length |"
    )
    lines = [header, "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, row in medians.items():
        after_open = row["branch"] + row["prepare"]
        lines.append(
            f"| {name} | {row['open']:,.0f} ms | {row['branch']:,.0f} ms | "
            f"{row['prepare']:,.0f} ms | {after_open:,.0f} ms | "
            f"{row['open'] + after_open:,.0f} ms | {row['branch_again']:,.1f} ms | "
            f"{row['length']:,.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.reference", description=__doc__)
    parser.add_argument("session", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pi")
    parser.add_argument("--omp")
    args = parser.parse_args()
    pi = _install(args.pi, "CONTEXTREE_PI_DIR", "pi")
    omp = _install(args.omp, "CONTEXTREE_OMP_DIR", "omp")
    medians, notes, paths = measure_reference(args.session, args.repeat, pi=pi, omp=omp)
    print(_table(medians))
    for note in notes:
        print(note)
    if len(set(paths.values())) > 1:
        print(f"the systems walked different paths: {paths}")


if __name__ == "__main__":
    main()
