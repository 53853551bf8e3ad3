"""``serve`` refuses request framing a proxy in front of it could read differently.

It read ``Content-Length`` and ignored ``Transfer-Encoding``, kept the connection open after a
request carrying both (RFC 9112 §6.1: the server MUST close it), took the first of two
different ``Content-Length`` headers, and parsed the value with ``int()``, which accepts
``+10``, ``1_0`` and spaces: each is a way for a proxy and the server to disagree on where a
request ends (request smuggling).
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from contextree.compaction.offline import OfflineSummarizer
from contextree.serve import ServerConfig, SummaryServer

BODY = json.dumps({"prompt": "hello"}).encode()
NEXT = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@contextmanager
def _port() -> Iterator[int]:
    server = SummaryServer(OfflineSummarizer(), ServerConfig(host="127.0.0.1", port=0))
    server.start()
    try:
        yield int(server._server.server_address[1])
    finally:
        server.close()


def _exchange(
    port: int, framing: bytes, body: bytes, start: bytes = b"POST /summarize"
) -> list[bytes]:
    """The status codes of every reply to one request (a POST unless ``start`` says) with
    ``framing`` headers, ``body`` and a pipelined health request after it."""
    head = (
        start
        + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + framing
        + b"\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + body + NEXT)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
            if data.count(b"HTTP/1.") >= 2:
                break
    return re.findall(rb"HTTP/1\.[01] (\d{3})", data)


@pytest.mark.parametrize(
    "framing",
    [
        b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n" % len(BODY),
        b"Transfer-Encoding: chunked\r\nContent-Length: %d\r\n" % len(BODY),
        b"Content-Length: %d\r\nContent-Length: 4\r\n" % len(BODY),
        b"Content-Length: +%d\r\n" % len(BODY),
        b"Content-Length: %s\r\n" % "_".join(str(len(BODY))).encode(),
    ],
)
def test_ambiguous_framing_is_refused_and_the_connection_closed(framing: bytes) -> None:
    with _port() as port:
        replies = _exchange(port, framing, BODY)
    assert len(replies) == 1, replies  # nothing after it is read as a request
    assert int(replies[0]) in (400, 501), replies


def test_plain_content_length_still_keeps_the_connection_alive() -> None:
    with _port() as port:
        replies = _exchange(port, b"Content-Length: %d\r\n" % len(BODY), BODY)
    assert [int(code) for code in replies] == [200, 200]


@pytest.mark.parametrize(
    "framing",
    [b"Content-Length: %d\r\n" % len(NEXT), b"Transfer-Encoding: chunked\r\n"],
)
def test_a_get_with_a_body_is_refused_and_the_connection_closed(framing: bytes) -> None:
    # The body of a GET is never read: on a kept-alive connection it was taken as the next
    # request (two replies where a proxy in front saw one request).
    with _port() as port:
        replies = _exchange(port, framing, NEXT, start=b"GET /healthz")
    assert len(replies) == 1, replies
    assert int(replies[0]) in (400, 501), replies


def test_a_get_without_a_body_keeps_the_connection_alive() -> None:
    with _port() as port:
        replies = _exchange(port, b"", b"", start=b"GET /healthz")
    assert [int(code) for code in replies] == [200, 200]
