"""Issue 28 point 1: slow clients cannot take ``serve``'s slots.

64 connections sending one header line every 5 s, or one body byte every 2-5 s, used to take
every slot, and a trickling body was still open after 70 s: the timeout was per read. Now heads
are collected without a worker under a total deadline, a body has a total deadline (and a
minimum rate), and a request without the token is answered before its body is read. Every
client here is on 127.0.0.1 and their number is bounded."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from contextree.llm.scripted import ScriptedClient
from serve_clients import (
    GatedModel,
    json_post,
    post_request,
    read_reply,
    serving_at,
    status_of,
    trickle,
    wait_for,
)

TOKEN = "serve-token-SLOW-0123456789"
SLOTS = 4


@contextmanager
def connections(host: str, port: int, count: int) -> Iterator[list[socket.socket]]:
    with ExitStack() as stack:
        yield [
            stack.enter_context(socket.create_connection((host, port), timeout=30))
            for _ in range(count)
        ]


def test_clients_trickling_headers_do_not_take_the_slots() -> None:
    with (
        serving_at(ScriptedClient(default="S"), max_connections=SLOTS, header_timeout=60) as (
            host,
            port,
            url,
        ),
        connections(host, port, 4 * SLOTS) as slow,
    ):
        for sock in slow:  # a request line and half a header, then nothing
            sock.sendall(b"POST /summarize HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
        assert json_post(url) == (200, {"summary": "S"})


def test_a_head_that_never_ends_gets_408() -> None:
    with serving_at(ScriptedClient(default="S"), header_timeout=0.3) as (host, port, _):
        with socket.create_connection((host, port), timeout=30) as sock:
            reply = trickle(sock, b"POST /summarize HTTP/1.1\r\n" + b"X-Slow: a\r\n" * 200,
                            pause=0.05)  # fmt: skip
        assert reply is not None, "the server waited for the whole trickle"
        assert status_of(reply) == 408 and b'"error"' in reply


def test_a_trickling_body_gets_408_before_it_ends() -> None:
    body = b'{"prompt": "' + b"p" * 400 + b'"}'
    with serving_at(ScriptedClient(default="S"), read_timeout=0.5) as (host, port, url):
        with socket.create_connection((host, port), timeout=30) as sock:
            sock.sendall(post_request(body))
            reply = trickle(sock, body, pause=0.05)  # each byte well within any per-read timeout
        assert reply is not None, "the server waited for the whole trickle"
        assert status_of(reply) == 408
        assert json_post(url) == (200, {"summary": "S"})


def test_a_slow_body_without_the_token_holds_no_slot() -> None:
    config = {"max_connections": SLOTS, "token": TOKEN, "read_timeout": 60}
    with serving_at(ScriptedClient(default="S"), **config) as (host, port, url):
        with connections(host, port, 4 * SLOTS) as slow:
            replies = []
            for sock in slow:  # a whole head announcing a body that never comes
                sock.sendall(post_request(b"", length=1000))
                replies.append(status_of(read_reply(sock)))
            assert replies == [401] * len(slow)
        assert json_post(url, token=TOKEN) == (200, {"summary": "S"})


def test_requests_beyond_the_slots_get_503_at_once() -> None:
    model = GatedModel()
    with serving_at(model, max_connections=2) as (host, port, url):
        busy = [threading.Thread(target=json_post, args=(url,)) for _ in range(2)]
        for thread in busy:
            thread.start()
        wait_for(lambda: model.waiting == 2)
        try:
            with socket.create_connection((host, port), timeout=30) as extra:
                extra.sendall(post_request(b'{"prompt": "p"}') + b'{"prompt": "p"}')
                reply = read_reply(extra)
            assert status_of(reply) == 503
            assert reply.endswith(b'{"error": "too many connections"}')
        finally:
            model.gate.set()
            for thread in busy:
                thread.join()
        assert json_post(url) == (200, {"summary": "S"})


def test_a_kept_alive_connection_serves_several_requests() -> None:
    import httpx

    with (
        serving_at(ScriptedClient(default="S"), max_connections=1) as (_, _, url),
        httpx.Client(timeout=30) as client,
    ):
        statuses = [client.post(url, json={"prompt": "p"}).status_code for _ in range(5)]
    assert statuses == [200] * 5


def test_expect_100_continue_is_answered_before_the_body() -> None:
    body = b'{"prompt": "p"}'
    with serving_at(ScriptedClient(default="S")) as (host, port, _):
        with socket.create_connection((host, port), timeout=30) as sock:
            head = post_request(body).replace(b"\r\n\r\n", b"\r\nExpect: 100-continue\r\n\r\n")
            sock.sendall(head)
            interim = sock.recv(4096)
            sock.sendall(body)
            reply = read_reply(sock)
        assert interim.startswith(b"HTTP/1.1 100 Continue")
        assert status_of(reply) == 200


def test_a_flood_of_slow_heads_cannot_shut_out_a_client_with_the_token() -> None:
    """More slow heads than ``max_pending``: each newcomer takes the place of the longest
    waiting one, so the flood delays nobody who sends a whole head."""
    config = {"max_connections": SLOTS, "max_pending": 8, "token": TOKEN, "header_timeout": 60}
    with (
        serving_at(ScriptedClient(default="S"), **config) as (host, port, url),
        connections(host, port, 32) as slow,
    ):
        for sock in slow:
            sock.sendall(b"POST /summarize HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
        wait_for(lambda: status_of(read_reply(slow[0])) == 503)  # the first were pushed out
        assert json_post(url, token=TOKEN) == (200, {"summary": "S"})
        assert json_post(url) == (401, {"error": "missing or wrong bearer token"})


def test_a_summary_request_without_the_token_is_refused_while_every_slot_is_busy() -> None:
    """401, not 503: it is refused before a slot is taken, so such requests, however many or
    slow to read their reply, never hold one."""
    model = GatedModel()
    with serving_at(model, max_connections=1, token=TOKEN) as (host, port, url):
        busy = threading.Thread(target=json_post, args=(url,), kwargs={"token": TOKEN})
        busy.start()
        wait_for(lambda: model.waiting == 1)
        try:
            with connections(host, port, 8) as strangers:
                for sock in strangers:
                    sock.sendall(post_request(b"", length=1000))
                assert [status_of(read_reply(sock)) for sock in strangers] == [401] * 8
        finally:
            model.gate.set()
            busy.join()
        assert json_post(url, token=TOKEN) == (200, {"summary": "S"})
