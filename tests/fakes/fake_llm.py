"""A scripted fake LLM server on 127.0.0.1 for tests (stdlib only, no sleeps).

It speaks three protocols, chosen by the request path:

- ``.../chat/completions``: OpenAI chat completions, JSON or SSE when the body has ``stream``;
- ``.../messages``: Anthropic Messages, JSON or SSE;
- any other path (e.g. ``/summarize``): the remote summarization endpoint
  (``{systemPrompt, prompt}`` -> ``{summary, shortSummary?}``).

Replies are scripted in one queue and rendered in the protocol of the request that takes
them, so the same script drives every client::

    server = FakeLLMServer().start()
    server.enqueue_text("hello", usage={"input": 10, "output": 2})
    client = OpenAIClient("gpt-4o", base_url=server.url, api_key="sk-test")
    ...
    assert server.requests[0].body["model"] == "gpt-4o"
    server.close()

With no reply queued the server answers 500 ``fake server: no scripted reply``.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

__all__ = ["FakeLLMServer", "RecordedRequest"]

Protocol = Literal["openai", "anthropic", "remote"]

DEFAULT_USAGE = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0}

OPENAI_OVERFLOW = (
    "This model's maximum context length is 128000 tokens. However, your messages resulted "
    "in 200000 tokens. Please reduce the length of the messages."
)
ANTHROPIC_OVERFLOW = "prompt is too long: 210000 tokens > 200000 maximum"


@dataclass
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names in lower case."""
    body: Any
    """The parsed JSON body, or ``None`` when it was not JSON."""
    raw: bytes
    protocol: Protocol


@dataclass
class _Reply:
    kind: Literal[
        "text", "error", "overflow", "malformed", "slow", "raw", "stream_error", "cut", "stall"
    ]
    text: str = ""
    thinking: str | None = None
    tool_calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    usage: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_USAGE))
    stop_reason: str | None = None
    short_summary: str | None = None
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    release: threading.Event = field(default_factory=threading.Event)
    then: _Reply | None = None


