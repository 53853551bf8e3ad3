"""``provider:model`` parsing, context windows and client construction."""

from __future__ import annotations

import pytest

from contextree.errors import ModelSpecError
from contextree.llm import (
    AnthropicClient,
    ModelClient,
    OpenAIClient,
    RemoteSummaryClient,
    ScriptedClient,
)
from contextree.llm.registry import (
    DEFAULT_CONTEXT_WINDOW,
    context_window,
    create_client,
    parse_model_spec,
    supports_reasoning,
)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("openai:gpt-4o", ("openai", "gpt-4o")),
        ("  anthropic:claude-sonnet-4-5 ", ("anthropic", "claude-sonnet-4-5")),
        ("OpenAI:gpt-4o-mini", ("openai", "gpt-4o-mini")),
        ("ollama:llama3.1:8b", ("ollama", "llama3.1:8b")),
        ("vllm:meta-llama/Llama-3.1-8B-Instruct", ("vllm", "meta-llama/Llama-3.1-8B-Instruct")),
        ("llamacpp:qwen2.5-7b", ("llamacpp", "qwen2.5-7b")),
        ("remote:https://sum.example/summarize", ("remote", "https://sum.example/summarize")),
        ("offline", ("offline", "")),
        ("offline:", ("offline", "")),
    ],
)
def test_parse_model_spec(spec: str, expected: tuple[str, str]) -> None:
    assert parse_model_spec(spec) == expected


def test_unknown_provider_suggests_the_closest() -> None:
    with pytest.raises(ModelSpecError) as caught:
        parse_model_spec("opnai:gpt-4o")
    assert str(caught.value) == 'unknown provider "opnai" in "opnai:gpt-4o"; did you mean "openai"?'
    assert caught.value.spec == "opnai:gpt-4o"
    assert isinstance(caught.value, ValueError)


def test_unknown_provider_without_a_close_match_lists_them() -> None:
    with pytest.raises(ModelSpecError, match=r"known providers: openai, anthropic, remote"):
        parse_model_spec("zzz:model")


def test_missing_provider_guesses_it() -> None:
    with pytest.raises(ModelSpecError, match=r'did you mean "anthropic:claude-opus-4"\?'):
        parse_model_spec("claude-opus-4")
    with pytest.raises(ModelSpecError, match=r'did you mean "openai:gpt-4o"\?'):
        parse_model_spec("gpt-4o")
    with pytest.raises(ModelSpecError, match=r'write "provider:model"'):
        parse_model_spec("mystery")


def test_missing_model() -> None:
    with pytest.raises(ModelSpecError, match=r'write "openai:<a model name>"'):
        parse_model_spec("openai:")
    with pytest.raises(ModelSpecError, match=r"endpoint URL"):
        parse_model_spec("remote:")


@pytest.mark.parametrize(
    ("spec", "window"),
    [
        ("openai:gpt-4o", 128_000),
        ("openai:gpt-4o-mini", 128_000),
        ("openai:gpt-4o-2024-08-06", 128_000),
        ("openai:gpt-4.1", 1_047_576),
        ("openai:gpt-4.1-mini", 1_047_576),
        ("openai:gpt-4", 8_192),
        ("openai:o3", 200_000),
        ("openai:o4-mini", 200_000),
        ("openai:o1-mini", 128_000),
        ("openai:gpt-5", 400_000),
        ("openai:gpt-5-mini", 400_000),
        ("anthropic:claude-3-5-sonnet-20241022", 200_000),
        ("anthropic:claude-3-7-sonnet-latest", 200_000),
        ("anthropic:claude-sonnet-4", 200_000),
        ("anthropic:claude-sonnet-4-5-20250929", 200_000),
        ("anthropic:claude-opus-4", 200_000),
        ("anthropic:claude-haiku-4-5", 200_000),
        ("ollama:llama3.1:8b", 128_000),
        ("ollama:llama3", 8_192),
        ("ollama:qwen2.5-coder:7b", 32_768),
        ("vllm:meta-llama/Llama-3.1-8B-Instruct", 128_000),
        ("vllm:Qwen/Qwen2.5-7B-Instruct", 32_768),
        ("claude-sonnet-4-5", 200_000),  # a bare model name
        ("openai:some-new-model", DEFAULT_CONTEXT_WINDOW),
        ("offline", DEFAULT_CONTEXT_WINDOW),
    ],
)
def test_context_window(spec: str, window: int) -> None:
    assert context_window(spec) == window


