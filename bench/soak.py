"""``python -m bench.soak``: many processes on one session of each store, killed at random.

On each store (a JSONL file, ``sqlite:///PATH#SESSION``, PostgreSQL) one session is shared by

- appenders (default 8): append messages through :class:`~contextree.session.tree.SessionTree`;
  after ``append_message`` returns, the worker acknowledges the entry by writing its id and its
  line to its own log with one unbuffered ``write``;
- compactors (default 2): open the session, run ``compact_session`` with the built-in offline
  summarizer, close it, pause;
- a navigator (default 1): open the session, move the leaf to an earlier user message with a
  branch summary (``navigate_tree(..., summarize=True)``), close it, pause.

A supervisor SIGKILLs a random worker every ``--kill-interval`` seconds (give or take half)
and starts it again. When the time is up it stops the workers and checks the session:

- **lost**: acknowledged ids that the store does not hold;
- **duplicates**: ids held more than once by the store, plus ids acknowledged twice;
- **broken links**: entries whose ``parentId`` names no entry;
- **check errors**: error findings of ``check_session`` (what ``contextree check`` prints);
- **export mismatches**: acknowledged entries whose line in the export (``copy_session`` to a
  JSONL file, what ``contextree export`` writes) is not byte-identical to the acknowledged line.

The acknowledged line is ``encode_line`` of the entry dict that ``append_message`` returned the
id of: the bytes the library handed to the store (``SessionTree._write`` encodes the same dict
the same way). The export's line of that id is compared with it byte for byte, newline excluded.

Without ``--postgres URL`` a throwaway server is started as the tests start theirs
(``tests/postgres_server.py``); with no PostgreSQL binaries that row says so. Exit status 1 when
any count that must be 0 is not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ROLES = ("append", "compact", "navigate")


@dataclass
class SoakConfig:
    """How long and with how many workers one store is soaked."""

    duration: float = 60.0
    appenders: int = 8
    compactors: int = 2
    navigators: int = 1
    kill_interval: float = 1.5
    pause: float = 0.005
    """Seconds an appender waits between appends (the machine is shared with the others)."""
    seed: int = 1


@dataclass
class SoakResult:
    """What one store's soak did and found; the counts named in :attr:`MUST_BE_ZERO` must be 0."""

    store: str
    acknowledged: int = 0
    kills: int = 0
    kills_by_role: dict[str, int] = field(default_factory=dict)
    restarts: int = 0
    compactions: int = 0
    navigations: int = 0
    compactions_yielded: int = 0
    """Compactions that found the other compactor's entry written meanwhile and stopped."""
    entries: int = 0
    unacknowledged: int = 0
    """Entries held that no worker reported: written by a worker killed before it could."""
    lost: int = 0
    duplicates: int = 0
    broken_links: int = 0
    check_errors: int = 0
    export_mismatches: int = 0
    worker_errors: int = 0
    """Workers that exited by themselves (an exception) or did not stop when asked."""
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)
    skipped: str = ""

    MUST_BE_ZERO = (
        "lost",
        "duplicates",
        "broken_links",
        "check_errors",
        "export_mismatches",
        "worker_errors",
    )

    @property
    def ok(self) -> bool:
        return not self.skipped and all(getattr(self, name) == 0 for name in self.MUST_BE_ZERO)


# -- workers ---------------------------------------------------------------------------------


def _close(tree: Any) -> None:
    close = getattr(tree.store, "close", None)
    if close is not None:
        close()


def _message(rng: random.Random, worker: int, count: int) -> dict[str, Any]:
    words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(5, 300)))
    text = f"w{worker} n{count}: {words}"
    if count % 2:
        return {"role": "user", "content": text, "timestamp": count}
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": "openai-completions",
        "provider": "soak",
        "model": "soak",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
        "stopReason": "stop",
        "timestamp": count,
    }


