"""Shared fixtures: a clean environment, a loopback-only network, and the fake LLM server."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes.fake_llm import FakeLLMServer
from pi_fixture_guard import skip_without_pi_fixtures


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--small-reads",
        action="store_true",
        help="read every session file by range in tiny steps, as a large one is read (runs "
        "the suite through the lazy file reader, its anonymous-memory buffers and the index's "
        "step-back code)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that read ``../shared/pi-fixtures`` skip with one reason where it is absent."""
    skip_without_pi_fixtures(items)


@pytest.fixture(autouse=True)
def _small_reads(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.config.getoption("--small-reads"):
        from contextree.session import tree_state
        from contextree.store import byte_source, record_index

        monkeypatch.setattr(tree_state, "LAZY_READ_MIN_BYTES", 0)
        monkeypatch.setattr(tree_state, "_EDGE_BYTES", 4096)
        monkeypatch.setattr(record_index, "FIRST_CHUNK_BYTES", 200)
        # Every range into anonymous memory, as a range of 2 MB or more is read.
        monkeypatch.setattr(byte_source, "_HUGE_PAGE_READ", 1)

_MODEL_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "VLLM_API_KEY",
    "VLLM_BASE_URL",
    "OLLAMA_API_KEY",
    "OLLAMA_BASE_URL",
    "LLAMACPP_API_KEY",
    "LLAMACPP_BASE_URL",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No API keys, no user settings: every test starts from the built-in defaults."""
    import os

    for name in _MODEL_ENV:
        monkeypatch.delenv(name, raising=False)
    for name in list(os.environ):
        if name.startswith("CONTEXTREE_"):
            monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("CONTEXTREE_HOME", str(home / ".config" / "contextree"))
    monkeypatch.setenv("HOME", str(home))
    # Recall indexes of session files are cached under $XDG_CACHE_HOME: never the user's.
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))


def _is_local(address: Any) -> bool:
    if isinstance(address, (str, bytes)):
        return True  # AF_UNIX path
    host = address[0] if isinstance(address, tuple) and address else ""
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse any connection beyond 127.0.0.0/8 and ::1, so no test reaches the internet."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def connect(self: socket.socket, address: Any) -> None:
        if not _is_local(address):
            raise ConnectionRefusedError(f"tests may only connect to loopback, not {address!r}")
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if not _is_local(address):
            raise ConnectionRefusedError(f"tests may only connect to loopback, not {address!r}")
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def fake_llm_server() -> Iterator[FakeLLMServer]:
    """One fake OpenAI / Anthropic / remote-endpoint server on 127.0.0.1 for the session."""
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def fake_llm(fake_llm_server: FakeLLMServer) -> Iterator[FakeLLMServer]:
    """The session's fake server with an empty script and no recorded requests."""
    fake_llm_server.reset()
    yield fake_llm_server
    fake_llm_server.reset()


@pytest.fixture
def repo_root() -> Path:
    return Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A PostgreSQL server on 127.0.0.1 for the session (see tests/postgres_server.py)."""
    from postgres_server import running_server

    with running_server() as server:
        yield server
