"""The file tools ``read``, ``write`` and ``edit``.

Their names and the ``path`` argument are what file-operation tracking looks for
(pi-behaviour.md §8), and ``edit`` takes pi's ``oldText``/``newText``. Writes are atomic: the new
content goes to a temp file next to the target, which is then renamed over it, so a crash never
leaves a half-written file. Blocking file I/O runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import base64
import difflib
import os
import secrets
import stat
from pathlib import Path
from typing import Final

from contextree.runtime.tools.base import (
    JsonSchema,
    ToolArguments,
    ToolContext,
    ToolError,
    ToolResult,
    get_int,
    get_str,
)
from contextree.runtime.tools.paths import resolve_path

__all__ = ["DEFAULT_READ_LIMIT", "EditTool", "ReadTool", "WriteTool"]

DEFAULT_READ_LIMIT: Final = 2000
"""Lines ``read`` returns when the call gives no ``limit``."""

_MAX_IMAGE_BYTES: Final = 5 * 1024 * 1024  # the largest image providers accept (Anthropic: 5 MB)
_MAX_DIFF_CHARS: Final = 4000
_BINARY_SNIFF_BYTES: Final = 8192
_IMAGE_TYPES: Final = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}


class ReadTool:
    """Return a text file's lines, or an image file as an image block."""

    name = "read"
    description = (
        "Read a file. Text files are returned as plain text, at most "
        f"{DEFAULT_READ_LIMIT} lines per call; use offset and limit to page through large files. "
        "Images (png, jpg, gif, webp) are returned as images."
    )
    parameters: JsonSchema = {  # noqa: RUF012 - protocol attribute, never mutated
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path of the file, relative to the cwd."},
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": "Line number to start at (1-based).",
            },
            "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to read."},
        },
        "required": ["path"],
    }

    async def run(self, arguments: ToolArguments, ctx: ToolContext) -> ToolResult:
        path = get_str(arguments, "path")
        offset = get_int(arguments, "offset", minimum=1) or 1
        limit = get_int(arguments, "limit", minimum=1)
        real = resolve_path(path, ctx)
        return await asyncio.to_thread(self._read, path, real, offset, limit, ctx.max_output_chars)

    def _read(
        self, path: str, real: Path, offset: int, limit: int | None, max_chars: int
    ) -> ToolResult:
        data = _read_bytes(path, real)
        mime = _IMAGE_TYPES.get(real.suffix.lower())
        if mime is not None:
            if len(data) > _MAX_IMAGE_BYTES:
                raise ToolError(
                    f"{path} is {len(data)} bytes; images larger than {_MAX_IMAGE_BYTES} bytes "
                    "cannot be sent to the model"
                )
            encoded = base64.b64encode(data).decode("ascii")
            return ToolResult(
                [
                    {"type": "text", "text": f"Read image file {path} [{mime}]"},
                    {"type": "image", "data": encoded, "mimeType": mime},
                ]
            )
        text = _decode_text(path, data)
        return ToolResult.text(_window(path, text, offset, limit, max_chars))


class WriteTool:
    """Create or overwrite a file, creating missing parent directories."""

    name = "write"
    description = (
        "Write content to a file, replacing it if it exists and creating parent directories. "
        "Prefer edit for changing part of an existing file."
    )
    parameters: JsonSchema = {  # noqa: RUF012 - protocol attribute, never mutated
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path of the file, relative to the cwd."},
            "content": {"type": "string", "description": "The complete new content."},
        },
        "required": ["path", "content"],
    }

    async def run(self, arguments: ToolArguments, ctx: ToolContext) -> ToolResult:
        path = get_str(arguments, "path")
        content = get_str(arguments, "content")
        real = resolve_path(path, ctx)
        data = content.encode("utf-8")
        await asyncio.to_thread(self._write, path, real, data)
        return ToolResult.text(f"Wrote {len(data)} bytes to {path}")

    def _write(self, path: str, real: Path, data: bytes) -> None:
        if real.is_dir():
            raise ToolError(f"{path} is a directory, not a file")
        try:
            real.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ToolError(f"cannot create the directory of {path}: {_reason(exc)}") from exc
        _atomic_write(path, real, data)


