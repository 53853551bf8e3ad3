"""Helpers for the serve tests: a model that answers when told, raw slow clients on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from contextree.llm.base import Completion, CompletionRequest
from contextree.serve import ServerConfig, SummaryServer


class GatedModel:
    """Answers "S" once :attr:`gate` is set; counts the calls that are waiting."""

    name = "gated"

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.waiting = 0

    async def complete(self, request: CompletionRequest) -> Completion:
        self.waiting += 1
        await asyncio.to_thread(self.gate.wait, 30)
        return Completion(content=[{"type": "text", "text": "S"}])

    async def aclose(self) -> None:
        return None


@contextmanager
def serving_at(client: Any, **config: Any) -> Iterator[tuple[str, int, str]]:
    """A SummaryServer on 127.0.0.1:<free port>; yields host, port and the endpoint URL."""
    server = SummaryServer(client, ServerConfig(host="127.0.0.1", port=0, **config))
    url = server.start()
    parts = urlsplit(url)
    try:
        yield str(parts.hostname), int(parts.port or 0), url
    finally:
        server.close()


def post_request(body: bytes, *, token: str | None = None, length: int | None = None) -> bytes:
    headers = [
        b"POST /summarize HTTP/1.1",
        b"Host: 127.0.0.1",
        b"Content-Type: application/json",
        b"Content-Length: " + str(len(body) if length is None else length).encode(),
        b"Connection: close",
    ]
    if token is not None:
        headers.append(b"Authorization: Bearer " + token.encode())
    return b"\r\n".join(headers) + b"\r\n\r\n"


def status_of(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/") else 0


def read_reply(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def trickle(sock: socket.socket, data: bytes, *, pause: float) -> bytes | None:
    """Send ``data`` a byte at a time; the server's reply as soon as one arrives (the server
    gave up on us), or ``None`` when every byte went out without one."""
    for byte in data:
        try:
            sock.sendall(bytes([byte]))
        except OSError:
            return read_reply(sock)
        readable, _, _ = select.select([sock], [], [], pause)
        if readable:
            return read_reply(sock)
    return None


def json_post(url: str, prompt: str = "p", token: str | None = None) -> tuple[int, Any]:
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    reply = httpx.post(url, json={"prompt": prompt}, headers=headers, timeout=30)
    return reply.status_code, json.loads(reply.text)


def wait_for(condition: Any, limit: float = 10.0) -> None:
    """Poll ``condition`` (a setup step, not a timing assertion)."""
    end = time.monotonic() + limit
    while not condition():
        if time.monotonic() > end:
            raise AssertionError("the server never reached the state the test waits for")
        time.sleep(0.01)


SRC = Path(__file__).resolve().parents[1] / "src"


def serve_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a ``contextree serve`` subprocess: this checkout's code, a home of
    its own, and none of the caller's contextree settings or API keys (``extra`` adds some)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("CONTEXTREE_") and not key.endswith("_API_KEY")
    }
    env.update(
        PYTHONPATH=str(SRC),
        HOME=str(home),
        CONTEXTREE_HOME=str(home / "contextree"),
        COLUMNS="200",
        NO_COLOR="1",
        **extra,
    )
    return env
