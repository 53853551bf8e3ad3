"""A rewrite after appends against one on a freshly opened tree (issue 27 item 5).

A rewrite (prune, a compaction rewrite, ``rewrite_entries``) replaces the file atomically. It
used to wait its full carry-over limit (2 s) once the tree had appended, taking the process's
own write descriptor for another writer's. Both rows rewrite one entry of a copy of the
session with ``rewrite_entries``: "fresh" on a tree that has only opened the session (its index
completed), "after appends" after 20 appends by the same tree; each run opens a new copy.

    python -m bench.rewrite SESSION.jsonl
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["measure_rewrite"]

REPEAT = 5
APPENDS_BEFORE = 20


def _rewrite_once(path: Path, copy: Path, *, appends: int) -> float:
    from contextree.entries.types import is_message_entry
    from contextree.session.tree import SessionTree

    shutil.copyfile(path, copy)
    tree = SessionTree.open(copy, create=False)
    branch = tree.get_branch()  # completes the index: the rows time the rewrite alone
    target: dict[str, Any] = next(dict(e) for e in reversed(branch) if is_message_entry(e))
    for n in range(appends):
        tree.append_message({"role": "user", "content": f"before the rewrite {n}", "timestamp": n})
    target["message"] = {**target["message"], "timestamp": 1}
    # Write back what earlier runs left in the page cache: the kernel throttles a writer while
    # much is dirty, which made single runs 2x slower at random.
    os.sync()
    start = time.perf_counter()
    tree.rewrite_entries([target])
    elapsed = time.perf_counter() - start
    tree.store.close()  # before the next run copies over the same path
    return elapsed


def measure_rewrite(path: Path, workdir: Path, repeat: int = REPEAT) -> dict[str, float]:
    """Median seconds of ``rewrite_entries`` of one entry: ``rewrite_fresh`` on a tree that
    only opened the session, ``rewrite_after_appends`` after it appended, and their ratio."""
    copy = workdir / f"rewrite-{path.name}"
    fresh, after = [], []
    try:
        for _ in range(repeat):  # alternating, so a drift of the machine's speed hits both
            fresh.append(_rewrite_once(path, copy, appends=0))
            after.append(_rewrite_once(path, copy, appends=APPENDS_BEFORE))
    finally:
        copy.unlink(missing_ok=True)
    # The ratio is the median of each pair's: writing 141 MB and syncing it varies by 2x from
    # one run to the next on this machine, and a pair shares the machine's state.
    ratios = [a / f for f, a in zip(fresh, after, strict=True) if f > 0]
    return {
        "rewrite_fresh": statistics.median(fresh),
        "rewrite_after_appends": statistics.median(after),
        "rewrite_ratio": statistics.median(ratios) if ratios else 0.0,
    }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m bench.rewrite SESSION.jsonl")
    with tempfile.TemporaryDirectory() as scratch:
        figures = measure_rewrite(Path(sys.argv[1]), Path(scratch))
    print(
        f"rewrite, fresh tree: {figures['rewrite_fresh']:.3f} s; after {APPENDS_BEFORE} appends: "
        f"{figures['rewrite_after_appends']:.3f} s ({figures['rewrite_ratio']:.2f}x)"
    )
