"""Request heads collected in one thread, so that a slow client never holds a worker.

A thread per connection is what ``http.server`` gives, and a client that sends its headers
one line every few seconds then holds a thread (and one of ``max_connections`` slots) for as
long as it likes: 64 of them took every slot. Here one thread watches every connection that
has not sent its whole head yet (request line and headers, up to the blank line) with a
selector; each must finish within ``header_timeout`` seconds in total or gets 408, a head over
``max_head_bytes`` gets 431. When ``max_pending`` connections are waiting, a new one takes the
place of the one that has waited longest (503): a flood of slow heads can delay, but never shut
out, a client that sends its head at once - which, read on arrival, needs no place at all. Only
a complete head is handed on (``on_head`` may still refuse it, e.g. without the token), and the
worker then reads the body under its own deadline.
"""

from __future__ import annotations

import contextlib
import json
import re
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Final

__all__ = ["Intake", "json_reply"]

_HEAD_END: Final = re.compile(rb"\r?\n\r?\n")
_RECV: Final = 65536
_IDLE_WAIT_S: Final = 1.0


def json_reply(status: HTTPStatus, message: str) -> bytes:
    """A whole HTTP/1.1 response with a ``{"error": message}`` body that closes the connection."""
    body = json.dumps({"error": message}).encode()
    return (
        f"HTTP/1.1 {status.value} {status.phrase}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


def send_and_close(sock: socket.socket, reply: bytes) -> None:
    """Best effort: the client may be gone, or not reading."""
    with contextlib.suppress(OSError):
        sock.setblocking(False)
        sock.send(reply)
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


@dataclass(slots=True)
class _Pending:
    sock: socket.socket
    address: Any
    deadline: float
    kept_alive: bool
    """Back for its next request: if it sends none, it is closed without a reply."""
    data: bytearray = field(default_factory=bytearray)


class Intake:
    """Watches connections until their request head is complete, then calls ``on_head(sock,
    address, received_bytes)`` (in the intake thread: it must not block)."""

    def __init__(
        self,
        on_head: Callable[[socket.socket, Any, bytes], None],
        *,
        header_timeout: float,
        max_pending: int,
        max_head_bytes: int,
    ) -> None:
        self._on_head = on_head
        self._header_timeout = header_timeout
        self._max_pending = max_pending
        self._max_head_bytes = max_head_bytes
        self._selector = selectors.DefaultSelector()
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_read.setblocking(False)
        self._selector.register(self._wake_read, selectors.EVENT_READ)
        self._incoming: list[tuple[socket.socket, Any, bytes, bool]] = []
        self._lock = threading.Lock()
        self._pending: dict[socket.socket, _Pending] = {}
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="serve-intake", daemon=True)
        self._thread.start()

    def add(
        self, sock: socket.socket, address: Any, received: bytes = b"", *, kept_alive: bool = False
    ) -> None:
        """Watch ``sock`` until its next request head is complete (any thread may call);
        ``kept_alive``: a connection back after a request, closed quietly when idle."""
        with self._lock:
            if self._closed:
                sock.close()
                return
            self._incoming.append((sock, address, received, kept_alive))
        with contextlib.suppress(OSError):
            self._wake_write.send(b"x")

    def close(self) -> None:
        """Stop watching; close every connection still waiting."""
        with self._lock:
            self._closed = True
        with contextlib.suppress(OSError):
            self._wake_write.send(b"x")
        self._thread.join()
        for pending in list(self._pending.values()):
            pending.sock.close()
        for sock, *_ in self._incoming:
            sock.close()
        self._selector.close()
        self._wake_read.close()
        self._wake_write.close()

    # -- the intake thread -----------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
            for key, _ in self._selector.select(self._wait()):
                if key.fileobj is self._wake_read:
                    self._take_incoming()
                elif pending := self._pending.get(key.fileobj):  # type: ignore[call-overload]
                    self._receive(pending)  # (unless pushed out earlier in this round)
            self._expire()

    def _wait(self) -> float:
        if not self._pending:
            return _IDLE_WAIT_S
        soonest = min(p.deadline for p in self._pending.values())
        return min(_IDLE_WAIT_S, max(0.0, soonest - time.monotonic()))

    def _take_incoming(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while self._wake_read.recv(4096):
                pass
        with self._lock:
            incoming, self._incoming = self._incoming, []
        for sock, address, received, kept_alive in incoming:
            deadline = time.monotonic() + self._header_timeout
            pending = _Pending(sock, address, deadline, kept_alive)
            pending.data += received
            if _HEAD_END.search(pending.data):
                self._on_head(sock, address, bytes(pending.data))  # a pipelined request
                continue
            sock.setblocking(False)
            self._pending[sock] = pending
            self._selector.register(sock, selectors.EVENT_READ)
            self._receive(pending)  # a head sent at once is handed on before it needs a place
            if len(self._pending) > self._max_pending:
                self._evict_oldest()

    def _evict_oldest(self) -> None:
        # Every deadline is arrival + header_timeout, so the earliest is the longest waiting.
        oldest = min(self._pending.values(), key=lambda p: p.deadline)
        self._drop(oldest)
        if oldest.kept_alive and not oldest.data:
            oldest.sock.close()
            return
        send_and_close(
            oldest.sock, json_reply(HTTPStatus.SERVICE_UNAVAILABLE, "too many connections")
        )

    def _receive(self, pending: _Pending) -> None:
        try:
            chunk = pending.sock.recv(_RECV)
        except BlockingIOError:
            return
        except OSError:
            self._drop(pending)
            pending.sock.close()
            return
        if not chunk:  # the client is done sending: what it sent is answered, or nothing
            self._drop(pending)
            if pending.data:
                self._hand_over(pending)
            else:
                pending.sock.close()
            return
        # Only the new bytes and the three before them can complete the blank line: searching
        # the whole head again on every byte of a trickling client would be quadratic.
        start = max(0, len(pending.data) - 3)
        pending.data += chunk
        if _HEAD_END.search(pending.data, start):
            self._drop(pending)
            self._hand_over(pending)
        elif len(pending.data) > self._max_head_bytes:
            self._drop(pending)
            message = f"request head over {self._max_head_bytes} bytes"
            send_and_close(
                pending.sock, json_reply(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, message)
            )

    def _expire(self) -> None:
        now = time.monotonic()
        for pending in [p for p in self._pending.values() if p.deadline <= now]:
            self._drop(pending)
            if pending.kept_alive and not pending.data:
                pending.sock.close()  # an idle keep-alive connection: no request, no reply
                continue
            message = f"the request head took longer than {self._header_timeout:g} s"
            send_and_close(pending.sock, json_reply(HTTPStatus.REQUEST_TIMEOUT, message))

    def _drop(self, pending: _Pending) -> None:
        del self._pending[pending.sock]
        with contextlib.suppress(KeyError, ValueError, OSError):
            self._selector.unregister(pending.sock)

    def _hand_over(self, pending: _Pending) -> None:
        pending.sock.setblocking(True)
        self._on_head(pending.sock, pending.address, bytes(pending.data))
