"""``contextree serve``: the remote summarization endpoint (pi-behaviour §7.6) on 127.0.0.1.

Servers listen on port 0 in a background thread; ``start()`` returns once the socket is bound,
so no test waits for readiness.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import selectors
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from contextree.cli.models import make_client
from contextree.compaction.offline import OfflineSummarizer
from contextree.compaction.prepare import CompactionPreparation, prepare_compaction
from contextree.compaction.prompt_templates import load_prompt
from contextree.compaction.run import CompactionOutcome, compact_session
from contextree.compaction.summarize import (
    SPLIT_TURN_SEPARATOR,
    build_summary_prompt,
    local_turn_prefix_summarizer,
)
from contextree.errors import CompactionError, ContextreeError, ModelHTTPError
from contextree.llm.base import Completion, CompletionRequest, ModelClient
from contextree.llm.remote import RemoteSummaryClient
from contextree.llm.scripted import ScriptedClient
from contextree.serve import ServerConfig, SummaryServer, is_loopback
from contextree.session.tree import SessionTree
from pi_fixtures import pi_fixture
from sample_session import (
    CONSTRAINT,
    FAILING_COMMAND,
    KEEP_SPLIT,
    build_session,
    open_session,
    settings,
)
from serve_clients import serve_env

TOKEN = "serve-token-SECRET-7"


@contextmanager
def serving(client: ModelClient, **config: Any) -> Iterator[str]:
    """Run a SummaryServer on 127.0.0.1:<free port>; yields the endpoint URL."""
    server = SummaryServer(client, ServerConfig(host="127.0.0.1", port=0, **config))
    url = server.start()
    try:
        yield url
    finally:
        server.close()


def request_for(prompt: str, system: str = "SYSTEM") -> CompletionRequest:
    return CompletionRequest(
        system_prompt=system,
        messages=[{"role": "user", "content": [{"type": "text", "text": prompt}]}],
        max_tokens=4000,
    )


def raw_post(url: str, body: bytes | None, headers: dict[str, str]) -> tuple[int, Any]:
    """POST with exactly these headers (http.client adds no Content-Length on its own here)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.putrequest("POST", parts.path, skip_accept_encoding=True)
        for key, value in headers.items():
            connection.putheader(key, value)
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


@pytest.fixture
def sample_prompt(tmp_path: Path) -> str:
    tree = open_session(tmp_path / "s.jsonl")
    build_session(tree)
    prep = prepare_compaction(tree.get_branch(), settings(KEEP_SPLIT))
    assert isinstance(prep, CompactionPreparation)
    return build_summary_prompt(prep.messages_to_summarize, load_prompt("initial-summary"))


# --- success -------------------------------------------------------------------------------------


def test_the_offline_summary_through_the_remote_client(sample_prompt: str) -> None:
    request = request_for(sample_prompt, system=load_prompt("system"))
    with serving(OfflineSummarizer()) as url:
        completion = asyncio.run(RemoteSummaryClient(url).complete(request))
    local = asyncio.run(
        OfflineSummarizer().complete(
            CompletionRequest(request.system_prompt, request.messages, max_tokens=None)
        )
    )
    assert completion.text == local.text
    assert "src/parser.py" in completion.text
    assert CONSTRAINT in completion.text


