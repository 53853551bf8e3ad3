"""The ``bash`` tool: run a shell command in the working directory, with a timeout and a cap.

The command runs as ``bash -c`` (``sh -c`` where bash is missing) in a new session, so it leads
its own process group: a timeout or a cancellation kills the whole group, background children
included, with SIGKILL. stdout and stderr share one pipe, so the model sees them interleaved as a
terminal would show them; stdin is ``/dev/null``, so a command waiting for input ends at once.

The command is over when the shell exits. Background jobs it started (``server &``) keep running,
but once their output has been read for a short moment they no longer hold the result back; we
close our end of the pipe, so they should redirect their output to a file.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shutil
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from contextree.runtime.tools.base import (
    JsonSchema,
    ToolArguments,
    ToolContext,
    ToolError,
    ToolResult,
    get_number,
    get_str,
)
from contextree.security.redact import tool_environment

__all__ = ["BashTool", "CommandOutput", "run_command"]

_DRAIN_SECONDS: Final = 0.25
"""After the shell exits, how long to keep reading output that background jobs still hold open."""


@dataclass(frozen=True)
class CommandOutput:
    """What a finished (or timed-out) command produced."""

    output: str
    """stdout and stderr interleaved, capped with a notice in the middle."""
    exit_code: int | None
    """The shell's exit status (negative: killed by that signal); ``None`` when it timed out."""
    timed_out: bool = False
    truncated: bool = False
    """Characters were dropped from the middle of ``output``."""


class BashTool:
    """Run a shell command in the working directory."""

    name = "bash"
    description = (
        "Run a bash command in the working directory and return its combined stdout and stderr. "
        "stdin is empty. Long output keeps its beginning and end. Use timeout (seconds) for "
        "commands that may run long; background jobs (cmd &) keep running after the command "
        "returns and should redirect their output to a file."
    )
    parameters: JsonSchema = {  # noqa: RUF012 - protocol attribute, never mutated
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line, run with bash -c."},
            "timeout": {
                "type": "number",
                "description": "Seconds before the command and its children are killed.",
            },
        },
        "required": ["command"],
    }

    async def run(self, arguments: ToolArguments, ctx: ToolContext) -> ToolResult:
        command = get_str(arguments, "command")
        if not command.strip():
            raise ToolError("command must not be empty")
        timeout = get_number(arguments, "timeout")
        if timeout is not None and timeout <= 0:
            raise ToolError(
                f'argument "timeout" must be a positive number of seconds, got {timeout:g}'
            )
        limit = timeout if timeout is not None else ctx.bash_timeout
        result = await run_command(
            command, cwd=ctx.cwd, timeout=limit, max_chars=ctx.max_output_chars, env=ctx.env
        )
        text = result.output.rstrip("\n") or "(no output)"
        rc = result.exit_code
        if result.timed_out:
            text += f"\n\nCommand timed out after {limit:g} s"
        elif rc is not None and rc < 0:
            text += f"\n\nCommand was killed by signal {_signal_name(-rc)}"
        elif rc:
            text += f"\n\nCommand exited with code {rc}"
        details = {"exitCode": rc, "timedOut": result.timed_out, "truncated": result.truncated}
        return ToolResult.text(text, is_error=result.timed_out or rc != 0, details=details)


