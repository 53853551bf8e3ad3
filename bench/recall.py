"""Recall on the generated sessions: building the index, a query in process and as a whole
command-line call, and the incremental update after one append.

- ``recall_build``: ``RecallIndex.sync`` on a new index (every entry decoded, redacted and
  indexed; the session already open);
- ``recall_query``: the median of :data:`QUERIES` through ``recall()`` on the open session
  with the index built (scope, search and snippets);
- ``recall_cli``: ``python -m contextree recall FILE QUERY`` in a fresh process, index built,
  median of three, wall time; ``recall_cli_cpu`` its CPU time (user + system), the figure to
  read on a machine shared with other work. Python may write its bytecode (as an installed
  package has it: ``pip install`` compiles every module), and one call first warms that up;
- ``recall_cli_appended``: the same, each call just after another process appended an entry
  (the index takes in the new line; the kept scope is extended over it);
- ``recall_append``: after each of :data:`APPENDS` appends, the ``sync`` that indexes it (mean);
- ``recall_db_mb``: the index file's size;
- ``*_cpu``: the CPU time of build, query and update (on a machine shared with other work the
  wall time says more about the neighbours);
- ``recall_build_plain``: the build with redaction off (what the index itself costs: the
  built-in redaction patterns scan every text first).

``python -m bench.recall SESSION.jsonl`` prints these for one file,
``python -m bench.recall --build SESSION.jsonl`` only the build, with and without redaction
(wall and CPU seconds of each of ``--repeat`` builds: to compare two checkouts on a shared
machine, alternate them and read the CPU time), and
``python -m bench.recall --tokenizers SESSION.jsonl`` compares the FTS5 tokenizers
(``unicode61``, ``unicode61`` with ``tokenchars '._-/'``, ``trigram``): build time, size, and
which of a few exact-term queries each one answers.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["QUERIES", "compare_tokenizers", "measure_build", "measure_recall"]

QUERIES = (
    '"status_code == 443"',
    "ValueError isinstance",
    '"/srv/app/encode.py"',
    "timeout 404",
    "status_code",
)
"""Exact phrases, identifiers, paths and numbers; the last is a term in a third of the
generated documents (BM25 ranks every match: the slow case)."""
APPENDS = 200


def _settings(cache: Path) -> Any:
    from contextree.settings.load import Settings

    return Settings(recall_index_dir=str(cache))


def measure_recall(path: Path, workdir: Path, appends: int = APPENDS) -> dict[str, float]:
    """The figures above for the session at ``path`` (a copy in ``workdir`` is appended to)."""
    from contextree.recall import open_recall_index, recall
    from contextree.session.tree import SessionTree

    cache = workdir / "recall-cache"
    shutil.rmtree(cache, ignore_errors=True)
    copy = workdir / f"recall-{path.name}"
    shutil.copyfile(path, copy)
    tree = SessionTree.open(copy)
    tree.get_branch()  # the session read and its path walked, as any command does first
    settings = _settings(cache)
    index = open_recall_index(tree, settings)
    start, cpu = time.perf_counter(), time.process_time()
    index.sync(tree)
    build, build_cpu = time.perf_counter() - start, time.process_time() - cpu
    recall(tree, QUERIES[0], index=index)  # warm: the scope's path and context
    times, cpus = [], []
    for query in QUERIES * 3:
        start, cpu = time.perf_counter(), time.process_time()
        recall(tree, query, index=index)
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    cli, cli_cpu = _cli_seconds(copy, cache)
    appended: list[float] = []
    for n in range(3):
        tree.append_message({"role": "user", "content": f"another worker {n}", "timestamp": n})
        appended.append(_cli_seconds(copy, cache, repeat=1, warm=False)[0])
    syncs, sync_cpus = [], []
    for n in range(appends):
        tree.append_message(
            {"role": "user", "content": f"appended {n} status_code", "timestamp": n}
        )
        start, cpu = time.perf_counter(), time.process_time()
        index.sync(tree)
        syncs.append(time.perf_counter() - start)
        sync_cpus.append(time.process_time() - cpu)
    index.close()
    size = sum(p.stat().st_size for p in cache.iterdir())
    plain = _plain_build(tree, workdir / "recall-plain")
    copy.unlink()
    return {
        "recall_build": build,
        "recall_build_cpu": build_cpu,
        "recall_query_cpu": statistics.median(cpus) * 1000,
        "recall_append_cpu": statistics.fmean(sync_cpus) * 1000,
        "recall_query": statistics.median(times) * 1000,
        "recall_cli": cli,
        "recall_cli_cpu": cli_cpu,
        "recall_cli_appended": statistics.median(appended),
        "recall_build_plain": plain,
        "recall_append": statistics.fmean(syncs) * 1000,
        "recall_db_mb": size / 1e6,
    }


def _plain_build(tree: Any, cache: Path) -> float:
    from contextree.recall import open_recall_index
    from contextree.security.redact import RedactionSettings
    from contextree.settings.load import Settings

    settings = Settings(recall_index_dir=str(cache), redaction=RedactionSettings(enabled=False))
    index = open_recall_index(tree, settings)
    start = time.perf_counter()
    index.sync(tree)
    seconds = time.perf_counter() - start
    index.close()
    shutil.rmtree(cache, ignore_errors=True)
    return seconds


def measure_build(path: Path, workdir: Path, repeat: int = 1) -> list[dict[str, float]]:
    """Per build: wall and CPU seconds (every thread of the process) of ``RecallIndex.sync``
    on a new index, with the built-in redaction and without."""
    from contextree.recall import open_recall_index
    from contextree.security.redact import RedactionSettings
    from contextree.session.tree import SessionTree
    from contextree.settings.load import Settings

    tree = SessionTree.open(path)
    tree.get_branch()
    rows = []
    for _ in range(repeat):
        row: dict[str, float] = {}
        for label, enabled in (("build", True), ("build_plain", False)):
            cache = workdir / "recall-build"
            shutil.rmtree(cache, ignore_errors=True)
            redaction = RedactionSettings(enabled=enabled)
            index = open_recall_index(
                tree, Settings(recall_index_dir=str(cache), redaction=redaction)
            )
            start, cpu = time.perf_counter(), time.process_time()
            index.sync(tree)
            row[label] = time.perf_counter() - start
            row[f"{label}_cpu"] = time.process_time() - cpu
            index.close()
            shutil.rmtree(cache, ignore_errors=True)
        rows.append(row)
    return rows


def _cli_seconds(
    path: Path, cache: Path, repeat: int = 3, *, warm: bool = True
) -> tuple[float, float]:
    """Median wall and CPU seconds of the command."""
    import resource

    src = Path(__file__).resolve().parent.parent / "src"
    env = {**os.environ, "CONTEXTREE_RECALL_INDEX_DIR": str(cache), "PYTHONPATH": str(src)}
    # An installed package has its bytecode (pip compiles it); a source checkout gets it on the
    # first run unless the environment forbids writing it, which would time the compiler.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    command = [sys.executable, "-m", "contextree", "recall", str(path), QUERIES[0]]
    if warm:
        subprocess.run(command, env=env, capture_output=True, check=True)
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, env=env, capture_output=True, check=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


_TOKENIZERS = {
    "unicode61": "unicode61 remove_diacritics 2",
    "unicode61 + tokenchars ._-/": "unicode61 remove_diacritics 2 tokenchars '._-/'",
    "trigram": "trigram",
}
_EXACT = ("status_code", "app.py", "/srv/app/", "ValueError")


def compare_tokenizers(path: Path, workdir: Path) -> list[dict[str, Any]]:
    """Per tokenizer: build seconds, database MB, and hits of each of ``_EXACT``."""
    from contextree.recall.base import IndexState
    from contextree.recall.documents import entry_document
    from contextree.recall.sqlite_fts import SqliteFtsBackend
    from contextree.session.tree import SessionTree

    tree = SessionTree.open(path)
    documents = [
        d
        for seq, record in enumerate(tree.records())
        if (d := entry_document(record.entry, seq, None)) is not None
    ]
    rows: list[dict[str, object]] = []
    for name, tokenizer in _TOKENIZERS.items():
        db = workdir / f"tokenizer-{len(rows)}.db"
        db.unlink(missing_ok=True)
        conn = sqlite3.connect(db, isolation_level=None)
        backend = SqliteFtsBackend(conn, "", identity=lambda: None, tokenizer=tokenizer)
        start = time.perf_counter()
        backend.replace(documents, IndexState("", "", 0, 0, None))
        seconds = time.perf_counter() - start
        hits = {
            q: len(backend.search([q], any_term=False, allowed=None, limit=10**6)) for q in _EXACT
        }
        backend.close()
        rows.append({"tokenizer": name, "build_s": seconds, "mb": db.stat().st_size / 1e6, **hits})
        db.unlink()
    return rows


def _main(argv: list[str]) -> None:
    import argparse
    import json
    import tempfile

    parser = argparse.ArgumentParser(
        prog="python -m bench.recall", description="Measure the recall index on one session."
    )
    parser.add_argument("--tokenizers", action="store_true", help="compare FTS5 tokenizers")
    parser.add_argument("--build", action="store_true", help="only the index build")
    parser.add_argument("--repeat", type=int, default=1, help="builds to measure (--build)")
    parser.add_argument("session", type=Path, help="a JSONL session file")
    args = parser.parse_args(argv)
    path: Path = args.session
    if not path.is_file():
        parser.error(f"{path}: no such session file")
    with tempfile.TemporaryDirectory(prefix="contextree-recall-") as tmp:
        if args.tokenizers:
            for row in compare_tokenizers(path, Path(tmp)):
                print(json.dumps(row))
        elif args.build:
            for row in measure_build(path, Path(tmp), args.repeat):
                print(json.dumps({k: round(v, 3) for k, v in row.items()}), flush=True)
        else:
            print(json.dumps(measure_recall(path, Path(tmp)), indent=2))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    _main(sys.argv[1:])