def _sse(event: str | None, data: Any) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def _halves(text: str) -> list[str]:
    middle = len(text) // 2
    return [part for part in (text[:middle], text[middle:]) if part]


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"  # the connection closes after each reply; SSE ends with it

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_GET(self) -> None:
        self._send(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        fake = self.server.fake
        try:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            path = self.path.split("?", 1)[0].rstrip("/")
            protocol: Protocol = (
                "openai"
                if path.endswith("/chat/completions")
                else "anthropic"
                if path.endswith("/messages")
                else "remote"
            )
            headers = {key.lower(): value for key, value in self.headers.items()}
            request = RecordedRequest("POST", self.path, headers, body, raw, protocol)
            reply = fake._record_and_pop(request)
            self._play(reply, request)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError):
            pass  # the client went away (cancelled or timed out): nothing to answer

    # -- rendering --------------------------------------------------------------------------

    def _send(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        if isinstance(body, bytes):
            data, content_type = body, "application/octet-stream"
        elif isinstance(body, str):
            data, content_type = body.encode(), "text/plain; charset=utf-8"
        elif body is None:
            data, content_type = b"", "text/plain"
        else:
            data, content_type = json.dumps(body).encode(), "application/json"
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()

    def _write(self, chunk: bytes) -> None:
        self.wfile.write(chunk)
        self.wfile.flush()

    def _play(self, reply: _Reply, request: RecordedRequest) -> None:
        streaming = isinstance(request.body, dict) and bool(request.body.get("stream"))
        model = request.body.get("model", "fake-model") if isinstance(request.body, dict) else ""
        if reply.kind == "slow":
            reply.release.wait(reply.seconds)
            self._play(reply.then or _Reply("text", text="slow reply"), request)
        elif reply.kind == "error":
            self._send(reply.status, self._error_body(reply, request.protocol), reply.headers)
        elif reply.kind == "overflow":
            self._overflow(request.protocol)
        elif reply.kind == "malformed":
            self._send(200, b'{"choices": [{"message": ', {"content-type": "application/json"})
        elif reply.kind == "raw":
            self._send(reply.status, reply.body, reply.headers)
        elif request.protocol == "remote":
            answer: dict[str, Any] = {"summary": reply.text}
            if reply.short_summary is not None:
                answer["shortSummary"] = reply.short_summary
            self._send(200, answer)
        elif request.protocol == "openai":
            if streaming:
                self._openai_stream(reply, model, request.body)
            else:
                self._send(200, self._openai_json(reply, model))
        elif streaming:
            self._anthropic_stream(reply, model)
        else:
            self._send(200, self._anthropic_json(reply, model))

    @staticmethod
    def _error_body(reply: _Reply, protocol: Protocol) -> Any:
        if reply.body is not None:
            return reply.body
        message = f"fake error {reply.status}"
        if protocol == "anthropic":
            return {"type": "error", "error": {"type": "api_error", "message": message}}
        return {"error": {"message": message, "type": "server_error", "code": None}}

    def _overflow(self, protocol: Protocol) -> None:
        if protocol == "openai":
            error = {
                "message": OPENAI_OVERFLOW,
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
            self._send(400, {"error": error})
        elif protocol == "anthropic":
            error = {"type": "invalid_request_error", "message": ANTHROPIC_OVERFLOW}
            self._send(400, {"type": "error", "error": error})
        else:
            self._send(413, "Payload Too Large")

    # OpenAI chat completions

    @staticmethod
    def _openai_usage(usage: Mapping[str, int]) -> dict[str, Any]:
        cached = usage.get("cacheRead", 0)
        prompt = usage.get("input", 0) + cached
        return {
            "prompt_tokens": prompt,
            "completion_tokens": usage.get("output", 0),
            "total_tokens": prompt + usage.get("output", 0),
            "prompt_tokens_details": {"cached_tokens": cached},
        }

    @staticmethod
    def _openai_finish(reply: _Reply) -> str:
        if reply.stop_reason == "length":
            return "length"
        if reply.stop_reason is not None and reply.stop_reason != "stop":
            return reply.stop_reason
        return "tool_calls" if reply.tool_calls else "stop"

    def _openai_json(self, reply: _Reply, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.thinking:
            message["reasoning_content"] = reply.thinking
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for call_id, name, args in reply.tool_calls
            ]
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": self._openai_finish(reply)}
            ],
            "usage": self._openai_usage(reply.usage),
        }

    def _openai_stream(self, reply: _Reply, model: str, body: Any) -> None:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            data = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 1_700_000_000,
                "model": model,
                "choices": [choice],
            }
            return _sse(None, data)

        self._start_stream()
        if reply.kind == "stream_error":
            self._write(chunk({"role": "assistant", "content": ""}))
            self._write(_sse(None, {"error": {"message": reply.text, "type": "server_error"}}))
            return
        self._write(chunk({"role": "assistant", "content": ""}))
        if reply.thinking:
            self._write(chunk({"reasoning_content": reply.thinking}))
        for part in _halves(reply.text):
            self._write(chunk({"content": part}))
        if reply.kind in ("cut", "stall"):
            reply.release.wait(reply.seconds)  # "stall" holds the stream open until released
            return  # the connection closes mid-answer
        for index, (call_id, name, args) in enumerate(reply.tool_calls):
            start = {"index": index, "id": call_id, "type": "function"}
            start["function"] = {"name": name, "arguments": ""}
            self._write(chunk({"tool_calls": [start]}))
            for part in _halves(json.dumps(args)):
                delta = {"index": index, "function": {"arguments": part}}
                self._write(chunk({"tool_calls": [delta]}))
        self._write(chunk({}, self._openai_finish(reply)))
        options = body.get("stream_options") if isinstance(body, dict) else None
        if isinstance(options, dict) and options.get("include_usage"):
            usage_chunk = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 1_700_000_000,
                "model": model,
                "choices": [],
                "usage": self._openai_usage(reply.usage),
            }
            self._write(_sse(None, usage_chunk))
        self._write(_sse(None, "[DONE]"))

    # Anthropic messages

    @staticmethod
    def _anthropic_usage(usage: Mapping[str, int]) -> dict[str, int]:
        return {
            "input_tokens": usage.get("input", 0),
            "output_tokens": usage.get("output", 0),
            "cache_read_input_tokens": usage.get("cacheRead", 0),
            "cache_creation_input_tokens": usage.get("cacheWrite", 0),
        }

    @staticmethod
    def _anthropic_stop(reply: _Reply) -> str:
        if reply.stop_reason == "length":
            return "max_tokens"
        if reply.stop_reason is not None and reply.stop_reason != "stop":
            return reply.stop_reason
        return "tool_use" if reply.tool_calls else "end_turn"

    @staticmethod
    def _anthropic_blocks(reply: _Reply) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if reply.thinking:
            blocks.append({"type": "thinking", "thinking": reply.thinking, "signature": "sig-1"})
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for call_id, name, args in reply.tool_calls:
            blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": args})
        return blocks

    def _anthropic_json(self, reply: _Reply, model: str) -> dict[str, Any]:
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": self._anthropic_blocks(reply),
            "stop_reason": self._anthropic_stop(reply),
            "stop_sequence": None,
            "usage": self._anthropic_usage(reply.usage),
        }

    def _anthropic_stream(self, reply: _Reply, model: str) -> None:
        usage = self._anthropic_usage(reply.usage)
        start_usage = {**usage, "output_tokens": 1}
        message: dict[str, Any] = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": start_usage,
        }
        self._start_stream()
        self._write(_sse("message_start", {"type": "message_start", "message": message}))
        if reply.kind == "stream_error":
            error = {"type": "overloaded_error", "message": reply.text}
            self._write(_sse("error", {"type": "error", "error": error}))
            return
        self._write(_sse("ping", {"type": "ping"}))
        for index, block in enumerate(self._anthropic_blocks(reply)):
            kind = block["type"]
            if kind == "text":
                start: dict[str, Any] = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": part} for part in _halves(block["text"])]
            elif kind == "thinking":
                start = {"type": "thinking", "thinking": "", "signature": ""}
                deltas = [
                    {"type": "thinking_delta", "thinking": block["thinking"]},
                    {"type": "signature_delta", "signature": block["signature"]},
                ]
            else:
                start = {**block, "input": {}}
                deltas = [
                    {"type": "input_json_delta", "partial_json": part}
                    for part in _halves(json.dumps(block["input"]))
                ]
            self._write(
                _sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
            )
            for delta in deltas:
                event = {"type": "content_block_delta", "index": index, "delta": delta}
                self._write(_sse("content_block_delta", event))
            if reply.kind in ("cut", "stall"):
                reply.release.wait(reply.seconds)  # "stall" holds the stream open until released
                return  # the connection closes mid-answer
            stop = {"type": "content_block_stop", "index": index}
            self._write(_sse("content_block_stop", stop))
        stop_reason = self._anthropic_stop(reply)
        final = {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        }
        self._write(_sse("message_delta", final))
        self._write(_sse("message_stop", {"type": "message_stop"}))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return  # a client that hung up (cancelled, timed out) is not a failure
        super().handle_error(request, client_address)