# Words that JSON must escape or keep as UTF-8 among plain ones: the lines compared byte for
# byte hold quotes, backslashes, control characters and non-ASCII text.
_WORDS = ("parser", "lexer", "token", "cache", "index", "branch", "leaf", "summary", "file")
_WORDS += ("grüße", "naïve", "日本語", "✓", 'quote"d', "back\\slash", "tab\there", "new\nline")


def _append_worker(target: str, worker: int, log: Path, stop: Path, pause: float) -> None:
    from contextree.entries.codec import encode_line
    from contextree.session.tree import SessionTree

    rng = random.Random(f"{worker}-{os.getpid()}")
    out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    tree = SessionTree.open(target)
    count = 0
    while not stop.exists():
        entry_id = tree.append_message(_message(rng, worker, count))  # type: ignore[arg-type]
        entry = tree.get_entry(entry_id)
        assert entry is not None
        # One write() of the whole line: a SIGKILL leaves it whole, absent or cut short at a
        # page boundary - then it is the last piece of this process's log (see _Crew.log).
        os.write(out, entry_id.encode() + b" " + encode_line(entry) + b"\n")
        count += 1
        time.sleep(pause * rng.uniform(0.5, 1.5))


def _compact_worker(target: str, log: Path, stop: Path, rng: random.Random) -> None:
    from contextree.compaction import OfflineSummarizer, compact_session
    from contextree.compaction.run import CompactionOutcome
    from contextree.session.tree import SessionTree
    from contextree.settings import CompactionSettings

    out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    settings = CompactionSettings(keep_recent_tokens=1500)
    while not stop.exists():
        tree = SessionTree.open(target)
        try:
            done = asyncio.run(compact_session(tree, OfflineSummarizer(), settings=settings))
        finally:
            _close(tree)
        # NothingToCompact's reason: "compacted_elsewhere" is a race lost to the other compactor.
        word = "compacted" if isinstance(done, CompactionOutcome) else done.reason
        os.write(out, f"{word}\n".encode())
        time.sleep(rng.uniform(0.2, 1.0))


def _navigate_worker(target: str, log: Path, stop: Path, rng: random.Random) -> None:
    from contextree.branching.navigate import navigate_tree
    from contextree.compaction import OfflineSummarizer
    from contextree.session.tree import SessionTree

    out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    while not stop.exists():
        time.sleep(rng.uniform(0.5, 2.0))
        tree = SessionTree.open(target)
        try:
            path = tree.get_branch()
            recent = [
                path.id_at(i)
                for i in range(max(0, len(path) - 40), len(path) - 1)
                if path.type_at(i) == "message"
            ]
            if not recent:
                continue
            target_id = rng.choice(recent)
            assert target_id is not None
            client = OfflineSummarizer()
            moved = asyncio.run(navigate_tree(tree, target_id, summarize=True, client=client))
        finally:
            _close(tree)
        os.write(out, b"navigated\n" if moved.summary_entry is not None else b"moved\n")


def worker_main(role: str, target: str, worker: int, log: Path, stop: Path, pause: float) -> None:
    """Run one worker until ``stop`` exists (``python -m bench.soak --worker ...``)."""
    rng = random.Random(f"{role}-{worker}-{os.getpid()}")
    if role == "append":
        _append_worker(target, worker, log, stop, pause)
    elif role == "compact":
        _compact_worker(target, log, stop, rng)
    else:
        _navigate_worker(target, log, stop, rng)


# -- the supervisor ----------------------------------------------------------------------------


