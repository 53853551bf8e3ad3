"""A connection's bytes read under a deadline: the total time a client may take, not a
timeout per read (a client sending a byte a second never trips a per-read timeout)."""

from __future__ import annotations

import socket
import time
from typing import Final

__all__ = ["DeadlineStream", "SocketWriter"]

_RECV: Final = 65536


class DeadlineStream:
    """``readline`` / ``read`` over a socket, starting with bytes already received; every
    wait for the socket counts against :attr:`deadline` (``time.monotonic()`` seconds) and
    raises ``TimeoutError`` once it has passed."""

    def __init__(self, sock: socket.socket, received: bytes, deadline: float) -> None:
        self._sock = sock
        self._buffer = bytearray(received)
        self.deadline = deadline
        self.eof = False

    def _fill(self) -> bool:
        """Receive more bytes; ``False`` at the end of the stream."""
        if self.eof:
            return False
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the client took longer than its deadline")
        self._sock.settimeout(remaining)
        chunk = self._sock.recv(_RECV)
        if not chunk:
            self.eof = True
            return False
        self._buffer += chunk
        return True

    def _take(self, count: int) -> bytes:
        taken = bytes(self._buffer[:count])
        del self._buffer[:count]
        return taken

    def readline(self, limit: int = -1) -> bytes:
        """One line with its newline (or ``limit`` bytes, or what is left at the end)."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                count = end + 1
                return self._take(count if limit < 0 else min(count, limit))
            if 0 <= limit <= len(self._buffer) or not self._fill():
                return self._take(len(self._buffer) if limit < 0 else limit)

    def read(self, size: int = -1) -> bytes:
        """``size`` bytes (fewer at the end of the stream); all of it for ``-1``."""
        while (size < 0 or len(self._buffer) < size) and self._fill():
            pass
        return self._take(len(self._buffer) if size < 0 else size)

    def leftover(self) -> bytes:
        """What was received but not read (the start of a pipelined next request)."""
        return self._take(len(self._buffer))

    def close(self) -> None:
        """Nothing to release: the socket belongs to the server."""


class SocketWriter:
    """Unbuffered writes (``sendall``): what http.server's handlers expect of ``wfile``, so
    that an interim ``100 Continue`` reaches the client before the body is read."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self.closed = False

    def write(self, data: bytes) -> int:
        self._sock.sendall(data)
        return len(data)

    def flush(self) -> None:
        """Nothing is buffered."""

    def close(self) -> None:
        self.closed = True  # the socket belongs to the server
