"""``contextree serve``: the remote summarization endpoint as a small HTTP server.

Speaks the protocol of ``compaction.remoteEndpoint`` (pi-behaviour §7.6): ``POST`` a JSON body
``{"systemPrompt": str, "prompt": str}``, get ``{"summary": str}``. Any model spec backs it; the
built-in offline summarizer by default. Every error is a JSON ``{"error": ...}`` with a fitting
status. Bodies are size-limited, and a bearer token is required whenever the server listens
beyond the loopback interface. Without a token, a request whose ``Host`` header names another
machine gets 403 (a web page reaching 127.0.0.1 through DNS rebinding). A body is framed by one
decimal ``Content-Length`` only (``Transfer-Encoding`` gets 501), so a proxy in front cannot
read a request's end differently.

Slow clients: request heads are collected by :class:`~contextree.serve.intake.Intake` without a
worker (a total deadline, ``header_timeout``); a worker slot is taken only for a complete head,
and a summary request without the right token is answered 401 by the intake itself, so with
``--token`` only authenticated requests hold a slot while a body arrives or a model answers.
Without ``--token`` (loopback only) every request counts as authenticated: a local client that
trickles a body can hold a slot for up to ``read_timeout``.
The body has a total deadline too: ``read_timeout``, or less when it is small, at
``min_body_rate`` bytes per second after a grace of a few seconds (408 either way).

Secrets: the prompt and the system prompt pass through a
:class:`~contextree.security.redact.Redactor` before the model sees them, and so do the summary
and a model's error text before they are answered (an upstream may echo what it was sent; the
offline summarizer quotes the conversation). ``contextree serve`` uses the one the settings ask
for (``redaction.*`` plus the secret-looking environment variables, as ``compact`` does); a
library caller gets the built-in patterns unless it passes another, or ``None``.
"""

from __future__ import annotations

import asyncio
import hmac
import http.client
import io
import json
import logging
import socket
import threading
import time
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

from contextree.errors import ContextreeError, ModelError
from contextree.llm.base import CompletionRequest, ModelClient
from contextree.llm.probe import is_loopback
from contextree.security.redact import DEFAULT_REDACTOR, Redactor
from contextree.serve.intake import Intake, json_reply, send_and_close
from contextree.serve.stream import DeadlineStream, SocketWriter
from contextree.text.escapes import escaped
from contextree.text.surrogates import without_lone_surrogates

__all__ = ["ServerConfig", "SummaryServer", "is_loopback"]

log = logging.getLogger("contextree.serve")

SUMMARIZE_PATHS = frozenset({"/", "/summarize", "/v1/summarize"})


