"""Issue 24 point 3: a message whose shape no provider request can carry (a tool result whose
``content`` is a number, a block that is not an object...) is damage ``check`` reports, and
``context --format openai|anthropic`` refuses it with one line naming the file, the line and
the field instead of a traceback."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from cli_env import invoke
from contextree.entries.shapes import message_problem
from core_helpers import Chain, assistant, header, jsonl, tool_call, tool_result, user

pytestmark = pytest.mark.usefixtures("clean_cli")


def _session(path: Path, result: dict[str, Any]) -> Path:
    chain = Chain()
    chain.msg(user("list the files"))
    chain.msg(assistant("", calls=[tool_call("c1")]))
    chain.msg(result)
    chain.msg(assistant("done"))
    path.write_bytes(jsonl(header(), *chain.entries))
    return path


BAD = {
    "content a number": (
        tool_result("c1", content=42),
        "message.content must be a string or a list of blocks, found number",
    ),
    "block not an object": (
        tool_result("c1", content=["text"]),
        "message.content[0] must be an object, found string",
    ),
    "block of a kind a tool result cannot carry": (
        tool_result("c1", content=[tool_call("c2")]),
        'message.content[0]: a toolResult message cannot carry a block of type "toolCall"',
    ),
    "text not a string": (
        tool_result("c1", content=[{"type": "text", "text": 7}]),
        'message.content[0] has no string "text"',
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_context_for_a_provider_names_file_line_and_field(
    tmp_path: Path, case: str, provider: str
) -> None:
    result_message, problem = BAD[case]
    path = _session(tmp_path / "s.jsonl", result_message)
    result = invoke("context", "--format", provider, path)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith(f"error: {path}:4: entry e003: {problem}")


@pytest.mark.parametrize("case", sorted(BAD))
def test_check_reports_the_entry(tmp_path: Path, case: str) -> None:
    result_message, problem = BAD[case]
    path = _session(tmp_path / "s.jsonl", result_message)
    result = invoke("check", path)
    assert result.exit_code == 1
    assert problem in " ".join(result.output.split())


def test_well_formed_messages_have_no_problem(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl", tool_result("c1"))
    assert invoke("check", path).exit_code == 0
    assert invoke("context", "--format", "openai", path).exit_code == 0


@pytest.mark.parametrize(
    "message",
    [
        {"role": "toolResult", "content": 3, "prunedAt": 5},  # sent as the placeholder
        {"role": "custom", "content": 3},  # dropped by the conversion, as pi does
        {"role": "bashExecution", "command": 3},  # converted from strings it checks
        {"role": "someFutureRole", "content": 3},  # not sent
        {"role": "user", "content": "plain text"},
    ],
)
def test_shapes_the_conversion_handles_are_fine(message: dict[str, Any]) -> None:
    assert message_problem(message) is None


def test_assistant_tool_call_arguments_must_be_an_object() -> None:
    message = assistant("", calls=[{**tool_call("c1"), "arguments": "ls"}])
    expected = "message.content[0].arguments must be an object, found string"
    assert message_problem(message) == expected


def test_chat_refuses_a_damaged_context_before_any_request(tmp_path: Path) -> None:
    path = _session(tmp_path / "s.jsonl", tool_result("c1", content=42))
    before = path.read_bytes()
    with socket.socket() as server:  # listens, never answers: no request may reach it
        server.bind(("127.0.0.1", 0))
        server.listen()
        url = f"http://127.0.0.1:{server.getsockname()[1]}"
        result = invoke("chat", "-m", "ollama:x", "--base-url", url, "-p", "hi", "-s", path)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"error: {path}:4: entry e003: message.content must be")
    assert path.read_bytes() == before
