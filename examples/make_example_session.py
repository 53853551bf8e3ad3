# ruff: noqa: E501
"""Generate ``examples/todo-api-session.jsonl``, a coding-agent session written for contextree.

The session is a made-up but coherent pi session: a user asks an agent to add pagination and
input validation to a small FastAPI service ("todo-api"), abandons a first approach by going
back in the tree, and later asks for sorting. Everything is deterministic: a fixed session id,
entry ids derived from sha256, timestamps advancing by fixed amounts, and token usage computed
from the text. Running the script again reproduces the file byte for byte::

    python examples/make_example_session.py            # writes examples/todo-api-session.jsonl
    python examples/make_example_session.py --check    # exit 1 if the file would change

The script needs only the standard library. File contents shown by ``read`` are kept in a small
virtual file system, so edits really apply to them, re-reads show the edited text and ``git
diff`` outputs are computed, not typed.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import hashlib
import inspect
import json
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("todo-api-session.jsonl")
CWD = "/home/dev/src/todo-api"
START_MS = 1_773_479_525_113  # 2026-03-14T09:12:05.113Z
SYSTEM_PROMPT_TOKENS = 5_214  # pi's system prompt, AGENTS.md and the tool schemas
PROVIDER, MODEL, API = "anthropic", "claude-sonnet-4-5", "anthropic-messages"
# The kinds of tokens in pi's usage record, and their USD price per million tokens.
USAGE_KINDS = ("input", "output", "cacheRead", "cacheWrite")
PRICES = (3.0, 15.0, 0.30, 3.75)
CACHE_TTL_MS = 5 * 60 * 1000
_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _h(*parts: object) -> bytes:
    return hashlib.sha256(":".join(str(p) for p in ("todo-api-example", *parts)).encode()).digest()


def _iso(ms: int) -> str:
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _session_id() -> str:
    """A UUIDv7 whose time part is the session start; the random part comes from sha256."""
    rand = int.from_bytes(_h("session")[:10], "big")
    value = (START_MS << 80) | (0x7 << 76) | ((rand >> 62) & 0xFFF) << 64
    value |= (0b10 << 62) | (rand & ((1 << 62) - 1))
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _tool_call_id(n: int) -> str:
    number = int.from_bytes(_h("call", n), "big")
    chars = []
    for _ in range(22):
        number, digit = divmod(number, 58)
        chars.append(_BASE58[digit])
    return "toolu_01" + "".join(chars)


def _jitter(key: object, low: int, high: int) -> int:
    """A deterministic number in [low, high] for ``key``."""
    return low + int.from_bytes(_h("jitter", key)[:4], "big") % (high - low + 1)


def _tokens(text: str) -> int:
    return -(-len(text) // 4)


def _code(text: str) -> str:
    """File contents are written flush left after an opening newline; drop that newline."""
    return text[1:] if text.startswith("\n") else text


# ---------------------------------------------------------------------------------------------
# A tiny virtual file system with the bits of git the story needs
# ---------------------------------------------------------------------------------------------


class Files:
    def __init__(self, files: dict[str, str]) -> None:
        self.head = dict(files)
        self.files = dict(files)

    def copy(self) -> Files:
        other = Files(self.head)
        other.files = dict(self.files)
        return other

    def read(self, path: str) -> str:
        return self.files[path]

    def edit(self, path: str, old: str, new: str) -> str:
        text = self.files[path]
        count = text.count(old)
        if count != 1:
            raise SystemExit(f"edit of {path}: oldText found {count} times:\n{old}")
        self.files[path] = text.replace(old, new)
        return _edit_diff(text, self.files[path])

    def write(self, path: str, content: str) -> None:
        self.files[path] = content

    def block(self, path: str, first: str, last: str) -> str:
        """The lines of ``path`` from the one line ``first`` through the next line ``last``."""
        lines = self.files[path].splitlines(keepends=True)
        starts = [i for i, line in enumerate(lines) if line.rstrip("\n") == first]
        if len(starts) != 1:
            raise SystemExit(f"{path}: line {first!r} found {len(starts)} times")
        for end in range(starts[0], len(lines)):
            if lines[end].rstrip("\n") == last:
                return "".join(lines[starts[0] : end + 1])
        raise SystemExit(f"{path}: no line {last!r} after {first!r}")

    def line_of(self, path: str, needle: str, nth: int = 1) -> int:
        """1-based line number of the ``nth`` line of ``path`` containing ``needle``."""
        seen = 0
        for number, line in enumerate(self.files[path].splitlines(), 1):
            if needle in line:
                seen += 1
                if seen == nth:
                    return number
        raise SystemExit(f"{needle!r} not found in {path}")

    def changed(self) -> list[str]:
        return sorted(p for p in self.head if self.head[p] != self.files.get(p))

    def untracked(self) -> list[str]:
        return sorted(p for p in self.files if p not in self.head)

    def git_diff(self, paths: Iterable[str] | None = None) -> str:
        out: list[str] = []
        for path in paths if paths is not None else self.changed():
            old, new = self.head[path], self.files[path]
            if old == new:
                continue
            out.append(f"diff --git a/{path} b/{path}")
            out.append(f"index {_blob(old)[:7]}..{_blob(new)[:7]} 100644")
            old_lines = old.splitlines()
            for line in difflib.unified_diff(
                old_lines, new.splitlines(), f"a/{path}", f"b/{path}", lineterm=""
            ):
                if line.startswith("@@"):
                    start = int(re.match(r"@@ -(\d+)", line).group(1))  # type: ignore[union-attr]
                    line += _funcname(old_lines, start)
                out.append(line)
        return "\n".join(out) + "\n"

    def git_diff_stat(self) -> str:
        rows: list[tuple[str, int, int]] = []
        for path in self.changed():
            plus = minus = 0
            for line in difflib.unified_diff(
                self.head[path].splitlines(), self.files[path].splitlines(), lineterm="", n=0
            ):
                if line.startswith("+") and not line.startswith("+++"):
                    plus += 1
                elif line.startswith("-") and not line.startswith("---"):
                    minus += 1
            rows.append((path, plus, minus))
        rows.sort()
        width = max(len(p) for p, _, _ in rows)
        digits = len(str(max(a + b for _, a, b in rows)))
        most = max(a + b for _, a, b in rows)
        room = 80 - width - digits - 5
        scale = min(1.0, room / most) if most else 1.0
        lines = []
        for path, plus, minus in rows:
            bar = "+" * max(1 if plus else 0, round(plus * scale))
            bar += "-" * max(1 if minus else 0, round(minus * scale))
            lines.append(f" {path.ljust(width)} | {plus + minus:{digits}d} {bar}")
        insertions = sum(p for _, p, _ in rows)
        deletions = sum(m for _, _, m in rows)
        lines.append(
            f" {len(rows)} files changed, {insertions} insertions(+), {deletions} deletions(-)"
        )
        return "\n".join(lines) + "\n"


def _blob(text: str) -> str:
    data = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _funcname(lines: list[str], start: int) -> str:
    for index in range(min(start, len(lines)) - 2, -1, -1):
        line = lines[index]
        if line and (line[0].isalpha() or line[0] in "_$"):
            return " " + line.rstrip()
    return ""


def _edit_diff(old: str, new: str) -> str:
    """pi's edit tool ``details.diff``: numbered lines around the change, ``...`` elsewhere."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    width = len(str(max(len(old_lines), len(new_lines))))
    out: list[str] = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(4):
        out.append(" " * (width + 1) + " ...")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(f" {i + 1:>{width}} {old_lines[i]}" for i in range(i1, i2))
                continue
            out.extend(f"-{i + 1:>{width}} {old_lines[i]}" for i in range(i1, i2))
            out.extend(f"+{j + 1:>{width}} {new_lines[j]}" for j in range(j1, j2))
    out.append(" " * (width + 1) + " ...")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# pytest output
# ---------------------------------------------------------------------------------------------


def _collect(files: Files) -> list[str]:
    """Test ids in pytest's order: files by name, tests in file order, parametrize expanded."""
    ids: list[str] = []
    for path in sorted(p for p in files.files if re.fullmatch(r"tests/test_\w+\.py", p)):
        lines = files.files[path].splitlines()
        cases: list[str] = []
        argname = ""
        in_cases = False
        for index, line in enumerate(lines):
            if line.startswith("@pytest.mark.parametrize("):
                cases = []
                argname = lines[index + 1].strip().strip('",')
            elif line == "    [":
                in_cases = True
            elif line == "    ],":
                in_cases = False
            elif in_cases and line.startswith("        ") and not line.startswith("         "):
                cases.append(_param_id(line.strip().rstrip(","), argname, len(cases)))
            elif line.startswith("def test_"):
                name = line[4 : line.index("(")]
                if cases:
                    ids.extend(f"{path}::{name}[{case}]" for case in cases)
                else:
                    ids.append(f"{path}::{name}")
                cases = []
    return ids


def _param_id(source: str, argname: str, index: int) -> str:
    """pytest's id for one parametrize value: strings as they are, others ``argname<i>``."""
    try:
        value = ast.literal_eval(source)
    except ValueError:
        return f"{argname}{index}"
    return value if isinstance(value, str) else f"{argname}{index}"


def pytest_output(
    files: Files,
    *,
    failures: dict[str, tuple[str, str]] | None = None,
    select: Callable[[str], bool] | None = None,
    seconds: str = "0.91",
    verbose: bool = False,
) -> tuple[str, int]:
    """``pytest -q`` output and exit code; ``failures`` maps test name -> (report, summary)."""
    failures = failures or {}
    ids = [t for t in _collect(files) if select is None or select(t)]
    names = {t.split("::")[1].split("[")[0] for t in ids}
    for name in failures:
        if name not in names:
            raise SystemExit(f"failing test {name} is not collected")
    if verbose and not failures:
        return _pytest_verbose(ids, seconds), 0
    marks = "".join("F" if t.split("::")[1] in failures else "." for t in ids)
    lines: list[str] = []
    per_line = 73
    for start in range(0, len(marks), per_line):
        chunk = marks[start : start + per_line]
        done = start + len(chunk)
        lines.append(f"{chunk.ljust(per_line)} [{round(100 * done / len(ids)):3d}%]")
    out = "\n".join(lines) + "\n"
    if failures:
        out += _sep("FAILURES") + "\n"
        for name, (report, _) in failures.items():
            out += _sep(name, "_") + "\n\n" + report.rstrip("\n") + "\n"
        out += _sep("short test summary info") + "\n"
        for test_id in ids:
            name = test_id.split("::")[1]
            if name in failures:
                line = f"FAILED {test_id} - {failures[name][1]}"
                out += (line[:77] + "..." if len(line) > 80 else line) + "\n"
        passed = len(ids) - len(failures)
        out += f"{len(failures)} failed, {passed} passed in {seconds}s\n"
        return out, 1
    deselected = len(_collect(files)) - len(ids)
    tail = f", {deselected} deselected" if deselected else ""
    out += f"{len(ids)} passed{tail} in {seconds}s\n"
    return out, 0


def _sep(title: str, char: str = "=") -> str:
    left = (80 - len(title) - 2) // 2
    return f"{char * left} {title} {char * (80 - len(title) - 2 - left)}"


def _pytest_verbose(ids: list[str], seconds: str) -> str:
    lines = [
        _sep("test session starts"),
        f"platform linux -- Python 3.12.3, pytest-8.3.4, pluggy-1.5.0 -- {CWD}/.venv/bin/python",
        "cachedir: .pytest_cache",
        f"rootdir: {CWD}",
        "configfile: pyproject.toml",
        "testpaths: tests",
        "plugins: anyio-4.6.2",
        f"collecting ... collected {len(ids)} items",
        "",
    ]
    for number, test_id in enumerate(ids, 1):
        progress = f"[{round(100 * number / len(ids)):3d}%]"
        text = f"{test_id} PASSED"
        lines.append(text + " " * max(1, 80 - len(text) - len(progress)) + progress)
    lines += ["", _sep(f"{len(ids)} passed in {seconds}s")]
    return "\n".join(lines) + "\n"


def source_excerpt(files: Files, path: str, func: str, fail_line_needle: str) -> tuple[str, int]:
    """The test function as pytest prints it, with ``>`` on the failing line."""
    lines = files.read(path).splitlines()
    start = next(i for i, text in enumerate(lines) if text.startswith(f"def {func}("))
    end = start + 1
    while end < len(lines) and (lines[end].startswith("    ") or lines[end] == ""):
        end += 1
    while lines[end - 1] == "":
        end -= 1
    fail = files.line_of(path, fail_line_needle)
    out = []
    for index in range(start, fail):
        prefix = ">   " if index + 1 == fail else "    "
        out.append((prefix + lines[index]).rstrip() if lines[index] else "    ")
    return "\n".join(out), fail


# ---------------------------------------------------------------------------------------------
# The session writer
# ---------------------------------------------------------------------------------------------


@dataclass
class Read:
    path: str
    offset: int | None = None
    limit: int | None = None


@dataclass
class Edit:
    path: str
    old: str
    new: str


@dataclass
class Write:
    path: str
    content: str


def insert_after(path: str, anchor: str, text: str) -> Edit:
    """An edit that adds ``text`` after ``anchor`` (pi's edit tool only replaces text)."""
    return Edit(path, anchor, anchor + text)


def insert_before(path: str, anchor: str, text: str) -> Edit:
    """An edit that adds ``text`` before ``anchor``."""
    return Edit(path, anchor, text + anchor)


@dataclass
class Replace:
    """An edit of the lines from ``first`` through ``last`` (whole lines, without the newline),
    with the old text taken from the file as the earlier calls leave it.

    For code this script already spells out, in the project at HEAD or in an earlier edit: the
    old text is then written once, and stays what the file really holds.
    """

    path: str
    first: str
    last: str
    new: str

    def resolve(self, files: Files) -> Edit:
        return Edit(self.path, files.block(self.path, self.first, self.last), self.new)


@dataclass
class Bash:
    command: str
    output: str | Callable[[], str | tuple[str, int]]
    exit_code: int = 0
    seconds: float = 1.2


class Merge:
    """Several replacements in one file sent as one edit of the block that spans them all."""

    def __init__(self, *edits: Edit | Replace) -> None:
        self.edits = edits

    def resolve(self, files: Files) -> Edit:
        edits = [e.resolve(files) if isinstance(e, Replace) else e for e in self.edits]
        path = edits[0].path
        text = files.read(path)
        spans = []
        for edit in edits:
            if text.count(edit.old) != 1:
                raise SystemExit(f"merge in {path}: not unique:\n{edit.old}")
            start = text.index(edit.old)
            spans.append((start, start + len(edit.old)))
        begin = text.rfind("\n", 0, min(a for a, _ in spans)) + 1
        end = max(b for _, b in spans)
        if not text[:end].endswith("\n"):
            end = text.index("\n", end) + 1
        block = new = text[begin:end]
        for edit in edits:
            new = new.replace(edit.old, edit.new)
        return Edit(path, block, new)


Call = Read | Edit | Write | Bash | Merge | Replace
Resolved = Read | Edit | Write | Bash  # a call as sent: merges and replaces turned into edits