class EditTool:
    """Replace one exact, unique piece of text in a file."""

    name = "edit"
    description = (
        "Edit a file by replacing oldText with newText. oldText must match the file exactly "
        "(whitespace included) and occur exactly once; include surrounding lines to make it "
        "unique."
    )
    parameters: JsonSchema = {  # noqa: RUF012 - protocol attribute, never mutated
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path of the file, relative to the cwd."},
            "oldText": {"type": "string", "description": "Exact text to replace."},
            "newText": {"type": "string", "description": "Text to put in its place."},
        },
        "required": ["path", "oldText", "newText"],
    }

    async def run(self, arguments: ToolArguments, ctx: ToolContext) -> ToolResult:
        path = get_str(arguments, "path")
        old_text = get_str(arguments, "oldText")
        new_text = get_str(arguments, "newText")
        if not old_text:
            raise ToolError("oldText must not be empty; use write to create a file")
        real = resolve_path(path, ctx)
        diff_limit = min(_MAX_DIFF_CHARS, ctx.max_output_chars)
        return await asyncio.to_thread(self._edit, path, real, old_text, new_text, diff_limit)

    def _edit(
        self, path: str, real: Path, old_text: str, new_text: str, diff_limit: int
    ) -> ToolResult:
        before = _decode_text(path, _read_bytes(path, real))
        old_text, new_text = _match_line_endings(before, old_text, new_text)
        count = before.count(old_text)
        if count == 0:
            raise ToolError(f"oldText not found in {path}")
        if count > 1:
            raise ToolError(
                f"oldText occurs {count} times in {path}; add context to make it unique"
            )
        if old_text == new_text:
            raise ToolError(f"oldText and newText are identical; {path} was not changed")
        index = before.index(old_text)
        after = before[:index] + new_text + before[index + len(old_text) :]
        _atomic_write(path, real, after.encode("utf-8"))
        diff = _cap(_unified_diff(path, before, after), diff_limit)
        return ToolResult.text(
            f"Edited {path}: replaced 1 occurrence.\n\n{diff}",
            details={"diff": diff, "firstChangedLine": before.count("\n", 0, index) + 1},
        )


def _read_bytes(path: str, real: Path) -> bytes:
    try:
        return real.read_bytes()
    except FileNotFoundError as exc:
        raise ToolError(f"File not found: {path}") from exc
    except IsADirectoryError as exc:
        raise ToolError(f"{path} is a directory, not a file") from exc
    except OSError as exc:
        raise ToolError(f"cannot read {path}: {_reason(exc)}") from exc


def _decode_text(path: str, data: bytes) -> str:
    if b"\0" in data[:_BINARY_SNIFF_BYTES]:
        raise ToolError(
            f"{path} is a binary file; read returns text files and png, jpg, gif or webp images"
        )
    # Mostly-UTF-8 files (a stray Latin-1 byte) are still worth reading.
    return data.decode("utf-8", errors="replace")


def _window(path: str, text: str, offset: int, limit: int | None, max_chars: int) -> str:
    """Lines ``offset`` .. ``offset + limit - 1`` of ``text``, with a notice when more remain."""
    lines = text.split("\n") if text else []
    if text.endswith("\n"):
        lines.pop()  # the "line" after the final newline
    total = len(lines)
    if total == 0 and offset == 1:
        return "(empty file)"
    if offset > total:
        raise ToolError(f"offset {offset} is beyond the end of {path} ({total} lines)")
    start = offset - 1
    end = min(total, start + (limit or DEFAULT_READ_LIMIT))
    shown = "\n".join(lines[start:end])
    if len(shown) > max_chars:
        kept = shown[:max_chars]
        cut = kept.rfind("\n")
        if cut > 0:
            kept = kept[:cut]  # end on a whole line so offset can resume cleanly
        next_line = offset + kept.count("\n") + 1
        dropped = len(shown) - len(kept)
        return (
            f"{kept}\n\n[... {dropped} more characters truncated; use offset/limit "
            f"(next line: {next_line})]"
        )
    if end < total:
        return (
            f"{shown}\n\n[Showing lines {offset}-{end} of {total}; {total - end} more lines, "
            f"use offset={end + 1} to continue]"
        )
    return shown


def _match_line_endings(content: str, old_text: str, new_text: str) -> tuple[str, str]:
    # Models write "\n"; a CRLF file would never match. Translate the texts to the file's
    # endings rather than rewriting the whole file's endings (pi normalizes the whole file).
    if old_text in content or "\r\n" not in content or "\r\n" in old_text:
        return old_text, new_text
    return old_text.replace("\n", "\r\n"), new_text.replace("\r\n", "\n").replace("\n", "\r\n")


def _unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
        n=3,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... diff truncated, {len(text) - limit} more characters]\n"


def _atomic_write(path: str, real: Path, data: bytes) -> None:
    """Write ``data`` to a temp file beside ``real``, then rename it over ``real``."""
    try:
        mode: int | None = stat.S_IMODE(real.stat().st_mode)
    except FileNotFoundError:
        mode = None  # a new file: 0o666 narrowed by the umask, like open() would
    tmp = real.with_name(f".{real.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)  # keep the old mode exactly, whatever the umask
        os.replace(tmp, real)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ToolError(f"cannot write {path}: {_reason(exc)}") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)
