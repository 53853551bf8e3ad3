"""Deterministic synthetic sessions for the benchmarks.

A session is a long coding-agent conversation: turns of a user message, assistant messages with
tool calls, their tool results of very different sizes, and a final answer. Along the way there
are abandoned side branches (some closed with a ``branch_summary``), a few compactions, model and
thinking-level changes and the odd ``!command`` (``bashExecution``). The mix is tuned so that an
entry averages about 1.4 KB on disk, like real pi sessions with file reads.

Everything comes from one ``random.Random(seed)``: the same seed and size give the same bytes.
Text is sliced from a corpus built once per session, so generating 100k entries takes seconds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

__all__ = ["GeneratedSession", "generate_session"]

_START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
_WORD_TEXT = (
    "the a to of and in is it for on that with this we be as are not at or if by from "
    "function return value error file test session entry branch leaf parent compaction "
    "summary token context message tool result call read write edit bash output line "
    "config module import class method string number list dict index path tree store "
    "cache lock append rewrite header version migrate parse decode encode json schema "
    "user assistant model provider usage cost thinking level change cut point turn keep "
    "prune estimate window budget retry timeout request response handler client server"
)
_WORDS = tuple(_WORD_TEXT.split())
_CODE_LINES = (
    'def {name}(self, {arg}: str) -> dict[str, object]:\n    return {{"{arg}": {arg}, "ok": True}}',
    'if not isinstance({arg}, dict):\n    raise ValueError(f"bad {arg}: {{{arg}!r}}")',
    "for index, {arg} in enumerate(items):\n    total += len({arg}) * {num}",
    'const {name} = await client.get("/api/{arg}/{num}", {{ timeout: {num} }});',
    '    assert response.status_code == {num}, response.text  # "{arg}"',
    "  File \"/srv/app/{arg}.py\", line {num}, in {name}\n    {arg} = load('{arg}')",
    "-  {num}     return {arg}\n+  {num}     return {name}({arg})",
    "{name}: {num} passed, 0 failed in 0.{num}s\t[\u2713]",
)
_TOOLS = ("read", "bash", "edit", "write", "grep")


@dataclass(slots=True)
class GeneratedSession:
    """What was written: sizes and the shape of the tree."""

    path: Path
    entries: int
    bytes: int
    leaf_path_length: int
    leaves: int
    compactions: int
    branch_summaries: int
    counts: dict[str, int] = field(default_factory=dict)


class _Writer:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines: list[bytes] = []
        self.ids: set[str] = set()
        self.parent: dict[str, str | None] = {}
        self.kind: dict[str, str] = {}
        self.leaf: str | None = None
        self.clock = _START_MS
        self.calls = 0
        self.counts: dict[str, int] = {}
        self.encoder = msgspec.json.Encoder()
        self.corpus = _corpus(rng)

    # -- helpers ---------------------------------------------------------------------------------

    def new_id(self) -> str:
        while True:
            candidate = f"{self.rng.getrandbits(32):08x}"
            if candidate not in self.ids:
                self.ids.add(candidate)
                return candidate

    def text(self, size: int) -> str:
        start = self.rng.randrange(0, len(self.corpus) - size - 1)
        return self.corpus[start : start + size]

    def stamp(self) -> str:
        self.clock += self.rng.randint(200, 6000)
        dt = datetime.fromtimestamp(self.clock / 1000, tz=UTC)
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.clock % 1000:03d}Z"

    def append(self, kind: str, fields: dict[str, Any], label: str | None = None) -> str:
        entry_id = self.new_id()
        entry: dict[str, Any] = {
            "type": kind,
            "id": entry_id,
            "parentId": self.leaf,
            "timestamp": self.stamp(),
        }
        entry.update(fields)
        self.lines.append(self.encoder.encode(entry))
        self.parent[entry_id] = self.leaf
        self.kind[entry_id] = label or kind
        self.leaf = entry_id
        key = label or kind
        self.counts[key] = self.counts.get(key, 0) + 1
        return entry_id

    def message(self, message: dict[str, Any], label: str) -> str:
        message["timestamp"] = self.clock
        return self.append("message", {"message": message}, label)

    def path_ids(self, leaf: str | None) -> list[str]:
        out = []
        while leaf is not None:
            out.append(leaf)
            leaf = self.parent[leaf]
        out.reverse()
        return out

    # -- message kinds ---------------------------------------------------------------------------

    def result_size(self) -> int:
        roll = self.rng.random()
        if roll < 0.60:
            return self.rng.randint(60, 600)
        if roll < 0.88:
            return self.rng.randint(600, 2000)
        if roll < 0.985:
            return self.rng.randint(2000, 6000)
        return self.rng.randint(8000, 24000)

    def user(self) -> str:
        text = self.text(self.rng.randint(80, 700))
        return self.message({"role": "user", "content": [{"type": "text", "text": text}]}, "user")

    def assistant(self, *, tools: int, context: int) -> tuple[str, list[tuple[str, str]]]:
        rng = self.rng
        content: list[dict[str, Any]] = []
        if rng.random() < 0.5:
            content.append({"type": "thinking", "thinking": self.text(rng.randint(80, 700))})
        if tools == 0 or rng.random() < 0.5:
            size = rng.randint(300, 1600) if tools == 0 else rng.randint(20, 200)
            content.append({"type": "text", "text": self.text(size)})
        calls: list[tuple[str, str]] = []
        for _ in range(tools):
            self.calls += 1
            call_id = f"toolu_{self.calls:020d}"
            name = rng.choice(_TOOLS)
            path = f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}_{rng.randint(1, 99)}.py"
            arguments: dict[str, Any]
            if name == "read":
                arguments = {"path": path}
            elif name == "bash":
                arguments = {"command": f"pytest -q tests/test_{rng.choice(_WORDS)}.py -x"}
            elif name == "grep":
                arguments = {"pattern": rng.choice(_WORDS), "path": "src"}
            elif name == "edit":
                arguments = {
                    "path": path,
                    "oldText": self.text(rng.randint(40, 300)),
                    "newText": self.text(rng.randint(40, 400)),
                }
            else:
                arguments = {"path": path, "content": self.text(rng.randint(200, 1500))}
            content.append(
                {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}
            )
            calls.append((call_id, name))
        output = rng.randint(20, 1500)
        cache_read = max(0, context - rng.randint(200, 3000))
        usage = {
            "input": rng.randint(1, 12),
            "output": output,
            "cacheRead": cache_read,
            "cacheWrite": context - cache_read,
            "totalTokens": context + output,
            "cost": {
                "input": 0.000015,
                "output": round(output * 15e-6, 8),
                "cacheRead": round(cache_read * 3e-7, 8),
                "cacheWrite": round((context - cache_read) * 3.75e-6, 8),
                "total": round(output * 15e-6 + cache_read * 3e-7, 8),
            },
        }
        message = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": usage,
            "stopReason": "toolUse" if calls else "stop",
        }
        return self.message(message, "assistant"), calls

    def tool_result(self, call_id: str, name: str) -> str:
        text = self.text(self.result_size())
        is_error = self.rng.random() < 0.06
        if is_error:
            text += "\n\nCommand exited with code 1"
        message = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
            "isError": is_error,
        }
        return self.message(message, "toolResult")

    def turn(self, context: int) -> int:
        """One user request and the agent's work on it; returns the new context estimate."""
        rng = self.rng
        if rng.random() < 0.03:
            output = self.text(rng.randint(100, 2000))
            self.message(
                {
                    "role": "bashExecution",
                    "command": "git status --short && git log --oneline -5",
                    "output": output,
                    "exitCode": 0,
                    "cancelled": False,
                    "truncated": False,
                },
                "bashExecution",
            )
        self.user()
        context += 150
        for _ in range(rng.choice((1, 2, 2, 3, 3, 4, 5, 6))):
            _, calls = self.assistant(tools=rng.choice((1, 1, 1, 2, 2, 3)), context=context)
            context += 300
            for call_id, name in calls:
                self.tool_result(call_id, name)
                context += 500
        self.assistant(tools=0, context=context)
        return context + 300

    def compaction(self, context: int) -> None:
        """Compact the current path, keeping roughly its last 120 entries."""
        path = self.path_ids(self.leaf)
        candidates = [i for i in path[-160:-40] if self.kind[i] == "user"]
        first_kept = candidates[0] if candidates else path[-1]
        summary = "## Goal\n" + self.text(self.rng.randint(1500, 4000)) + "\n\n## Progress\n"
        self.append(
            "compaction",
            {
                "summary": summary + self.text(self.rng.randint(500, 1500)),
                "firstKeptEntryId": first_kept,
                "tokensBefore": context,
                "details": {
                    "readFiles": [f"src/{w}.py" for w in self.rng.sample(_WORDS, 12)],
                    "modifiedFiles": [f"src/{w}.py" for w in self.rng.sample(_WORDS, 5)],
                },
                "fromHook": False,
            },
        )

    def side_branch(self, context: int) -> bool:
        """Go back a few turns, try something else, come back. True if a summary was written."""
        path = self.path_ids(self.leaf)
        users = [i for i in path[-120:] if self.kind[i] == "user"]
        if len(users) < 2:
            return False
        target = self.parent[self.rng.choice(users[:-1])]
        if target is None:
            return False
        main_leaf = self.leaf
        self.leaf = target
        for _ in range(self.rng.randint(1, 3)):
            self.turn(context)
        self.leaf = main_leaf
        if self.rng.random() < 0.5:
            self.append(
                "branch_summary",
                {
                    "fromId": main_leaf,
                    "summary": self.text(self.rng.randint(400, 1500)),
                    "fromHook": False,
                },
            )
            return True
        return False