def test_the_model_gets_the_system_prompt_and_the_prompt_unchanged() -> None:
    model = ScriptedClient()
    model.enqueue_text("## Goal\nscripted")
    with serving(model, max_tokens=777) as url:
        response = httpx.post(url, json={"systemPrompt": "SYS", "prompt": "the prompt"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"summary": "## Goal\nscripted"}
    (seen,) = model.requests
    assert seen.system_prompt == "SYS"
    assert seen.messages == [{"role": "user", "content": [{"type": "text", "text": "the prompt"}]}]
    assert seen.max_tokens == 777
    assert seen.tools == []


@pytest.mark.parametrize("path", ["/", "/summarize", "/v1/summarize"])
def test_every_summarize_path_answers(path: str) -> None:
    model = ScriptedClient(default="ok")
    with serving(model) as url:
        endpoint = url.removesuffix("/summarize") + path
        response = httpx.post(endpoint, json={"prompt": "p"})
    assert response.status_code == 200 and response.json() == {"summary": "ok"}
    assert model.requests[0].system_prompt == ""  # systemPrompt is optional


def test_health() -> None:
    with serving(ScriptedClient(name="my-model")) as url:
        base = url.removesuffix("/summarize")
        for path in ("/health", "/healthz"):
            response = httpx.get(base + path)
            assert response.status_code == 200
            assert response.json() == {"status": "ok", "model": "my-model"}


def test_the_url_is_the_bound_port() -> None:
    server = SummaryServer(ScriptedClient(), ServerConfig(port=0))
    try:
        assert server.url.startswith("http://127.0.0.1:")
        assert server.url.endswith("/summarize")
        assert not server.url.endswith(":0/summarize")
    finally:
        server.close()


# --- bad requests --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "body is not valid JSON"),
        (b"\xff\xfe", "body is not valid JSON"),
        (b'["a list"]', "body must be a JSON object"),
        (b'{"systemPrompt": "s"}', 'field "prompt" must be a non-empty string'),
        (b'{"prompt": "  \\n "}', 'field "prompt" must be a non-empty string'),
        (b'{"prompt": 3}', 'field "prompt" must be a non-empty string'),
        (b'{"prompt": "p", "systemPrompt": ["x"]}', 'field "systemPrompt" must be a string'),
    ],
)
def test_a_bad_body_is_400_with_a_json_error(body: bytes, message: str) -> None:
    model = ScriptedClient(default="never")
    with serving(model) as url:
        response = httpx.post(url, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"].startswith(message)
    assert model.requests == []


def test_a_body_over_the_limit_is_413() -> None:
    model = ScriptedClient(default="never")
    with serving(model, max_body_bytes=100) as url:
        response = httpx.post(url, json={"prompt": "x" * 1000})
        small = httpx.post(url, json={"prompt": "fits"})
    assert response.status_code == 413
    assert "exceeds the limit of 100 bytes" in response.json()["error"]
    assert small.status_code == 200
    assert len(model.requests) == 1


def test_the_remote_client_sees_413_as_an_http_error() -> None:
    model = ScriptedClient(default="never")
    with serving(model, max_body_bytes=100) as url, pytest.raises(ModelHTTPError) as caught:
        asyncio.run(RemoteSummaryClient(url).complete(request_for("x" * 1000)))
    assert caught.value.status == 413
    assert str(caught.value) == "Remote compaction failed (413 Request Entity Too Large)"


def test_a_missing_content_length_is_411() -> None:
    with serving(ScriptedClient(default="never")) as url:
        status, body = raw_post(url, None, {"Content-Type": "application/json"})
    assert status == 411
    assert body == {"error": "Content-Length is required"}


def test_a_content_length_that_is_not_a_number_is_400() -> None:
    with serving(ScriptedClient(default="never")) as url:
        status, body = raw_post(
            url, b"{}", {"Content-Length": "two", "Content-Type": "application/json"}
        )
    assert status == 400
    assert body == {"error": "Content-Length is not a number"}


def test_unknown_paths_are_404_and_get_on_the_endpoint_is_405() -> None:
    with serving(ScriptedClient(default="never")) as url:
        base = url.removesuffix("/summarize")
        post_missing = httpx.post(base + "/nope", json={"prompt": "p"})
        get_missing = httpx.get(base + "/nope")
        get_endpoint = httpx.get(url)
    assert post_missing.status_code == 404 and get_missing.status_code == 404
    assert post_missing.json() == {"error": "no such endpoint /nope"}
    assert get_endpoint.status_code == 405
    assert get_endpoint.json() == {"error": "use POST with {systemPrompt, prompt}"}


# --- the bearer token ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers", [{}, {"authorization": "Bearer wrong"}, {"authorization": TOKEN}], ids=str
)
def test_a_missing_or_wrong_token_is_401(headers: dict[str, str]) -> None:
    model = ScriptedClient(default="never")
    with serving(model, token=TOKEN) as url:
        response = httpx.post(url, json={"prompt": "p"}, headers=headers)
    assert response.status_code == 401
    assert response.json() == {"error": "missing or wrong bearer token"}
    assert model.requests == []


def test_the_right_token_is_accepted_and_the_client_reports_401_otherwise() -> None:
    with serving(ScriptedClient(default="summary"), token=TOKEN) as url:
        ok = asyncio.run(RemoteSummaryClient(url, token=TOKEN).complete(request_for("p")))
        with pytest.raises(ModelHTTPError) as caught:
            asyncio.run(RemoteSummaryClient(url, token="wrong").complete(request_for("p")))
    assert ok.text == "summary"
    assert caught.value.status == 401
    assert str(caught.value) == "Remote compaction failed (401 Unauthorized)"
    assert TOKEN not in (caught.value.body or "")


