"""SIGKILL campaign against the database stores: 8 writers on one session, killed at random.

Each writer process appends entries and now and then compacts (offline summarizer), prunes (an
atomic rewrite), navigates to an earlier entry or runs the repair; it prints an entry's id only
after its append returned (an acknowledged entry). The parent kills a random writer every few
hundred milliseconds with SIGKILL and starts a new one. On PostgreSQL (``--postgres``, which
starts a private server with ``synchronous_commit=on``) it also crash-restarts the server
(``pg_ctl stop -m immediate``), and lets helper processes hold the session's row lock or an idle
transaction before they are killed too. At the end every acknowledged entry must be stored
exactly once and every ``parentId`` must name a stored entry.

    python -m bench.store_kills                   # SQLite, 120 s
    python -m bench.store_kills --postgres        # SQLite, then PostgreSQL
    python -m bench.store_kills --seconds 30      # shorter
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WRITERS = 8

WRITER = """
    import asyncio, random, sys
    from contextree.compaction.run import compact_session
    from contextree.compaction.prune import prune_session
    from contextree.compaction.offline.summarizer import OfflineSummarizer
    from contextree.session.repair import repair_session
    from contextree.session.tree import SessionTree
    from contextree.settings.schema import CompactionSettings, PruneSettings

    url, tag, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = random.Random(seed)
    tree = SessionTree.open(url, cwd="/w")
    offline = OfflineSummarizer()
    compaction = CompactionSettings(keep_recent_tokens=400, adjust_keep_recent_by_usage=False)
    pruning = PruneSettings(protect_tokens=200, minimum_savings=0, cache_aware=False)
    n = 0
    while True:
        roll = rng.random()
        if roll < 0.005:
            asyncio.run(compact_session(tree, offline, settings=compaction))
        elif roll < 0.01:
            prune_session(tree, pruning)
        elif roll < 0.015:
            ids = [e["id"] for e in tree.get_entries() if "id" in e]
            if ids:
                tree.branch(rng.choice(ids))
        elif roll < 0.017:
            repair_session(url)
            tree = SessionTree.open(url, cwd="/w")
        else:
            n += 1
            if roll < 0.3:
                call = f"{tag}-{n}"
                tree.append_message({"role": "assistant", "content": [
                    {"type": "toolCall", "id": call, "name": "bash", "arguments": {"c": "ls"}}],
                    "timestamp": n})
                entry_id = tree.append_message({"role": "toolResult", "toolCallId": call,
                    "toolName": "bash", "content": [{"type": "text", "text": "x " * 300}],
                    "isError": False, "timestamp": n})
            elif roll < 0.4:
                entry_id = tree.append_message({"role": "user", "content": f"u {tag} {n}",
                                                "timestamp": n})
            else:
                entry_id = tree.append_custom("load", {"w": tag, "n": n})
            print(entry_id, flush=True)
"""

HOLDER = """
    import sys, time, psycopg
    url, session, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    with psycopg.connect(url) as conn:
        if mode == "lock":
            conn.execute("SELECT 1 FROM ct_sessions WHERE session = %s FOR UPDATE", (session,))
        else:
            conn.execute("SELECT count(*) FROM ct_lines WHERE session = %s", (session,))
        print("held", flush=True)
        time.sleep(3600)
