"""``serve`` logs each request line with control characters escaped.

``contextree serve`` logs to the operator's terminal; the request line (and http.server's
message about a bad one) came from the client verbatim, so any client - before the token is
checked - could clear the screen, set the window title or forge a line with ``\\x1b`` and
``\\r``. http.server escapes them in its own ``log_message``, which serve overrides.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from contextree.compaction.offline import OfflineSummarizer
from contextree.serve import ServerConfig, SummaryServer


@contextmanager
def _port(token: str | None) -> Iterator[int]:
    config = ServerConfig(host="127.0.0.1", port=0, token=token)
    server = SummaryServer(OfflineSummarizer(), config)
    server.start()
    try:
        yield int(server._server.server_address[1])
    finally:
        server.close()


@pytest.mark.parametrize("token", [None, "log-token-1"])
@pytest.mark.parametrize(
    "request_line",
    [
        b"GET /\x1b[2J\x1b]0;owned\x07 HTTP/1.1",
        b"POST /summarize\x1b[31m\rforged HTTP/1.1",
        b"BOGUS\x1b[2J\x08\x08 / HTTP/1.1",
        "GET /\u202eevil HTTP/1.1".encode(),
    ],
)
def test_request_lines_reach_the_log_escaped(
    token: str | None, request_line: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="contextree.serve"), _port(token) as port:
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        with sock:
            sock.sendall(request_line + b"\r\nHost: 127.0.0.1\r\n\r\n")
            while sock.recv(65536):
                pass
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert logged  # the request was logged
    unsafe = [c for c in logged if c != "\n" and (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F)]
    assert unsafe == [] and "\u202e" not in logged