def test_context_window_prefix_needs_a_boundary() -> None:
    assert context_window("openai:o1x") == DEFAULT_CONTEXT_WINDOW
    assert context_window("ollama:llama30") == DEFAULT_CONTEXT_WINDOW


def test_context_window_overrides() -> None:
    overrides = {"ollama:llama3.1:8b": 16_384, "gpt-4o": 64_000}
    assert context_window("ollama:llama3.1:8b", overrides) == 16_384
    assert context_window("openai:gpt-4o", overrides) == 64_000
    assert context_window("openai:gpt-4o-mini", overrides) == 128_000


class TestCreateClient:
    def test_openai(self) -> None:
        client = create_client("openai:gpt-4o-mini", api_key="k", timeout=5)
        assert isinstance(client, OpenAIClient)
        assert client.name == "openai:gpt-4o-mini"
        assert client.url == "https://api.openai.com/v1/chat/completions"
        assert client.timeout == 5

    def test_openai_base_url_with_v1(self) -> None:
        client = create_client("openai:m", base_url="http://127.0.0.1:9/v1/")
        assert isinstance(client, OpenAIClient)
        assert client.url == "http://127.0.0.1:9/v1/chat/completions"

    def test_openai_base_url_from_env(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:7/v1")
        client = create_client("openai:m")
        assert isinstance(client, OpenAIClient)
        assert client.url == "http://127.0.0.1:7/v1/chat/completions"

    def test_anthropic(self) -> None:
        client = create_client("anthropic:claude-sonnet-4-5", stream=True)
        assert isinstance(client, AnthropicClient)
        assert client.url == "https://api.anthropic.com/v1/messages"
        assert client.stream

    @pytest.mark.parametrize(
        ("provider", "url"),
        [
            ("ollama", "http://127.0.0.1:11434/v1/chat/completions"),
            ("llamacpp", "http://127.0.0.1:8080/v1/chat/completions"),
            ("vllm", "http://127.0.0.1:8000/v1/chat/completions"),
        ],
    )
    def test_local_servers(self, provider: str, url: str) -> None:
        client = create_client(f"{provider}:some-model")
        assert isinstance(client, OpenAIClient)
        assert client.url == url
        assert client.name == f"{provider}:some-model"

    def test_local_servers_never_get_the_openai_key(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key")
        client = create_client("ollama:llama3.1")
        assert isinstance(client, OpenAIClient)
        assert "authorization" not in client._request_headers()
        monkeypatch.setenv("OLLAMA_API_KEY", "ollama-key-123")
        client = create_client("ollama:llama3.1")
        assert isinstance(client, OpenAIClient)
        assert client._request_headers()["authorization"] == "Bearer ollama-key-123"

    def test_remote(self) -> None:
        client = create_client("remote:http://127.0.0.1:9/summarize", token="t")
        assert isinstance(client, RemoteSummaryClient)
        assert client.endpoint == "http://127.0.0.1:9/summarize"
        assert client.name == "remote"

    def test_offline_uses_the_factory(self) -> None:
        offline = ScriptedClient("offline")

        def factory() -> ModelClient:
            return offline

        assert create_client("offline", offline_factory=factory) is offline
        with pytest.raises(ValueError, match="offline_factory"):
            create_client("offline")

    def test_unknown_provider(self) -> None:
        with pytest.raises(ModelSpecError, match='did you mean "anthropic"'):
            create_client("antropic:claude-sonnet-4-5")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("openai:o3", True),
        ("openai:o3-mini", True),
        ("openai:o1", True),
        ("openai:o1-mini", False),
        ("openai:gpt-5-mini", True),
        ("openai:gpt-5-chat-latest", False),
        ("openai:gpt-4o", False),
        ("anthropic:claude-sonnet-4-5-20250929", True),
        ("anthropic:claude-3-7-sonnet-latest", True),
        ("anthropic:claude-3-5-sonnet-20241022", False),
        ("ollama:qwen3:8b", True),
        ("ollama:llama3.1:8b", False),
        ("offline", False),
    ],
)
def test_supports_reasoning(spec: str, expected: bool) -> None:
    assert supports_reasoning(spec) is expected