"""


@dataclass
class Outcome:
    store: str
    seconds: float = 0.0
    kills: int = 0
    server_restarts: int = 0
    holders_killed: int = 0
    acknowledged: int = 0
    lost: int = 0
    duplicates: int = 0
    broken_links: int = 0
    stored: int = 0
    failures: list[str] = field(default_factory=list)


class _Writer:
    """A writer process and a thread collecting the ids it acknowledges."""

    def __init__(self, url: str, tag: str, seed: int, acked: list[str]) -> None:
        self.acknowledged = 0
        env = dict(os.environ, PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{ROOT}")
        script = textwrap.dedent(WRITER)
        self.process = subprocess.Popen(
            [sys.executable, "-c", script, url, tag, str(seed)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # a writer failing on a server fault is replaced
            env=env,
            text=True,
        )
        self._reader = threading.Thread(target=self._collect, args=(acked,), daemon=True)
        self._reader.start()

    def _collect(self, acked: list[str]) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:  # only whole lines: an id cut by the kill is not one
            if line.endswith("\n"):
                acked.append(line.strip())
                self.acknowledged += 1

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self._reader.join()
        self.process.stdout.close()  # type: ignore[union-attr]


def run_campaign(
    url: str,
    seconds: float,
    *,
    seed: int,
    chaos: Callable[[random.Random], None] | None = None,
    store: str = "sqlite",
    max_kills: int | None = None,
) -> Outcome:
    """Kill writers on ``url`` for ``seconds`` (or until ``max_kills``); ``chaos`` runs now and
    then (server faults)."""
    from contextree.session.tree import SessionTree

    rng = random.Random(seed)
    SessionTree.open(url, cwd="/w").append_custom("start")
    acked: list[str] = []
    outcome = Outcome(store)
    started = time.monotonic()
    spawned = 0

    def spawn() -> _Writer:
        nonlocal spawned
        spawned += 1
        return _Writer(url, f"g{spawned}", rng.randrange(2**31), acked)

    writers = [spawn() for _ in range(WRITERS)]
    while time.monotonic() - started < seconds and (max_kills is None or outcome.kills < max_kills):
        time.sleep(rng.uniform(0.05, 0.6))
        # Only a writer that is at work: killing one still starting Python tests nothing.
        working = [n for n, writer in enumerate(writers) if writer.acknowledged]
        if not working:
            continue
        victim = rng.choice(working)
        writers[victim].kill()
        outcome.kills += 1
        writers[victim] = spawn()
        if chaos is not None and rng.random() < 0.08:
            chaos(rng)
        for n, writer in enumerate(writers):  # one that died on a server fault is replaced
            if writer.process.poll() is not None:
                writer.kill()
                writers[n] = spawn()
    for writer in writers:
        writer.kill()
        outcome.kills += 1
    outcome.seconds = time.monotonic() - started
    _verify(url, acked, outcome)
    return outcome


def _verify(url: str, acked: list[str], outcome: Outcome) -> None:
    from contextree.session.check import check_session
    from contextree.session.tree import SessionTree

    tree = SessionTree.open(url, create=False)
    entries = [e for e in tree.get_entries() if "id" in e]
    counts = Counter(e["id"] for e in entries)
    ids = set(counts)
    outcome.stored = len(entries)
    outcome.acknowledged = len(acked)
    outcome.lost = len(set(acked) - ids)
    outcome.duplicates = sum(n - 1 for n in counts.values()) + len(acked) - len(set(acked))
    parents = (e.get("parentId") for e in entries)
    outcome.broken_links = sum(1 for parent in parents if parent is not None and parent not in ids)
    outcome.failures = [str(finding) for finding in check_session(tree).errors][:5]


@contextmanager
def sqlite_url() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="ct-kills-") as work:
        yield f"sqlite://{work}/kills.db#{uuid.uuid4().hex}"


class PostgresServer:
    """A private server for the campaign: ``synchronous_commit=on``, so that a commit
    acknowledged before a crash-restart must survive it (fsync is off: the machine stays up)."""

    def __init__(self, root: Path) -> None:
        sys.path.insert(0, str(ROOT / "tests"))
        from postgres_server import _as_server_user, _bindir, _free_port

        bindir = _bindir()
        if bindir is None:
            raise SystemExit("store_kills: initdb/pg_ctl not found (apt-get install postgresql)")
        self._run_as = _as_server_user
        self._pg_ctl = str(bindir / "pg_ctl")
        self.data, sockets = root / "data", root / "sock"
        sockets.mkdir()
        if os.geteuid() == 0:
            import shutil

            shutil.chown(root, "postgres")
            shutil.chown(sockets, "postgres")
        self.port = _free_port()
        self._options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {sockets} -c fsync=off "
            "-c synchronous_commit=on -c max_connections=80"
        )
        self._log = root / "server.log"
        initdb = [str(bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres"]
        subprocess.run(self._run_as([*initdb, "--no-sync", "-E", "UTF8"]), check=True,
                       capture_output=True, timeout=120)  # fmt: skip
        self.start()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _ctl(self, *args: str) -> None:
        command = [self._pg_ctl, "-D", str(self.data), "-l", str(self._log), *args]
        subprocess.run(self._run_as(command), check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        self._ctl("-o", self._options, "-w", "-t", "60", "start")

    def crash_restart(self) -> None:
        """``-m immediate``: no shutdown checkpoint, recovery from the WAL on the next start."""
        self._ctl("-m", "immediate", "-w", "stop")
        self.start()

    def stop(self) -> None:
        self._ctl("-m", "fast", "-w", "stop")


class _PostgresChaos:
    """Crash-restarts of the server, and helpers holding the row lock or an idle transaction
    for a moment before they are killed."""

    def __init__(self, server: PostgresServer, session: str, outcome_holder: list[int]) -> None:
        self.server, self.session, self.counts = server, session, outcome_holder

    def __call__(self, rng: random.Random) -> None:
        if rng.random() < 0.4:
            self.server.crash_restart()
            self.counts[0] += 1
            return
        mode = rng.choice(["lock", "idle"])
        env = dict(os.environ, PYTHONPATH=f"{ROOT / 'src'}")
        holder = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(HOLDER), self.server.url, self.session, mode],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        assert holder.stdout is not None
        holder.stdout.readline()
        time.sleep(rng.uniform(0.2, 1.5))  # writers queue behind the lock meanwhile
        holder.send_signal(signal.SIGKILL)
        holder.communicate()  # also closes the pipe
        self.counts[1] += 1


def postgres_campaign(seconds: float, seed: int) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="ct-kills-pg-", dir="/tmp") as work:
        server = PostgresServer(Path(work))
        try:
            session = uuid.uuid4().hex
            counts = [0, 0]
            chaos = _PostgresChaos(server, session, counts)
            outcome = run_campaign(
                f"{server.url}#{session}", seconds, seed=seed, chaos=chaos, store="postgresql"
            )
            outcome.server_restarts, outcome.holders_killed = counts
            return outcome
        finally:
            server.stop()


def _row(o: Outcome) -> list[str]:
    counts = [o.kills, o.server_restarts, o.holders_killed, o.acknowledged, o.lost]
    counts += [o.duplicates, o.broken_links, len(o.failures)]
    return [o.store, f"{o.seconds:.0f}", *(f"{n:,}" for n in counts)]


def render(outcomes: list[Outcome]) -> str:
    columns = ["store", "seconds", "kills", "server restarts", "lock/idle holders killed",
               "acknowledged", "lost", "duplicates", "broken links", "check errors"]  # fmt: skip
    rows = [_row(o) for o in outcomes]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]
    lines = [" | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("-+-".join("-" * w for w in widths))
    lines += [" | ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    for outcome in outcomes:
        lines += [f"{outcome.store}: {failure}" for failure in outcome.failures]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.store_kills",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--seconds", type=float, default=120.0, help="per store (default 120)")
    parser.add_argument("--seed", type=int, default=None, help="seed (default: random, printed)")
    parser.add_argument("--postgres", action="store_true", help="also a private PostgreSQL")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    print(f"seed {seed}, {WRITERS} writers, {args.seconds:g} s per store", flush=True)
    sys.path.insert(0, str(ROOT / "src"))
    with sqlite_url() as url:
        outcomes = [run_campaign(url, args.seconds, seed=seed)]
    if args.postgres:
        outcomes.append(postgres_campaign(args.seconds, seed))
    print(render(outcomes))
    bad = any(o.lost or o.duplicates or o.broken_links or o.failures for o in outcomes)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