@dataclass
class Session:
    files: Files
    lines: list[dict[str, Any]] = field(default_factory=list)
    clock: int = START_MS
    leaf: str | None = None
    used_ids: set[str] = field(default_factory=set)
    counter: int = 0
    calls: int = 0
    # Per-path state for usage figures: messages' estimated tokens and the cache.
    path_tokens: dict[str | None, int] = field(default_factory=lambda: {None: 0})
    cached: dict[str | None, tuple[int, int]] = field(default_factory=dict)

    def header(self) -> dict[str, Any]:
        return {
            "type": "session",
            "version": 3,
            "id": _session_id(),
            "timestamp": _iso(START_MS),
            "cwd": CWD,
        }

    def _next_id(self) -> str:
        while True:
            self.counter += 1
            candidate = _h("entry", self.counter).hex()[:8]
            if candidate not in self.used_ids:
                self.used_ids.add(candidate)
                return candidate

    def _append(self, kind: str, fields: dict[str, Any], tokens: int = 0) -> str:
        entry_id = self._next_id()
        entry = {"type": kind, "id": entry_id, "parentId": self.leaf, "timestamp": _iso(self.clock)}
        entry.update(fields)
        self.lines.append(entry)
        self.path_tokens[entry_id] = self.path_tokens[self.leaf] + tokens
        self.cached[entry_id] = self.cached.get(self.leaf, (0, 0))
        self.leaf = entry_id
        return entry_id

    def branch(self, entry_id: str) -> None:
        """Move the leaf back (pi's /tree navigation without a summary)."""
        self.leaf = entry_id

    def wait(self, seconds: float) -> None:
        self.clock += int(seconds * 1000)

    # -- entries ------------------------------------------------------------------------------

    def model_change(self, provider: str, model_id: str) -> str:
        self.wait(0.002)
        return self._append("model_change", {"provider": provider, "modelId": model_id})

    def thinking_level(self, level: str) -> str:
        self.wait(_jitter(("tl", self.counter), 2, 6))
        return self._append("thinking_level_change", {"thinkingLevel": level})

    def user(self, text: str, *, think_seconds: float | None = None) -> str:
        text = _code(text).rstrip("\n")
        seconds = think_seconds if think_seconds is not None else 8 + len(text) / 18
        self.wait(seconds)
        message = {
            "role": "user",
            "content": [{"type": "text", "text": text}],
            "timestamp": self.clock,
        }
        self.wait(0.003)
        return self._append("message", {"message": message}, _tokens(text))

    def bash_execution(self, command: str, output: str, *, think_seconds: float = 20) -> str:
        """The user ran ``!command`` in pi: output goes to the context as a user message."""
        self.wait(think_seconds)
        message = {
            "role": "bashExecution",
            "command": command,
            "output": output,
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": self.clock,
        }
        self.wait(0.6)
        return self._append("message", {"message": message}, _tokens(command + output))

    def assistant(self, text: str = "", *, thinking: str = "", calls: Iterable[Call] = ()) -> str:
        """One assistant message, then the result of each tool call."""
        # Resolve merged edits and replaces against the files as the earlier calls of this
        # message leave them.
        planned = self.files.copy()
        resolved: list[Resolved] = []
        for requested in calls:
            call = (
                requested.resolve(planned) if isinstance(requested, Merge | Replace) else requested
            )
            if isinstance(call, Edit):
                planned.edit(call.path, call.old, call.new)
            elif isinstance(call, Write):
                planned.write(call.path, call.content)
            resolved.append(call)
        content: list[dict[str, Any]] = []
        size = 0
        if thinking:
            thinking = _code(thinking).rstrip("\n")
            content.append({"type": "thinking", "thinking": thinking})
            size += len(thinking)
        if text:
            text = _code(text).rstrip("\n")
            content.append({"type": "text", "text": text})
            size += len(text)
        call_ids = []
        for call in resolved:
            self.calls += 1
            call_id = _tool_call_id(self.calls)
            call_ids.append(call_id)
            name, arguments = _call_arguments(call)
            content.append(
                {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}
            )
            size += len(name) + len(
                json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)
            )
        output_tokens = -(-size // 4) + 3 * len(resolved) + _jitter(("out", self.counter), 4, 30)
        start = self.clock + _jitter(("lat", self.counter), 20, 90)
        duration = 900 + _jitter(("ttft", self.counter), 300, 1900) + output_tokens * 14
        usage = self._usage(start, output_tokens)
        message = {
            "role": "assistant",
            "content": content,
            "api": API,
            "provider": PROVIDER,
            "model": MODEL,
            "usage": usage,
            "stopReason": "toolUse" if resolved else "stop",
            "timestamp": start,
        }
        self.clock = start + duration
        assistant_id = self._append("message", {"message": message}, -(-size // 4))
        for call, call_id in zip(resolved, call_ids, strict=True):
            self._tool_result(call, call_id)
        return assistant_id

    def _usage(self, start: int, output: int) -> dict[str, Any]:
        prompt = SYSTEM_PROMPT_TOKENS + self.path_tokens[self.leaf]
        cached_tokens, cached_at = self.cached.get(self.leaf, (0, 0))
        cache_read = cached_tokens if start - cached_at < CACHE_TTL_MS else 0
        fresh = _jitter(("in", self.counter), 1, 9)
        cache_write = max(0, prompt - cache_read - fresh)
        self.cached[self.leaf] = (cache_read + cache_write + fresh, start)
        counts = (fresh, output, cache_read, cache_write)
        cost = [round(n * price / 1_000_000, 8) for n, price in zip(counts, PRICES, strict=True)]
        return {
            **dict(zip(USAGE_KINDS, counts, strict=True)),
            "totalTokens": sum(counts),
            "cost": {**dict(zip(USAGE_KINDS, cost, strict=True)), "total": round(sum(cost), 8)},
        }

    def _tool_result(self, call: Resolved, call_id: str) -> str:
        details: dict[str, Any] | None = None
        is_error = False
        seconds = 0.05 + _jitter(("tr", self.counter), 0, 400) / 1000
        if isinstance(call, Read):
            name = "read"
            text = self.files.read(call.path)
            if call.offset is not None or call.limit is not None:
                lines = text.splitlines(keepends=True)
                first = (call.offset or 1) - 1
                last = first + (call.limit or len(lines))
                text = "".join(lines[first:last])
                if last < len(lines):
                    text += f"\n[{len(lines) - last} more lines in file. Use offset={last + 1} to continue]"
        elif isinstance(call, Edit):
            name = "edit"
            diff = self.files.edit(call.path, call.old, call.new)
            text = f"Successfully replaced text in {call.path}."
            details = {"diff": diff}
        elif isinstance(call, Write):
            name = "write"
            self.files.write(call.path, call.content)
            text = f"Successfully wrote {len(call.content.encode())} bytes to {call.path}"
        else:
            name = "bash"
            result = call.output() if callable(call.output) else call.output
            exit_code = call.exit_code
            if isinstance(result, tuple):
                result, exit_code = result
            text = result.rstrip("\n") if result.strip() else "(no output)"
            if exit_code:
                text += f"\n\nCommand exited with code {exit_code}"
                is_error = True
            seconds += call.seconds
        self.wait(seconds)
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": text}],
        }
        if details is not None:
            message["details"] = details
        message["isError"] = is_error
        message["timestamp"] = self.clock
        self.wait(0.004)
        return self._append("message", {"message": message}, _tokens(text))

    def dump(self) -> bytes:
        rows = [self.header(), *self.lines]
        return b"".join(
            json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            for row in rows
        )


def _call_arguments(call: Resolved) -> tuple[str, dict[str, Any]]:
    if isinstance(call, Read):
        arguments: dict[str, Any] = {"path": call.path}
        if call.offset is not None:
            arguments["offset"] = call.offset
        if call.limit is not None:
            arguments["limit"] = call.limit
        return "read", arguments
    if isinstance(call, Edit):
        return "edit", {"path": call.path, "oldText": call.old, "newText": call.new}
    if isinstance(call, Write):
        return "write", {"path": call.path, "content": call.content}
    return "bash", {"command": call.command}


# ---------------------------------------------------------------------------------------------
# The project at the start of the session (git HEAD)
# ---------------------------------------------------------------------------------------------

PYPROJECT = _code(r"""
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "todo-api"
version = "0.4.2"
description = "A small JSON API for personal todo lists"
readme = "README.md"
requires-python = ">=3.11"
dependencies = [
    "fastapi>=0.110,<1",
    "uvicorn[standard]>=0.29",
    "pydantic>=2.6,<3",
]

[project.optional-dependencies]
dev = [
    "pytest>=8.0",
    "httpx>=0.27",
]

[tool.setuptools.packages.find]
include = ["todo_api*"]

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-ra --strict-markers"
filterwarnings = [
    "error",
    "ignore::DeprecationWarning:fastapi.*",
]
""")

MAIN_PY = _code(r'''
"""The HTTP application: routing and dependencies only; SQL lives in ``repository``."""

from __future__ import annotations

import logging
import sqlite3
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Request, Response, status
from fastapi.middleware.cors import CORSMiddleware

from todo_api import __version__
from todo_api.db import connect, run_migrations
from todo_api.errors import install_error_handlers
from todo_api.models import ErrorBody, Todo, TodoCreate, TodoUpdate
from todo_api.repository import TodoRepository
from todo_api.settings import get_settings

log = logging.getLogger("todo_api")
router = APIRouter()
RequestHandler = Callable[[Request], Awaitable[Response]]


def get_db() -> Iterator[sqlite3.Connection]:
    """One connection per request, closed once the response has been sent."""
    conn = connect()
    try:
        yield conn
    finally:
        conn.close()


def get_repo(conn: Annotated[sqlite3.Connection, Depends(get_db)]) -> TodoRepository:
    return TodoRepository(conn)


Repo = Annotated[TodoRepository, Depends(get_repo)]
NOT_FOUND = {404: {"model": ErrorBody, "description": "No todo with this id"}}


@router.get("/health")
def health() -> dict[str, str]:
    return {"status": "ok", "version": __version__}


@router.get("/todos", response_model=list[Todo])
def list_todos(repo: Repo, done: bool | None = None) -> list[Todo]:
    """All todos, oldest first; ``done`` filters by state."""
    return repo.list(done=done)


@router.post("/todos", response_model=Todo, status_code=status.HTTP_201_CREATED)
def create_todo(payload: TodoCreate, repo: Repo) -> Todo:
    return repo.create(payload)


@router.get("/todos/{todo_id}", response_model=Todo, responses=NOT_FOUND)
def get_todo(todo_id: int, repo: Repo) -> Todo:
    return repo.get(todo_id)


@router.patch("/todos/{todo_id}", response_model=Todo, responses=NOT_FOUND)
def update_todo(todo_id: int, payload: TodoUpdate, repo: Repo) -> Todo:
    """Change the fields present in the body; absent fields keep their value."""
    return repo.update(todo_id, payload)


@router.delete("/todos/{todo_id}", status_code=status.HTTP_204_NO_CONTENT, responses=NOT_FOUND)
def delete_todo(todo_id: int, repo: Repo) -> Response:
    repo.delete(todo_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


async def request_context(request: Request, call_next: RequestHandler) -> Response:
    """Tag every request with an id (the load balancer's, when it sent one) and log it."""
    request_id = request.headers.get("X-Request-ID") or uuid.uuid4().hex
    started = time.perf_counter()
    response = await call_next(request)
    elapsed_ms = (time.perf_counter() - started) * 1000
    response.headers["X-Request-ID"] = request_id
    log.info(
        "%s %s -> %d in %.1f ms",
        request.method,
        request.url.path,
        response.status_code,
        elapsed_ms,
        extra={"request_id": request_id},
    )
    return response


@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
    # Production applies migrations from the deploy pipeline before the new version starts;
    # by then this finds nothing to do. Local runs and the tests rely on it.
    conn = connect()
    try:
        run_migrations(conn)
    finally:
        conn.close()
    yield


def create_app() -> FastAPI:
    settings = get_settings()
    app = FastAPI(
        title="todo-api",
        version=__version__,
        debug=settings.debug,
        lifespan=lifespan,
    )
    app.add_middleware(
        CORSMiddleware,
        allow_origins=list(settings.allowed_origins),
        allow_methods=["GET", "POST", "PATCH", "DELETE"],
        allow_headers=["Authorization", "Content-Type"],
    )
    app.middleware("http")(request_context)
    install_error_handlers(app)
    app.include_router(router)
    return app


app = create_app()
''')

MODELS_PY = _code(r'''
"""Request and response schemas.

``Todo`` is the public response shape. The web app and the mobile clients generate their types
from the OpenAPI document, so its fields must not be renamed, retyped or removed without a
major version bump (see tests/test_openapi.py).
"""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel, ConfigDict


class TodoCreate(BaseModel):
    """Body of ``POST /todos``."""

    title: str
    notes: str = ""
    due_date: date | None = None


class TodoUpdate(BaseModel):
    """Body of ``PATCH /todos/{id}``: every field is optional; absent fields are unchanged."""

    title: str | None = None
    notes: str | None = None
    due_date: date | None = None
    done: bool | None = None

    def changes(self) -> dict[str, object]:
        """The fields the client actually sent (``null`` included)."""
        return self.model_dump(exclude_unset=True)


class Todo(BaseModel):
    """A todo as every endpoint returns it."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    title: str
    notes: str
    done: bool
    due_date: date | None
    created_at: datetime
    updated_at: datetime


class ErrorBody(BaseModel):
    """The body of every 4xx response the API produces itself."""

    error: str
    detail: str | None = None
''')

REPOSITORY_PY = _code(r'''
"""Data access for todos. All SQL lives here; routes never see a cursor."""

from __future__ import annotations

import sqlite3
from datetime import UTC, date, datetime

from todo_api.errors import TodoNotFound
from todo_api.models import Todo, TodoCreate, TodoUpdate

_COLUMNS = "id, title, notes, done, due_date, created_at, updated_at"
# Columns a PATCH may change; anything else in TodoUpdate.changes() is a programming error.
_UPDATABLE = frozenset({"title", "notes", "due_date", "done"})


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _row_to_todo(row: sqlite3.Row) -> Todo:
    return Todo(
        id=row["id"],
        title=row["title"],
        notes=row["notes"],
        done=bool(row["done"]),
        due_date=date.fromisoformat(row["due_date"]) if row["due_date"] else None,
        created_at=datetime.fromisoformat(row["created_at"]),
        updated_at=datetime.fromisoformat(row["updated_at"]),
    )


class TodoRepository:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def list(self, *, done: bool | None = None) -> list[Todo]:
        sql = f"SELECT {_COLUMNS} FROM todos"
        params: list[object] = []
        if done is not None:
            sql += " WHERE done = ?"
            params.append(int(done))
        sql += " ORDER BY id"
        return [_row_to_todo(row) for row in self._conn.execute(sql, params)]

    def get(self, todo_id: int) -> Todo:
        row = self._conn.execute(
            f"SELECT {_COLUMNS} FROM todos WHERE id = ?", (todo_id,)
        ).fetchone()
        if row is None:
            raise TodoNotFound(f"todo {todo_id} does not exist")
        return _row_to_todo(row)

    def create(self, data: TodoCreate) -> Todo:
        now = _now()
        with self._conn:
            cursor = self._conn.execute(
                "INSERT INTO todos (title, notes, due_date, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (data.title, data.notes, _iso_date(data.due_date), now, now),
            )
        assert cursor.lastrowid is not None
        return self.get(cursor.lastrowid)

    def update(self, todo_id: int, data: TodoUpdate) -> Todo:
        changes = data.changes()
        if not changes:
            return self.get(todo_id)
        unknown = set(changes) - _UPDATABLE
        if unknown:
            raise ValueError(f"cannot update {sorted(unknown)}")
        assignments: list[str] = []
        params: list[object] = []
        for column, value in changes.items():
            if column == "done":
                value = int(value)
            elif column == "due_date":
                value = _iso_date(value)
            assignments.append(f"{column} = ?")
            params.append(value)
        assignments.append("updated_at = ?")
        params.extend([_now(), todo_id])
        with self._conn:
            cursor = self._conn.execute(
                f"UPDATE todos SET {', '.join(assignments)} WHERE id = ?", params
            )
        if cursor.rowcount == 0:
            raise TodoNotFound(f"todo {todo_id} does not exist")
        return self.get(todo_id)

    def delete(self, todo_id: int) -> None:
        with self._conn:
            cursor = self._conn.execute("DELETE FROM todos WHERE id = ?", (todo_id,))
        if cursor.rowcount == 0:
            raise TodoNotFound(f"todo {todo_id} does not exist")

    def count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM todos").fetchone()[0])


def _iso_date(value: date | None) -> str | None:
    return value.isoformat() if value is not None else None
''')

DB_PY = _code(r'''
"""SQLite connections and the migration runner.

Migrations are plain SQL files in ``migrations/`` named ``NNNN_description.sql``. They are
applied in name order, each in its own transaction, and recorded in ``schema_migrations``.
Production applies the same files from the deploy pipeline (ops/deploy.sh in the infra repo)
before a release starts; the runner here serves local development and the tests.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from todo_api.settings import get_settings


def connect(path: Path | None = None) -> sqlite3.Connection:
    """Open the database with the pragmas every connection needs."""
    db_path = path or get_settings().database_path
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db_path, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Commit on success, roll back on any exception."""
    try:
        yield conn
    except BaseException:
        conn.rollback()
        raise
    else:
        conn.commit()


def applied_migrations(conn: sqlite3.Connection) -> set[str]:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " name TEXT PRIMARY KEY,"
        " applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
    )
    return {row["name"] for row in conn.execute("SELECT name FROM schema_migrations")}


def run_migrations(conn: sqlite3.Connection, directory: Path | None = None) -> list[str]:
    """Apply the pending migrations in name order; return the names applied."""
    directory = directory or get_settings().migrations_dir
    done = applied_migrations(conn)
    applied: list[str] = []
    for path in sorted(directory.glob("[0-9][0-9][0-9][0-9]_*.sql")):
        if path.name in done:
            continue
        with transaction(conn):
            conn.executescript(path.read_text(encoding="utf-8"))
            conn.execute("INSERT INTO schema_migrations (name) VALUES (?)", (path.name,))
        applied.append(path.name)
    return applied
''')

ERRORS_PY = _code(r'''
"""Domain errors and how they map to HTTP responses.

Every error the API produces itself has the body ``{"error": <code>, "detail": <text>}``
(``models.ErrorBody``); request validation errors are rewritten into the same shape, so
clients need only one error type.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse


class TodoError(Exception):
    status_code = 400
    code = "bad_request"

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(detail or self.code)
        self.detail = detail


class TodoNotFound(TodoError):
    status_code = 404
    code = "not_found"


class Conflict(TodoError):
    status_code = 409
    code = "conflict"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(TodoError)
    async def _todo_error(_request: Request, exc: TodoError) -> JSONResponse:
        return JSONResponse(
            status_code=exc.status_code,
            content={"error": exc.code, "detail": exc.detail},
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(
            status_code=422,
            content={"error": "invalid_request", "detail": describe(exc.errors())},
        )


def describe(errors: Sequence[Any]) -> str:
    """One line per validation error: ``body.title: String should have ...``."""
    parts = []
    for error in errors:
        location = ".".join(str(part) for part in error.get("loc", ()))
        message = error.get("msg", "invalid value")
        parts.append(f"{location}: {message}" if location else message)
    return "; ".join(parts)
''')

SETTINGS_PY = _code(r'''
"""Runtime settings, read once from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True)
class Settings:
    database_path: Path
    migrations_dir: Path
    allowed_origins: tuple[str, ...]
    debug: bool


def _split(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    env = os.environ
    return Settings(
        database_path=Path(env.get("TODO_DB_PATH", str(_ROOT / "var" / "todo.sqlite3"))),
        migrations_dir=Path(env.get("TODO_MIGRATIONS_DIR", str(_ROOT / "migrations"))),
        allowed_origins=_split(env.get("TODO_ALLOWED_ORIGINS", "http://localhost:5173")),
        debug=env.get("TODO_DEBUG", "0") == "1",
    )
''')

MIGRATION_1 = _code(r"""
-- 0001: the todos table.
CREATE TABLE todos (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    title       TEXT    NOT NULL,
    notes       TEXT    NOT NULL DEFAULT '',
    done        INTEGER NOT NULL DEFAULT 0 CHECK (done IN (0, 1)),
    created_at  TEXT    NOT NULL,
    updated_at  TEXT    NOT NULL
);

CREATE INDEX idx_todos_done ON todos (done);
""")

MIGRATION_2 = _code(r"""
-- 0002: optional due date (ISO 8601 date, no time zone).
ALTER TABLE todos ADD COLUMN due_date TEXT;

CREATE INDEX idx_todos_due_date ON todos (due_date);
""")

CONFTEST_PY = _code(r'''
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from todo_api.settings import get_settings


@pytest.fixture()
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    """A client for a fresh app with its own empty database."""
    monkeypatch.setenv("TODO_DB_PATH", str(tmp_path / "test.sqlite3"))
    get_settings.cache_clear()
    from todo_api.main import create_app

    with TestClient(create_app()) as test_client:
        yield test_client
    get_settings.cache_clear()


@pytest.fixture()
def make_todo(client: TestClient) -> Callable[..., dict[str, Any]]:
    """Create a todo through the API and return its JSON."""

    def make(title: str = "buy milk", **fields: Any) -> dict[str, Any]:
        response = client.post("/todos", json={"title": title, **fields})
        assert response.status_code == 201, response.text
        return response.json()

    return make
''')

TEST_TODOS_PY = _code(r'''
"""CRUD behaviour of the /todos endpoints."""

from __future__ import annotations


def test_health(client):
    response = client.get("/health")

    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_create_returns_the_new_todo(client):
    response = client.post("/todos", json={"title": "write report", "notes": "due friday"})

    assert response.status_code == 201
    body = response.json()
    assert body["title"] == "write report"
    assert body["notes"] == "due friday"
    assert body["done"] is False
    assert body["due_date"] is None
    assert body["created_at"] == body["updated_at"]


def test_create_accepts_a_due_date(client):
    response = client.post("/todos", json={"title": "pay rent", "due_date": "2026-04-01"})

    assert response.status_code == 201
    assert response.json()["due_date"] == "2026-04-01"


def test_create_rejects_a_malformed_due_date(client):
    response = client.post("/todos", json={"title": "pay rent", "due_date": "next week"})

    assert response.status_code == 422
    assert response.json()["error"] == "invalid_request"
    assert "due_date" in response.json()["detail"]


def test_get_returns_one_todo(client, make_todo):
    todo = make_todo("water plants")

    response = client.get(f"/todos/{todo['id']}")

    assert response.status_code == 200
    assert response.json() == todo


def test_get_missing_todo_is_404(client):
    response = client.get("/todos/999")

    assert response.status_code == 404
    assert response.json() == {"error": "not_found", "detail": "todo 999 does not exist"}


def test_list_is_empty_at_first(client):
    response = client.get("/todos")

    assert response.status_code == 200
    assert response.json() == []


def test_list_returns_todos_oldest_first(client, make_todo):
    first = make_todo("first")
    second = make_todo("second")

    response = client.get("/todos")

    assert [t["id"] for t in response.json()] == [first["id"], second["id"]]


def test_list_filters_by_done(client, make_todo):
    open_todo = make_todo("open")
    closed = make_todo("closed")
    client.patch(f"/todos/{closed['id']}", json={"done": True})

    done = client.get("/todos", params={"done": "true"}).json()
    not_done = client.get("/todos", params={"done": "false"}).json()

    assert [t["id"] for t in done] == [closed["id"]]
    assert [t["id"] for t in not_done] == [open_todo["id"]]


def test_patch_changes_only_the_sent_fields(client, make_todo):
    todo = make_todo("draft", notes="keep me")

    response = client.patch(f"/todos/{todo['id']}", json={"title": "final"})

    assert response.status_code == 200
    assert response.json()["title"] == "final"
    assert response.json()["notes"] == "keep me"


def test_patch_can_clear_the_due_date(client, make_todo):
    todo = make_todo("dentist", due_date="2026-05-02")

    response = client.patch(f"/todos/{todo['id']}", json={"due_date": None})

    assert response.status_code == 200
    assert response.json()["due_date"] is None


def test_patch_missing_todo_is_404(client):
    response = client.patch("/todos/999", json={"done": True})

    assert response.status_code == 404


def test_delete_removes_the_todo(client, make_todo):
    todo = make_todo("temporary")

    assert client.delete(f"/todos/{todo['id']}").status_code == 204
    assert client.get(f"/todos/{todo['id']}").status_code == 404


def test_delete_missing_todo_is_404(client):
    assert client.delete("/todos/999").status_code == 404
''')

TEST_OPENAPI_PY = _code(r'''
"""The OpenAPI document is a public contract: the web and mobile clients generate their types
from it.

When this test fails, look at what changed. Changing or removing anything a response contains
needs a major version bump and a CHANGELOG entry. Additions (endpoints, parameters, documented
headers, tighter request constraints) are fine; refresh the snapshot with

    UPDATE_SNAPSHOTS=1 pytest tests/test_openapi.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

SNAPSHOT = Path(__file__).parent / "snapshots" / "openapi.json"


def test_openapi_matches_snapshot(client):
    current = client.get("/openapi.json").json()
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(json.dumps(current, indent=2, sort_keys=True) + "\n")
    expected = json.loads(SNAPSHOT.read_text())
    assert current == expected
''')

API_MD = _code(r"""
# todo-api HTTP reference

All endpoints speak JSON. Timestamps are ISO 8601 in UTC; `due_date` is a plain date
(`YYYY-MM-DD`) without a time zone.

## The todo object

| field | type | notes |
|---|---|---|
| `id` | integer | assigned by the server |
| `title` | string | |
| `notes` | string | empty string when not set |
| `done` | boolean | |
| `due_date` | string or null | `YYYY-MM-DD` |
| `created_at` | string | set once |
| `updated_at` | string | changes on every successful `PATCH` |

The web app and the mobile clients generate their models from `/openapi.json`. Do not rename,
retype or remove fields without a major version bump (`tests/test_openapi.py` guards this).

## Errors

Errors the API produces itself have one shape:

```json
{"error": "not_found", "detail": "todo 12 does not exist"}
```

| status | `error` | when |
|---|---|---|
| 404 | `not_found` | no todo with that id |
| 409 | `conflict` | reserved for optimistic locking (not used yet) |
| 422 | `invalid_request` | the body or a parameter failed validation; `detail` names the field |

## Endpoints

### `GET /health`

`{"status": "ok", "version": "0.4.2"}`. Used by the load balancer; no database access.

### `GET /todos`

Every todo, oldest first, as a JSON array of todo objects.

| parameter | in | type | default | notes |
|---|---|---|---|---|
| `done` | query | boolean | - | only todos in this state |

### `POST /todos`

Body: `title` (required), `notes`, `due_date`. Returns `201` and the new todo.

### `GET /todos/{id}`

The todo, or `404`.

### `PATCH /todos/{id}`

Any subset of `title`, `notes`, `due_date`, `done`. Fields that are absent keep their value;
`"due_date": null` clears the due date. Returns the updated todo, or `404`.

### `DELETE /todos/{id}`

`204` with an empty body, or `404`.

## Running locally

```sh
python -m venv .venv && .venv/bin/pip install -e '.[dev]'
.venv/bin/uvicorn todo_api.main:app --reload
```

The development database lives in `var/todo.sqlite3` and is migrated on startup.
""")

CHANGELOG_MD = _code(r"""
# Changelog

All notable changes to this project are documented here. The format follows
[Keep a Changelog](https://keepachangelog.com/en/1.1.0/); versions follow semantic versioning
of the HTTP API (see docs/api.md).

## [Unreleased]

## [0.4.2] - 2026-02-27

### Fixed
- `PATCH /todos/{id}` no longer resets `notes` when only `done` is sent (#44).

## [0.4.1] - 2026-02-11

### Fixed
- `due_date` is returned as a plain date, not a timestamp (#39).

## [0.4.0] - 2026-01-30

### Added
- Optional `due_date` on todos (migration 0002) (#37).
- `GET /health` reports the running version.

## [0.3.0] - 2025-12-15

### Added
- `done` filter on `GET /todos`.

### Changed
- Every error uses the `{"error", "detail"}` body (#28).
""")

README_MD = _code(r"""
# todo-api

A small JSON API for personal todo lists: FastAPI, SQLite, no ORM.

## Development

```sh
python -m venv .venv
.venv/bin/pip install -e '.[dev]'
.venv/bin/uvicorn todo_api.main:app --reload     # http://localhost:8000/docs
.venv/bin/python -m pytest -q
```

Settings come from the environment:

| variable | default | meaning |
|---|---|---|
| `TODO_DB_PATH` | `var/todo.sqlite3` | SQLite database file |
| `TODO_MIGRATIONS_DIR` | `migrations/` | where the SQL migrations live |
| `TODO_ALLOWED_ORIGINS` | `http://localhost:5173` | CORS origins, comma-separated |
| `TODO_DEBUG` | `0` | `1` turns on FastAPI's debug mode |

## Layout

- `todo_api/main.py`: routes and dependencies
- `todo_api/models.py`: request and response schemas (the public contract)
- `todo_api/repository.py`: all SQL
- `todo_api/db.py`: connections and the migration runner
- `migrations/`: SQL migrations, applied in name order. **Production applies these from the
  deploy pipeline; changes to them go through the infra review, not through this repo.**
- `tests/`: the pytest suite; `tests/snapshots/openapi.json` pins the OpenAPI document

## API

See [docs/api.md](docs/api.md). The web app (`todo-web`) and the iOS and Android apps
generate their models from `/openapi.json`.

## Releasing

1. Move the `Unreleased` entries of CHANGELOG.md under a new version heading.
2. Bump the version in `pyproject.toml` and `todo_api/__init__.py`.
3. Tag `vX.Y.Z`. CI builds the image; the deploy pipeline applies migrations, then rolls out.
""")

INITIAL_FILES = {
    "README.md": README_MD,
    "pyproject.toml": PYPROJECT,
    "todo_api/__init__.py": '"""todo-api: a small JSON API for personal todo lists."""\n\n__version__ = "0.4.2"\n',
    "todo_api/main.py": MAIN_PY,
    "todo_api/models.py": MODELS_PY,
    "todo_api/repository.py": REPOSITORY_PY,
    "todo_api/db.py": DB_PY,
    "todo_api/errors.py": ERRORS_PY,
    "todo_api/settings.py": SETTINGS_PY,
    "migrations/0001_create_todos.sql": MIGRATION_1,
    "migrations/0002_add_due_date.sql": MIGRATION_2,
    "tests/conftest.py": CONFTEST_PY,
    "tests/test_todos.py": TEST_TODOS_PY,
    "tests/test_openapi.py": TEST_OPENAPI_PY,
    "docs/api.md": API_MD,
    "CHANGELOG.md": CHANGELOG_MD,
}


# ---------------------------------------------------------------------------------------------
# Helpers for the story's command outputs
# ---------------------------------------------------------------------------------------------

PYTEST = ".venv/bin/python -m pytest -q"
PYTEST_V = ".venv/bin/python -m pytest -v"
SITE = ".venv/lib/python3.12/site-packages"
SEP = "_ " * 40
# pytest prints lines that end in spaces; kept out of the source as trailing whitespace.
BLANK_E = " " * 9
SPACE = " "
OPENAPI_DIFF = _code(r"""
TODO_DB_PATH=/tmp/openapi-check.sqlite3 .venv/bin/python - <<'EOF'
import json
from fastapi.testclient import TestClient
from todo_api.main import create_app

def walk(old, new, path=""):
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            yield from walk(old.get(key), new.get(key), f"{path}/{key.replace('/', '~1')}")
    elif old != new:
        yield path, old, new

with open("tests/snapshots/openapi.json") as f:
    snapshot = json.load(f)
with TestClient(create_app()) as client:
    current = client.get("/openapi.json").json()
for path, old, new in walk(snapshot, current):
    print(path)
    print("  snapshot:", json.dumps(old, sort_keys=True)[:150])
    print("  current: ", json.dumps(new, sort_keys=True)[:150])
EOF
""").rstrip("\n")


def _openapi_diff(changes: list[tuple[str, Any, Any]]) -> str:
    out = []
    for path, old, new in changes:
        out.append(path)
        out.append("  snapshot: " + json.dumps(old, sort_keys=True)[:150])
        out.append("  current:  " + json.dumps(new, sort_keys=True)[:150])
    return "\n".join(out) + "\n"


def _param(
    name: str, schema: dict[str, Any], *, where: str = "query", **extra: Any
) -> dict[str, Any]:
    param = {"in": where, "name": name, "required": where == "path", "schema": schema}
    param.update(extra)
    return param


DONE_PARAM = _param("done", {"anyOf": [{"type": "boolean"}, {"type": "null"}], "title": "Done"})
LIMIT_PARAM = _param(
    "limit", {"default": 50, "maximum": 100, "minimum": 1, "title": "Limit", "type": "integer"}
)
OFFSET_PARAM = _param("offset", {"default": 0, "minimum": 0, "title": "Offset", "type": "integer"})
OLD_ID_PARAM = _param("todo_id", {"title": "Todo Id", "type": "integer"}, where="path")
NEW_ID_PARAM = _param(
    "todo_id",
    {"description": "The todo's id.", "minimum": 1, "title": "Todo Id", "type": "integer"},
    where="path",
    description="The todo's id.",
)
PAGE_HEADERS_SCHEMA = {
    "Link": {
        "description": 'RFC 8288 links to the "next" and "prev" pages, when they exist.',
        "schema": {"type": "string"},
    },
    "X-Total-Count": {
        "description": "Number of todos matching the filters, on all pages together.",
        "schema": {"type": "integer"},
    },
}


def _saferepr(value: object, maxsize: int = 240) -> str:
    """``repr`` cut in the middle the way pytest shows fixture values."""
    text = repr(value)
    if len(text) <= maxsize:
        return text
    left = (maxsize - 3) // 2
    return text[:left] + "..." + text[len(text) - (maxsize - 3 - left) :]


# The short-style frames between a test's client call and the app (starlette 0.37, httpx, anyio),
# innermost last, one a row: file | line | function | source line. Only the first two rows
# depend on the HTTP verb, and one on where the app's middleware is.
_TESTCLIENT_FRAMES = """
{SITE}/starlette/testclient.py | {testclient_line} | {verb} | return super().{verb}(
{SITE}/httpx/_client.py | {httpx_line} | {verb} | return self.request(
{SITE}/starlette/testclient.py | 454 | request | return super().request(
{SITE}/httpx/_client.py | 837 | request | return self.send(request, auth=auth, follow_redirects=follow_redirects)
{SITE}/httpx/_client.py | 926 | send | response = self._send_handling_auth(
{SITE}/httpx/_client.py | 954 | _send_handling_auth | response = self._send_handling_redirects(
{SITE}/httpx/_client.py | 991 | _send_handling_redirects | response = self._send_single_request(request)
{SITE}/httpx/_client.py | 1027 | _send_single_request | response = transport.handle_request(request)
{SITE}/starlette/testclient.py | 351 | handle_request | raise exc
{SITE}/starlette/testclient.py | 348 | handle_request | portal.call(self.app, scope, receive, send)
{SITE}/anyio/from_thread.py | 290 | call | return cast(T_Retval, self.start_task_soon(func, *args).result())
/usr/lib/python3.12/concurrent/futures/_base.py | 456 | result | return self.__get_result()
/usr/lib/python3.12/concurrent/futures/_base.py | 401 | __get_result | raise self._exception
{SITE}/anyio/from_thread.py | 221 | _call_func | retval = await retval_or_awaitable
{SITE}/fastapi/applications.py | 1054 | __call__ | await super().__call__(scope, receive, send)
{SITE}/starlette/applications.py | 113 | __call__ | await self.middleware_stack(scope, receive, send)
{SITE}/starlette/middleware/errors.py | 186 | __call__ | raise exc
{SITE}/starlette/middleware/errors.py | 164 | __call__ | await self.app(scope, receive, _send)
{SITE}/starlette/middleware/base.py | 189 | __call__ | with collapse_excgroups():
/usr/lib/python3.12/contextlib.py | 158 | __exit__ | self.gen.throw(value)
{SITE}/starlette/_utils.py | 93 | collapse_excgroups | raise exc
{SITE}/starlette/middleware/base.py | 191 | __call__ | response = await self.dispatch_func(request, call_next)
todo_api/main.py | {middleware_line} | request_context | response = await call_next(request)
{SITE}/starlette/middleware/base.py | 165 | call_next | raise app_exc
{SITE}/starlette/middleware/base.py | 151 | coro | await self.app(scope, receive_or_disconnect, send_no_error)
{SITE}/starlette/middleware/cors.py | 85 | __call__ | await self.app(scope, receive, send)
{SITE}/starlette/middleware/exceptions.py | 62 | __call__ | await wrap_app_handling_exceptions(self.app, conn)(scope, receive, send)
{SITE}/starlette/_exception_handler.py | 53 | wrapped_app | raise exc
{SITE}/starlette/_exception_handler.py | 42 | wrapped_app | await app(scope, receive, sender)
{SITE}/starlette/routing.py | 715 | __call__ | await self.middleware_stack(scope, receive, send)
{SITE}/starlette/routing.py | 735 | app | await route.handle(scope, receive, send)
{SITE}/starlette/routing.py | 288 | handle | await self.app(scope, receive, send)
{SITE}/starlette/routing.py | 76 | app | await wrap_app_handling_exceptions(app, request)(scope, receive, send)
{SITE}/starlette/_exception_handler.py | 53 | wrapped_app | raise exc
{SITE}/starlette/_exception_handler.py | 42 | wrapped_app | await app(scope, receive, sender)
{SITE}/starlette/routing.py | 73 | app | response = await f(request)
{SITE}/fastapi/routing.py | 301 | app | raw_response = await run_endpoint_function(
{SITE}/fastapi/routing.py | 214 | run_endpoint_function | return await run_in_threadpool(dependant.call, **values)
{SITE}/starlette/concurrency.py | 39 | run_in_threadpool | return await anyio.to_thread.run_sync(func, *args)
{SITE}/anyio/to_thread.py | 56 | run_sync | return await get_async_backend().run_sync_in_worker_thread(
{SITE}/anyio/_backends/_asyncio.py | 2470 | run_sync_in_worker_thread | return await future
{SITE}/anyio/_backends/_asyncio.py | 967 | run | result = context.run(func, *args)
"""


def _testclient_frames(verb: str, middleware_line: int) -> str:
    """The frames of ``_TESTCLIENT_FRAMES`` as pytest prints them, for ``client.<verb>(...)``."""
    table = _TESTCLIENT_FRAMES.format(
        SITE=SITE,
        verb=verb,
        testclient_line=560 if verb == "patch" else 499,
        httpx_line=1218 if verb == "patch" else 1054,
        middleware_line=middleware_line,
    )
    out = []
    for row in table.strip("\n").splitlines():
        path, line, func, code = row.split(" | ")
        out.append(f"{path}:{line}: in {func}\n    {code}\n")
    return "".join(out)


def _method_excerpt(
    files: Files, path: str, signature: str, fail_needle: str, stop_after: int
) -> tuple[str, int]:
    """A method as pytest's long traceback style prints it, failing at ``fail_needle``."""
    lines = files.read(path).splitlines()
    start = files.line_of(path, signature) - 1
    fail = files.line_of(path, fail_needle)
    out = []
    for index in range(start, fail + stop_after):
        text = lines[index][4:]
        prefix = ">   " if index + 1 == fail else "    "
        out.append((prefix + text).rstrip() if text else "    ")
    return "\n".join(out), fail


def _snapshot_failure(files: Files, *, components: bool = True) -> tuple[str, str]:
    source, line = source_excerpt(
        files,
        "tests/test_openapi.py",
        "test_openapi_matches_snapshot",
        "assert current == expected",
    )
    short = (
        "{'components'...e': 'todo-api', 'version': '0.4.2'}, 'openapi': '3.1.0', 'paths': {...}}"
    )
    components_line = (
        "E         {'components': {'schemas': {'ErrorBody': {...}, 'HTTPValidationError': {...}, "
        "'Todo': {...}, 'TodoCreate': {...}, ...}}} != {'components': {'schemas': {'ErrorBody': "
        "{...}, 'HTTPValidationError': {...}, 'Todo': {...}, 'TodoCreate': {...}, ...}}}\n"
        if components
        else ""
    )
    report = f"""client = <starlette.testclient.TestClient object at 0x7f3a9c4d2e10>

{source}
E       AssertionError: assert {short} == {short}
E{BLANK_E}
E         Omitting {2 if components else 3} identical items, use -vv to show
E         Differing items:
{components_line}E         {{'paths': {{'/health': {{'get': {{...}}}}, '/todos': {{'get': {{...}}, 'post': {{...}}}}, '/todos/{{todo_id}}': {{'delete': {{...}}, 'get': {{...}}, 'patch': {{...}}}}}}}} != {{'paths': {{'/health': {{'get': {{...}}}}, '/todos': {{'get': {{...}}, 'post': {{...}}}}, '/todos/{{todo_id}}': {{'delete': {{...}}, 'get': {{...}}, 'patch': {{...}}}}}}}}
E         Use -v to get more diff

tests/test_openapi.py:{line}: AssertionError
"""
    short_summary = f"AssertionError: assert {short} == {short}"
    return report, short_summary[:120] + "..."


def _list_failure(
    files: Files, path: str, test: str, locals_: str, got: list[str], expected: list[str]
) -> tuple[str, str]:
    """pytest's report and summary for a failing ``assert titles(response) == expected``;
    ``locals_`` are the test's arguments as the report shows them."""
    source, line = source_excerpt(files, path, test, f"== {json.dumps(expected)}")
    index = next(i for i, (a, b) in enumerate(zip(got, expected, strict=False)) if a != b)
    message = f"AssertionError: assert {got!r} == {expected!r}"
    report = f"""{locals_}

{source}
E       {message}
E{BLANK_E}
E         At index {index} diff: {got[index]!r} != {expected[index]!r}
E         Use -v to get more diff

{path}:{line}: AssertionError
"""
    return report, message


def _todo(todo_id: int, title: str, created_ms: int, due_date: str | None = None) -> dict[str, Any]:
    """A new todo as the API returns it; the app keeps whole seconds."""
    stamp = _iso(created_ms)[:19] + "+00:00"
    return {
        "id": todo_id,
        "title": title,
        "notes": "",
        "done": False,
        "due_date": due_date,
        "created_at": stamp,
        "updated_at": stamp,
    }


# ---------------------------------------------------------------------------------------------
# The OpenAPI document FastAPI produces for the app, at each stage of the story
# ---------------------------------------------------------------------------------------------


def _nullable(schema: dict[str, Any], title: str) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}], "title": title}