def _corpus(rng: random.Random, size: int = 1_500_000) -> str:
    parts: list[str] = []
    total = 0
    while total < size:
        if rng.random() < 0.4:
            line = rng.choice(_CODE_LINES).format(
                name=f"{rng.choice(_WORDS)}_{rng.choice(_WORDS)}",
                arg=rng.choice(_WORDS),
                num=rng.randint(1, 999),
            )
        else:
            line = " ".join(rng.choices(_WORDS, k=rng.randint(6, 18))).capitalize() + "."
        parts.append(line)
        total += len(line) + 1
    return "\n".join(parts)


def generate_session(path: Path, entries: int, *, seed: int = 1) -> GeneratedSession:
    """Write a session of about ``entries`` entries to ``path`` and describe it."""
    rng = random.Random(f"{seed}:{entries}")
    writer = _Writer(rng)
    session_id = f"{rng.getrandbits(128):032x}"
    header = {
        "type": "session",
        "version": 3,
        "id": f"{session_id[:8]}-{session_id[8:12]}-{session_id[12:16]}-{session_id[16:20]}-"
        f"{session_id[20:]}",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/home/bench/project",
    }
    writer.append("model_change", {"provider": "anthropic", "modelId": "claude-sonnet-4-5"})
    writer.append("thinking_level_change", {"thinkingLevel": "medium"})
    compactions_wanted = max(1, entries // 30_000 + 1)
    compact_at = [
        int(entries * (i + 1) / (compactions_wanted + 0.2)) for i in range(compactions_wanted)
    ]
    context = 5000
    branch_summaries = 0
    while len(writer.lines) < entries:
        if compact_at and len(writer.lines) >= compact_at[0]:
            compact_at.pop(0)
            writer.compaction(context)
            context = 12_000
        roll = rng.random()
        if roll < 0.004:
            writer.append("thinking_level_change", {"thinkingLevel": rng.choice(("low", "high"))})
        elif roll < 0.007:
            writer.append("model_change", {"provider": "anthropic", "modelId": "claude-opus-4-5"})
        elif roll < 0.03 and len(writer.lines) < entries * 0.97:
            branch_summaries += writer.side_branch(context)
        context = min(writer.turn(context), 150_000)
    data = b"".join([msgspec.json.encode(header), b"\n", b"\n".join(writer.lines), b"\n"])
    path.write_bytes(data)
    leaf_path = writer.path_ids(writer.leaf)
    children: set[str | None] = set(writer.parent.values())
    return GeneratedSession(
        path=path,
        entries=len(writer.lines),
        bytes=len(data),
        leaf_path_length=len(leaf_path),
        leaves=sum(1 for i in writer.parent if i not in children),
        compactions=writer.counts.get("compaction", 0),
        branch_summaries=branch_summaries,
        counts=dict(writer.counts),
    )