# --- model failures ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "status", "message"),
    [
        (
            Completion(content=[], stop_reason="error", error_message="upstream down"),
            502,
            "model error: upstream down",
        ),
        (
            ModelHTTPError("openai:gpt", "429 slow down", status=429),
            502,
            "model error: 429 slow down",
        ),
        (CompactionError("cannot summarize this"), 500, "cannot summarize this"),
        (RuntimeError("internal detail"), 500, "summary failed: RuntimeError"),
    ],
    ids=["error-completion", "model-http-error", "contextree-error", "bug"],
)
def test_model_failures_map_to_json_errors(reply: Any, status: int, message: str) -> None:
    model = ScriptedClient()
    if isinstance(reply, BaseException):
        model.enqueue_error(reply)
    else:
        model.enqueue(reply)
    with serving(model) as url:
        response = httpx.post(url, json={"prompt": "p"})
        after = httpx.post(url, json={"prompt": "p"})  # the server survives the failure
    assert response.status_code == status
    assert response.json() == {"error": message}
    assert after.status_code == 500  # the script is empty now: the next call fails again


def test_a_model_that_does_not_answer_in_time_is_504() -> None:
    model = ScriptedClient(gate=asyncio.Event())  # never set: only the timeout ends the call
    with serving(model, model_timeout=0.05) as url:
        response = httpx.post(url, json={"prompt": "p"})
    assert response.status_code == 504
    assert response.json() == {"error": "the model did not answer in time"}


# --- binding beyond loopback ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("localhost", True),
        ("::1", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.20", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20"])
def test_a_non_loopback_bind_without_a_token_is_refused_before_binding(host: str) -> None:
    with pytest.raises(ContextreeError, match="pass --token"):
        SummaryServer(ScriptedClient(), ServerConfig(host=host, port=0))


# --- compaction through the endpoint -------------------------------------------------------------


def test_compact_session_with_a_remote_summarizer(tmp_path: Path) -> None:
    model = ScriptedClient()
    model.enqueue_text("REMOTE HISTORY")
    model.enqueue_text("Remote short summary.")
    tree = open_session(tmp_path / "session.jsonl")
    build_session(tree)
    with serving(model) as url:
        spec = f"remote:{url}"
        client = make_client(spec)
        assert isinstance(client, RemoteSummaryClient)
        assert isinstance(local_turn_prefix_summarizer(client), OfflineSummarizer)
        # No turn_prefix_summarizer given: the library keeps the prefix local by itself.
        outcome = asyncio.run(compact_session(tree, client, settings=settings(KEEP_SPLIT)))
    assert isinstance(outcome, CompactionOutcome)
    prep = outcome.preparation
    assert prep.is_split_turn
    # The endpoint saw the history and the short summary; the prefix never left the machine.
    history, short = model.requests
    assert history.system_prompt == load_prompt("system")
    (block,) = history.messages[0]["content"]
    assert block["text"] == build_summary_prompt(
        prep.messages_to_summarize, load_prompt("initial-summary")
    )
    assert load_prompt("short-summary") in short.messages[0]["content"][0]["text"]
    assert all(
        load_prompt("turn-prefix") not in r.messages[0]["content"][0]["text"]
        for r in model.requests
    )
    summary = outcome.entry["summary"]
    assert summary.startswith("REMOTE HISTORY" + SPLIT_TURN_SEPARATOR + "## Original Request")
    assert FAILING_COMMAND in summary
    assert outcome.entry["shortSummary"] == "Remote short summary."
    reopened = SessionTree.open(tmp_path / "session.jsonl")
    assert reopened.build_session_context().messages[0]["summary"] == summary


def test_compacting_a_pi_fixture_through_the_offline_endpoint(tmp_path: Path) -> None:
    path = tmp_path / "before-compaction.jsonl"
    shutil.copyfile(pi_fixture("before-compaction.jsonl"), path)
    tree = SessionTree.open(path)
    before = tree.build_session_context().messages
    with serving(OfflineSummarizer()) as url:
        client = RemoteSummaryClient(url)
        outcome = asyncio.run(
            compact_session(tree, client, turn_prefix_summarizer=OfflineSummarizer())
        )
    assert isinstance(outcome, CompactionOutcome)
    assert SPLIT_TURN_SEPARATOR in outcome.entry["summary"]
    after = SessionTree.open(path).build_session_context().messages
    assert after[0]["role"] == "compactionSummary"
    assert after[0]["summary"] == outcome.entry["summary"]
    assert len(after) < len(before)


# --- the command itself --------------------------------------------------------------------------


def _read_line(process: subprocess.Popen[bytes], deadline: float) -> str:
    """One line of the process's stderr, waiting on the pipe (not sleeping) until the deadline."""
    assert process.stderr is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stderr, selectors.EVENT_READ)
        if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
            raise AssertionError("contextree serve printed nothing in time")
    return process.stderr.readline().decode()