def _json_response(
    schema: dict[str, Any], description: str = "Successful Response"
) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}, "description": description}


_TODO_REF = {"$ref": "#/components/schemas/Todo"}
_VALIDATION_RESPONSE = _json_response(
    {"$ref": "#/components/schemas/HTTPValidationError"}, "Validation Error"
)
_NOT_FOUND_RESPONSE = _json_response(
    {"$ref": "#/components/schemas/ErrorBody"}, "No todo with this id"
)
Q_PARAM = _param(
    "q",
    {
        "anyOf": [{"maxLength": 100, "minLength": 1, "type": "string"}, {"type": "null"}],
        "description": "Text to look for in titles and notes (case-insensitive).",
        "title": "Q",
    },
    description="Text to look for in titles and notes (case-insensitive).",
)
SORT_PARAM = _param(
    "sort",
    {
        "default": "created_at",
        "description": "Sort key; a leading '-' sorts descending.",
        "enum": ["created_at", "-created_at", "due_date", "-due_date", "title", "-title"],
        "title": "Sort",
        "type": "string",
    },
    description="Sort key; a leading '-' sorts descending.",
)


def list_description(main_py: str) -> str:
    """The description FastAPI takes from ``list_todos``'s docstring."""
    body = main_py[main_py.index("def list_todos(") :]
    match = re.search(r'"""(.*?)"""', body, re.S)
    assert match is not None
    return inspect.cleandoc(match.group(1))