@dataclass(frozen=True, slots=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    max_body_bytes: int = 8 * 1024 * 1024
    read_timeout: float = 30.0
    """Seconds a client may take to send a request body, at most (see ``min_body_rate``)."""
    header_timeout: float = 10.0
    """Seconds a client may take to send its request line and headers, in total (then 408)."""
    min_body_rate: int = 16 * 1024
    """Bytes per second a body must arrive at, after a grace of ``_BODY_GRACE_S``: a body of
    N bytes must be complete within ``min(read_timeout, grace + N / min_body_rate)``."""
    max_pending: int = 512
    """Connections still sending their request head, at most (more get 503)."""
    model_timeout: float = 300.0
    """Seconds a summary may take before the server answers 504."""
    max_tokens: int | None = None
    max_connections: int = 64
    """Requests served at once (a worker each); more get 503 at once."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    server_version = "contextree"
    sys_version = ""

    rfile: DeadlineStream  # type: ignore[assignment]
    keep_alive = False

    def __init__(self, request: socket.socket, address: Any, server: _Server, head: bytes) -> None:
        self._head = head
        super().__init__(request, address, server)

    def setup(self) -> None:
        config = self.server.config
        self.connection = self.request
        self.connection.settimeout(config.read_timeout)  # for writing the reply
        # The head came complete from the intake; anything more read is the body, which gets
        # its own deadline once its length is known.
        self.rfile = DeadlineStream(
            self.connection, self._head, time.monotonic() + config.header_timeout
        )
        self.wfile = SocketWriter(self.connection)  # type: ignore[assignment]

    def handle(self) -> None:
        # One request per hand-over: between requests a kept-alive connection waits in the
        # intake, not in a worker.
        self.close_connection = True
        self.handle_one_request()
        self.keep_alive = not self.close_connection

    def log_message(self, format: str, *args: Any) -> None:
        # The request line is the client's, verbatim: escaped, as http.server's own
        # log_message (overridden here) does, so it cannot drive the operator's terminal.
        log.info("%s %s", self.address_string(), escaped(format % args))

    def _reply(self, status: HTTPStatus, payload: dict[str, Any]) -> None:
        body = json.dumps(payload, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if status >= 400:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: HTTPStatus, message: str) -> None:
        self._reply(status, {"error": message})

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own rejections (bad request line, unknown method, header too long)
        as JSON like every other error, instead of its HTML page."""
        try:
            status = HTTPStatus(code)
        except ValueError:
            status = HTTPStatus.BAD_REQUEST
        self.log_error("code %d, message %s", code, message)
        self._error(status, message or status.phrase)

    def _host_refused(self) -> bool:
        """Answers 403 (and returns True) when, without a token, the ``Host`` header names
        another machine: DNS rebinding, a web page whose name now resolves to 127.0.0.1."""
        config = self.server.config
        if config.token is not None or _names_this_machine(self.headers.get("Host"), config.host):
            return False
        self._error(
            HTTPStatus.FORBIDDEN,
            "the Host header does not name this machine; without --token only requests to "
            "127.0.0.1, [::1] or localhost are served",
        )
        return True

    def do_GET(self) -> None:
        if self._host_refused() or self._body_refused():
            return
        if self.path in ("/health", "/healthz"):
            self._reply(HTTPStatus.OK, {"status": "ok", "model": self.server.client.name})
        elif self.path in SUMMARIZE_PATHS:
            self._error(HTTPStatus.METHOD_NOT_ALLOWED, "use POST with {systemPrompt, prompt}")
        else:
            self._error(HTTPStatus.NOT_FOUND, f"no such endpoint {self.path}")

    def _body_refused(self) -> bool:
        """Answers (closing the connection) and returns True when a GET carries a body: it
        is never read, so on a kept-alive connection it would be read as the next request
        (a proxy in front would see one request where the server sees two)."""
        if "Transfer-Encoding" in self.headers:
            self._error(HTTPStatus.NOT_IMPLEMENTED, "Transfer-Encoding is not supported")
            return True
        lengths = {value.strip() for value in self.headers.get_all("Content-Length") or ()}
        if lengths - {"0"}:
            self._error(HTTPStatus.BAD_REQUEST, "a GET request has no body")
            return True
        return False

    def _authorized(self) -> bool:
        token = self.server.config.token
        return token is None or _token_matches(self.headers.get("Authorization", ""), token)

    def _is_json(self) -> bool:
        # Only JSON bodies: a web page can POST a form or text/plain across origins without
        # asking, but not application/json.
        kind = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        return kind == "application/json"

    def _read_json(self) -> dict[str, Any] | None:
        length = self._content_length()
        if length is None:
            return None
        if length < 0 or length > self.server.config.max_body_bytes:
            self._error(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                f"body of {length} bytes exceeds the limit of "
                f"{self.server.config.max_body_bytes} bytes",
            )
            return None
        config = self.server.config
        allowed = min(config.read_timeout, _BODY_GRACE_S + length / max(1, config.min_body_rate))
        self.rfile.deadline = time.monotonic() + allowed
        try:
            raw = self.rfile.read(length)
        except TimeoutError:
            self._error(HTTPStatus.REQUEST_TIMEOUT, "the request body arrived too slowly")
            return None
        finally:
            # The deadline left the socket with what remained of it; the reply gets the
            # full timeout.
            self.connection.settimeout(config.read_timeout)
        if len(raw) < length:
            self._error(HTTPStatus.BAD_REQUEST, "the request body was cut short")
            return None
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            self._error(HTTPStatus.BAD_REQUEST, f"body is not valid JSON ({exc})")
            return None
        except RecursionError:
            self._error(HTTPStatus.BAD_REQUEST, "body is not valid JSON (nested too deeply)")
            return None
        if not isinstance(body, dict):
            self._error(HTTPStatus.BAD_REQUEST, "body must be a JSON object")
            return None
        return body

    def _content_length(self) -> int | None:
        """The body's length, or ``None`` after an error reply (which closes the connection).

        Only one plain decimal ``Content-Length`` frames a body: a proxy in front may go by
        ``Transfer-Encoding`` (RFC 9112 §6.1), by another of two lengths, or refuse the
        ``+10`` and ``1_0`` that ``int()`` takes, and read the rest of the body as a request
        of its own (request smuggling)."""
        if "Transfer-Encoding" in self.headers:
            self._error(
                HTTPStatus.NOT_IMPLEMENTED,
                "Transfer-Encoding is not supported; send the body with a Content-Length",
            )
            return None
        values = {value.strip() for value in self.headers.get_all("Content-Length") or ()}
        if not values:
            self._error(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
            return None
        if len(values) > 1:
            self._error(HTTPStatus.BAD_REQUEST, "conflicting Content-Length headers")
            return None
        text = values.pop()
        if not (text.isascii() and text.isdigit()) or len(text) > 18:
            self._error(HTTPStatus.BAD_REQUEST, "Content-Length is not a number")
            return None
        return int(text)

    def do_POST(self) -> None:
        if self.path not in SUMMARIZE_PATHS:
            self._error(HTTPStatus.NOT_FOUND, f"no such endpoint {self.path}")
            return
        if not self._authorized():
            self._error(HTTPStatus.UNAUTHORIZED, _NO_TOKEN)
            return
        if self._host_refused():
            return
        if not self._is_json():
            self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json")
            return
        body = self._read_json()
        if body is None:
            return
        prompt, system = body.get("prompt"), body.get("systemPrompt", "")
        if not isinstance(prompt, str) or not prompt.strip():
            self._error(HTTPStatus.BAD_REQUEST, 'field "prompt" must be a non-empty string')
            return
        if not isinstance(system, str):
            self._error(HTTPStatus.BAD_REQUEST, 'field "systemPrompt" must be a string')
            return
        # (JSON allows "\ud800": a model request or our reply could not be encoded with it.)
        prompt, system = without_lone_surrogates(prompt), without_lone_surrogates(system)
        try:
            summary = self.server.summarize(system, prompt)
        except TimeoutError:
            self._error(HTTPStatus.GATEWAY_TIMEOUT, "the model did not answer in time")
            return
        except ModelError as exc:
            self._error(HTTPStatus.BAD_GATEWAY, self.server.redact(f"model error: {exc}"))
            return
        except ContextreeError as exc:
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, self.server.redact(str(exc)))
            return
        except Exception as exc:
            log.exception("summary failed")
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"summary failed: {type(exc).__name__}")
            return
        self._reply(HTTPStatus.OK, {"summary": summary})


