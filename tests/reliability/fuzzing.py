"""Bad input: damaged sessions and requests, and the properties every consumer must keep.

``damaged_sessions()`` starts from a small session holding every entry type and role, then
applies a few random mutations: a wrong type in any field, a removed field, a parent cycle, a
duplicate id, dangling references (parent, ``firstKeptEntryId``, label target, ``fromId``),
unknown entry types, roles and content blocks, invalid UTF-8, deep nesting, junk lines, blank
and CRLF lines, a different format version, and a truncated file.

The ``check_*`` functions are the oracles, shared by the hypothesis tests and the bench: they
raise ``AssertionError`` (or let an unexpected exception through) when a consumer loses the
plot. Allowed outcomes are a :class:`ContextreeError` with a one-line message, a bad line
reported and skipped, or success; never another exception, never a changed file for a
read-only command. :data:`CASES` counts the cases each oracle saw.
"""

from __future__ import annotations

import copy
import json
import socket
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from contextree.entries.codec import LineError, decode_object, encode_line
from contextree.errors import ContextreeError
from contextree.store.index import BadLine, LoadReport
from contextree.store.lines import parse_entry_lines

CASES: Counter[str] = Counter()
"""How many cases each oracle checked (for the reliability report)."""

Json = dict[str, Any]

_TS = "2026-01-01T00:00:{:02d}.000Z"


def _user(text: str) -> Json:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def _assistant(*blocks: Json, stop: str = "stop") -> Json:
    return {
        "role": "assistant",
        "content": list(blocks),
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {"input": 120, "output": 30, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 150},
        "stopReason": stop,
        "timestamp": 2,
    }


def base_session() -> list[Json]:
    """A small v3 session with every entry type and message role contextree knows."""
    lines: list[Json] = [
        {"type": "session", "version": 3, "id": "sess-fuzz", "timestamp": _TS.format(0)},
    ]
    lines[0]["cwd"] = "/work"
    entries: list[tuple[str, Json]] = [
        ("model_change", {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}),
        ("thinking_level_change", {"thinkingLevel": "high"}),
        ("message", {"message": _user("Fix the parser in src/p.py " + "please " * 60)}),
        (
            "message",
            {
                "message": _assistant(
                    {"type": "thinking", "thinking": "Look first.", "thinkingSignature": "s"},
                    {"type": "text", "text": "Reading."},
                    {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "p"}},
                    stop="toolUse",
                )
            },
        ),
        (
            "message",
            {
                "message": {
                    "role": "toolResult",
                    "toolCallId": "c1",
                    "toolName": "read",
                    "content": [
                        {"type": "text", "text": "def parse():\n" + "    pass\n" * 300},
                        {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                    ],
                    "isError": False,
                    "timestamp": 3,
                }
            },
        ),
        (
            "message",
            {
                "message": {
                    "role": "bashExecution",
                    "command": "pytest -q",
                    "output": "1 failed\n" * 40,
                    "exitCode": 1,
                    "cancelled": False,
                    "truncated": False,
                    "timestamp": 4,
                }
            },
        ),
        ("custom", {"customType": "ext.state", "data": {"n": 1}}),
        (
            "custom_message",
            {"customType": "ext.note", "content": "a note", "display": True, "details": {}},
        ),
        (
            "message",
            {
                "message": {
                    "role": "custom",
                    "customType": "ext.msg",
                    "content": [{"type": "text", "text": "custom role"}],
                    "display": True,
                    "timestamp": 5,
                }
            },
        ),
        ("message", {"message": _assistant({"type": "text", "text": "Fixed it. " * 40})}),
        (
            "compaction",
            {
                "summary": "## Goal\nFix the parser.",
                "firstKeptEntryId": "e0000009",
                "tokensBefore": 5000,
                "details": {"readFiles": ["p"], "modifiedFiles": []},
                "fromHook": False,
                "fromExtension": False,
            },
        ),
        ("label", {"targetId": "e0000003", "label": "start"}),
        ("session_info", {"name": "fuzz session"}),
        ("message", {"message": _user("Now the tests.")}),
        (
            "branch_summary",
            {
                "fromId": "e0000005",
                "summary": "Tried another way.",
                "details": {"readFiles": [], "modifiedFiles": []},
                "fromHook": False,
            },
        ),
        (
            "message",
            {
                "message": {
                    "role": "branchSummary",
                    "summary": "inline branch summary",
                    "fromId": "e0000002",
                    "timestamp": 6,
                }
            },
        ),
        (
            "message",
            {"message": {"role": "compactionSummary", "summary": "inline", "timestamp": 7}},
        ),
        ("message", {"message": _assistant({"type": "text", "text": "All green."})}),
    ]
    parent: str | None = None
    for number, (kind, fields) in enumerate(entries, start=1):
        entry_id = f"e{number:07d}"
        line: Json = {
            "type": kind,
            "id": entry_id,
            "parentId": parent,
            "timestamp": _TS.format(number),
        }
        line.update(fields)
        lines.append(line)
        parent = entry_id
    return lines