class _Crew:
    """The worker processes of one soak: started, killed and started again by key."""

    def __init__(self, target: str, work: Path, config: SoakConfig) -> None:
        self.target, self.work, self.config = target, work, config
        self.stop = work / "stop"
        self.procs: dict[tuple[str, int], subprocess.Popen[bytes]] = {}
        self.env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
        self.problems: list[str] = []
        self.restarts = 0
        self.starts = 0

    def log(self, role: str, index: int) -> Path:
        """A new log for each start of a worker. A SIGKILL can cut a ``write`` that spans a
        page boundary (the kernel checks for a fatal signal between pages): the cut line must
        stay the last piece of its log, not be glued to the next process's first line."""
        self.starts += 1
        return self.work / f"{role}-{index}-{self.starts}.log"

    def start(self, key: tuple[str, int]) -> None:
        role, index = key
        command = [sys.executable, "-m", "bench.soak", "--worker", role, self.target, str(index)]
        command += [str(self.log(role, index)), str(self.stop), str(self.config.pause)]
        errors = open(self.work / f"{role}-{index}.err", "ab")  # noqa: SIM115 - the child's
        with errors:
            self.procs[key] = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=errors
            )

    def start_all(self) -> None:
        config = self.config
        for role, count in zip(
            ROLES, (config.appenders, config.compactors, config.navigators), strict=True
        ):
            for index in range(count):
                self.start((role, index))

    def restart_exited(self) -> None:
        """A worker that exited by itself failed: report its error output, start it again."""
        for key, proc in list(self.procs.items()):
            code = proc.poll()
            if code is None:
                continue
            role, index = key
            tail = (self.work / f"{role}-{index}.err").read_text(errors="replace")[-1500:]
            self.problems.append(f"{role} worker {index} exited with {code}:\n{tail}")
            self.start(key)
            self.restarts += 1

    def kill(self, key: tuple[str, int]) -> None:
        proc = self.procs[key]
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        self.start(key)
        self.restarts += 1

    def finish(self, timeout: float = 120.0) -> None:
        self.stop.touch()
        end = time.monotonic() + timeout
        for (role, index), proc in self.procs.items():
            try:
                proc.wait(timeout=max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                self.problems.append(f"{role} worker {index} did not stop within {timeout:.0f} s")
                continue
            if proc.returncode != 0:
                tail = (self.work / f"{role}-{index}.err").read_text(errors="replace")[-1500:]
                code = proc.returncode
                self.problems.append(f"{role} worker {index} exited with {code}:\n{tail}")


def _supervise(crew: _Crew, config: SoakConfig, rng: random.Random) -> Counter[str]:
    """Run the crew for ``config.duration`` seconds, killing one at random now and then;
    returns the kills per role."""
    kills: Counter[str] = Counter()
    crew.start_all()
    end = time.monotonic() + config.duration
    next_kill = time.monotonic() + config.kill_interval * rng.uniform(0.5, 1.5)
    try:
        while time.monotonic() < end:
            time.sleep(0.05)
            crew.restart_exited()
            if time.monotonic() >= next_kill:
                victim = rng.choice(sorted(crew.procs))
                crew.kill(victim)
                kills[victim[0]] += 1
                next_kill = time.monotonic() + config.kill_interval * rng.uniform(0.5, 1.5)
    finally:
        crew.finish()
    return kills


# -- checking ------------------------------------------------------------------------------


def read_acknowledged(logs: list[Path]) -> tuple[dict[str, bytes], int]:
    """Acknowledged id -> line from the appenders' logs, and how many ids came twice."""
    acknowledged: dict[str, bytes] = {}
    twice = 0
    for log in logs:
        if not log.exists():
            continue
        # Each log is one process's: its last piece is empty, or a line cut by the kill
        # (never acknowledged), and is dropped.
        for line in log.read_bytes().split(b"\n")[:-1]:
            entry_id, _, raw = line.partition(b" ")
            key = entry_id.decode()
            twice += key in acknowledged
            acknowledged[key] = raw
    return acknowledged, twice


def _count_lines(logs: list[Path], word: bytes) -> int:
    # Whole lines only: a substring count took "already_compacted" for "compacted" and so
    # counted a compaction that wrote nothing (seen once in CI as -1 unacknowledged entries).
    return sum(log.read_bytes().split(b"\n").count(word) for log in logs if log.exists())


def verify(target: str, work: Path, result: SoakResult) -> None:
    """Compare the session at ``target`` with what the appenders acknowledged."""
    from contextree.session.check import check_session
    from contextree.session.tree import SessionTree
    from contextree.store.transfer import copy_session

    acknowledged, twice = read_acknowledged(sorted(work.glob("append-*.log")))
    result.acknowledged = len(acknowledged)
    tree = SessionTree.open(target, create=False)
    try:
        findings = check_session(tree).findings
        result.check_errors = sum(1 for f in findings if f.severity == "error")
        result.problems += [f"check: {f.message}" for f in findings if f.severity == "error"][:10]
        result.lost = sum(1 for entry_id in acknowledged if not tree.has_entry(entry_id))
    finally:
        _close(tree)
    export = work / "export.jsonl"
    copy_session(target, export, overwrite=True)
    lines: dict[str, bytes] = {}
    held: Counter[str] = Counter()
    parents: list[str] = []
    for raw in export.read_bytes().split(b"\n")[1:]:
        if not raw.strip():
            # Blank padding: a file append reserves its bytes as a line of spaces before it
            # writes them, and a kill in between leaves the spaces (readers skip them).
            continue
        entry = json.loads(raw)
        held[entry["id"]] += 1
        lines[entry["id"]] = raw
        if entry.get("parentId") is not None:
            parents.append(entry["parentId"])
    result.entries = sum(held.values())
    result.duplicates = twice + sum(n - 1 for n in held.values() if n > 1)
    result.broken_links = sum(1 for parent in parents if parent not in held)
    result.export_mismatches = sum(
        1 for entry_id, raw in acknowledged.items() if lines.get(entry_id) != raw
    )
    others = list(work.glob("compact-*.log")) + list(work.glob("navigate-*.log"))
    result.compactions = _count_lines(others, b"compacted")
    result.navigations = _count_lines(others, b"navigated")
    result.compactions_yielded = _count_lines(others, b"compacted_elsewhere")
    reported = 1 + result.acknowledged + result.compactions + result.navigations
    result.unacknowledged = result.entries - reported


def soak_store(name: str, target: str, work: Path, config: SoakConfig) -> SoakResult:
    """Soak one store's session at ``target`` (created here) and check it."""
    from contextree.session.tree import SessionTree

    work.mkdir(parents=True, exist_ok=True)
    result = SoakResult(name)
    started = time.monotonic()
    tree = SessionTree.open(target)
    tree.append_message({"role": "user", "content": "soak start", "timestamp": 0})
    _close(tree)
    crew = _Crew(target, work, config)
    kills = _supervise(crew, config, random.Random(config.seed))
    result.kills, result.kills_by_role = sum(kills.values()), dict(kills)
    result.restarts = crew.restarts
    result.problems += crew.problems
    result.worker_errors = len(crew.problems)
    verify(target, work, result)
    result.seconds = time.monotonic() - started
    return result


# -- the command -------------------------------------------------------------------------------


def _postgres_rows(
    stores: list[str], url: str | None, work: Path, config: SoakConfig
) -> list[SoakResult]:
    if "postgres" not in stores:
        return []
    target = f"{url}#soak-{os.getpid()}-{int(time.time())}" if url else None
    if target is not None:
        return [soak_store("PostgreSQL", target, work / "postgres", config)]
    sys.path.insert(0, str(ROOT / "tests"))
    import pytest

    from postgres_server import running_server

    try:
        with running_server() as server:
            target = f"{server.url}#soak"
            return [soak_store("PostgreSQL (local)", target, work / "postgres", config)]
    except (pytest.skip.Exception, pytest.fail.Exception) as why:
        return [SoakResult("PostgreSQL", skipped=str(why))]


def run(
    stores: list[str], work: Path, config: SoakConfig, postgres: str | None = None
) -> list[SoakResult]:
    """Soak each of ``stores`` (``file``, ``sqlite``, ``postgres``) in turn."""
    results = []
    if "file" in stores:
        target = str(work / "file" / "session.jsonl")
        results.append(soak_store("JSONL file", target, work / "file", config))
    if "sqlite" in stores:
        (work / "sqlite").mkdir(parents=True, exist_ok=True)
        target = f"sqlite://{work / 'sqlite' / 'soak.db'}#soak"
        results.append(soak_store("SQLite", target, work / "sqlite", config))
    results += _postgres_rows(stores, postgres, work, config)
    return results


COLUMNS = (
    ("appends acknowledged", "acknowledged"),
    ("kills (a/c/n)", "kills"),
    ("compactions", "compactions"),
    ("navigations", "navigations"),
    ("entries", "entries"),
    ("not acknowledged", "unacknowledged"),
    ("lost", "lost"),
    ("duplicates", "duplicates"),
    ("broken links", "broken_links"),
    ("check errors", "check_errors"),
    ("export mismatches", "export_mismatches"),
    ("worker errors", "worker_errors"),
)


def render(results: list[SoakResult], config: SoakConfig) -> Any:
    from rich.table import Table

    table = Table(title="contextree soak (SIGKILL of random workers)", title_justify="left")
    table.add_column("store")
    for label, _ in COLUMNS:
        table.add_column(label, justify="right")
    table.add_column("result")
    for result in results:
        if result.skipped:
            table.add_row(result.store, *["-"] * len(COLUMNS), f"skipped: {result.skipped}")
            continue
        cells = [f"{getattr(result, key):,}" for _, key in COLUMNS]
        roles = result.kills_by_role
        cells[1] += " (" + "/".join(str(roles.get(role, 0)) for role in ROLES) + ")"
        verdict = "[green]PASS[/]" if result.ok else "[bold red]FAIL[/]"
        table.add_row(result.store, *cells, f"{verdict} ({result.seconds:.0f} s)")
    table.caption = (
        f"{config.appenders} appenders, {config.compactors} compactors, {config.navigators} "
        f"navigator; {config.duration:.0f} s per store, a kill every ~{config.kill_interval} s "
        "(kills of appenders / compactors / the navigator); "
        f"{os.cpu_count()} CPUs; seed {config.seed}"
    )
    table.caption_justify = "left"
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak",
        description="Soak each session store with appenders, compactors and a navigator "
        "while random workers are SIGKILLed; check that nothing acknowledged was lost.",
    )
    defaults = SoakConfig()
    parser.add_argument("--duration", type=float, default=defaults.duration, help="s per store")
    parser.add_argument("--appenders", type=int, default=defaults.appenders)
    parser.add_argument("--compactors", type=int, default=defaults.compactors)
    parser.add_argument("--navigators", type=int, default=defaults.navigators)
    parser.add_argument("--kill-interval", type=float, default=defaults.kill_interval)
    parser.add_argument("--pause", type=float, default=defaults.pause, help="s between appends")
    parser.add_argument("--stores", default="file,sqlite,postgres", help="comma-separated")
    parser.add_argument("--postgres", metavar="URL", help="use this server, not a throwaway one")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--json", type=Path, metavar="OUT", help="also write the results here")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="work here and keep the files")
    args = parser.parse_args(argv)
    for folder in (ROOT / "src",):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    config = SoakConfig(
        args.duration,
        args.appenders,
        args.compactors,
        args.navigators,
        args.kill_interval,
        args.pause,
        args.seed,
    )
    stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        results = run(stores, args.keep, config, args.postgres)
    else:
        with tempfile.TemporaryDirectory(prefix="contextree-soak-") as tmp:
            results = run(stores, Path(tmp), config, args.postgres)
    from rich.console import Console

    console = Console(highlight=False, width=200)
    console.print(render(results, config))
    for result in results:
        for problem in result.problems[:20]:
            console.print(f"[red]{result.store}:[/] {problem}", markup=True)
    if args.json is not None:
        rows = [asdict(r) for r in results]
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0 if all(r.ok or r.skipped for r in results) else 1


if __name__ == "__main__":
    if len(sys.argv) == 8 and sys.argv[1] == "--worker":
        _, _, role, target, index, log, stop, pause = sys.argv
        worker_main(role, target, int(index), Path(log), Path(stop), float(pause))
    else:
        sys.exit(main())
