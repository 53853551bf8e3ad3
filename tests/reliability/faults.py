"""Model faults: every client, every failure, through ``compact_session`` and the CLI.

For each client (OpenAI-compatible and Anthropic, each plain and streaming, and the remote
summarization endpoint) and each fault the fake server can play (timeout, connection refused,
429 with and without ``retry-after``, 500, 503 with a text body, an HTML 502, malformed JSON,
a 200 of the wrong shape, an empty completion, a context overflow, an error event or a cut in
the middle of a stream, and cancellation of the waiting task mid-request), a compaction runs
on a session file. Afterwards:

- a fault leaves the file byte-identical, and raises one :class:`ContextreeError` whose message
  is one non-empty line without the API key (cancellation raises ``CancelledError``);
- success adds exactly one line: a valid compaction entry that ``contextree check`` accepts;
- the API key is in no request body, log record, error message or session line - only in the
  ``authorization`` / ``x-api-key`` header.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contextree.compaction.run import CompactionOutcome, compact_session
from contextree.errors import ContextreeError
from contextree.llm.anthropic import AnthropicClient
from contextree.llm.base import ModelClient
from contextree.llm.openai_compat import OpenAIClient
from contextree.llm.remote import RemoteSummaryClient
from contextree.session.check import check_session
from contextree.session.tree import SessionTree
from contextree.settings.schema import CompactionSettings
from fakes.fake_llm import FakeLLMServer
from reliability.common import FAKE_KEY, assistant_call, tool_result, user

CLIENTS = ("openai", "openai-stream", "anthropic", "anthropic-stream", "remote")
FAULTS = (
    "ok",
    "timeout",
    "refused",
    "429-retry-after",
    "429",
    "500",
    "503-text",
    "502-html",
    "malformed",
    "wrong-shape",
    "empty",
    "overflow",
    "cancel",
    "stream-error",
    "cut-stream",
)
STREAM_ONLY = ("stream-error", "cut-stream")
SUMMARY = "## Goal\nFix the parser.\n\n## Progress\nRead src/p.py; the tests fail."
TIMEOUT = 0.5
"""Seconds the client waits in the timeout case (the fake server holds its reply longer)."""


@dataclass(frozen=True, slots=True)
class FaultCase:
    client: str
    fault: str

    @property
    def id(self) -> str:
        return f"{self.client}-{self.fault}"


def fault_cases() -> list[FaultCase]:
    """Every (client, fault) pair that makes sense (stream faults only for streaming clients)."""
    return [
        FaultCase(client, fault)
        for client in CLIENTS
        for fault in FAULTS
        if fault not in STREAM_ONLY or client.endswith("-stream")
    ]


@dataclass
class FaultResult:
    case: FaultCase
    outcome: str = ""
    """``ok``, ``error`` or ``cancelled``."""
    error: str | None = None
    message: str | None = None
    problems: list[str] = field(default_factory=list)


def build_session(path: Path) -> SessionTree:
    """A few turns with tool calls and big outputs: enough to compact with a small budget."""
    tree = SessionTree.open(path, cwd="/work")
    for turn in range(4):
        tree.append_message(user(f"Turn {turn}: fix the parser in src/p{turn}.py"))
        tree.append_message(assistant_call(f"c{turn}", f"cat src/p{turn}.py"))
        tree.append_message(tool_result(f"c{turn}", f"def parse_{turn}():\n" + "    x = 1\n" * 300))
    return tree


SETTINGS = CompactionSettings(
    keep_recent_tokens=800, adjust_keep_recent_by_usage=False, fallback_to_offline=False
)
"""The fault matrix checks how a failing model is reported, so the offline fallback is off
(test_model_faults.py checks the fallback separately)."""


def closed_port() -> int:
    """A loopback port nothing listens on (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def make_client(kind: str, url: str, *, timeout: float = 30.0) -> ModelClient:
    """The client ``kind`` names (``openai``, ``anthropic-stream``, ``remote``...) for ``url``."""
    base, _, _ = kind.partition("-")
    stream = kind.endswith("-stream")
    if base == "openai":
        return OpenAIClient(
            "gpt-4o-mini", base_url=url, api_key=FAKE_KEY, timeout=timeout, stream=stream
        )
    if base == "anthropic":
        return AnthropicClient(
            "claude-sonnet-4-5", base_url=url, api_key=FAKE_KEY, timeout=timeout, stream=stream
        )
    return RemoteSummaryClient(f"{url}/summarize", token=FAKE_KEY, timeout=timeout)


def script(server: FakeLLMServer, fault: str) -> None:
    """Queue the fault (and, for success, the summary and the short summary)."""
    if fault == "ok":
        server.enqueue_text(SUMMARY)
        server.enqueue_text("Fixing the parser.")
    elif fault in ("timeout", "cancel"):
        server.enqueue_slow(60)
    elif fault == "429-retry-after":
        server.enqueue_error(429, retry_after=7)
    elif fault == "429":
        server.enqueue_error(429)
    elif fault == "500":
        server.enqueue_error(500)
    elif fault == "503-text":
        server.enqueue_error(503, body="Service Unavailable")
    elif fault == "502-html":
        server.enqueue_raw(502, "<html><body><h1>502 Bad Gateway</h1></body></html>")
    elif fault == "malformed":
        server.enqueue_malformed()
    elif fault == "wrong-shape":
        server.enqueue_raw(200, {"unexpected": [1, 2, 3]})
    elif fault == "empty":
        server.enqueue_text("")
    elif fault == "overflow":
        server.enqueue_overflow()
    elif fault == "stream-error":
        server.enqueue_stream_error("Overloaded")
    elif fault == "cut-stream":
        server.enqueue_cut_stream("partial answ")
    elif fault != "refused":
        raise ValueError(f"unknown fault {fault!r}")


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
        if record.exc_info and record.exc_info[1] is not None:
            self.messages.append(repr(record.exc_info[1]))


@contextlib.contextmanager
def captured_logs() -> Iterator[_Records]:
    """Every log record (any logger, DEBUG and up) while the block runs."""
    handler = _Records()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)


