"""``serve`` without ``--token`` (loopback only) refuses requests for another host name.

A web page cannot read the loopback endpoint across origins, but through DNS rebinding its
own name comes to resolve to 127.0.0.1: the browser then treats the endpoint as the page's
origin, posts JSON to it and reads the summary - the user's model, at the user's cost, driven
by any page they open. What gives it away is the ``Host`` header, which carries the page's
name. With ``--token`` the header is not checked: a page does not know the token.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from contextree.compaction.offline import OfflineSummarizer
from contextree.serve import ServerConfig, SummaryServer

BODY = json.dumps({"systemPrompt": "s", "prompt": "hello there"}).encode()


@contextmanager
def _serving(host: str = "127.0.0.1", **config: Any) -> Iterator[int]:
    server = SummaryServer(OfflineSummarizer(), ServerConfig(host=host, port=0, **config))
    server.start()
    try:
        yield int(server._server.server_address[1])
    finally:
        server.close()


def _post(port: int, host_header: str | None, headers: dict[str, str] | None = None) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("POST", "/summarize", skip_host=True)
        if host_header is not None:
            conn.putheader("Host", host_header)
        for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(BODY)))
        conn.endheaders(BODY)
        reply = conn.getresponse()
        reply.read()
        return reply.status
    finally:
        conn.close()


@pytest.mark.parametrize(
    "host", ["attacker.example", "attacker.example:8765", "127.0.0.1.attacker.example", "0.0.0.0"]
)
def test_a_foreign_host_name_is_refused_without_a_token(host: str) -> None:
    with _serving() as port:
        assert _post(port, host) == 403


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.0.0.1:{port}",
        "localhost:{port}",
        "LOCALHOST",
        "[::1]:{port}",
        "app.localhost:{port}",
        None,
    ],
)
def test_loopback_names_and_a_missing_host_are_served(host: str | None) -> None:
    with _serving() as port:
        assert _post(port, None if host is None else host.format(port=port)) == 200


def test_with_a_token_any_host_name_is_served() -> None:
    token = "serve-host-token-1"
    with _serving(token=token) as port:
        assert _post(port, "summaries.internal", {"Authorization": f"Bearer {token}"}) == 200
        assert _post(port, "summaries.internal") == 401
