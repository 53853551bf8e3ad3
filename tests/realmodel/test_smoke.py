"""The smoke test's diagnosis (issue 24 point 2), without the real model: a server process that
crashes on its first completion is reported by the signal that killed it, with the fix."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from realmodel.server import LlamaServer, complete_once, exit_reason

# A stand-in for a llama.cpp build that segfaults in decode: it answers nothing and dies of
# SIGSEGV when the first request arrives.
_CRASHING_SERVER = textwrap.dedent(
    """
    import os, signal, socket, sys
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    print(sock.getsockname()[1], flush=True)
    connection, _ = sock.accept()
    connection.recv(65536)
    signal.signal(signal.SIGSEGV, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGSEGV)
    """
)


def test_exit_reason_names_the_signal_and_the_fix() -> None:
    assert exit_reason(-signal.SIGSEGV).startswith("killed by SIGSEGV")
    assert "docs/llamacpp.md" in exit_reason(-signal.SIGILL)
    assert exit_reason(-signal.SIGTERM) == "killed by SIGTERM"
    assert exit_reason(3) == "exit code 3"


def test_a_server_that_crashes_on_its_first_completion_is_reported(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    handle = log.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-c", _CRASHING_SERVER], stdout=subprocess.PIPE, stderr=handle
    )
    assert process.stdout is not None
    port = int(process.stdout.readline())
    server = LlamaServer(f"http://127.0.0.1:{port}/v1", process, log, handle)
    try:
        with pytest.raises(RuntimeError, match="died on its first completion: killed by SIGSEGV"):
            complete_once(server, timeout=60)
    finally:
        server.stop()
        process.stdout.close()
