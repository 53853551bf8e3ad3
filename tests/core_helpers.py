"""Builders shared by the core tests: messages, entries, session files and deterministic trees.

Entries are plain dicts with pi's keys, so the builders here only save typing; every test still
states the shape it depends on. Ids and timestamps are deterministic (a counter), which keeps
hypothesis examples reproducible.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from contextree.entries.ids import ms_to_iso
from contextree.session import SessionTree
from contextree.store.memory import MemoryStore

# The fixtures live next to the repository (``<repo>/../shared/pi-fixtures``); CI has the same
# layout. They are read in place and never copied into the repository.
FIXTURES = Path(__file__).resolve().parents[1] / ".." / "shared" / "pi-fixtures"
LARGE_SESSION = FIXTURES / "large-session.jsonl"
BEFORE_COMPACTION = FIXTURES / "before-compaction.jsonl"

BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z

Json = dict[str, Any]


# --- messages ----------------------------------------------------------------------------------


def chars(tokens: int, fill: str = "x") -> str:
    """A text that pi's estimator counts as exactly ``tokens`` tokens (4 chars per token)."""
    return fill * (4 * tokens)


def user(text: str = "hi", *, ts: int = 0) -> Json:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ts}


def tool_call(call_id: str, name: str = "bash", arguments: Json | None = None) -> Json:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments or {}}


def assistant(
    text: str = "ok",
    *,
    calls: Iterable[Json] = (),
    usage: Json | None = None,
    provider: str = "anthropic",
    model: str = "claude-sonnet-4-5",
    stop: str | None = None,
) -> Json:
    content: list[Json] = [{"type": "text", "text": text}] if text else []
    content.extend(calls)
    calls_made = any(block.get("type") == "toolCall" for block in content)
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": provider,
        "model": model,
        "usage": usage or {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "stopReason": stop or ("toolUse" if calls_made else "stop"),
        "timestamp": 0,
    }


def tool_result(call_id: str, text: str = "out", *, name: str = "bash", **extra: Any) -> Json:
    message: Json = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": False,
        "timestamp": 0,
    }
    message.update(extra)
    return message


def bash_execution(command: str = "ls", output: str = "a") -> Json:
    return {
        "role": "bashExecution",
        "command": command,
        "output": output,
        "exitCode": 0,
        "cancelled": False,
        "truncated": False,
        "timestamp": 0,
    }


# --- entries -----------------------------------------------------------------------------------


def iso(n: int) -> str:
    """The n-th deterministic timestamp (one second apart)."""
    return ms_to_iso(BASE_MS + 1000 * n)


def header(*, version: int | None = 3, session_id: str = "sess-1", **extra: Any) -> Json:
    line: Json = {"type": "session"}
    if version is not None:
        line["version"] = version
    line.update(id=session_id, timestamp=iso(0), cwd="/work")
    line.update(extra)
    return line


class Chain:
    """Builds a list of v3 entries; each one is a child of the current leaf (like appends)."""

    def __init__(self, prefix: str = "e") -> None:
        self.entries: list[Json] = []
        self.leaf: str | None = None
        self._prefix = prefix
        self._count = itertools.count(1)

    def add(self, kind: str, *, parent: str | object | None = ..., **fields: Any) -> Json:
        n = next(self._count)
        entry: Json = {
            "type": kind,
            "id": f"{self._prefix}{n:03d}",
            "parentId": self.leaf if parent is ... else parent,
            "timestamp": iso(n),
        }
        entry.update(fields)
        self.entries.append(entry)
        self.leaf = entry["id"]
        return entry

    def msg(self, message: Json, **kw: Any) -> Json:
        return self.add("message", message=message, **kw)

    def ids(self) -> list[str]:
        return [entry["id"] for entry in self.entries]


def user_entry(entry_id: str, parent: str | None, text: str) -> Json:
    """A v3 message entry holding a user message, with the ids given (for damaged trees)."""
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": user(text),
    }


def jsonl(*objects: Json) -> bytes:
    """Lines as pi writes them (``JSON.stringify`` has no spaces), with a trailing newline."""
    return b"".join(
        json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        for obj in objects
    )


def read_json_lines(path: Path) -> list[Json]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


# --- deterministic trees -----------------------------------------------------------------------


def counter_ids(prefix: str = "") -> Callable[[Callable[[str], bool]], str]:
    """An id factory for ``SessionTree(new_id=...)``: 8 hex characters counting up."""
    numbers = itertools.count(1)

    def new_id(exists: Callable[[str], bool]) -> str:
        while True:
            candidate = f"{prefix}{next(numbers):08x}"[-8:]
            if not exists(candidate):
                return candidate

    return new_id


def counter_clock(start: int = 1) -> Callable[[], str]:
    numbers = itertools.count(start)
    return lambda: iso(next(numbers))


def det_tree(data: bytes = b"") -> SessionTree:
    """An in-memory tree with counter ids and timestamps."""
    return SessionTree(
        MemoryStore(data),
        cwd="/work",
        now=counter_clock(),
        new_id=counter_ids(),
        session_id="sess-det",
    )


def roles(messages: Iterable[Json]) -> list[str]:
    return [m.get("role", "?") for m in messages]


def walk(nodes: Iterable[Any]) -> Iterator[Any]:
    """Every node of a ``get_tree()`` result, depth first."""
    stack = list(reversed(list(nodes)))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


# --- the multiprocess writer (importable by spawned processes) --------------------------------


def append_many(path: str, worker: int, count: int) -> None:
    """Open the session at ``path`` and append ``count`` user messages, one transaction each."""
    tree = SessionTree.open(path, cwd="/work")
    for i in range(count):
        tree.append_message(user(f"w{worker}-{i}"))