BASE = base_session()
ENTRY_IDS = [line["id"] for line in BASE[1:]]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def field_paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path inside a JSON value (dict keys and list indexes), outermost first."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*prefix, key)
            yield from field_paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield (*prefix, index)
            yield from field_paths(inner, (*prefix, index))


def set_path(root: Any, path: tuple[Any, ...], value: Any) -> None:
    target = root
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


def del_path(root: Any, path: tuple[Any, ...]) -> None:
    target = root
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]


def encode(lines: Sequence[Json | bytes], *, newline: bytes = b"\n") -> bytes:
    return b"".join(
        (line if isinstance(line, bytes) else json.dumps(line, ensure_ascii=False).encode())
        + newline
        for line in lines
    )


def _nested(depth: int, kind: str) -> bytes:
    if kind == "list":
        return b"[" * depth + b"]" * depth
    return b'{"a":' * depth + b"1" + b"}" * depth


MUTATIONS = (
    "wrong_type",
    "remove_field",
    "cycle",
    "duplicate_id",
    "dangling",
    "unknown",
    "invalid_utf8",
    "deep",
    "junk_line",
    "blank",
    "version",
)


@st.composite
def damaged_sessions(draw: st.DrawFn, *, max_mutations: int = 4, max_depth: int = 10_000) -> bytes:
    """The bytes of a session file with a few random kinds of damage."""
    lines: list[Json | bytes] = copy.deepcopy(BASE)  # type: ignore[arg-type]
    raw_edits: list[tuple[int, bytes]] = []
    for _ in range(draw(st.integers(0, max_mutations))):
        kind = draw(st.sampled_from(MUTATIONS))
        index = draw(st.integers(1, len(lines) - 1))
        line = lines[index]
        if kind == "version":
            header = lines[0]
            assert isinstance(header, dict)
            header["version"] = draw(st.sampled_from([1, 2, 3, None, "3", 0, -1, 2**40, 4]))
            continue
        if kind == "junk_line":
            junk = draw(st.binary(max_size=40).filter(lambda b: b"\n" not in b))
            lines.insert(index, junk)
            continue
        if kind == "blank":
            lines.insert(index, draw(st.sampled_from([b"", b"  ", b"\r", b"\t \t"])))
            continue
        if not isinstance(line, dict):
            continue
        if kind in ("wrong_type", "remove_field"):
            paths = list(field_paths(line))
            path = draw(st.sampled_from(paths))
            if kind == "wrong_type":
                set_path(line, path, draw(json_values))
            else:
                del_path(line, path)
        elif kind == "cycle":
            other = draw(st.sampled_from(ENTRY_IDS))
            line["parentId"] = other if draw(st.booleans()) else line.get("id")
        elif kind == "duplicate_id":
            line["id"] = draw(st.sampled_from(ENTRY_IDS))
        elif kind == "dangling":
            key = draw(st.sampled_from(["parentId", "firstKeptEntryId", "targetId", "fromId"]))
            line[key] = draw(st.sampled_from(["zzzzzzzz", "", "root", None]))
        elif kind == "unknown":
            where = draw(st.sampled_from(["type", "role", "block"]))
            name = draw(st.sampled_from(["weird", "", "message", "session", "toolCall", "🙂"]))
            message = line.get("message")
            if where == "type":
                line["type"] = name
            elif isinstance(message, dict):
                if where == "role":
                    message["role"] = name
                elif isinstance(message.get("content"), list):
                    message["content"].append({"type": name, "x": 1})
        elif kind == "invalid_utf8":
            encoded = json.dumps(line).encode()
            position = draw(st.integers(0, len(encoded)))
            bad = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80", b"\xf8"]))
            raw_edits.append((index, encoded[:position] + bad + encoded[position:]))
        elif kind == "deep":
            # Around 1000 levels msgspec and Python give up: aim at both sides of it.
            depth = draw(
                st.integers(1, 60)
                | st.integers(900, 1100).filter(lambda d: d <= max_depth)
                | st.sampled_from([d for d in (max_depth, 10_000) if d <= max_depth])
            )
            shape = draw(st.sampled_from(["list", "dict"]))
            encoded = json.dumps({**line, "deep": "@@"}).encode()
            raw_edits.append((index, encoded.replace(b'"@@"', _nested(depth, shape))))
    for index, raw in raw_edits:
        if index < len(lines):
            lines[index] = raw
    newline = draw(st.sampled_from([b"\n", b"\n", b"\n", b"\r\n"]))
    data = encode(lines, newline=newline)
    if draw(st.integers(0, 9)) == 0:
        data = data[: draw(st.integers(0, len(data)))]
    return data


