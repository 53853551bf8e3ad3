"""Issue 24 point 7: fail fast when a model cannot answer.

Without its API key an ``openai:`` client sends nothing: ``compact`` says the key is missing
and summarizes offline at once (no "the conversation is sent" note, no retries), or exits 1
with ``--no-fallback``. A refused connection is not transient: no retries, and ``chat`` refuses
before anything is written to the session when its local server is not running.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
from pathlib import Path

import pytest

from cli_env import invoke
from contextree.errors import ModelUnreachableError
from contextree.llm.base import CompletionRequest
from contextree.llm.errors import classify
from contextree.llm.probe import refused_connection
from contextree.llm.registry import create_client
from contextree.runtime.retry import FallbackClient

pytestmark = pytest.mark.usefixtures("clean_cli")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "todo-api-session.jsonl"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_compact_without_the_key_goes_offline_at_once(tmp_path: Path) -> None:
    path = Path(shutil.copyfile(EXAMPLE, tmp_path / "s.jsonl"))
    result = invoke("compact", "-q", "--model", "openai:gpt-4o-mini", path)
    assert result.exit_code == 0, result.output
    assert "conversation is sent" not in result.output
    assert "retrying" not in result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1
    assert "needs an API key: set OPENAI_API_KEY" in warnings[0]
    entry = json.loads(path.read_bytes().splitlines()[-1])
    assert entry["details"]["method"] == "offline-fallback"
    assert "OPENAI_API_KEY" in entry["details"]["fallbackReason"]


def test_compact_without_the_key_and_no_fallback_is_an_error(tmp_path: Path) -> None:
    path = Path(shutil.copyfile(EXAMPLE, tmp_path / "s.jsonl"))
    result = invoke("compact", "--no-fallback", "--model", "openai:gpt-4o-mini", path)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "error: openai:gpt-4o-mini needs an API key: set OPENAI_API_KEY (or pass --base-url "
        "for a server that needs none)"
    ]
    assert path.read_bytes() == EXAMPLE.read_bytes()


def test_the_missing_key_error_is_not_retried() -> None:
    client = create_client("anthropic:claude-sonnet-4-5")
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    fallback = FallbackClient([client], sleep=sleep)
    with pytest.raises(ModelUnreachableError, match="ANTHROPIC_API_KEY"):
        asyncio.run(fallback.complete(CompletionRequest(system_prompt="", messages=[])))
    assert slept == [] and len(fallback.attempts) == 1


def test_a_refused_connection_is_not_retried() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    client = create_client("ollama:llama3.1", base_url=url)
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    fallback = FallbackClient([client], sleep=sleep)
    with pytest.raises(ModelUnreachableError) as caught:
        asyncio.run(fallback.complete(CompletionRequest(system_prompt="", messages=[])))
    assert classify(caught.value) == "fatal"
    assert slept == [] and len(fallback.attempts) == 1
    assert refused_connection(client) is not None


def test_chat_refuses_before_writing_when_the_server_is_down(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    path = tmp_path / "chat.jsonl"
    args = ["chat", "-m", "ollama:llama3.1", "--base-url", url, "-p", "hi", "--session", path]
    result = invoke(*args)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"error: ollama:llama3.1: connection error: cannot reach {url} (connection refused); "
        "is the server running?"
    ]
    assert not path.exists()


def test_a_model_named_x_is_not_an_emoji(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    result = invoke("chat", "-m", "ollama:x", "--base-url", url, "-p", "hi", "-s", tmp_path / "c")
    assert result.output.startswith("error: ollama:x: connection error")  # not "ollama❌"


def test_a_remote_server_is_not_probed() -> None:
    client = create_client("openai:gpt-4o-mini", base_url="http://192.0.2.1:9")
    assert refused_connection(client) is None  # no connection attempted off the machine