class FakeLLMServer:
    """A scripted OpenAI / Anthropic / remote-summary server on ``127.0.0.1:<free port>``."""

    def __init__(self) -> None:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._serve, name="fake-llm", daemon=True)
        self._ready = threading.Event()
        self._lock = threading.Condition()
        self._script: deque[_Reply] = deque()
        self._slow: list[_Reply] = []
        self.requests: list[RecordedRequest] = []
        """Every request received, in order (recorded before the reply is sent)."""

    # -- lifecycle --------------------------------------------------------------------------

    def _serve(self) -> None:
        self._ready.set()
        self._server.serve_forever(poll_interval=0.05)

    def start(self) -> FakeLLMServer:
        """Start serving; returns once the server thread runs."""
        self._thread.start()
        if not self._ready.wait(timeout=10):
            raise RuntimeError("fake LLM server did not start")
        return self

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``: the base URL for OpenAI and Anthropic clients."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def remote_url(self) -> str:
        """The remote summarization endpoint: ``<url>/summarize``."""
        return f"{self.url}/summarize"

    def reset(self) -> None:
        """Forget the script and the recorded requests; release any slow reply in flight."""
        with self._lock:
            self._script.clear()
            self.requests.clear()
            slow, self._slow = self._slow, []
        for reply in slow:
            reply.release.set()

    def close(self) -> None:
        """Release slow replies, stop serving and free the port."""
        self.reset()
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(timeout=10)
        self._server.server_close()

    # -- scripting --------------------------------------------------------------------------

    def _push(self, reply: _Reply) -> None:
        with self._lock:
            self._script.append(reply)

    def enqueue_text(
        self,
        text: str,
        *,
        usage: Mapping[str, int] | None = None,
        thinking: str | None = None,
        stop_reason: str | None = None,
        short_summary: str | None = None,
    ) -> None:
        """Answer with text. ``usage`` is pi-shaped (``input`` = non-cached, ``output``,
        ``cacheRead``, ``cacheWrite``) and rendered in the provider's fields. ``stop_reason``
        ``"length"`` renders as ``length`` / ``max_tokens``; other values are sent verbatim.
        ``short_summary`` goes to the remote endpoint's ``shortSummary``."""
        self._push(
            _Reply(
                "text",
                text=text,
                thinking=thinking,
                usage={**DEFAULT_USAGE, **(usage or {})},
                stop_reason=stop_reason,
                short_summary=short_summary,
            )
        )

    def enqueue_tool_call(
        self,
        name: str,
        args: dict[str, Any],
        *,
        call_id: str = "call_1",
        text: str = "",
        usage: Mapping[str, int] | None = None,
    ) -> None:
        """Answer with one tool call (and optional text before it)."""
        self._push(
            _Reply(
                "text",
                text=text,
                tool_calls=[(call_id, name, args)],
                usage={**DEFAULT_USAGE, **(usage or {})},
            )
        )

    def enqueue_error(
        self,
        status: int,
        body: Any = None,
        retry_after: float | str | None = None,
        *,
        retry_after_ms: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Answer with an HTTP error. ``body`` (dict -> JSON, str -> text) defaults to the
        protocol's error shape with message ``"fake error <status>"``."""
        all_headers = dict(headers or {})
        if retry_after is not None:
            all_headers["retry-after"] = str(retry_after)
        if retry_after_ms is not None:
            all_headers["retry-after-ms"] = str(retry_after_ms)
        self._push(_Reply("error", status=status, body=body, headers=all_headers))

    def enqueue_overflow(self) -> None:
        """Answer with the protocol's context-overflow error (OpenAI and Anthropic: 400 with
        their real wording; remote: 413 Payload Too Large)."""
        self._push(_Reply("overflow"))

    def enqueue_malformed(self) -> None:
        """Answer 200 with a truncated JSON body."""
        self._push(_Reply("malformed"))

    def enqueue_raw(
        self, status: int, body: Any, *, headers: Mapping[str, str] | None = None
    ) -> None:
        """Answer exactly this: dict -> JSON, str -> text, bytes as they are."""
        self._push(_Reply("raw", status=status, body=body, headers=dict(headers or {})))

    def enqueue_stream_error(self, message: str = "Overloaded") -> None:
        """For a streaming request: start the stream, then send an error event."""
        self._push(_Reply("stream_error", text=message))

    def enqueue_cut_stream(self, text: str = "partial answer") -> None:
        """For a streaming request: send part of the answer, then close the connection."""
        self._push(_Reply("cut", text=text))

    def enqueue_stalled_stream(self, seconds: float, *, text: str = "partial answer") -> None:
        """For a streaming request: send part of the answer, then hold the stream open until
        :meth:`release` (or ``seconds`` pass) and close it."""
        reply = _Reply("stall", text=text, seconds=seconds)
        with self._lock:
            self._slow.append(reply)
            self._script.append(reply)

    def enqueue_slow(self, seconds: float, *, then_text: str = "slow reply") -> None:
        """Hold the reply until :meth:`release` (or ``seconds`` pass), then answer with text."""
        reply = _Reply("slow", seconds=seconds, then=_Reply("text", text=then_text))
        with self._lock:
            self._slow.append(reply)
            self._script.append(reply)

    def release(self) -> None:
        """Let every held slow reply go."""
        with self._lock:
            slow, self._slow = self._slow, []
        for reply in slow:
            reply.release.set()

    # -- observing --------------------------------------------------------------------------

    def _record_and_pop(self, request: RecordedRequest) -> _Reply:
        with self._lock:
            self.requests.append(request)
            self._lock.notify_all()
            if self._script:
                return self._script.popleft()
        error = {"error": {"message": "fake server: no scripted reply", "type": "server_error"}}
        return _Reply("raw", status=500, body=error)

    def wait_for_requests(self, count: int = 1, timeout: float = 10.0) -> bool:
        """Block until ``count`` requests arrived (``False`` on timeout); for cancellation tests."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self.requests) >= count, timeout=timeout)

    @property
    def last(self) -> RecordedRequest:
        """The most recent request."""
        with self._lock:
            return self.requests[-1]