_BODY_GRACE_S: Final = 5.0
_MAX_HEAD_BYTES: Final = 256 * 1024
"""A head over this is refused (431) by the intake; http.server's own limits (64 KiB a line,
100 headers) answer anything under it."""


_NO_TOKEN: Final = "missing or wrong bearer token"


def _token_matches(authorization: str, token: str) -> bool:
    """Whether an ``Authorization`` header value carries ``token`` as a bearer token (the
    scheme is case-insensitive, RFC 9110 §11.1; the token is compared in constant time)."""
    scheme, _, given = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())


def _names_this_machine(host_header: str | None, bound: str) -> bool:
    """Whether a ``Host`` header names the loopback interface (``127.0.0.1``, ``[::1]``,
    ``localhost``, ``*.localhost``, which browsers resolve to loopback themselves) or the
    address the server is bound to. No header at all (HTTP/1.0) passes: browsers always send
    one, and the check is only against pages that DNS-rebind their own name."""
    if host_header is None:
        return True
    name = host_header.strip().lower()
    if name.startswith("["):  # [::1]:8765
        name = name[1 : name.find("]")] if "]" in name else name
    elif name.count(":") == 1:  # host:port (more colons: a bare IPv6 address)
        name = name.partition(":")[0]
    name = name.rstrip(".")
    return is_loopback(name) or name.endswith(".localhost") or name == bound.strip("[]").lower()