# -- oracles ---------------------------------------------------------------------------------


def check_codec(line: bytes) -> None:
    """The codec decodes any bytes into a value or a :class:`LineError`, nothing else."""
    CASES["codec"] += 1
    try:
        decode_object(line)
    except LineError as exc:
        assert str(exc) and "\n" not in str(exc)
    # The store's envelope decoder turns any line into a record or a bad line with a reason.
    for item in parse_entry_lines(line, first_line=1, needs_id=True, report=LoadReport("f")):
        if isinstance(item, BadLine):
            assert item.reason and "\n" not in item.reason


def check_round_trip(value: Json) -> None:
    """Any JSON object survives encode -> decode unchanged (lossless codec)."""
    CASES["codec"] += 1
    assert decode_object(encode_line(value)) == value


def exercise_library(data: bytes) -> None:
    """Open ``data`` in memory and run every read-only consumer over it."""
    from contextree.branching.collect import collect_entries_for_branch_summary
    from contextree.branching.prepare import prepare_branch_entries
    from contextree.compaction.prepare import prepare_compaction
    from contextree.compaction.prune import decide_prune
    from contextree.compaction.prune_decider import PruneDecider
    from contextree.compaction.serialize import serialize_conversation
    from contextree.context.convert import convert_to_llm
    from contextree.context.provider import ProviderView, provider_messages
    from contextree.session.check import check_session, count_types
    from contextree.session.tree import SessionTree
    from contextree.settings.schema import CompactionSettings, PruneSettings
    from contextree.tokens.usage import estimate_current_tokens

    CASES["library"] += 1
    try:
        tree = SessionTree.in_memory(data)
        tree.get_tree()
        tree.labels()
        count_types(tree)
        check_session(tree)
        ids = [r.id for r in tree.records() if r.id is not None]
        for target in [tree.leaf_id, *ids[:: max(1, len(ids) // 6)]]:
            if target is None or not tree.has_entry(target):
                continue
            context = tree.build_session_context(target)
            messages = convert_to_llm(context.messages)
            serialize_conversation(messages)
            estimate_current_tokens(context.messages)
            path = tree.get_branch(target)
            prepare_compaction(
                path, CompactionSettings(keep_recent_tokens=50, adjust_keep_recent_by_usage=False)
            )
            decide_prune(path, PruneSettings(protect_tokens=10, minimum_savings=0))
            # No protected window: every result's tool name is looked up (a name of another
            # JSON type once raised "unhashable type" there).
            everything = PruneSettings(protect_tokens=0, minimum_savings=0)
            decide_prune(path, everything)
            PruneDecider().decide(path, everything)
            # What a request carries (a stop reason of another JSON type once raised there).
            provider_messages(messages)
            ProviderView().messages(context.messages)
            if tree.leaf_id is not None:
                branch = collect_entries_for_branch_summary(tree, tree.leaf_id, target)
                prepare_branch_entries(branch.entries, 10_000)
    except (ContextreeError, LineError) as exc:
        # A clear error: the session file cannot be used as asked, or an entry that passed the
        # quick index cannot be decoded (the CLI turns it into "run contextree check --repair").
        assert str(exc) and "\n" not in str(exc), repr(exc)


READ_ONLY = (
    ("info",),
    ("tree",),
    ("tree", "--fold", "0"),
    ("context",),
    ("context", "--format", "json"),
    ("context", "--format", "openai"),
    ("context", "--format", "anthropic"),
    ("check",),
    ("compact", "--dry-run"),
    ("prune", "--dry-run"),
    ("prune", "--dry-run", "--protect-tokens", "0", "--minimum-savings", "0"),
)
WRITERS = (
    ("compact", "--keep-recent", "100", "--quiet"),
    ("prune",),
    ("navigate", "e0000003"),
    ("navigate", "e0000005", "--summarize"),
    ("check", "--repair"),
)
COMMANDS = READ_ONLY + WRITERS


@dataclass(frozen=True, slots=True)
class CliOutcome:
    exit_code: int
    stdout: str
    stderr: str


def run_cli(args: Sequence[str], *, env: dict[str, str] | None = None) -> CliOutcome:
    """Run the real ``contextree`` app in-process; an escaping exception fails the oracle."""
    from typer.testing import CliRunner

    from contextree.cli.app import app

    environment = {"COLUMNS": "120", "NO_COLOR": "1", **(env or {})}
    result = CliRunner().invoke(app, list(args), env=environment)
    exception = result.exception
    assert exception is None or isinstance(exception, SystemExit), (
        f"contextree {' '.join(args)} raised {exception!r}"
    )
    return CliOutcome(result.exit_code, result.stdout, result.stderr)


def check_cli(data: bytes, command: Sequence[str], workdir: Path) -> None:
    """Run one command on ``data``; see the module doc for what must hold."""
    from contextree.session.tree import SessionTree
    from contextree.store.index import BadLine, Record
    from contextree.store.lines import parse_session

    CASES["cli"] += 1
    workdir.mkdir(parents=True, exist_ok=True)
    for old in workdir.iterdir():
        old.unlink()
    path = workdir / "s.jsonl"
    path.write_bytes(data)
    args = [command[0], str(path), *command[1:]]
    outcome = run_cli(args)
    assert outcome.exit_code in (0, 1, 2), (args, outcome)
    text = outcome.stdout + outcome.stderr
    assert "Traceback" not in text, text
    errors = [line for line in outcome.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) <= 1, outcome.stderr
    if outcome.exit_code != 0 and not outcome.stdout and command[0] != "check":
        assert len(errors) == 1, f"{args} failed without one clear error: {outcome.stderr!r}"
    after = path.read_bytes()
    repairing = tuple(command) == ("check", "--repair")
    if command in READ_ONLY or (outcome.exit_code != 0 and not repairing):
        assert after == data, f"contextree {' '.join(command)} changed the file"
        return
    if after == data:
        return
    # A write happened: nothing that was in the file may be gone.
    try:
        before = parse_session(data, "before")
    except ContextreeError:
        raise AssertionError(f"{command} rewrote a file that has no session header") from None
    kept = set(after.split(b"\n"))
    if repairing:
        backups = list(workdir.glob("s.jsonl.bak-*"))
        assert len(backups) == 1 and backups[0].read_bytes() == data
        rejected = workdir / "s.jsonl.rejected"
        kept |= set(rejected.read_bytes().split(b"\n")) if rejected.exists() else set()
    for bad in before.report.bad_lines:
        assert bad.raw in kept or bad.raw.rstrip(b"\r") in kept, f"bad line {bad.line} lost"
    reopened = SessionTree.open(path)
    for item in before.items:
        if isinstance(item, BadLine):
            continue
        assert isinstance(item, Record)
        if item.id is not None and before.version >= 2:
            raw = item.raw or b""
            assert reopened.has_entry(item.id) or raw in kept or raw.rstrip(b"\r") in kept, (
                f"entry {item.id} lost by {command}"
            )


# -- the serve endpoint ----------------------------------------------------------------------

SERVE_TOKEN = "serve-token-0123456789"


@dataclass(frozen=True, slots=True)
class RawRequest:
    method: bytes
    path: bytes
    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes

    def encode(self) -> bytes:
        head = self.method + b" " + self.path + b" HTTP/1.1\r\n"
        head += b"".join(name + b": " + value + b"\r\n" for name, value in self.headers)
        return head + b"Connection: close\r\n\r\n" + self.body


_bodies = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries(
        {},
        optional={"prompt": json_values | st.text(max_size=200), "systemPrompt": json_values},
    ).map(lambda v: json.dumps(v).encode()),
    st.integers(1, 3000).map(lambda d: b'{"prompt": ' + _nested(d, "list") + b"}"),
    st.just(json.dumps({"prompt": "[User]: hi\n\n[Assistant]: hello"}).encode()),
)


@st.composite
def raw_requests(draw: st.DrawFn) -> RawRequest:
    """Requests, well formed or not, for the summarization endpoint."""
    method = draw(st.sampled_from([b"POST", b"POST", b"GET", b"PUT", b"DELETE", b"HEAD", b"BREW"]))
    path = draw(
        st.sampled_from(
            [b"/summarize", b"/", b"/v1/summarize", b"/health", b"/nope", b"/summarize?x=1", b"*"]
        )
    )
    body = draw(_bodies)
    headers: list[tuple[bytes, bytes]] = [(b"Host", b"127.0.0.1")]
    length = draw(st.sampled_from(["exact", "exact", "missing", "junk", "negative", "huge"]))
    if length == "exact":
        headers.append((b"Content-Length", str(len(body)).encode()))
    elif length == "junk":
        headers.append((b"Content-Length", b"12abc"))
    elif length == "negative":
        headers.append((b"Content-Length", b"-5"))
    elif length == "huge":
        headers.append((b"Content-Length", b"99999999999"))
    auth = draw(st.sampled_from(["right", "right", "none", "wrong", "basic"]))
    if auth == "right":
        headers.append((b"Authorization", b"Bearer " + SERVE_TOKEN.encode()))
    elif auth == "wrong":
        headers.append((b"Authorization", b"Bearer nope"))
    elif auth == "basic":
        headers.append((b"Authorization", b"Basic dXNlcjpwYXNz"))
    if draw(st.booleans()):
        headers.append((b"Content-Type", draw(st.sampled_from([b"application/json", b"x/y"]))))
    return RawRequest(method, path, tuple(headers), body)


def send_raw(host: str, port: int, request: bytes, timeout: float = 30.0) -> bytes:
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(request)
        chunks: list[bytes] = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def check_serve(host: str, port: int, request: RawRequest) -> None:
    """Every request gets one HTTP response with a JSON body; errors carry ``{"error": str}``."""
    CASES["serve"] += 1
    reply = send_raw(host, port, request.encode())
    head, separator, body = reply.partition(b"\r\n\r\n")
    assert separator, f"no HTTP response to {request!r}: {reply[:200]!r}"
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    status = int(status_line.split(" ")[1])
    headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
    assert headers.get("content-type") == "application/json", (status, headers)
    payload = json.loads(body)
    assert isinstance(payload, dict)
    if status >= 400:
        assert isinstance(payload.get("error"), str) and payload["error"], payload
        assert SERVE_TOKEN not in payload["error"]
    elif request.method == b"POST":
        assert status == 200 and isinstance(payload.get("summary"), str), (status, payload)
        assert (b"Authorization", b"Bearer " + SERVE_TOKEN.encode()) in request.headers


@contextmanager
def fuzz_server(**config: Any) -> Iterator[tuple[str, int, list[str]]]:
    """The real endpoint with the offline summarizer; yields host, port, escaped errors."""
    from contextree.compaction.offline import OfflineSummarizer
    from contextree.serve import ServerConfig, SummaryServer

    settings: dict[str, Any] = {
        "port": 0,
        "token": SERVE_TOKEN,
        "read_timeout": 5.0,
        "max_body_bytes": 4096,
    }
    server = SummaryServer(OfflineSummarizer(), ServerConfig(**(settings | config)))
    escaped: list[str] = []
    inner = server._server

    def handle_error(request: Any, client_address: Any) -> None:  # a traceback would be printed
        import traceback

        escaped.append(traceback.format_exc())

    inner.handle_error = handle_error  # type: ignore[method-assign]
    server.start()
    host, port = inner.server_address[:2]
    try:
        yield str(host), int(port), escaped
    finally:
        server.close()


FuzzTarget = Callable[..., None]