def one_clear_line(message: str) -> list[str]:
    """Why ``message`` is not one clear line for a user (empty list: it is)."""
    problems = []
    if not message.strip():
        problems.append("the message is empty")
    if "\n" in message.strip():
        problems.append(f"the message spans lines: {message!r}")
    if len(message) > 600:
        problems.append(f"the message is {len(message)} characters long")
    if FAKE_KEY in message:
        problems.append("the message holds the API key")
    if "Traceback" in message:
        problems.append("the message holds a traceback")
    return problems


async def _compact(
    tree: SessionTree, client: ModelClient, fault: str, server: FakeLLMServer
) -> Any:
    task = asyncio.ensure_future(compact_session(tree, client, settings=SETTINGS))
    if fault == "cancel":
        arrived = await asyncio.to_thread(server.wait_for_requests, 1, 30.0)
        if not arrived:
            task.cancel()
            raise AssertionError("the request never reached the fake server")
        task.cancel()
    return await task


async def run_fault_case(case: FaultCase, server: FakeLLMServer, workdir: Path) -> FaultResult:
    """Play ``case`` against ``server`` on a fresh session in ``workdir``."""
    result = FaultResult(case)
    problems = result.problems
    path = workdir / f"{case.id}.jsonl"
    path.unlink(missing_ok=True)
    build_session(path)
    before = path.read_bytes()
    server.reset()
    script(server, case.fault)
    timeout = TIMEOUT if case.fault == "timeout" else 30.0
    url = f"http://127.0.0.1:{closed_port()}" if case.fault == "refused" else server.url
    client = make_client(case.client, url, timeout=timeout)
    tree = SessionTree.open(path)
    outcome: Any = None
    with captured_logs() as logs:
        try:
            outcome = await _compact(tree, client, case.fault, server)
            result.outcome = "ok"
        except asyncio.CancelledError:
            result.outcome = "cancelled"
        except ContextreeError as exc:
            result.outcome = "error"
            result.error = type(exc).__name__
            result.message = str(exc)
            problems.extend(one_clear_line(str(exc)))
            body = getattr(exc, "body", None)
            if isinstance(body, str) and FAKE_KEY in body:
                problems.append("the error's body attribute holds the API key")
        except BaseException as exc:  # anything else is a failure of the contract
            result.outcome = "crash"
            result.error = type(exc).__name__
            result.message = repr(exc)
            problems.append(f"raised {exc!r}, not a ContextreeError")
        finally:
            server.release()
    after = path.read_bytes()
    expected = "ok" if case.fault == "ok" else "cancelled" if case.fault == "cancel" else "error"
    if result.outcome != expected:
        problems.append(f"expected {expected}, got {result.outcome}: {result.message}")
    if expected != "ok":
        if after != before:
            problems.append("the session file changed")
    else:
        problems.extend(_check_success(path, before, after, outcome))
    for message in logs.messages:
        if FAKE_KEY in message:
            problems.append(f"a log record holds the API key: {message[:120]!r}")
    if FAKE_KEY in after.decode("utf-8", "replace"):
        problems.append("the session file holds the API key")
    for request in server.requests:
        if FAKE_KEY.encode() in request.raw:
            problems.append("a request body holds the API key")
        header = request.headers.get("authorization", "") + request.headers.get("x-api-key", "")
        if FAKE_KEY not in header:
            problems.append("the API key was not sent in its header")
    return result


def _check_success(path: Path, before: bytes, after: bytes, outcome: Any) -> list[str]:
    problems: list[str] = []
    if not isinstance(outcome, CompactionOutcome):
        return [f"expected a compaction, got {outcome!r}"]
    if not after.startswith(before):
        problems.append("success rewrote existing lines")
    new_lines = after[len(before) :].splitlines()
    if len(new_lines) != 1:
        return [*problems, f"success added {len(new_lines)} lines, not one"]
    entry = json.loads(new_lines[0])
    if entry.get("type") != "compaction" or not str(entry.get("summary", "")).strip():
        problems.append(f"the new line is not a compaction with a summary: {entry}")
    report = check_session(SessionTree.open(path))
    if report.errors:
        problems.append(f"check finds damage after the compaction: {report.errors}")
    return problems


def cli_args(
    case: FaultCase, server: FakeLLMServer, path: Path, *, fallback: bool = False
) -> tuple[list[str], dict[str, str]]:
    """``contextree compact`` arguments and environment for ``case`` (keys from the env);
    ``--no-fallback`` unless ``fallback``."""
    url = f"http://127.0.0.1:{closed_port()}" if case.fault == "refused" else server.url
    base, _, _ = case.client.partition("-")
    args = ["compact", str(path), "--keep-recent", "800", "--no-usage-adjust", "--quiet"]
    if not fallback:
        args.append("--no-fallback")
    env = {"OPENAI_API_KEY": FAKE_KEY, "ANTHROPIC_API_KEY": FAKE_KEY, "NO_COLOR": "1"}
    if base == "openai":
        args += ["--model", "openai:gpt-4o-mini", "--base-url", url]
    elif base == "anthropic":
        args += ["--model", "anthropic:claude-sonnet-4-5", "--base-url", url]
    else:
        args += ["--model", f"remote:{url}/summarize"]
    return args, env
