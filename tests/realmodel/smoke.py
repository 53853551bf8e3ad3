"""``python tests/realmodel/smoke.py``: start the llama.cpp server once and ask for one
completion, before the real-model tests start (``.ci/run`` runs it).

A build that crashes on this CPU (issue 24: a native build segfaults in decode on Xeons with
AMX in a VM) is said here, once, with its reason on the last line, instead of as "Server
disconnected" in every real-model test. Exit 0 when the server answered, 1 otherwise.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from server import complete_once, missing, start_server


def main() -> int:
    absent = missing()
    if absent is not None:
        print(absent)
        return 1
    with tempfile.TemporaryDirectory(prefix="contextree-llama-smoke-") as folder:
        log = Path(folder) / "server.log"
        started = time.monotonic()
        try:
            server = start_server(log)
        except RuntimeError as error:
            print(error)
            return 1
        try:
            reply = complete_once(server)
        except RuntimeError as error:
            print(log.read_text(errors="replace")[-1500:])
            print(error)
            return 1
        finally:
            server.stop()
    seconds = time.monotonic() - started
    print(f"real model smoke test: the llama.cpp server answered {reply!r} in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