def test_contextree_serve_answers_on_the_port_it_prints(tmp_path: Path) -> None:
    env = serve_env(tmp_path)
    process = subprocess.Popen(
        [sys.executable, "-m", "contextree", "serve", "--host", "127.0.0.1", "--port", "0"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        line = _read_line(process, time.monotonic() + 60)
        assert line.startswith("serving offline summaries at http://127.0.0.1:"), line
        url = line.split(" at ", 1)[1].split()[0]
        assert url.endswith("/summarize") and not url.endswith(":0/summarize")
        completion = asyncio.run(RemoteSummaryClient(url).complete(request_for("[User]: hi")))
        assert completion.text.startswith("## Goal")
    finally:
        process.terminate()
        process.wait(timeout=30)
        assert process.stderr is not None
        process.stderr.close()


def test_serve_binds_the_ipv6_loopback() -> None:
    import socket as socket_module

    try:
        probe = socket_module.socket(socket_module.AF_INET6)
        probe.bind(("::1", 0))
        probe.close()
    except OSError:
        pytest.skip("this machine has no IPv6 loopback")
    from contextree.compaction.offline import OfflineSummarizer
    from contextree.serve import ServerConfig, SummaryServer

    server = SummaryServer(OfflineSummarizer(), ServerConfig(host="::1", port=0))
    try:
        url = server.start()
        assert url.startswith("http://[::1]:")
    finally:
        server.close()


# --- hardening (issue 15 item 7) ------------------------------------------------------------------


def test_only_json_bodies_are_accepted() -> None:
    # A web page can POST text/plain or a form across origins without a preflight; not JSON.
    body = json.dumps({"prompt": "p"}).encode()
    with serving(ScriptedClient(default="S")) as url:
        for kind in ("text/plain", "application/x-www-form-urlencoded", ""):
            headers = {"Content-Length": str(len(body))} | ({"Content-Type": kind} if kind else {})
            status, reply = raw_post(url, body, headers)
            assert status == 415, kind
            assert reply == {"error": "Content-Type must be application/json"}
        status, reply = raw_post(
            url, body,
            {"Content-Length": str(len(body)), "Content-Type": "Application/JSON; charset=utf-8"},
        )  # fmt: skip
        assert (status, reply) == (200, {"summary": "S"})


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer"])
def test_the_bearer_scheme_is_case_insensitive(scheme: str) -> None:
    with serving(ScriptedClient(default="S"), token=TOKEN) as url:
        given = {"Authorization": f"{scheme} {TOKEN}"}
        assert httpx.post(url, json={"prompt": "p"}, headers=given).status_code == 200
        basic = {"Authorization": f"Basic {TOKEN}"}
        wrong = httpx.post(url, json={"prompt": "p"}, headers=basic)
        assert wrong.status_code == 401


def test_a_lone_surrogate_in_the_prompt_is_read_as_a_replacement_character() -> None:
    client = ScriptedClient(default="S")
    body = b'{"prompt": "cut \\ud800 here", "systemPrompt": "\\udc00"}'
    with serving(client) as url:
        status, reply = raw_post(
            url, body, {"Content-Length": str(len(body)), "Content-Type": "application/json"}
        )
    assert (status, reply) == (200, {"summary": "S"})
    (request,) = client.requests
    assert request.messages[0]["content"][0]["text"] == "cut \ufffd here"
    assert request.system_prompt == "\ufffd"


def test_fifty_simultaneous_clients_are_all_answered() -> None:
    import concurrent.futures

    with serving(ScriptedClient(default="S", delay=0.05)) as url:

        def post(_: int) -> int:
            return httpx.post(url, json={"prompt": "p"}, timeout=30).status_code

        with concurrent.futures.ThreadPoolExecutor(50) as pool:
            statuses = list(pool.map(post, range(50)))
    assert statuses == [200] * 50


def test_idle_connections_beyond_the_limit_take_no_slot() -> None:
    import socket

    # Connections that have sent nothing wait in the intake, not in a worker: the slots stay
    # free for requests (tests/test_serve_slow_clients.py has the 503 for busy slots).
    with serving(ScriptedClient(default="S"), max_connections=2, read_timeout=5) as url:
        parts = urlsplit(url)
        idle = [socket.create_connection((parts.hostname, parts.port)) for _ in range(4)]
        try:
            assert httpx.post(url, json={"prompt": "p"}).status_code == 200
        finally:
            for sock in idle:
                sock.close()
