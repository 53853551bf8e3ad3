"""The built-in tools: read, write, edit, bash, path confinement and the tool-call runner."""

from __future__ import annotations

import asyncio
import base64
import os
import select
import signal
import stat
from pathlib import Path
from typing import Any

import pytest

from contextree.runtime.tools import (
    DEFAULT_READ_LIMIT,
    Tool,
    ToolArguments,
    ToolContext,
    ToolError,
    ToolResult,
    builtin_tools,
    resolve_path,
    run_tool_call,
    tool_result_message,
    tool_spec,
)


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def ctx(cwd: Path) -> ToolContext:
    return ToolContext(cwd)


def call(
    name: str, ctx: ToolContext, tools: dict[str, Tool] | None = None, **args: Any
) -> ToolResult:
    block = {"type": "toolCall", "id": "call_1", "name": name, "arguments": args}
    return asyncio.run(run_tool_call(tools or builtin_tools(), block, ctx))


def text_of(result: ToolResult) -> str:
    return "".join(block["text"] for block in result.content if block["type"] == "text")


def gone(pid: int, timeout: float = 5.0) -> bool:
    """True once ``pid`` has exited (a zombie counts), waiting on a pidfd rather than polling."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
        return bool(readable)
    finally:
        os.close(fd)


# -- the package ------------------------------------------------------------------------------


def test_builtin_tools_and_specs() -> None:
    tools = builtin_tools()
    assert list(tools) == ["read", "write", "edit", "bash"]
    for name, tool in tools.items():
        assert isinstance(tool, Tool)
        spec = tool_spec(tool)
        assert spec["name"] == name
        assert spec["description"]
        assert spec["parameters"]["type"] == "object"
    assert tools["read"].parameters["required"] == ["path"]
    assert tools["write"].parameters["required"] == ["path", "content"]
    assert tools["edit"].parameters["required"] == ["path", "oldText", "newText"]
    assert tools["bash"].parameters["required"] == ["command"]


def test_tool_result_message_has_pi_shape() -> None:
    block = {"type": "toolCall", "id": "c9", "name": "bash", "arguments": {"command": "x"}}
    result = ToolResult.text("out", is_error=True, details={"exitCode": 1})
    message = tool_result_message(block, result, timestamp=123)
    assert message == {
        "role": "toolResult",
        "toolCallId": "c9",
        "toolName": "bash",
        "content": [{"type": "text", "text": "out"}],
        "details": {"exitCode": 1},
        "isError": True,
        "timestamp": 123,
    }
    assert list(message) == [
        "role",
        "toolCallId",
        "toolName",
        "content",
        "details",
        "isError",
        "timestamp",
    ]
    assert "details" not in tool_result_message(block, ToolResult.text("x"), timestamp=1)


# -- run_tool_call ----------------------------------------------------------------------------


def test_unknown_tool_is_an_error_result(ctx: ToolContext) -> None:
    result = call("grep", ctx, pattern="x")
    assert result.is_error
    assert text_of(result) == 'Tool "grep" not found; available tools: bash, edit, read, write'


def test_missing_required_argument(ctx: ToolContext) -> None:
    result = call("edit", ctx, path="f.txt")
    assert result.is_error
    assert text_of(result) == 'edit: missing required arguments "oldText", "newText"'


def test_wrong_argument_type(ctx: ToolContext) -> None:
    result = call("read", ctx, path=3)
    assert result.is_error
    assert text_of(result) == 'read: argument "path" must be a string, got number 3'
    result = call("read", ctx, path="f.txt", offset="abc")
    assert text_of(result) == 'read: argument "offset" must be an integer, got string "abc"'
    result = call("read", ctx, path="f.txt", limit=0)
    assert text_of(result) == 'read: argument "limit" must be at least 1, got 0'


def test_arguments_must_be_an_object(ctx: ToolContext) -> None:
    block = {"type": "toolCall", "id": "c", "name": "read", "arguments": ["a.txt"]}
    result = asyncio.run(run_tool_call(builtin_tools(), block, ctx))
    assert result.is_error
    assert text_of(result) == "read: arguments must be a JSON object, got array"


def test_integers_as_strings_and_null_optionals_are_accepted(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "f.txt").write_text("a\nb\nc\n")
    assert text_of(call("read", ctx, path="f.txt", offset="2", limit=1.0)).startswith("b\n")
    assert text_of(call("read", ctx, path="f.txt", offset=None)) == "a\nb\nc"


class _Boom:
    name = "boom"
    description = "fails"
    parameters: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    async def run(self, arguments: ToolArguments, ctx: ToolContext) -> ToolResult:
        raise self.exc


def test_tool_exceptions_become_one_line_errors(ctx: ToolContext) -> None:
    result = call("boom", ctx, tools={"boom": _Boom(RuntimeError("kaput\nbadly"))})
    assert result.is_error
    assert text_of(result) == "boom failed: RuntimeError: kaput badly"
    result = call("boom", ctx, tools={"boom": _Boom(ToolError("plain message"))})
    assert text_of(result) == "plain message"


def test_cancellation_propagates(ctx: ToolContext) -> None:
    with pytest.raises(asyncio.CancelledError):
        call("boom", ctx, tools={"boom": _Boom(asyncio.CancelledError())})


# -- paths ------------------------------------------------------------------------------------


def test_relative_path_outside_cwd_is_refused(ctx: ToolContext, cwd: Path) -> None:
    (cwd.parent / "secret.txt").write_text("s")
    result = call("read", ctx, path="../secret.txt")
    assert result.is_error
    message = text_of(result)
    assert message.startswith(f"path ../secret.txt is outside the working directory {cwd}")
    assert message.endswith("; allow it with tools.allowOutsideCwd")


def test_absolute_path_outside_cwd_is_refused(ctx: ToolContext, cwd: Path) -> None:
    target = cwd.parent / "new.txt"
    result = call("write", ctx, path=str(target), content="x")
    assert result.is_error
    assert "outside the working directory" in text_of(result)
    assert not target.exists()


def test_symlink_pointing_outside_is_refused(ctx: ToolContext, cwd: Path) -> None:
    outside = cwd.parent / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("secret")
    (cwd / "link.txt").symlink_to(outside / "f.txt")
    (cwd / "linkdir").symlink_to(outside)
    assert "outside the working directory" in text_of(call("read", ctx, path="link.txt"))
    result = call("write", ctx, path="linkdir/new.txt", content="x")
    assert "outside the working directory" in text_of(result)
    assert not (outside / "new.txt").exists()


def test_paths_inside_cwd(ctx: ToolContext, cwd: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (cwd / "sub").mkdir()
    assert resolve_path("sub/../a.txt", ctx) == cwd.resolve() / "a.txt"
    assert resolve_path(str(cwd / "a.txt"), ctx) == cwd.resolve() / "a.txt"
    monkeypatch.setenv("HOME", str(cwd))
    assert resolve_path("~/a.txt", ctx) == cwd.resolve() / "a.txt"
    with pytest.raises(ToolError, match="must not be empty"):
        resolve_path(" ", ctx)


def test_outside_allowed_when_configured(cwd: Path) -> None:
    ctx = ToolContext(cwd, allow_outside_cwd=True)
    (cwd.parent / "other.txt").write_text("hello")
    assert text_of(call("read", ctx, path="../other.txt")) == "hello"
    assert not call("write", ctx, path=str(cwd.parent / "new.txt"), content="x").is_error
    assert (cwd.parent / "new.txt").read_text() == "x"


# -- read -------------------------------------------------------------------------------------


def test_read_returns_plain_text(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "f.txt").write_text("one\ntwo\n")
    result = call("read", ctx, path="f.txt")
    assert not result.is_error
    assert result.content == [{"type": "text", "text": "one\ntwo"}]


def test_read_offset_and_limit(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "f.txt").write_text("".join(f"line{i}\n" for i in range(1, 11)))
    assert text_of(call("read", ctx, path="f.txt", offset=3, limit=2)) == (
        "line3\nline4\n\n[Showing lines 3-4 of 10; 6 more lines, use offset=5 to continue]"
    )
    assert text_of(call("read", ctx, path="f.txt", offset=9)) == "line9\nline10"
    result = call("read", ctx, path="f.txt", offset=11)
    assert result.is_error
    assert text_of(result) == "offset 11 is beyond the end of f.txt (10 lines)"


def test_read_default_line_limit(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "big.txt").write_text("x\n" * (DEFAULT_READ_LIMIT + 500))
    text = text_of(call("read", ctx, path="big.txt"))
    assert text.count("x") == DEFAULT_READ_LIMIT
    assert text.endswith(
        f"[Showing lines 1-{DEFAULT_READ_LIMIT} of {DEFAULT_READ_LIMIT + 500}; 500 more lines, "
        f"use offset={DEFAULT_READ_LIMIT + 1} to continue]"
    )


def test_read_truncates_at_max_output_chars(cwd: Path) -> None:
    ctx = ToolContext(cwd, max_output_chars=25)
    (cwd / "f.txt").write_text("".join(f"line-{i:03}\n" for i in range(1, 11)))  # 8 chars + \n
    text = text_of(call("read", ctx, path="f.txt"))
    # 25 characters end inside line 3; the cut falls back to the end of line 2.
    assert text == (
        "line-001\nline-002\n\n[... 72 more characters truncated; use offset/limit (next line: 3)]"
    )


def test_read_empty_missing_directory_binary(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "empty.txt").write_text("")
    assert text_of(call("read", ctx, path="empty.txt")) == "(empty file)"
    missing = call("read", ctx, path="nope.txt")
    assert missing.is_error
    assert text_of(missing) == "File not found: nope.txt"
    (cwd / "d").mkdir()
    assert text_of(call("read", ctx, path="d")) == "d is a directory, not a file"
    (cwd / "blob.bin").write_bytes(b"ELF\x00\x01\x02")
    binary = call("read", ctx, path="blob.bin")
    assert binary.is_error
    assert text_of(binary).startswith("blob.bin is a binary file")


def test_read_image(ctx: ToolContext, cwd: Path) -> None:
    data = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    (cwd / "pic.PNG").write_bytes(data)
    result = call("read", ctx, path="pic.PNG")
    assert not result.is_error
    assert result.content == [
        {"type": "text", "text": "Read image file pic.PNG [image/png]"},
        {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": "image/png"},
    ]


# -- write ------------------------------------------------------------------------------------


def test_write_creates_parents(ctx: ToolContext, cwd: Path) -> None:
    result = call("write", ctx, path="a/b/c.txt", content="héllo")
    assert not result.is_error
    assert text_of(result) == "Wrote 6 bytes to a/b/c.txt"
    assert (cwd / "a/b/c.txt").read_text(encoding="utf-8") == "héllo"


def test_write_replaces_atomically_and_keeps_mode(ctx: ToolContext, cwd: Path) -> None:
    target = cwd / "run.sh"
    target.write_text("old")
    target.chmod(0o751)
    assert not call("write", ctx, path="run.sh", content="new").is_error
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert sorted(p.name for p in cwd.iterdir()) == ["run.sh"]  # no temp file left


def test_failed_write_leaves_file_and_no_temp(
    ctx: ToolContext, cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = cwd / "f.txt"
    target.write_text("original")

    def fail(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    result = call("write", ctx, path="f.txt", content="new")
    assert result.is_error
    assert text_of(result) == "cannot write f.txt: No space left on device"
    assert target.read_text() == "original"
    assert sorted(p.name for p in cwd.iterdir()) == ["f.txt"]


def test_write_to_directory_is_an_error(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "d").mkdir()
    result = call("write", ctx, path="d", content="x")
    assert result.is_error
    assert text_of(result) == "d is a directory, not a file"


# -- edit -------------------------------------------------------------------------------------


def test_edit_replaces_unique_text(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    result = call("edit", ctx, path="f.py", oldText="b = 2", newText="b = 20")
    assert not result.is_error
    assert (cwd / "f.py").read_text() == "a = 1\nb = 20\nc = 3\n"
    diff = "--- a/f.py\n+++ b/f.py\n@@ -1,3 +1,3 @@\n a = 1\n-b = 2\n+b = 20\n c = 3\n"
    assert result.details == {"diff": diff, "firstChangedLine": 2}
    assert text_of(result) == f"Edited f.py: replaced 1 occurrence.\n\n{diff}"
    assert sorted(p.name for p in cwd.iterdir()) == ["f.py"]


def test_edit_missing_and_repeated_text(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "f.txt").write_text("x\nx\n")
    missing = call("edit", ctx, path="f.txt", oldText="y", newText="z")
    assert missing.is_error
    assert text_of(missing) == "oldText not found in f.txt"
    repeated = call("edit", ctx, path="f.txt", oldText="x", newText="z")
    assert repeated.is_error
    assert text_of(repeated) == "oldText occurs 2 times in f.txt; add context to make it unique"
    assert (cwd / "f.txt").read_text() == "x\nx\n"
    assert text_of(call("edit", ctx, path="nope.txt", oldText="a", newText="b")) == (
        "File not found: nope.txt"
    )
    assert call("edit", ctx, path="f.txt", oldText="", newText="b").is_error


def test_edit_crlf_file(ctx: ToolContext, cwd: Path) -> None:
    (cwd / "f.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = call("edit", ctx, path="f.txt", oldText="one\ntwo", newText="1\n2")
    assert not result.is_error
    assert (cwd / "f.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_edit_diff_is_capped(cwd: Path) -> None:
    ctx = ToolContext(cwd, max_output_chars=200)
    (cwd / "f.txt").write_text("start\nend\n")
    result = call("edit", ctx, path="f.txt", oldText="start", newText="x\n" * 500)
    assert not result.is_error
    diff = result.details["diff"] if result.details else ""
    assert diff.startswith("--- a/f.txt\n+++ b/f.txt\n")
    assert "[... diff truncated, " in diff
    assert len(diff) < 300


# -- bash -------------------------------------------------------------------------------------


def test_bash_success(ctx: ToolContext, cwd: Path) -> None:
    result = call("bash", ctx, command="echo hello; pwd")
    assert not result.is_error
    assert text_of(result) == f"hello\n{cwd.resolve()}"
    assert result.details == {"exitCode": 0, "timedOut": False, "truncated": False}


def test_bash_merges_stderr_and_reports_exit_code(ctx: ToolContext) -> None:
    result = call("bash", ctx, command="echo out; echo err >&2; exit 3")
    assert result.is_error
    assert text_of(result) == "out\nerr\n\nCommand exited with code 3"
    assert result.details == {"exitCode": 3, "timedOut": False, "truncated": False}


def test_bash_no_output_stdin_and_env(cwd: Path) -> None:
    ctx = ToolContext(cwd, env={"PATH": os.environ["PATH"], "GREETING": "hi"})
    assert text_of(call("bash", ctx, command="cat")) == "(no output)"  # stdin is /dev/null
    assert text_of(call("bash", ctx, command="echo $GREETING")) == "hi"


def test_bash_output_keeps_head_and_tail(cwd: Path) -> None:
    ctx = ToolContext(cwd, max_output_chars=100)
    command = "head -c 1000 /dev/zero | tr '\\0' a; head -c 1000 /dev/zero | tr '\\0' b"
    result = call("bash", ctx, command=command)
    assert not result.is_error
    assert text_of(result) == (
        "a" * 50 + "\n\n[... 1900 characters of output truncated ...]\n\n" + "b" * 50
    )
    assert result.details is not None and result.details["truncated"] is True


def test_bash_timeout_kills_the_process_group(ctx: ToolContext) -> None:
    result = call("bash", ctx, command="sleep 100 & echo $!; wait", timeout=0.3)
    assert result.is_error
    text = text_of(result)
    assert text.endswith("\n\nCommand timed out after 0.3 s")
    assert result.details == {"exitCode": None, "timedOut": True, "truncated": False}
    assert gone(int(text.split("\n", 1)[0]))


def test_bash_default_timeout_from_context(cwd: Path) -> None:
    ctx = ToolContext(cwd, bash_timeout=0.2)
    result = call("bash", ctx, command="sleep 100")
    assert text_of(result) == "(no output)\n\nCommand timed out after 0.2 s"


def test_bash_background_job_does_not_hold_the_result(ctx: ToolContext) -> None:
    result = call("bash", ctx, command="sleep 100 & echo $!", timeout=30)
    assert not result.is_error
    pid = int(text_of(result))
    assert not gone(pid, timeout=0)  # left running on purpose
    os.kill(pid, signal.SIGKILL)
    assert gone(pid)


def test_bash_cancellation_kills_the_process_group(ctx: ToolContext, cwd: Path) -> None:
    fifo = cwd / "pids"
    os.mkfifo(fifo)
    command = f"sleep 100 & echo $$ $! > {fifo}; wait"
    block = {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": command}}

    async def scenario() -> list[int]:
        task = asyncio.create_task(run_tool_call(builtin_tools(), block, ctx))
        # Opening the FIFO blocks until the command writes to it: the processes are running.
        pids = await asyncio.to_thread(fifo.read_text)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return [int(pid) for pid in pids.split()]

    shell, child = asyncio.run(scenario())
    assert gone(shell)
    assert gone(child)


def test_bash_bad_arguments(ctx: ToolContext) -> None:
    assert text_of(call("bash", ctx, command="  ")) == "command must not be empty"
    result = call("bash", ctx, command="true", timeout=-1)
    assert text_of(result) == 'argument "timeout" must be a positive number of seconds, got -1'


@pytest.mark.parametrize("steps", [0, 1, 2, 3, 4, 6, 10])
def test_bash_cancelled_while_starting_leaves_nothing_running(
    ctx: ToolContext, cwd: Path, steps: int
) -> None:
    pidfile = cwd / "pid"
    block = {
        "type": "toolCall",
        "id": "c",
        "name": "bash",
        "arguments": {"command": f"echo $$ > {pidfile}; sleep 100"},
    }

    async def scenario() -> None:
        task = asyncio.create_task(run_tool_call(builtin_tools(), block, ctx))
        for _ in range(steps):  # let the start-up reach a different await each time
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    if pidfile.exists() and pidfile.read_text().strip():
        assert gone(int(pidfile.read_text()))


def test_bash_missing_cwd_is_an_error(tmp_path: Path) -> None:
    ctx = ToolContext(tmp_path / "gone")
    result = call("bash", ctx, command="true")
    assert result.is_error
    assert text_of(result).startswith("cannot run ")
    assert text_of(result).endswith(f"in {tmp_path / 'gone'}: No such file or directory")