def openapi(stage: int, main_py: str) -> dict[str, Any]:
    """0: as committed; 1: pagination and validation; 2: search; 3: sorting."""
    constrained = stage >= 1
    title: dict[str, Any] = {"title": "Title", "type": "string"}
    notes: dict[str, Any] = {"title": "Notes", "type": "string"}
    if constrained:
        title.update(maxLength=200, minLength=1)
        notes.update(maxLength=2000)
    update_title = {"type": "string", **({"maxLength": 200, "minLength": 1} if constrained else {})}
    update_notes = {"type": "string", **({"maxLength": 2000} if constrained else {})}
    due_date = _nullable({"format": "date", "type": "string"}, "Due Date")
    schemas = {
        "ErrorBody": {
            "description": "The body of every 4xx response the API produces itself.",
            "properties": {
                "detail": _nullable({"type": "string"}, "Detail"),
                "error": {"title": "Error", "type": "string"},
            },
            "required": ["error"],
            "title": "ErrorBody",
            "type": "object",
        },
        "HTTPValidationError": {
            "properties": {
                "detail": {
                    "items": {"$ref": "#/components/schemas/ValidationError"},
                    "title": "Detail",
                    "type": "array",
                }
            },
            "title": "HTTPValidationError",
            "type": "object",
        },
        "Todo": {
            "description": "A todo as every endpoint returns it.",
            "properties": {
                "created_at": {"format": "date-time", "title": "Created At", "type": "string"},
                "done": {"title": "Done", "type": "boolean"},
                "due_date": due_date,
                "id": {"title": "Id", "type": "integer"},
                "notes": {"title": "Notes", "type": "string"},
                "title": {"title": "Title", "type": "string"},
                "updated_at": {"format": "date-time", "title": "Updated At", "type": "string"},
            },
            "required": ["id", "title", "notes", "done", "due_date", "created_at", "updated_at"],
            "title": "Todo",
            "type": "object",
        },
        "TodoCreate": {
            "description": "Body of ``POST /todos``.",
            "properties": {"due_date": due_date, "notes": {"default": "", **notes}, "title": title},
            "required": ["title"],
            "title": "TodoCreate",
            "type": "object",
        },
        "TodoUpdate": {
            "description": "Body of ``PATCH /todos/{id}``: every field is optional; absent fields are unchanged.",
            "properties": {
                "done": _nullable({"type": "boolean"}, "Done"),
                "due_date": due_date,
                "notes": _nullable(update_notes, "Notes"),
                "title": _nullable(update_title, "Title"),
            },
            "title": "TodoUpdate",
            "type": "object",
        },
        "ValidationError": {
            "properties": {
                "loc": {
                    "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                    "title": "Location",
                    "type": "array",
                },
                "msg": {"title": "Message", "type": "string"},
                "type": {"title": "Error Type", "type": "string"},
            },
            "required": ["loc", "msg", "type"],
            "title": "ValidationError",
            "type": "object",
        },
    }
    list_params = [DONE_PARAM]
    if stage >= 2:
        list_params.append(Q_PARAM)
    if stage >= 3:
        list_params.append(SORT_PARAM)
    if stage >= 1:
        list_params += [LIMIT_PARAM, OFFSET_PARAM]
    list_ok = _json_response(
        {"items": _TODO_REF, "title": "Response List Todos Todos Get", "type": "array"}
    )
    if stage >= 1:
        list_ok["headers"] = PAGE_HEADERS_SCHEMA
    id_param = NEW_ID_PARAM if stage >= 1 else OLD_ID_PARAM

    def item(
        operation: str,
        method: str,
        summary: str,
        extra: dict[str, Any],
        ok: dict[str, Any],
        code: str = "200",
    ) -> dict[str, Any]:
        return {
            **extra,
            "operationId": f"{operation}_todos__todo_id__{method}",
            "parameters": [id_param],
            "responses": {code: ok, "404": _NOT_FOUND_RESPONSE, "422": _VALIDATION_RESPONSE},
            "summary": summary,
        }

    paths = {
        "/health": {
            "get": {
                "operationId": "health_health_get",
                "responses": {
                    "200": _json_response(
                        {
                            "additionalProperties": {"type": "string"},
                            "title": "Response Health Health Get",
                            "type": "object",
                        }
                    )
                },
                "summary": "Health",
            }
        },
        "/todos": {
            "get": {
                "description": list_description(main_py),
                "operationId": "list_todos_todos_get",
                "parameters": list_params,
                "responses": {"200": list_ok, "422": _VALIDATION_RESPONSE},
                "summary": "List Todos",
            },
            "post": {
                "operationId": "create_todo_todos_post",
                "requestBody": {
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/TodoCreate"}}
                    },
                    "required": True,
                },
                "responses": {"201": _json_response(_TODO_REF), "422": _VALIDATION_RESPONSE},
                "summary": "Create Todo",
            },
        },
        "/todos/{todo_id}": {
            "delete": item(
                "delete_todo",
                "delete",
                "Delete Todo",
                {},
                {"description": "Successful Response"},
                "204",
            ),
            "get": item("get_todo", "get", "Get Todo", {}, _json_response(_TODO_REF)),
            "patch": item(
                "update_todo",
                "patch",
                "Update Todo",
                {
                    "description": "Change the fields present in the body; absent fields keep their value.",
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/TodoUpdate"}
                            }
                        },
                        "required": True,
                    },
                },
                _json_response(_TODO_REF),
            ),
        },
    }
    return {
        "components": {"schemas": schemas},
        "info": {"title": "todo-api", "version": "0.4.2"},
        "openapi": "3.1.0",
        "paths": paths,
    }


def openapi_text(stage: int, main_py: str) -> str:
    return json.dumps(openapi(stage, main_py), indent=2, sort_keys=True) + "\n"


def openapi_walk(old: Any, new: Any, path: str = "") -> Iterable[tuple[str, Any, Any]]:
    """The differences the story's little diff script prints (same algorithm)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            yield from openapi_walk(old.get(key), new.get(key), f"{path}/{key.replace('/', '~1')}")
    elif old != new:
        yield path, old, new


def openapi_diff_output(files: Files, stage: int) -> str:
    snapshot = json.loads(files.read("tests/snapshots/openapi.json"))
    return _openapi_diff(
        list(openapi_walk(snapshot, openapi(stage, files.read("todo_api/main.py"))))
    )


def refresh_snapshot(files: Files, stage: int) -> None:
    files.write("tests/snapshots/openapi.json", openapi_text(stage, files.read("todo_api/main.py")))


def refresh_and_run(files: Files, stage: int, first: str, second: str) -> str:
    """``UPDATE_SNAPSHOTS=1 pytest -q tests/test_openapi.py && pytest -v``."""
    refresh_snapshot(files, stage)
    verbose = pytest_output(files, seconds=second, verbose=True)[0]
    return f"{'.':<73} [100%]\n1 passed in {first}s\n" + verbose


def api_param_row(row: str) -> Edit:
    """Document a new ``GET /todos`` parameter: a row below ``done`` in docs/api.md's table."""
    return insert_after(
        "docs/api.md", "| `done` | query | boolean | - | only todos in this state |\n", row + "\n"
    )


def openapi_diff_bash(s: Session, stage: int) -> Bash:
    """The agent's check of the app's OpenAPI document against the snapshot, before a refresh."""
    return Bash(OPENAPI_DIFF, lambda: openapi_diff_output(s.files, stage), seconds=0.9)


def refresh_and_run_bash(
    s: Session, stage: int, first: str, second: str, *, seconds: float
) -> Bash:
    """The refresh of the snapshot and the full verbose run (``refresh_and_run``) as one call."""
    return Bash(
        f"UPDATE_SNAPSHOTS=1 {PYTEST} tests/test_openapi.py && {PYTEST_V}",
        lambda: refresh_and_run(s.files, stage, first, second),
        seconds=seconds,
    )


# ---------------------------------------------------------------------------------------------
# The story
# ---------------------------------------------------------------------------------------------

# What both pagination attempts rewrite, as at HEAD: the file, then the first and last line.
HEAD_LIST_METHOD = (
    "todo_api/repository.py",
    "    def list(self, *, done: bool | None = None) -> list[Todo]:",
    "        return [_row_to_todo(row) for row in self._conn.execute(sql, params)]",
)
HEAD_LIST_ROUTE = (
    "todo_api/main.py",
    '@router.get("/todos", response_model=list[Todo])',
    "    return repo.list(done=done)",
)