async def run_command(
    command: str,
    *,
    cwd: Path,
    timeout: float,
    max_chars: int,
    env: Mapping[str, str] | None = None,
) -> CommandOutput:
    """Run ``command`` with the shell and collect its output.

    Cancelling the awaiting task kills the command's process group and re-raises
    :class:`asyncio.CancelledError`.

    Raises:
        ToolError: the shell could not be started (for example, ``cwd`` does not exist).
    """
    # The providers' keys stay out of the command's environment (and so out of the session).
    env = tool_environment(os.environ if env is None else env)
    shell = _shell(env)
    loop = asyncio.get_running_loop()
    sink = _HeadTail(max_chars)
    closed: asyncio.Future[None] = loop.create_future()
    read_fd, write_fd = os.pipe()
    try:
        # The reader exists before the process does, so no await lies between starting the
        # command and the try block that kills it.
        transport, _ = await loop.connect_read_pipe(
            lambda: _PipeReader(sink, closed), os.fdopen(read_fd, "rb", buffering=0)
        )
    except BaseException:
        os.close(write_fd)
        raise
    # Shielded: a cancellation while asyncio is still setting the process up must not make it
    # kill only the shell (its default) and orphan the children; _stop kills the whole group.
    spawn = asyncio.ensure_future(_spawn(shell, command, cwd=cwd, env=env, output_fd=write_fd))
    timed_out = False
    try:
        try:
            proc = await asyncio.shield(spawn)
        except OSError as exc:
            raise ToolError(f"cannot run {shell} in {cwd}: {exc.strerror or exc}") from exc
        try:
            async with asyncio.timeout(timeout):
                await proc.wait()
        except TimeoutError:
            timed_out = True
            _kill_group(proc.pid)
            await proc.wait()
        # The shell has exited; give the pipe a moment to reach EOF (background jobs may hold it).
        await asyncio.wait({closed}, timeout=_DRAIN_SECONDS)
    except BaseException:  # cancellation above all: leave nothing running behind
        await asyncio.shield(_stop(spawn, closed))
        raise
    finally:
        transport.close()
    output, truncated = sink.result()
    return CommandOutput(
        output,
        exit_code=None if timed_out else proc.returncode,
        timed_out=timed_out,
        truncated=truncated,
    )


async def _spawn(
    shell: str,
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str] | None,
    output_fd: int,
) -> asyncio.subprocess.Process:
    try:
        return await asyncio.create_subprocess_exec(
            shell,
            "-c",
            command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=output_fd,
            stderr=output_fd,
            cwd=cwd,
            env=env,
            start_new_session=True,  # its own process group, killed as a whole
        )
    finally:
        os.close(output_fd)  # the child holds its own copy; EOF comes when every holder exits


async def _stop(
    spawn: asyncio.Future[asyncio.subprocess.Process], closed: asyncio.Future[None]
) -> None:
    """Kill the command's process group once it has started, and wait until it has gone."""
    await asyncio.wait({spawn})
    if spawn.cancelled() or spawn.exception() is not None:
        return  # never started, or asyncio already killed it
    proc = spawn.result()
    _kill_group(proc.pid)
    await proc.wait()
    # The pipe closes when the last process holding it (background children too) has exited.
    await asyncio.wait({closed}, timeout=_DRAIN_SECONDS)


class _PipeReader(asyncio.Protocol):
    def __init__(self, sink: _HeadTail, closed: asyncio.Future[None]) -> None:
        self._sink = sink
        self._closed = closed
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def data_received(self, data: bytes) -> None:
        self._sink.feed(self._decoder.decode(data))

    def eof_received(self) -> bool | None:
        self._sink.feed(self._decoder.decode(b"", final=True))
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._closed.done():
            self._closed.set_result(None)


class _HeadTail:
    """Keeps the first and last ``limit / 2`` characters of a stream and counts the rest."""

    def __init__(self, limit: int) -> None:
        self._limit = max(limit, 0)
        self._head_size = self._limit // 2
        self._tail_size = self._limit - self._head_size
        self._parts: list[str] = []
        self._size = 0
        self._head = ""
        self._tail = ""
        self._overflow = False

    def feed(self, text: str) -> None:
        if not text:
            return
        self._size += len(text)
        if self._overflow:
            self._tail = _last(self._tail + text, self._tail_size)
            return
        self._parts.append(text)
        if self._size > self._limit:
            full = "".join(self._parts)
            self._head = full[: self._head_size]
            self._tail = _last(full, self._tail_size)
            self._parts = []
            self._overflow = True

    def result(self) -> tuple[str, bool]:
        if not self._overflow:
            return "".join(self._parts), False
        dropped = self._size - len(self._head) - len(self._tail)
        notice = f"\n\n[... {dropped} characters of output truncated ...]\n\n"
        return self._head + notice + self._tail, True


def _last(text: str, size: int) -> str:
    return text[len(text) - size :] if size > 0 else ""


def _shell(env: Mapping[str, str] | None) -> str:
    path = env.get("PATH") if env is not None else None
    return shutil.which("bash", path=path) or "/bin/sh"


def _kill_group(pid: int) -> None:
    # The shell was started with start_new_session=True, so its pid is also its group id.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
