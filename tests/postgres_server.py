"""A throwaway PostgreSQL server on 127.0.0.1 for the tests of the PostgreSQL store.

The binaries come from ``pg_config --bindir``, ``/usr/lib/postgresql/*/bin`` or ``PATH``.
initdb and postgres refuse to run as root, so as root the data directory is owned by the
``postgres`` user and the server runs as that user (``runuser``). The server listens on a free
port with its socket directory in /tmp and is stopped when the test session ends.

Without binaries (or psycopg) the tests that need the server skip with one reason, unless
``CONTEXTREE_POSTGRES=required`` (set by ``.ci/run``), which makes that a failure. The variable
is read at import: the autouse fixture in conftest.py removes ``CONTEXTREE_*`` variables.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REQUIRED = os.environ.get("CONTEXTREE_POSTGRES") == "required"


@dataclass(frozen=True)
class PostgresServer:
    """A running server: ``url`` reaches its ``postgres`` database as the superuser."""

    url: str
    port: int


def _bindir() -> Path | None:
    candidates: list[str] = []
    if shutil.which("pg_config"):
        with contextlib.suppress(OSError, subprocess.CalledProcessError):
            out = subprocess.run(
                ["pg_config", "--bindir"], capture_output=True, text=True, check=True
            )
            candidates.append(out.stdout.strip())
    candidates.extend(sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True))
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(str(Path(initdb).parent))
    for candidate in candidates:
        if (Path(candidate) / "initdb").is_file() and (Path(candidate) / "pg_ctl").is_file():
            return Path(candidate)
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


def _unavailable(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"CONTEXTREE_POSTGRES=required, but {reason}")
    pytest.skip(f"no PostgreSQL server for these tests: {reason}")


@contextlib.contextmanager
def running_server() -> Iterator[PostgresServer]:
    """Start a server for the duration of the block (skip or fail when impossible)."""
    try:
        import psycopg
    except ImportError:
        _unavailable("psycopg is not installed (pip install 'contextree[postgres]')")
    bindir = _bindir()
    if bindir is None:
        _unavailable("initdb/pg_ctl not found (apt-get install postgresql)")
        raise AssertionError  # unreachable: _unavailable raises
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        _unavailable("running as root without runuser to start the server as postgres")
    root = Path(tempfile.mkdtemp(prefix="ct-pg-", dir="/tmp"))
    data, sockets, log = root / "data", root / "sock", root / "server.log"
    sockets.mkdir()
    if os.geteuid() == 0:
        try:
            shutil.chown(root, "postgres")
            shutil.chown(sockets, "postgres")
        except (LookupError, OSError) as exc:
            shutil.rmtree(root, ignore_errors=True)
            _unavailable(f"cannot hand the data directory to the postgres user ({exc})")
    port = _free_port()
    initdb = [str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"]
    started = False
    try:
        subprocess.run(
            _as_server_user([*initdb, "--no-sync", "-E", "UTF8"]),
            check=True,
            capture_output=True,
            timeout=120,
        )
        # fsync off: the crash tests kill processes, not the machine; it saves minutes.
        options = (
            f"-c listen_addresses=127.0.0.1 -p {port} -k {sockets} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60"
        )
        subprocess.run(
            _as_server_user(
                [
                    str(bindir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(log),
                    "-o",
                    options,
                    "-w",
                    "-t",
                    "60",
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
            timeout=90,
        )
        started = True
        url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        with psycopg.connect(url, connect_timeout=10) as conn:
            conn.execute("SELECT 1")
        yield PostgresServer(url, port)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        text = detail.decode(errors="replace").strip().splitlines()[-1:] if detail else []
        tail = log.read_text(errors="replace").strip().splitlines()[-1:] if log.exists() else []
        _unavailable(f"the server did not start ({exc}; {' '.join(text + tail)})")
    finally:
        if started:
            subprocess.run(
                _as_server_user(
                    [str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]
                ),
                capture_output=True,
                timeout=60,
                check=False,
            )
        shutil.rmtree(root, ignore_errors=True)