def explore(s: Session) -> str:
    """The first request and the look around; returns the id of the plan message."""
    s.model_change(PROVIDER, MODEL)
    s.thinking_level("medium")
    s.user(
        """
I'm working on todo-api (the FastAPI service in this repo). Two things for the next release:

1. Pagination on `GET /todos`. Our biggest deployment has ~30k todos now and the mobile app downloads all of them on every refresh.
2. Proper input validation on create and update. Right now you can create a todo with an empty title or a 50 KB note, and I'm fairly sure a PATCH with `"title": null` blows up.

Constraints:
- Don't change the public response schema. The web and mobile clients generate their types from the OpenAPI document, and the app versions already in the stores parse `GET /todos` as a plain JSON array of todo objects. That has to keep working.
- Tests with pytest, and no new dependencies.
- Never touch anything under `migrations/`. Those files are applied to production by the deploy pipeline. If you think the schema needs a change, tell me and I'll write the migration myself.

Have a look around first and tell me your plan before you change anything.
""",
        think_seconds=95,
    )
    s.assistant(
        "I'll start with an overview of the repository.",
        thinking="""
The user wants pagination on GET /todos and input validation for create/update in a FastAPI service. Constraints: the response schema must stay as it is (clients parse a plain JSON array), pytest, no new dependencies, nothing under migrations/ may change. They want a plan first, no edits yet.

First: repository layout, git state and recent history.
""",
        calls=[
            Bash(
                "git status --short && git log --oneline -6 && find . -path ./.venv -prune -o -path ./.git -prune -o -type f -print | sort",
                _code("""
a41c9e7 Release 0.4.2
3f0d2b8 Keep notes when PATCH only sends done (#44)
9e61a05 Return due_date as a plain date (#39)
c27f4d1 Release 0.4.1
5b8e0aa Add optional due dates (#37)
0d7e3c9 Document the error body in docs/api.md
./.gitignore
./CHANGELOG.md
./README.md
./docs/api.md
./migrations/0001_create_todos.sql
./migrations/0002_add_due_date.sql
./pyproject.toml
./tests/conftest.py
./tests/snapshots/openapi.json
./tests/test_openapi.py
./tests/test_todos.py
./todo_api/__init__.py
./todo_api/db.py
./todo_api/errors.py
./todo_api/main.py
./todo_api/models.py
./todo_api/repository.py
./todo_api/settings.py
"""),
                seconds=0.1,
            )
        ],
    )
    s.assistant(
        thinking="Clean working tree, small codebase. Reading the README, the API reference, the dependency list and the application modules.",
        calls=[
            Read("README.md"),
            Read("docs/api.md"),
            Read("pyproject.toml"),
            Read("todo_api/main.py"),
            Read("todo_api/models.py"),
        ],
    )
    s.assistant(
        thinking="""
main.py: routes on an APIRouter, one sqlite connection per request via get_db, `GET /todos` simply returns repo.list(done=done). Errors get ErrorBody. CORS middleware for the web app.

models.py: no constraints at all. TodoCreate.title is a bare `str`, so "" and huge strings pass. TodoUpdate has `title: str | None = None`, and changes() uses exclude_unset, so an explicit `"title": null` ends up in changes() with value None. Let me check what the repository does with that.
""",
        calls=[Read("todo_api/repository.py"), Read("todo_api/errors.py"), Read("todo_api/db.py")],
    )
    s.assistant(
        thinking="""
repository.update(): every key of changes() becomes `column = ?`. With title=None that is `UPDATE todos SET title = NULL`, and the column is NOT NULL (I'll confirm in the migration), so sqlite raises IntegrityError -> 500. The user's suspicion is right. `notes: null` is the same, and `done: null` fails even earlier: int(None) is a TypeError.

count() exists but is unused and ignores filters; I can reuse it for a total.

errors.py rewrites RequestValidationError into {"error": "invalid_request", "detail": "..."} with the location, so any constraint I add in pydantic or Query() gets the documented error shape automatically.

Now the tests: fixtures and the OpenAPI snapshot test, which matters a lot for "don't change the public response schema".
""",
        calls=[
            Read("tests/conftest.py"),
            Read("tests/test_todos.py"),
            Read("tests/test_openapi.py"),
            Read("tests/snapshots/openapi.json"),
        ],
    )
    s.assistant(
        thinking="""
The snapshot test compares the whole OpenAPI document, so adding query parameters will break it; the docstring explains when refreshing is acceptable (additions yes, response changes no). That is a good guard for the user's constraint, and I should show them the diff when it changes.

The snapshot itself: `Todo` has the seven fields, all required; `GET /todos` answers 200 with `{"type": "array", "items": {"$ref": "#/components/schemas/Todo"}}`. That array-of-Todo response is what must not change. Note the 422 responses are documented as FastAPI's HTTPValidationError although errors.py actually returns the ErrorBody shape - a pre-existing inaccuracy, not mine to change now, but worth remembering.

Let me look at the migrations (read only) to know the indexes, and get a baseline test run.
""",
        calls=[
            Bash(
                "ls migrations/ && cat migrations/*.sql",
                lambda: (
                    "0001_create_todos.sql\n0002_add_due_date.sql\n"
                    + s.files.read("migrations/0001_create_todos.sql")
                    + s.files.read("migrations/0002_add_due_date.sql")
                ),
                seconds=0.05,
            ),
            Bash(PYTEST, lambda: pytest_output(s.files, seconds="0.74"), seconds=1.9),
        ],
    )
    return s.assistant(
        """
Here is what I found and what I propose.

**Current state**
- `GET /todos` returns `repo.list(done=...)`: every row, `ORDER BY id`, no limit.
- The request models have no constraints: `TodoCreate.title` is a bare `str`, so `""`, `"   "` and 50 KB strings are all accepted.
- Your suspicion is right: `PATCH {"title": null}` passes validation (`str | None`), `changes()` keeps the explicit null, and the UPDATE fails with `NOT NULL constraint failed: todos.title` - a 500. `"notes": null` does the same, and `"done": null` crashes earlier in `int(None)`.
- `errors.py` already turns validation errors into `{"error": "invalid_request", "detail": ...}`, so new constraints produce the documented error shape for free.
- `tests/test_openapi.py` snapshots the whole OpenAPI document. New query parameters will change it, so the snapshot will need a refresh; I'll show you the diff first so you can check that no response schema moved.
- Baseline: 15 tests pass.

**Pagination: two options**
1. *limit/offset*: `?limit=50&offset=100`, the total in an `X-Total-Count` header, `next`/`prev` URLs in a `Link` header. Simple, and a client can jump to any page and show "page 3 of 12". The cost: `OFFSET n` makes SQLite step over n rows, and inserts or deletes between two requests shift the pages by a row.
2. *cursor (keyset)*: `?limit=50&cursor=<opaque>`, where the cursor encodes the last id seen and the query is `WHERE id > ? ORDER BY id LIMIT ?`. Constant cost per page and stable while rows change, but no page numbers and no jumping.

Either way the body stays a plain JSON array of todos; all paging information goes into headers, so the response schema does not change. One behaviour change is unavoidable: without parameters the endpoint returns the first page (I'd use a default limit of 50, max 100) instead of everything. If the app versions in the stores need the full list, the default could be "no limit" instead.

**Validation**
- `title`: surrounding whitespace stripped, then 1-200 characters, on create and update; `null` rejected on update.
- `notes`: at most 2000 characters; `null` rejected on update (`""` clears them).
- `done: null` rejected on update; `due_date: null` stays allowed (it clears the date, and docs/api.md documents that).
- Path ids must be >= 1.
- Everything through pydantic and FastAPI constraints, so failures are 422 `invalid_request` with the field named in `detail`.

No migration is needed: the primary key serves `ORDER BY id` and `idx_todos_done` serves the filter.

Which pagination style do you want, and is a default page size of 50 acceptable for the app versions already out there?
""",
        thinking="""
Baseline is green (15 tests). Migrations: title and notes are NOT NULL, done has a CHECK, indexes on done and due_date; the primary key covers ORDER BY id. Nothing in the schema needs to change for either pagination design.

For pagination, the real choice is offset vs keyset. Both can keep the body a plain array by putting metadata in headers (X-Total-Count, Link), which satisfies the response-schema constraint. I should present both with trade-offs rather than pick silently, since it depends on how the clients page. The default page size is a behaviour change for old clients that expect everything - worth flagging explicitly.
""",
    )


def abandoned_cursor_branch(s: Session) -> None:
    """The user's first choice: keyset pagination. Left behind when they go back in the tree."""
    s.user(
        """
Cursor. Offsets get slow on big tables and I'd rather do it properly the first time. Default 50 is fine, the old app versions only ever show the first screen anyway.
"""
    )
    s.assistant(
        "Going with keyset pagination. The repository first: `list()` takes the last id seen and a limit.",
        thinking="""
Keyset pagination on id: `WHERE id > :after [AND done = ?] ORDER BY id LIMIT :limit`. With the done filter SQLite can use idx_todos_done, whose entries end in the rowid, so that stays an index range scan.

The cursor should be opaque to clients so the encoding can change later: urlsafe base64 of "id:<n>", padding stripped. A cursor we did not produce -> 422 invalid_request. To know whether there is a next page, fetch limit + 1 rows.
""",
        calls=[
            Replace(
                *HEAD_LIST_METHOD,
                _code('''
    def list(
        self, *, done: bool | None = None, after_id: int = 0, limit: int | None = None
    ) -> list[Todo]:
        """Todos with ``id > after_id`` in id order: keyset pagination for ``GET /todos``."""
        sql = f"SELECT {_COLUMNS} FROM todos WHERE id > ?"
        params: list[object] = [after_id]
        if done is not None:
            sql += " AND done = ?"
            params.append(int(done))
        sql += " ORDER BY id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [_row_to_todo(row) for row in self._conn.execute(sql, params)]
'''),
            )
        ],
    )
    s.assistant(
        "Now the route: `limit` and `cursor` parameters, and a `Link` header pointing at the next page.",
        calls=[
            Merge(
                insert_before(
                    "todo_api/main.py",
                    "import logging\nimport sqlite3\n",
                    "import base64\nimport binascii\n",
                ),
                Edit(
                    "todo_api/main.py",
                    "from fastapi import APIRouter, Depends, FastAPI, Request, Response, status",
                    "from fastapi import APIRouter, Depends, FastAPI, Query, Request, Response, status",
                ),
                Edit(
                    "todo_api/main.py",
                    "from todo_api.errors import install_error_handlers",
                    "from todo_api.errors import TodoError, install_error_handlers",
                ),
            ),
            Replace(
                *HEAD_LIST_ROUTE,
                _code('''
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


class InvalidCursor(TodoError):
    status_code = 422
    code = "invalid_request"


def encode_cursor(last_id: int) -> str:
    return base64.urlsafe_b64encode(f"id:{last_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        prefix, _, value = raw.partition(":")
        if prefix != "id" or not value.isdigit():
            raise ValueError(raw)
        return int(value)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InvalidCursor("cursor: not a cursor this API produced") from None


@router.get("/todos", response_model=list[Todo])
def list_todos(
    request: Request,
    response: Response,
    repo: Repo,
    done: bool | None = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
    cursor: str | None = None,
) -> list[Todo]:
    """Todos oldest first, one page at a time; ``done`` filters by state.

    The body is a plain JSON array. When more todos follow, the ``Link`` header holds the URL
    of the next page (``rel="next"``); its ``cursor`` parameter is opaque to clients.
    """
    after_id = decode_cursor(cursor) if cursor is not None else 0
    todos = repo.list(done=done, after_id=after_id, limit=limit + 1)
    if len(todos) > limit:
        todos = todos[:limit]
        next_url = request.url.include_query_params(cursor=encode_cursor(todos[-1].id))
        response.headers["Link"] = f'<{next_url.path}?{next_url.query}>; rel="next"'
    return todos
'''),
            ),
        ],
    )
    s.assistant(
        thinking="Quick check that nothing existing broke before I write the new tests. The snapshot test should fail because of the two new query parameters.",
        calls=[
            Bash(
                PYTEST,
                lambda: pytest_output(
                    s.files,
                    failures={
                        "test_openapi_matches_snapshot": _snapshot_failure(
                            s.files, components=False
                        )
                    },
                    seconds="0.88",
                ),
                seconds=2.1,
            )
        ],
    )
    s.assistant(
        """
The repository and the route are in place:
- `GET /todos?limit=50&cursor=...` returns a plain array as before; when more todos follow, `Link: </todos?limit=50&cursor=aWQ6NTA>; rel="next"`.
- An invalid cursor is a 422 `invalid_request`.
- The existing CRUD tests pass. The only failure is the OpenAPI snapshot, as expected: it now lists `limit` and `cursor` on `GET /todos`. I haven't refreshed it yet.

Next I'd write tests for walking all pages (with and without `done`), the last page having no `Link`, and bad cursors; then the validation rules from the plan. Shall I continue?
"""
    )