def _head_may_take_a_slot(head: bytes, token: str | None) -> bool:
    """False for a summary request without the token: it is answered 401 by the intake, so
    with ``--token`` only authenticated requests ever hold a worker slot. Anything else (health,
    unknown paths, heads http.server will reject) is answered by a worker without reading a
    body, which holds a slot for no longer than writing a short reply."""
    if token is None:
        return True
    request_line, _, rest = head.partition(b"\n")
    parts = request_line.split()
    if len(parts) < 2 or parts[0] != b"POST" or parts[1].decode("latin-1") not in SUMMARIZE_PATHS:
        return True
    try:
        headers = http.client.parse_headers(io.BytesIO(rest))
    except (http.client.HTTPException, ValueError):
        return True  # malformed: the worker's parser answers it with 400 or 431
    return _token_matches(headers.get("Authorization", ""), token)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # The accept queue: http.server's 5 reset 15-33 of 50 simultaneous clients.
    request_queue_size = 128

    def __init__(
        self, config: ServerConfig, client: ModelClient, redactor: Redactor | None
    ) -> None:
        self.config = config
        self.client = client
        self.redactor = redactor
        self._slots = threading.BoundedSemaphore(config.max_connections)
        if ":" in config.host:  # an IPv6 literal such as ::1 needs an IPv6 socket
            self.address_family = socket.AF_INET6
        super().__init__((config.host, config.port), _Handler)  # type: ignore[arg-type]
        self._intake = Intake(
            self._start_worker,
            header_timeout=config.header_timeout,
            max_pending=config.max_pending,
            max_head_bytes=_MAX_HEAD_BYTES,
        )

    def process_request(self, request: Any, client_address: Any) -> None:
        # No thread yet: the intake reads the head, then a worker serves the request.
        self._intake.add(request, client_address)

    def _start_worker(self, sock: socket.socket, address: Any, head: bytes) -> None:
        if not _head_may_take_a_slot(head, self.config.token):
            send_and_close(sock, json_reply(HTTPStatus.UNAUTHORIZED, _NO_TOKEN))
            return
        if not self._slots.acquire(blocking=False):
            send_and_close(sock, json_reply(HTTPStatus.SERVICE_UNAVAILABLE, "too many connections"))
            return
        try:
            threading.Thread(target=self._work, args=(sock, address, head), daemon=True).start()
        except BaseException:
            self._slots.release()
            send_and_close(sock, json_reply(HTTPStatus.SERVICE_UNAVAILABLE, "too many connections"))

    def _work(self, sock: socket.socket, address: Any, head: bytes) -> None:
        handler: _Handler | None = None
        try:
            handler = _Handler(sock, address, self, head)
        except Exception:
            self.handle_error(sock, address)
        finally:
            self._slots.release()
        if handler is not None and handler.keep_alive:
            self._intake.add(sock, address, handler.rfile.leftover(), kept_alive=True)
        else:
            self.shutdown_request(sock)

    def server_close(self) -> None:
        super().server_close()
        self._intake.close()

    def redact(self, text: str) -> str:
        """``text`` with secrets blanked out (as it is without a redactor)."""
        return text if self.redactor is None else self.redactor.redact(text)

    def summarize(self, system_prompt: str, prompt: str) -> str:
        """The model's summary of ``prompt``; both prompts are redacted before it sees them,
        and the summary before it is returned."""
        request = CompletionRequest(
            system_prompt=self.redact(system_prompt),
            messages=[{"role": "user", "content": [{"type": "text", "text": self.redact(prompt)}]}],
            max_tokens=self.config.max_tokens,
        )

        async def run() -> str:
            completion = await asyncio.wait_for(
                self.client.complete(request), self.config.model_timeout
            )
            if completion.stop_reason == "error":
                raise ModelError(self.client.name, completion.error_message or "model error")
            return completion.text

        return self.redact(asyncio.run(run()))


class SummaryServer:
    """The summarization endpoint; ``start()`` in a thread or ``serve_forever()``.

    ``redactor`` blanks secrets out of the prompts before the model sees them and out of the
    summary (and a model's error text) before it is answered: the built-in patterns unless
    given; ``None`` redacts nothing (``redaction.enabled = false``)."""

    def __init__(
        self,
        client: ModelClient,
        config: ServerConfig | None = None,
        *,
        redactor: Redactor | None = DEFAULT_REDACTOR,
    ) -> None:
        self.config = config or ServerConfig()
        if not is_loopback(self.config.host) and not self.config.token:
            raise ContextreeError(
                f"serve: listening on {self.config.host} exposes the endpoint to the network; "
                "pass --token (or bind 127.0.0.1)"
            )
        self._server = _Server(self.config, client, redactor)
        self._thread: threading.Thread | None = None
        self._serving = False

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{name}]" if ":" in name else name
        return f"http://{shown}:{port}/summarize"

    def serve_forever(self) -> None:
        self._serving = True
        self._server.serve_forever()

    def start(self) -> str:
        """Serve in a background thread; returns the endpoint URL."""
        self._serving = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self.url

    def close(self) -> None:
        # shutdown() waits for a serve_forever() loop to stop: with none it would wait forever.
        if self._serving:
            self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()