def pagination_and_validation(s: Session) -> None:
    s.user(
        """
Change of plan. I talked to the mobile team: their list screen shows "page 3 of 12" and has a page picker, so cursors don't work for them. (I tried cursors in another branch of this session and threw it away; the working tree is clean again.)

Go with limit/offset: total in `X-Total-Count`, prev/next in `Link`. Default limit 50, max 100 is fine - the old app versions only ever show the first screen anyway. The validation rules you listed are good. Go ahead.
""",
        think_seconds=140,
    )
    s.assistant(
        "Going with limit/offset. Repository first: `list()` gets `limit`/`offset`, and the filter moves into a helper so that the count can use it too.",
        thinking="""
Decision: limit/offset, because the client needs page numbers and random access, which keyset cannot give. Is OFFSET too slow here? The worst case is the last page of ~30k rows: SQLite steps over 30k index entries of the primary key, which is a couple of milliseconds. Fine for this size; if it ever reaches millions of rows, an internal keyset endpoint can be added without touching this one.

Stable order matters with offsets: ORDER BY id is total (unique), so pages never overlap or skip rows within a snapshot.

Metadata:
- X-Total-Count: COUNT(*) with the same WHERE as the list; with idx_todos_done that is cheap.
- Link (RFC 8288): next when offset + limit < total, prev when offset > 0, preserving the other query parameters (done).
The body stays list[Todo], so response_model and the Todo schema do not change.

Steps: repository -> route -> request models -> path ids -> tests -> docs/changelog -> snapshot (after showing the diff).
""",
        calls=[
            Replace(
                *HEAD_LIST_METHOD,
                _code('''
    def list(
        self, *, done: bool | None = None, limit: int | None = None, offset: int = 0
    ) -> list[Todo]:
        """Todos in id order (oldest first), optionally one page of them."""
        where, params = _where(done=done)
        sql = f"SELECT {_COLUMNS} FROM todos{where} ORDER BY id"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [limit, offset]
        return [_row_to_todo(row) for row in self._conn.execute(sql, params)]
'''),
            ),
            insert_after(
                "todo_api/repository.py",
                _code("""
def _iso_date(value: date | None) -> str | None:
    return value.isoformat() if value is not None else None
"""),
                "\n\n"
                + _code('''
def _where(*, done: bool | None) -> tuple[str, list[object]]:
    """The WHERE clause and parameters of the list filters (shared by list and count)."""
    if done is None:
        return "", []
    return " WHERE done = ?", [int(done)]
'''),
            ),
        ],
    )
    s.assistant(
        "Now the route: `limit`/`offset` with bounds, the two headers (also documented in the OpenAPI response), and ids >= 1 on the item routes.",
        thinking="""
FastAPI details for the route:
- Declaring a `response: Response` parameter gives access to the outgoing headers while still returning a model; response_model=list[Todo] stays, so the body schema is untouched.
- `request.url.include_query_params(limit=..., offset=...)` replaces those two and keeps everything else (done, later maybe more), so the links stay correct when new filters are added.
- Query(ge=1, le=100) and Query(ge=0) give 422s with our error body via errors.py; no manual checks.
- `responses={200: {"headers": ...}}` documents the headers in OpenAPI for the generated clients without touching the schema.
- Path ids: one `TodoId = Annotated[int, Path(ge=1)]` alias for get/patch/delete.
""",
        calls=[
            Edit(
                "todo_api/main.py",
                "from fastapi import APIRouter, Depends, FastAPI, Request, Response, status",
                "from fastapi import APIRouter, Depends, FastAPI, Path, Query, Request, Response, status",
            ),
            Merge(
                insert_after(
                    "todo_api/main.py",
                    _code("""
NOT_FOUND = {404: {"model": ErrorBody, "description": "No todo with this id"}}
"""),
                    _code('''
TodoId = Annotated[int, Path(ge=1, description="The todo's id.")]

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100
PAGE_HEADERS = {
    "X-Total-Count": {
        "description": "Number of todos matching the filters, on all pages together.",
        "schema": {"type": "integer"},
    },
    "Link": {
        "description": 'RFC 8288 links to the "next" and "prev" pages, when they exist.',
        "schema": {"type": "string"},
    },
}


def _page_links(request: Request, *, limit: int, offset: int, total: int) -> str:
    """The ``Link`` header: next and previous pages, other query parameters kept."""
    links = []
    if offset + limit < total:
        links.append(_link(request, limit, offset + limit, "next"))
    if offset > 0:
        links.append(_link(request, limit, max(0, offset - limit), "prev"))
    return ", ".join(links)


def _link(request: Request, limit: int, offset: int, rel: str) -> str:
    url = request.url.include_query_params(limit=limit, offset=offset)
    return f'<{url.path}?{url.query}>; rel="{rel}"'
'''),
                ),
                Replace(
                    *HEAD_LIST_ROUTE,
                    _code('''
@router.get("/todos", response_model=list[Todo], responses={200: {"headers": PAGE_HEADERS}})
def list_todos(
    request: Request,
    response: Response,
    repo: Repo,
    done: bool | None = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> list[Todo]:
    """Todos oldest first, one page at a time; ``done`` filters by state.

    The body stays a plain JSON array of todos. The number of matching todos is in the
    ``X-Total-Count`` header and the neighbouring pages are linked from ``Link``.
    """
    total = repo.count()
    response.headers["X-Total-Count"] = str(total)
    links = _page_links(request, limit=limit, offset=offset, total=total)
    if links:
        response.headers["Link"] = links
    return repo.list(done=done, limit=limit, offset=offset)
'''),
                ),
            ),
        ],
    )
    s.assistant(
        calls=[
            Merge(
                Edit(
                    "todo_api/main.py",
                    "def get_todo(todo_id: int, repo: Repo) -> Todo:",
                    "def get_todo(todo_id: TodoId, repo: Repo) -> Todo:",
                ),
                Edit(
                    "todo_api/main.py",
                    "def update_todo(todo_id: int, payload: TodoUpdate, repo: Repo) -> Todo:",
                    "def update_todo(todo_id: TodoId, payload: TodoUpdate, repo: Repo) -> Todo:",
                ),
                Edit(
                    "todo_api/main.py",
                    "def delete_todo(todo_id: int, repo: Repo) -> Response:",
                    "def delete_todo(todo_id: TodoId, repo: Repo) -> Response:",
                ),
            ),
        ],
    )
    s.assistant(
        "Request models next. One constrained `Title` type, shared by create and update so the two cannot drift apart.",
        thinking="""
pydantic v2: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)] strips first and then checks the length, so "   " becomes "" and fails min_length. Using the same alias in TodoUpdate (as `Title | None`) keeps the rules identical.

The OpenAPI request schemas will gain minLength/maxLength; that is a request-side change (additions), not a response change.
""",
        calls=[
            Replace(
                "todo_api/models.py",
                "from datetime import date, datetime",
                "    done: bool | None = None",
                _code('''
from datetime import date, datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

TITLE_MAX_LENGTH = 200
NOTES_MAX_LENGTH = 2000

# Surrounding whitespace is stripped before the length check, so "   " is an empty title.
Title = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=TITLE_MAX_LENGTH)
]
Notes = Annotated[str, StringConstraints(max_length=NOTES_MAX_LENGTH)]


class TodoCreate(BaseModel):
    """Body of ``POST /todos``."""

    title: Title
    notes: Notes = ""
    due_date: date | None = None


class TodoUpdate(BaseModel):
    """Body of ``PATCH /todos/{id}``: every field is optional; absent fields are unchanged."""

    title: Title | None = None
    notes: Notes | None = None
    due_date: date | None = None
    done: bool | None = None
'''),
            )
        ],
    )
    s.assistant(
        "Now the tests: one new file for pagination, one for validation.",
        thinking="""
Pagination tests should pin down the contract, not the implementation:
- the default page when everything fits (and no Link header then);
- a window in the middle; an offset past the end -> empty list, still 200, total still correct;
- the body is still a plain list with exactly the seven Todo fields - the user's main constraint, so make it an explicit test;
- Link: next/prev in the middle, no next on the last page, other parameters preserved;
- X-Total-Count with a filter (it must count the filtered set, not the table);
- out-of-range parameters -> 422 invalid_request.
Validation tests: each invalid body on create, trimming, the exact maximum lengths (boundary), blank and null titles on PATCH, and ids <= 0.
""",
        calls=[
            Write("tests/test_pagination.py", TEST_PAGINATION_PY),
            Write("tests/test_validation.py", TEST_VALIDATION_PY),
        ],
    )

    def first_run() -> tuple[str, int]:
        files = s.files
        count_src, count_line = source_excerpt(
            files,
            "tests/test_pagination.py",
            "test_total_count_respects_done_filter",
            'assert response.headers["X-Total-Count"] == "3"',
        )
        null_src, null_line = source_excerpt(
            files,
            "tests/test_validation.py",
            "test_patch_rejects_null_title",
            'json={"title": None}',
        )
        update_src, update_line = _method_excerpt(
            files, "todo_api/repository.py", "    def update(self", 'f"UPDATE todos SET', 1
        )
        update_src = update_src.replace(
            '>               f"UPDATE todos SET',
            '                f"UPDATE todos SET',
        )
        update_src = update_src.replace(
            '                cursor = self._conn.execute(\n                    f"UPDATE',
            '>               cursor = self._conn.execute(\n                    f"UPDATE',
        )
        main_line = files.line_of("todo_api/main.py", "return repo.update(todo_id, payload)")
        failures = {
            "test_openapi_matches_snapshot": _snapshot_failure(files),
            "test_total_count_respects_done_filter": (
                f"""client = <starlette.testclient.TestClient object at 0x7f3a9c2b7f50>
make_todo = <function make_todo.<locals>.make at 0x7f3a9c1e3ce0>

{count_src}
E       AssertionError: assert '5' == '3'
E{BLANK_E}
E         - 3
E         + 5

tests/test_pagination.py:{count_line}: AssertionError
""",
                "AssertionError: assert '5' == '3'",
            ),
            "test_patch_rejects_null_title": (
                f"""client = <starlette.testclient.TestClient object at 0x7f3a9c0a1b90>
make_todo = <function make_todo.<locals>.make at 0x7f3a9c0f5da0>

{null_src}

tests/test_validation.py:{null_line}:{SPACE}
{SEP}
{_testclient_frames("patch", files.line_of("todo_api/main.py", "response = await call_next(request)"))}todo_api/main.py:{main_line}: in update_todo
    return repo.update(todo_id, payload)
{SEP}

self = <todo_api.repository.TodoRepository object at 0x7f3a9c0c6e40>, todo_id = 1
data = TodoUpdate(title=None, notes=None, due_date=None, done=None)

{update_src}
E           sqlite3.IntegrityError: NOT NULL constraint failed: todos.title

todo_api/repository.py:{update_line - 1}: IntegrityError
""",
                "sqlite3.IntegrityError: NOT NULL constraint failed: todos.title",
            ),
        }
        return pytest_output(files, failures=failures, seconds="1.37")

    s.assistant(calls=[Bash(PYTEST, first_run, seconds=2.6)])
    s.assistant(
        """
Three failures, two of them real bugs in my change:

1. `X-Total-Count` ignored the `done` filter: I called `count()` without it, and `count()` didn't take one. Both now use the same `_where()`.
2. `Title | None` lets an explicit `null` through to the UPDATE. A validator on `title`, `notes` and `done` rejects `null`; since validators don't run on defaults, it only fires when a client actually sends `null`.

The third is the OpenAPI snapshot, expected; I'll look at its diff after these fixes.
""",
        thinking="""
1. test_openapi_matches_snapshot: expected; the document gained parameters, headers and request constraints. I'll inspect the diff before refreshing.

2. test_total_count_respects_done_filter: X-Total-Count is 5 instead of 3. I call repo.count() without the filter, and count() ignores filters anyway. It must use the same _where() as list(), otherwise "page 3 of 12" is computed from the wrong total whenever a filter is set.

3. test_patch_rejects_null_title: IntegrityError, the exact 500 I described in the plan. `Title | None` accepts None, and because None is also the default I can't tell "absent" from "null" at the type level. A field validator fixes it: validators don't run for defaults, so one that rejects None fires only for an explicit null. Same for notes and done; due_date keeps null (clears the date).
""",
        calls=[
            Edit(
                "todo_api/repository.py",
                _code("""
    def count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM todos").fetchone()[0])
"""),
                _code('''
    def count(self, *, done: bool | None = None) -> int:
        """How many todos match the filters (the same filters as ``list``)."""
        where, params = _where(done=done)
        row = self._conn.execute(f"SELECT COUNT(*) FROM todos{where}", params).fetchone()
        return int(row[0])
'''),
            ),
            Edit(
                "todo_api/main.py",
                "    total = repo.count()\n",
                "    total = repo.count(done=done)\n",
            ),
            Merge(
                Edit(
                    "todo_api/models.py",
                    "from pydantic import BaseModel, ConfigDict, StringConstraints",
                    "from pydantic import BaseModel, ConfigDict, StringConstraints, field_validator",
                ),
                insert_after(
                    "todo_api/models.py",
                    _code("""
    title: Title | None = None
    notes: Notes | None = None
    due_date: date | None = None
    done: bool | None = None
"""),
                    "\n"
                    + _code("""
    @field_validator("title", "notes", "done")
    @classmethod
    def _not_null(cls, value: object) -> object:
        # None is the default, and validators do not run on defaults: this fires only for an
        # explicit JSON null. Only due_date may be cleared that way.
        if value is None:
            raise ValueError("may not be null; leave the field out to keep its value")
        return value
"""),
                ),
            ),
            insert_after(
                "tests/test_validation.py",
                _code("""
def test_patch_rejects_null_title(client, make_todo):
    todo = make_todo("original")

    response = client.patch(f"/todos/{todo['id']}", json={"title": None})

    assert response.status_code == 422
"""),
                "\n\n"
                + _code("""
def test_patch_rejects_null_notes_and_done(client, make_todo):
    todo = make_todo("original", notes="keep")

    assert client.patch(f"/todos/{todo['id']}", json={"notes": None}).status_code == 422
    assert client.patch(f"/todos/{todo['id']}", json={"done": None}).status_code == 422
    assert client.get(f"/todos/{todo['id']}").json()["notes"] == "keep"


def test_patch_still_clears_the_due_date_with_null(client, make_todo):
    todo = make_todo("dentist", due_date="2026-05-02")

    response = client.patch(f"/todos/{todo['id']}", json={"due_date": None})

    assert response.status_code == 200
    assert response.json()["due_date"] is None
"""),
            ),
        ],
    )
    s.assistant(
        "Before refreshing the snapshot, the exact differences between the stored OpenAPI document and the current one:",
        calls=[openapi_diff_bash(s, 1)],
    )
    s.assistant(
        thinking="""
Checking the diff against the constraint:
- components/schemas/Todo: not in the list, unchanged.
- The 200 response content of GET /todos (array of $ref Todo): unchanged; only `headers` was added next to it.
- Everything else is request side: new optional query parameters, minLength/maxLength on request bodies, minimum 1 on path ids, a longer description.

These are exactly the "additions" the test docstring allows, so refreshing is legitimate. Refresh, then run the whole suite.
""",
        calls=[refresh_and_run_bash(s, 1, "0.41", "1.22", seconds=3.4)],
    )
    s.assistant(
        "All green. Updating the API docs (I have them from the start) and the changelog.",
        calls=[Read("CHANGELOG.md")],
    )
    s.assistant(
        calls=[
            Replace(
                "docs/api.md",
                "### `GET /todos`",
                "| `done` | query | boolean | - | only todos in this state |",
                _code("""
### `GET /todos`

Todos, oldest first, one page at a time. The body is a JSON array of todo objects, as it
always was; paging information is in the response headers.

| parameter | in | type | default | notes |
|---|---|---|---|---|
| `done` | query | boolean | - | only todos in this state |
| `limit` | query | integer | 50 | page size, 1-100 |
| `offset` | query | integer | 0 | how many matching todos to skip |

| header | meaning |
|---|---|
| `X-Total-Count` | number of todos matching the filters, on all pages together |
| `Link` | `rel="next"` and `rel="prev"` page URLs ([RFC 8288](https://www.rfc-editor.org/rfc/rfc8288)), only when such a page exists; other parameters are kept |

Example: `GET /todos?done=false&limit=20&offset=40` returns the third page of open todos;
with 75 open todos, `X-Total-Count: 75` and
`Link: </todos?done=false&limit=20&offset=60>; rel="next", </todos?done=false&limit=20&offset=20>; rel="prev"`.

Before 0.5.0 this endpoint returned every todo. Clients that need all of them follow the
`next` links.
"""),
            ),
            Merge(
                insert_after(
                    "docs/api.md",
                    _code("""
Body: `title` (required), `notes`, `due_date`. Returns `201` and the new todo.
"""),
                    "\n"
                    + _code("""
Validation (`422 invalid_request` otherwise):
- `title`: surrounding whitespace is removed, then 1-200 characters;
- `notes`: at most 2000 characters;
- `due_date`: `YYYY-MM-DD`.
"""),
                ),
                Edit(
                    "docs/api.md",
                    _code("""
Any subset of `title`, `notes`, `due_date`, `done`. Fields that are absent keep their value;
`"due_date": null` clears the due date. Returns the updated todo, or `404`.
"""),
                    _code("""
Any subset of `title`, `notes`, `due_date`, `done`. Fields that are absent keep their value;
`"due_date": null` clears the due date, while `null` for any other field is a `422`. The same
length rules as for `POST` apply. Returns the updated todo, or `404`.
"""),
                ),
            ),
            insert_after(
                "CHANGELOG.md",
                "## [Unreleased]\n",
                "\n"
                + _code("""
### Added
- Pagination on `GET /todos`: `limit` (default 50, max 100) and `offset` query parameters,
  `X-Total-Count` and `Link` response headers. The body is still a plain array.
- Validation of request bodies: titles 1-200 characters after trimming, notes up to 2000
  characters; ids in paths must be >= 1.

### Changed
- `GET /todos` without parameters returns the first 50 todos instead of all of them.

### Fixed
- `PATCH /todos/{id}` with `null` for `title`, `notes` or `done` returned a 500; it is now a
  422 (`null` still clears `due_date`).
"""),
            ),
        ],
    )
    s.assistant(
        calls=[
            Bash(
                "git status --short && git diff --stat",
                lambda: (
                    "".join(f" M {p}\n" for p in s.files.changed())
                    + "".join(f"?? {p}\n" for p in s.files.untracked())
                    + s.files.git_diff_stat()
                ),
                seconds=0.1,
            ),
            Bash(
                "git diff -- todo_api/",
                lambda: s.files.git_diff(
                    ["todo_api/main.py", "todo_api/models.py", "todo_api/repository.py"]
                ),
                seconds=0.1,
            ),
        ],
    )
    s.assistant(
        """
Done. Summary of the change:

**Pagination** (`GET /todos`)
- `limit` (default 50, 1-100) and `offset` (>= 0); anything else is a 422 `invalid_request`.
- The body is still a plain JSON array of `Todo`. The total is in `X-Total-Count` (respecting `done`), and `Link` carries `next`/`prev` URLs that keep the other parameters.
- Order is `ORDER BY id`, which is unique, so pages neither overlap nor skip rows.
- Why offset and not keyset: the mobile app needs page numbers and jumping. At ~30k rows the deepest `OFFSET` costs SQLite a couple of milliseconds on the primary key. If the table grows by orders of magnitude, a keyset variant can be added for internal consumers without changing this endpoint.

**Validation**
- `title`: trimmed, then 1-200 characters; `notes` <= 2000; on `POST` and `PATCH` alike (one shared `Title` type).
- `PATCH` with `null` for `title`/`notes`/`done` is a 422 instead of a 500; `due_date: null` still clears the date.
- Path ids must be >= 1.

**Contract check**
- I compared the OpenAPI document with the snapshot before refreshing it: `components/schemas/Todo` and the 200 response bodies are unchanged. The differences are new query parameters, documented response headers, request-body length constraints and `minimum: 1` on path ids.

**Other**
- Tests: `tests/test_pagination.py` (8 tests + 5 parameter cases) and `tests/test_validation.py`; NTESTS tests pass.
- `docs/api.md` and `CHANGELOG.md` updated. No new dependencies, nothing under `migrations/` touched.

Note for the release: `GET /todos` without parameters now returns 50 todos instead of all of them. You said the old app versions only show the first screen, but any script or integration that downloads everything in one call needs to follow the `next` links.
""".replace("NTESTS", str(len(_collect(s.files)))),
        thinking="Everything the user asked for is in place. The summary should state the decision and its rationale, the contract check, and the one behaviour change (default page size) clearly.",
    )


def empty_patch(s: Session) -> None:
    s.user(
        """
Looks good. Two questions before I review: what exactly does a client get back for `limit=0`? And what happens if someone sends an empty PATCH body `{}`? If anything is silly, fix it.
""",
        think_seconds=210,
    )
    probe = _code(r"""
TODO_DB_PATH=/tmp/probe.sqlite3 .venv/bin/python - <<'EOF'
import json
from fastapi.testclient import TestClient
from todo_api.main import create_app

with TestClient(create_app()) as c:
    todo = c.post("/todos", json={"title": "probe"}).json()
    for method, url, body in [
        ("GET", "/todos?limit=0", None),
        ("GET", "/todos?limit=500", None),
        ("GET", "/todos?offset=-1", None),
        ("PATCH", f"/todos/{todo['id']}", {}),
        ("PATCH", f"/todos/{todo['id']}", {"is_done": True}),
    ]:
        r = c.request(method, url, json=body)
        print(method, url, json.dumps(body) if body is not None else "", "->", r.status_code, r.text)
EOF
""").rstrip("\n")

    def probe_output() -> str:
        todo = json.dumps(_todo(1, "probe", s.clock), separators=(",", ":"))
        return _code(f"""
GET /todos?limit=0  -> 422 {{"error":"invalid_request","detail":"query.limit: Input should be greater than or equal to 1"}}
GET /todos?limit=500  -> 422 {{"error":"invalid_request","detail":"query.limit: Input should be less than or equal to 100"}}
GET /todos?offset=-1  -> 422 {{"error":"invalid_request","detail":"query.offset: Input should be greater than or equal to 0"}}
PATCH /todos/1 {{}} -> 200 {todo}
PATCH /todos/1 {{"is_done": true}} -> 200 {todo}
""")

    s.assistant(
        "Let me ask the app directly rather than guess.",
        thinking="""
limit=0: Query(ge=1) should reject it with a 422, but the exact detail text comes from pydantic and errors.describe(), so run it. Empty PATCH: TodoUpdate() with no fields set -> changes() is {} -> update() returns get() unchanged, 200. Also worth probing a misspelt field, since pydantic ignores unknown keys by default. A throwaway script against a temp database, nothing written to the repo.
""",
        calls=[Bash(probe, probe_output, seconds=1.1)],
    )
    s.assistant(
        """
`limit=0` is fine: a 422 with `"detail": "query.limit: Input should be greater than or equal to 1"`, the same shape as every other error (likewise `limit=500` and `offset=-1`).

The empty PATCH is the silly one. `{}` returns 200 and changes nothing, and so does `{"is_done": true}`: unknown fields are dropped silently, so a client that misspells a field gets a success and no change. I'll make a body with no known field a 422. I'm deliberately *not* forbidding unknown fields in general: a client that sends the whole todo object back (including `id` and `created_at`) would start failing, and that would be a breaking change.
""",
        thinking="""
limit=0 / 500 / offset=-1: clear 422s with the field named. Nothing to fix.

PATCH {} -> 200 and no change; update() returns early, so updated_at is not even bumped. Harmless on its own, but {"is_done": true} shows why it is a problem: pydantic ignores unknown fields by default, so a typo becomes a silent no-op with a 200.

Option A: extra="forbid" on TodoUpdate. That would also reject clients that PATCH with the full object (id, created_at, ...), which older clients might well do; it also changes the request schema (additionalProperties: false). Too risky without knowing the clients.
Option B: reject a body in which no known field was set (model_fields_set empty). Catches {} and pure typos, breaks nobody who sends at least one real field. Going with B.
""",
        calls=[
            Edit(
                "todo_api/models.py",
                "from pydantic import BaseModel, ConfigDict, StringConstraints, field_validator",
                "from pydantic import BaseModel, ConfigDict, StringConstraints, field_validator, model_validator",
            ),
            insert_after(
                "todo_api/models.py",
                _code("""
        if value is None:
            raise ValueError("may not be null; leave the field out to keep its value")
        return value
"""),
                "\n"
                + _code("""
    @model_validator(mode="after")
    def _changes_something(self) -> TodoUpdate:
        # Unknown keys are ignored (clients may send the whole todo back), but a body in which
        # no known field is set is a client bug, e.g. a misspelt field name.
        if not self.model_fields_set:
            raise ValueError("the body sets none of title, notes, due_date, done")
        return self
"""),
            ),
            insert_before(
                "tests/test_validation.py",
                "def test_todo_id_must_be_positive(client):\n",
                _code("""
@pytest.mark.parametrize(
    "body",
    [
        {},
        {"is_done": True},
    ],
)
def test_patch_must_set_a_known_field(client, make_todo, body):
    todo = make_todo("original")

    response = client.patch(f"/todos/{todo['id']}", json=body)

    assert response.status_code == 422
    assert "sets none of" in response.json()["detail"]


def test_patch_may_send_the_whole_todo_back(client, make_todo):
    todo = make_todo("original")

    response = client.patch(f"/todos/{todo['id']}", json={**todo, "done": True})

    assert response.status_code == 200
    assert response.json()["done"] is True


"""),
            ),
        ],
    )
    s.assistant(
        calls=[
            Bash(
                f'{PYTEST} -k "validation or patch"',
                lambda: pytest_output(
                    s.files, select=lambda t: "validation" in t or "patch" in t, seconds="0.63"
                ),
                seconds=1.8,
            ),
            Bash(PYTEST, lambda: pytest_output(s.files, seconds="1.25"), seconds=2.7),
        ],
    )
    s.assistant(
        """
Fixed. `PATCH` now answers a body that sets none of `title`, `notes`, `due_date`, `done` with

```json
{"error": "invalid_request", "detail": "body: Value error, the body sets none of title, notes, due_date, done"}
```

Unknown extra keys next to a real field are still accepted, so clients that send the whole todo back keep working (there's a test for that now). The request schema in the OpenAPI document is unchanged by this, so the snapshot didn't move. NTESTS tests pass.
""".replace("NTESTS", str(len(_collect(s.files))))
    )


def search(s: Session) -> None:
    s.bash_execution(
        'git add -A && git commit -qm "Paginate GET /todos and validate request bodies" && git log --oneline -3',
        "b7e40d1 Paginate GET /todos and validate request bodies\na41c9e7 Release 0.4.2\n3f0d2b8 Keep notes when PATCH only sends done (#44)\n",
        think_seconds=260,
    )
    s.files.head = dict(s.files.files)
    s.user(
        """
Reviewed it and committed (see above), thanks. One more small one before the release: a `q` parameter on `GET /todos` that finds todos whose title or notes contain the text, case-insensitively. Support keeps asking for it. It has to work together with `done` and the pagination (the total has to be right). Same constraints as before.
""",
        think_seconds=120,
    )
    s.assistant(
        "Re-reading the two files as committed before changing them.",
        thinking="""
Search with SQL LIKE: `title LIKE '%' || ? || '%'`. Points to get right:
- SQLite's LIKE is case-insensitive for ASCII letters by default - matches "case-insensitively" for the common case; non-ASCII letters (Ä/ä) are compared exactly. Worth mentioning, not worth a dependency.
- `%` and `_` in the user's text are wildcards for LIKE. Searching "50%" must mean the literal text, so escape `\\`, `%` and `_` and add `ESCAPE '\\'`.
- Bind the pattern as a parameter, never format it into the SQL.
- No index can serve a leading-wildcard LIKE; it scans the table. For ~30k rows that is a few milliseconds. A real full-text index (FTS5) would be a migration with a virtual table and triggers - the user's call, not mine.
- Put the condition into `_where()`: list() and count() share it, so X-Total-Count and the Link header are right for free. That is the payoff of the refactoring from the pagination step.
- Validate `q`: 1-100 characters; an empty `q=` is a 422 rather than "match everything".
""",
        calls=[Read("todo_api/repository.py"), Read("todo_api/main.py")],
    )
    s.assistant(
        "The filter goes into `_where()`, which `list()` and `count()` share, so the total and the links stay consistent. Wildcards in the search text are escaped.",
        calls=[
            Merge(
                Edit(
                    "todo_api/repository.py",
                    "import sqlite3\nfrom datetime",
                    "import re\nimport sqlite3\nfrom datetime",
                ),
                insert_after(
                    "todo_api/repository.py",
                    _code("""
_UPDATABLE = frozenset({"title", "notes", "due_date", "done"})
"""),
                    _code(r"""
# Characters with a meaning in LIKE patterns; escaped so that search text is taken literally.
_LIKE_SPECIAL = re.compile(r"[\\%_]")
"""),
                ),
            ),
            Replace(
                "todo_api/repository.py",
                "    def list(",
                "        where, params = _where(done=done)",
                _code('''
    def list(
        self,
        *,
        done: bool | None = None,
        q: str | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Todo]:
        """Todos in id order (oldest first), optionally one page of them."""
        where, params = _where(done=done, q=q)
'''),
            ),
            Edit(
                "todo_api/repository.py",
                _code('''
    def count(self, *, done: bool | None = None) -> int:
        """How many todos match the filters (the same filters as ``list``)."""
        where, params = _where(done=done)
'''),
                _code('''
    def count(self, *, done: bool | None = None, q: str | None = None) -> int:
        """How many todos match the filters (the same filters as ``list``)."""
        where, params = _where(done=done, q=q)
'''),
            ),
            Replace(
                "todo_api/repository.py",
                "def _where(*, done: bool | None) -> tuple[str, list[object]]:",
                '    return " WHERE done = ?", [int(done)]',
                _code(r'''
def _where(*, done: bool | None, q: str | None = None) -> tuple[str, list[object]]:
    """The WHERE clause and parameters of the list filters (shared by list and count)."""
    clauses: list[str] = []
    params: list[object] = []
    if done is not None:
        clauses.append("done = ?")
        params.append(int(done))
    if q is not None:
        # SQLite's LIKE ignores case for ASCII letters. The pattern is bound, never formatted in.
        pattern = "%" + _LIKE_SPECIAL.sub(r"\\\g<0>", q) + "%"
        clauses.append("(title LIKE ? ESCAPE '\\' OR notes LIKE ? ESCAPE '\\')")
        params += [pattern, pattern]
    if not clauses:
        return "", []
    return " WHERE " + " AND ".join(clauses), params
'''),
            ),
        ],
    )
    s.assistant(
        calls=[
            Merge(
                Edit(
                    "todo_api/main.py",
                    _code("""
    done: bool | None = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
"""),
                    _code("""
    done: bool | None = None,
    q: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=100,
            description="Text to look for in titles and notes (case-insensitive).",
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
"""),
                ),
                Edit(
                    "todo_api/main.py",
                    _code('''
    """Todos oldest first, one page at a time; ``done`` filters by state.

    The body stays a plain JSON array of todos. The number of matching todos is in the
'''),
                    _code('''
    """Todos oldest first, one page at a time; ``done`` filters by state and ``q`` searches
    titles and notes.

    The body stays a plain JSON array of todos. The number of matching todos is in the
'''),
                ),
            ),
            Merge(
                Edit(
                    "todo_api/main.py",
                    "    total = repo.count(done=done)\n",
                    "    total = repo.count(done=done, q=q)\n",
                ),
                Edit(
                    "todo_api/main.py",
                    "    return repo.list(done=done, limit=limit, offset=offset)\n",
                    "    return repo.list(done=done, q=q, limit=limit, offset=offset)\n",
                ),
            ),
        ],
    )
    s.assistant(
        "Tests, including literal `%` and `_` and the combination with `done` and paging:",
        thinking="""
The fixture needs: a title match, a notes-only match in different case ("MILK" in notes), a text containing `%`, a text containing `_`, and non-matching todos. Then: `q=%` and `q=_` must not match everything - that is the escaping test. And the combination: filter + q + limit, checking X-Total-Count counts only the matches.
""",
        calls=[Write("tests/test_search.py", TEST_SEARCH_PY)],
    )
    s.assistant(
        calls=[
            Bash(
                f"{PYTEST} tests/test_search.py tests/test_pagination.py",
                lambda: pytest_output(
                    s.files,
                    select=lambda t: "test_search" in t or "test_pagination" in t,
                    seconds="0.57",
                ),
                seconds=1.6,
            ),
            openapi_diff_bash(s, 2),
        ],
    )
    s.assistant(
        "The search and pagination tests pass, and the OpenAPI document only gains the optional `q` parameter and the longer description. Refreshing the snapshot and running everything:",
        calls=[refresh_and_run_bash(s, 2, "0.43", "1.33", seconds=3.3)],
    )
    s.assistant(
        calls=[
            api_param_row(
                "| `q` | query | string | - | only todos whose title or notes contain this text, 1-100 characters; case-insensitive for ASCII letters |"
            ),
            insert_after(
                "CHANGELOG.md",
                "  characters; ids in paths must be >= 1.\n",
                _code("""
- Text search on `GET /todos`: `q` matches titles and notes, ignoring case.
"""),
            ),
        ],
    )
    s.assistant(
        f"""
Search is in: `GET /todos?q=milk` returns the todos whose title or notes contain "milk", ignoring case, and it combines with `done`, `limit` and `offset`. `X-Total-Count` counts the matches, because `list()` and `count()` share the same WHERE clause.

Details:
- `%`, `_` and `\\` in the search text are escaped, so `q=50%` finds the text "50%" instead of everything starting with 50. The pattern is a bound parameter.
- `q` must be 1-100 characters; `q=` is a 422 rather than "match everything".
- "Case-insensitive" holds for ASCII letters only: SQLite's `LIKE` compares `Ä` and `ä` as different characters. Fixing that properly needs ICU or a full-text index.
- Speed: `LIKE '%...%'` cannot use an index, so each search scans the table - a few milliseconds at ~30k rows. If search becomes popular, an FTS5 index would be the next step, but that is a migration (a virtual table plus triggers), so I've left it to you.

The OpenAPI snapshot changed only by the new optional `q` parameter and the description. {len(_collect(s.files))} tests pass; docs and changelog updated.
""",
    )


def sorting(s: Session) -> None:
    s.files.head = dict(s.files.files)  # the user committed the search
    s.thinking_level("high")
    s.user(
        """
Thanks, committed. Next feature for the same endpoint: sorting. Clients should be able to sort `GET /todos` by `created_at`, `due_date` or `title`, ascending or descending, combined with the `done` filter and the pagination. Todos without a due date should come last when sorting by due date, in both directions.

Same rules as before: response schema unchanged, no new dependencies, nothing under migrations/.
""",
        think_seconds=430,
    )
    s.assistant(
        "First the SQLite version (for `NULLS LAST`) and the current state of the two files I'll change.",
        thinking="""
API design: one `sort` parameter with a `-` prefix for descending (`sort=-due_date`), as JSON:API and Django REST Framework do, versus two parameters (`sort_by` + `order`). One parameter is easier to carry in Link URLs and cannot be half-specified. I'll type it as a Literal of the six allowed values: the OpenAPI document then shows an enum, generated clients get a union type, and FastAPI rejects anything else with our 422 - which also means no user input ever reaches the SQL; the ORDER BY text comes from a fixed mapping.

Semantics:
- Ties: created_at has one-second resolution and many todos share a due date or title, so every ORDER BY needs `id` as the last term. With OFFSET pagination, a non-unique order can make rows appear on two pages or on none. The tie-breaker follows the main direction.
- NULL due dates last in both directions: SQLite puts NULLs first for ASC and last for DESC; `NULLS LAST` (SQLite >= 3.30) says it explicitly for both. I need to check the SQLite version that Python links against.
- Default: created_at ascending, which matches today's id order.
- Index: due_date has idx_todos_due_date; created_at and title have none. Sorting ~30k rows without an index is a few milliseconds per request, acceptable, but worth telling the user; adding an index is a migration, which is theirs to write.
""",
        calls=[
            Bash(
                '.venv/bin/python -c "import sqlite3; print(sqlite3.sqlite_version)"',
                "3.45.1\n",
                seconds=0.1,
            ),
            Read("todo_api/repository.py"),
            Read("todo_api/main.py"),
        ],
    )
    s.assistant(
        "SQLite 3.45 supports `NULLS LAST`. The repository maps each public key to fixed SQL; `id` breaks ties in the same direction so that pages stay stable.",
        calls=[
            insert_after(
                "todo_api/repository.py",
                _code(r"""
_LIKE_SPECIAL = re.compile(r"[\\%_]")
"""),
                _code(r'''
# Public sort keys (main.SortKey) and the SQL they stand for: only these strings ever reach
# ORDER BY. ``id`` breaks ties, so that offset pages never overlap or skip rows.
_SORT_COLUMNS = {
    "created_at": "created_at",
    "due_date": "due_date",
    "title": "title",
}
DEFAULT_SORT = "created_at"


def _order_by(sort: str) -> str:
    """``ORDER BY`` terms for ``sort``: a key, with ``-`` in front for descending."""
    key = sort.removeprefix("-")
    direction = "DESC" if sort.startswith("-") else "ASC"
    # Todos without a due date come last in both directions.
    nulls = " NULLS LAST" if key == "due_date" else ""
    return f"{_SORT_COLUMNS[key]} {direction}{nulls}, id {direction}"
'''),
            ),
            Replace(
                "todo_api/repository.py",
                "        q: str | None = None,",
                '        sql = f"SELECT {_COLUMNS} FROM todos{where} ORDER BY id"',
                _code('''
        q: str | None = None,
        sort: str = DEFAULT_SORT,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[Todo]:
        """Todos in ``sort`` order (default: oldest first), optionally one page of them."""
        where, params = _where(done=done, q=q)
        sql = f"SELECT {_COLUMNS} FROM todos{where} ORDER BY {_order_by(sort)}"
'''),
            ),
        ],
    )
    s.assistant(
        "The route: `sort` as a `Literal`, so OpenAPI documents the six values and FastAPI rejects anything else.",
        calls=[
            Edit(
                "todo_api/main.py",
                "from typing import Annotated\n",
                "from typing import Annotated, Literal\n",
            ),
            insert_after(
                "todo_api/main.py",
                _code("""
TodoId = Annotated[int, Path(ge=1, description="The todo's id.")]
"""),
                _code("""
SortKey = Literal["created_at", "-created_at", "due_date", "-due_date", "title", "-title"]
"""),
            ),
            Merge(
                Replace(
                    "todo_api/main.py",
                    "    ] = None,",
                    '    """',
                    _code('''
    ] = None,
    sort: Annotated[
        SortKey, Query(description="Sort key; a leading '-' sorts descending.")
    ] = "created_at",
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE_SIZE,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> list[Todo]:
    """Todos one page at a time, oldest first unless ``sort`` says otherwise.

    ``done`` filters by state and ``q`` searches titles and notes. The body stays a plain JSON
    array of todos. The number of matching todos is in the ``X-Total-Count`` header and the
    neighbouring pages are linked from ``Link``. Todos without a due date come last when
    sorting by ``due_date``.
    """
'''),
                ),
                Edit(
                    "todo_api/main.py",
                    "    return repo.list(done=done, q=q, limit=limit, offset=offset)\n",
                    "    return repo.list(done=done, q=q, sort=sort, limit=limit, offset=offset)\n",
                ),
            ),
        ],
    )
    s.assistant(
        "Tests: a fixed set of four todos with mixed-case titles and a missing due date.",
        thinking="""
Fixture design: four todos created in a known order, one with an uppercase initial ("Cherry") so that a case-sensitive sort would show up, one without a due date, and due dates that are not in creation order. All four are created within the same second, so created_at ties everywhere - exactly the case where the id tie-breaker decides the order. Tests: default order, -created_at, title, due_date both directions with the missing date last, a combination with done + limit/offset (X-Total-Count and Link carry sort), and rejected keys including an injection attempt.
""",
        calls=[Write("tests/test_sorting.py", TEST_SORTING_PY)],
    )

    def sorting_fixture(offset_s: int) -> str:
        """pytest's repr of the ``todos`` fixture value, truncated like its saferepr."""
        created = s.clock + offset_s * 1000
        todos = {}
        for number, (title, due) in enumerate(
            [
                ("banana", "2026-06-01"),
                ("apple", None),
                ("Cherry", "2026-04-15"),
                ("date", "2026-05-20"),
            ],
            1,
        ):
            todos[title] = _todo(number, title, created, due)
        return _saferepr(todos)

    def sorting_run() -> tuple[str, int]:
        # Both sorting failures come from the case-sensitive title order (BINARY collation).
        failures = {"test_openapi_matches_snapshot": _snapshot_failure(s.files, components=False)}
        for test, client_at, offset_s, got, expected in [
            (
                "test_sort_by_title_ignores_case",
                "0x7f0e61d3a810",
                0,
                ["Cherry", "apple", "banana", "date"],
                ["apple", "banana", "Cherry", "date"],
            ),
            (
                "test_sort_combines_with_filter_and_pagination",
                "0x7f0e61b29c50",
                1,
                ["apple", "banana"],
                ["banana", "Cherry"],
            ),
        ]:
            locals_ = (
                f"client = <starlette.testclient.TestClient object at {client_at}>\n"
                f"todos = {sorting_fixture(offset_s)}"
            )
            failures[test] = _list_failure(
                s.files, "tests/test_sorting.py", test, locals_, got, expected
            )
        return pytest_output(s.files, failures=failures, seconds="1.48")

    s.assistant(calls=[Bash(PYTEST, sorting_run, seconds=2.9)])
    s.assistant(
        "Title sorting is case-sensitive: SQLite compares with `BINARY` by default, so `Cherry` sorts before `apple`. Nobody expects that in a todo list; `COLLATE NOCASE` fixes it. The snapshot failure is expected again - checking the diff first.",
        thinking="""
Both sorting failures have the same cause: BINARY collation puts uppercase before lowercase. NOCASE folds ASCII only (not "Ä" etc.), which is acceptable for now; proper Unicode collation would need ICU, i.e. a new dependency, which is ruled out. I'll mention the limitation.

The snapshot: should be only the new `sort` parameter plus the description. Verify before refreshing, as last time.
""",
        calls=[
            Edit(
                "todo_api/repository.py",
                '    "title": "title",\n',
                '    "title": "title COLLATE NOCASE",\n',
            ),
            openapi_diff_bash(s, 3),
        ],
    )
    s.assistant(
        "Only the new `sort` parameter and the endpoint description changed; no schema moved. Refreshing the snapshot and running everything:",
        calls=[refresh_and_run_bash(s, 3, "0.44", "1.41", seconds=3.5)],
    )
    s.assistant(
        calls=[
            api_param_row(
                "| `sort` | query | string | `created_at` | `created_at`, `due_date` or `title`; a leading `-` sorts descending (`-due_date`). Titles compare case-insensitively (ASCII letters only); todos without a due date come last in both directions; ties are broken by `id` |"
            ),
            Merge(
                insert_after(
                    "CHANGELOG.md",
                    "- Text search on `GET /todos`: `q` matches titles and notes, ignoring case.\n",
                    _code("""
- Sorting on `GET /todos`: `sort=created_at|due_date|title`, `-` prefix for descending.
"""),
                ),
                insert_after(
                    "CHANGELOG.md",
                    "- `GET /todos` without parameters returns the first 50 todos instead of all of them.\n",
                    _code("""
- `PATCH /todos/{id}` with a body that sets no known field is a 422 instead of a no-op.
"""),
                ),
            ),
        ],
    )
    s.assistant(
        "Final review of the code changes:",
        thinking="All tests pass. Before summarizing, read the complete diff once more: the docs table, the changelog wording, and whether anything in main.py or repository.py is left over or inconsistent.",
        calls=[
            Bash(
                "git diff -- todo_api/ docs/ CHANGELOG.md",
                lambda: s.files.git_diff(
                    ["CHANGELOG.md", "docs/api.md", "todo_api/main.py", "todo_api/repository.py"]
                ),
                seconds=0.1,
            )
        ],
    )
    s.assistant(
        """
Sorting is in. Summary:

- `GET /todos?sort=<key>` with `created_at` (default), `due_date` or `title`; a leading `-` sorts descending. It combines with `done`, `q` and `limit`/`offset`, and the `Link` URLs keep it.
- The parameter is a `Literal` of the six values: the OpenAPI document shows them as an enum (generated clients get a proper type), and anything else is a 422 `invalid_request`. The SQL comes from a fixed mapping, so no client input reaches `ORDER BY`.
- Todos without a due date come last in both directions (`NULLS LAST`; Python's SQLite here is 3.45).
- Titles sort case-insensitively with `COLLATE NOCASE`. Limitation: it folds ASCII letters only, so `Äpfel` sorts after `zebra`. Proper Unicode collation would need ICU, i.e. a new dependency, so I left it out.
- Every order ends with `id` as a tie-breaker. Without it, todos with the same `created_at` second or the same title could show up on two pages, or on none, when paging with `offset`.
- Response schema unchanged (checked against the snapshot before refreshing it; only the `sort` parameter and the description changed). NTESTS tests pass. Docs and changelog updated (I also added the changelog line for the empty-`PATCH` change, which I had missed last time); nothing under `migrations/` touched.

Performance note: `due_date` has an index; `created_at` and `title` don't, so those sorts read and sort the matching rows on each request. At ~30k rows that is a few milliseconds. If it ever shows up in latency, an index on `(title COLLATE NOCASE, id)` would be the migration to write - I haven't touched `migrations/`.

One more thing I noticed while looking at the headers again: `create_app()` sets up CORS without `expose_headers`. Browsers only let JavaScript read CORS-safelisted response headers, so the web app - which runs on another origin, `http://localhost:5173` in development - cannot read `X-Total-Count` or `Link` at all; the mobile apps are not affected. Adding `expose_headers=["X-Total-Count", "Link"]` to the middleware is a one-line change in `todo_api/main.py`.

Should I add it, or is the production web app served from the same origin as the API?
""".replace("NTESTS", str(len(_collect(s.files)))),
        thinking="""
Let me re-check the headers from a browser's point of view. CORSMiddleware is configured with allow_origins, allow_methods and allow_headers, but no expose_headers. Under CORS, JavaScript can only read the safelisted response headers (Cache-Control, Content-Language, Content-Length, Content-Type, Expires, Last-Modified, Pragma) unless Access-Control-Expose-Headers lists others. So a web client on another origin cannot read X-Total-Count or Link: pagination works for the mobile apps but is invisible to the web app in development (localhost:5173) and, depending on the deployment, in production.

It is a one-line fix, but it changes the CORS policy, and whether production needs it depends on how the web app is served, which I don't know. Ask instead of changing it.
""",
    )


TEST_PAGINATION_PY = _code(r'''
"""Pagination of GET /todos: limit/offset in the query, totals and links in headers."""

from __future__ import annotations

import pytest


@pytest.fixture()
def seven_todos(make_todo):
    return [make_todo(f"task {i}") for i in range(7)]


def ids(todos):
    return [t["id"] for t in todos]


def test_default_page_holds_everything_when_small(client, seven_todos):
    response = client.get("/todos")

    assert response.status_code == 200
    assert ids(response.json()) == ids(seven_todos)
    assert response.headers["X-Total-Count"] == "7"
    assert "Link" not in response.headers


def test_limit_and_offset_select_a_window(client, seven_todos):
    response = client.get("/todos", params={"limit": 3, "offset": 2})

    assert ids(response.json()) == ids(seven_todos[2:5])
    assert response.headers["X-Total-Count"] == "7"


def test_offset_past_the_end_gives_an_empty_page(client, seven_todos):
    response = client.get("/todos", params={"limit": 3, "offset": 50})

    assert response.status_code == 200
    assert response.json() == []
    assert response.headers["X-Total-Count"] == "7"


def test_body_is_still_a_plain_list_of_todos(client, seven_todos):
    body = client.get("/todos", params={"limit": 2}).json()

    assert isinstance(body, list)
    assert set(body[0]) == {"id", "title", "notes", "done", "due_date", "created_at", "updated_at"}


def test_link_header_points_to_next_and_previous_pages(client, seven_todos):
    response = client.get("/todos", params={"limit": 3, "offset": 3})

    links = response.headers["Link"]
    assert '</todos?limit=3&offset=6>; rel="next"' in links
    assert '</todos?limit=3&offset=0>; rel="prev"' in links


def test_last_page_has_no_next_link(client, seven_todos):
    response = client.get("/todos", params={"limit": 3, "offset": 6})

    assert 'rel="next"' not in response.headers.get("Link", "")


def test_links_keep_the_filter(client, seven_todos):
    response = client.get("/todos", params={"done": "false", "limit": 2})

    assert '</todos?done=false&limit=2&offset=2>; rel="next"' in response.headers["Link"]


def test_total_count_respects_done_filter(client, make_todo):
    for i in range(5):
        todo = make_todo(f"task {i}")
        if i % 2 == 0:
            client.patch(f"/todos/{todo['id']}", json={"done": True})

    response = client.get("/todos", params={"done": "true", "limit": 2})

    assert len(response.json()) == 2
    assert response.headers["X-Total-Count"] == "3"


@pytest.mark.parametrize(
    "params",
    [
        {"limit": 0},
        {"limit": 101},
        {"limit": -5},
        {"offset": -1},
        {"limit": "ten"},
    ],
)
def test_out_of_range_parameters_are_rejected(client, params):
    response = client.get("/todos", params=params)

    assert response.status_code == 422
    assert response.json()["error"] == "invalid_request"
''')

TEST_VALIDATION_PY = _code(r'''
"""Validation of request bodies and path parameters."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "payload",
    [
        {"title": ""},
        {"title": "   "},
        {"title": "x" * 201},
        {"title": "ok", "notes": "n" * 2001},
        {"title": None},
        {"notes": "no title"},
    ],
)
def test_create_rejects_invalid_bodies(client, payload):
    response = client.post("/todos", json=payload)

    assert response.status_code == 422
    assert response.json()["error"] == "invalid_request"


def test_create_strips_surrounding_whitespace_from_the_title(client):
    response = client.post("/todos", json={"title": "  call mum  "})

    assert response.status_code == 201
    assert response.json()["title"] == "call mum"


def test_create_accepts_the_maximum_lengths(client):
    response = client.post("/todos", json={"title": "t" * 200, "notes": "n" * 2000})

    assert response.status_code == 201


def test_patch_rejects_blank_title(client, make_todo):
    todo = make_todo("original")

    response = client.patch(f"/todos/{todo['id']}", json={"title": "  "})

    assert response.status_code == 422
    assert client.get(f"/todos/{todo['id']}").json()["title"] == "original"


def test_patch_rejects_null_title(client, make_todo):
    todo = make_todo("original")

    response = client.patch(f"/todos/{todo['id']}", json={"title": None})

    assert response.status_code == 422


def test_todo_id_must_be_positive(client):
    assert client.get("/todos/0").status_code == 422
    assert client.get("/todos/-3").status_code == 422
''')

TEST_SORTING_PY = _code(r'''
"""Sorting of GET /todos."""

from __future__ import annotations

import pytest


@pytest.fixture()
def todos(make_todo):
    return {
        "banana": make_todo("banana", due_date="2026-06-01"),
        "apple": make_todo("apple"),
        "Cherry": make_todo("Cherry", due_date="2026-04-15"),
        "date": make_todo("date", due_date="2026-05-20"),
    }


def titles(response):
    assert response.status_code == 200, response.text
    return [t["title"] for t in response.json()]


def test_default_order_is_oldest_first(client, todos):
    assert titles(client.get("/todos")) == ["banana", "apple", "Cherry", "date"]


def test_sort_by_created_at_descending(client, todos):
    response = client.get("/todos", params={"sort": "-created_at"})

    assert titles(response) == ["date", "Cherry", "apple", "banana"]


def test_sort_by_title_ignores_case(client, todos):
    response = client.get("/todos", params={"sort": "title"})

    assert titles(response) == ["apple", "banana", "Cherry", "date"]


def test_sort_by_due_date_puts_missing_dates_last(client, todos):
    ascending = titles(client.get("/todos", params={"sort": "due_date"}))
    descending = titles(client.get("/todos", params={"sort": "-due_date"}))

    assert ascending == ["Cherry", "date", "banana", "apple"]
    assert descending == ["banana", "date", "Cherry", "apple"]


def test_sort_combines_with_filter_and_pagination(client, todos):
    client.patch(f"/todos/{todos['date']['id']}", json={"done": True})

    response = client.get(
        "/todos", params={"sort": "title", "done": "false", "limit": 2, "offset": 1}
    )

    assert titles(response) == ["banana", "Cherry"]
    assert response.headers["X-Total-Count"] == "3"
    assert "sort=title" in response.headers["Link"]


@pytest.mark.parametrize(
    "sort",
    [
        "id",
        "-notes",
        "title; DROP TABLE todos",
        "--title",
    ],
)
def test_unknown_sort_keys_are_rejected(client, sort):
    response = client.get("/todos", params={"sort": sort})

    assert response.status_code == 422
    assert response.json()["error"] == "invalid_request"
''')


TEST_SEARCH_PY = _code(r'''
"""Text search on GET /todos."""

from __future__ import annotations

import pytest


@pytest.fixture()
def todos(make_todo):
    return [
        make_todo("Buy milk"),
        make_todo("call the plumber", notes="kitchen sink; ask about the MILK frother too"),
        make_todo("Renew passport", notes="photo booth at the station"),
        make_todo("50% off sale ends friday"),
        make_todo("file taxes", notes="form_b and the receipts folder"),
    ]


def found(client, **params):
    response = client.get("/todos", params=params)
    assert response.status_code == 200, response.text
    return [t["title"] for t in response.json()]


def test_search_matches_title_and_notes_ignoring_case(client, todos):
    assert found(client, q="milk") == ["Buy milk", "call the plumber"]


def test_search_without_matches_gives_an_empty_page(client, todos):
    assert found(client, q="dentist") == []


def test_like_wildcards_are_taken_literally(client, todos):
    assert found(client, q="50%") == ["50% off sale ends friday"]
    assert found(client, q="%") == ["50% off sale ends friday"]
    assert found(client, q="form_b") == ["file taxes"]
    assert found(client, q="_") == ["file taxes"]


def test_search_combines_with_done_and_pagination(client, todos):
    client.patch(f"/todos/{todos[0]['id']}", json={"done": True})

    response = client.get("/todos", params={"q": "milk", "done": "false", "limit": 1})

    assert [t["title"] for t in response.json()] == ["call the plumber"]
    assert response.headers["X-Total-Count"] == "1"
    assert "Link" not in response.headers


@pytest.mark.parametrize(
    "q",
    [
        "",
        "x" * 101,
    ],
)
def test_search_text_length_is_checked(client, q):
    response = client.get("/todos", params={"q": q})

    assert response.status_code == 422
    assert response.json()["error"] == "invalid_request"
''')


def build() -> bytes:
    files = dict(INITIAL_FILES)
    files["tests/snapshots/openapi.json"] = openapi_text(0, MAIN_PY)
    s = Session(Files(files))
    plan_id = explore(s)
    head_files = s.files.copy()
    abandoned_cursor_branch(s)
    # The user goes back to the plan in the tree and answers it differently; the working tree
    # was reset with git, so the files are as they were at the plan.
    s.wait(95)
    s.branch(plan_id)
    s.files = head_files
    pagination_and_validation(s)
    empty_patch(s)
    search(s)
    sorting(s)
    return s.dump()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare with the file")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    data = build()
    if args.check:
        same = args.out.exists() and args.out.read_bytes() == data
        print(f"{args.out}: {'up to date' if same else 'differs'}")
        return 0 if same else 1
    args.out.write_bytes(data)
    entries = data.count(b"\n") - 1
    print(f"wrote {args.out} ({len(data):,} bytes, {entries} entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
