"""``provider:model`` strings: parsing, context windows, and building the client.

Providers: ``openai``, ``anthropic``, ``openai-compact`` and ``anthropic-compact`` (the
providers' own compaction, :mod:`contextree.llm.provider_compaction`), ``remote`` (the model
part is the endpoint URL),
``offline`` (the built-in summarizer, built by a factory the caller passes), and the
OpenAI-compatible local servers ``vllm``, ``ollama`` and ``llamacpp``.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from typing import Final, TypeVar

from contextree.errors import ModelSpecError
from contextree.llm._client import _HTTPModelClient
from contextree.llm._http import DEFAULT_TIMEOUT
from contextree.llm.anthropic import AnthropicClient
from contextree.llm.base import ModelClient
from contextree.llm.openai_compat import OpenAIClient
from contextree.llm.provider_compaction import AnthropicCompactionClient, OpenAICompactionClient
from contextree.llm.remote import RemoteSummaryClient

__all__ = [
    "CONTEXT_WINDOWS",
    "DEFAULT_CONTEXT_WINDOW",
    "LOCAL_SERVERS",
    "PROVIDERS",
    "REASONING_MODELS",
    "context_window",
    "create_client",
    "missing_api_key",
    "parse_model_spec",
    "supports_reasoning",
]

LOCAL_SERVERS: Final[Mapping[str, str]] = {
    "vllm": "http://127.0.0.1:8000",
    "ollama": "http://127.0.0.1:11434",
    "llamacpp": "http://127.0.0.1:8080",
}
"""OpenAI-compatible local servers and their default base URLs."""

PROVIDERS: Final = (
    "openai",
    "anthropic",
    "remote",
    "offline",
    *LOCAL_SERVERS,
    "openai-compact",
    "anthropic-compact",
)

DEFAULT_CONTEXT_WINDOW: Final = 128_000

CONTEXT_WINDOWS: Final[Mapping[str, int]] = {
    # OpenAI
    "gpt-3.5-turbo": 16_385,
    "gpt-4": 8_192,
    "gpt-4-turbo": 128_000,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.5": 128_000,
    "gpt-5": 400_000,
    "gpt-oss": 131_072,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o1-preview": 128_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
    # Anthropic: every Claude 3.x and 4.x model has 200k by default
    "claude": 200_000,
    # Google
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini-2.0-flash": 1_048_576,
    "gemini-2.5": 1_048_576,
    # open models, as Ollama / vLLM / llama.cpp name them
    "llama3": 8_192,
    "llama3.1": 128_000,
    "llama3.2": 128_000,
    "llama3.3": 128_000,
    "llama-3": 8_192,
    "llama-3.1": 128_000,
    "llama-3.2": 128_000,
    "llama-3.3": 128_000,
    "meta-llama-3.1": 128_000,
    "qwen2": 32_768,
    "qwen2.5": 32_768,
    "qwen3": 40_960,
    "mistral": 32_768,
    "mistral-large": 128_000,
    "mistral-nemo": 128_000,
    "mixtral": 32_768,
    "codellama": 16_384,
    "gemma2": 8_192,
    "gemma3": 128_000,
    "deepseek-chat": 128_000,
    "deepseek-reasoner": 128_000,
    "deepseek-r1": 128_000,
    "deepseek-v3": 128_000,
}
"""Context windows in tokens, matched by the longest prefix of the model name (so
``claude-sonnet-4-5-20250929`` and ``llama3.1:8b`` find their family)."""

REASONING_MODELS: Final[Mapping[str, bool]] = {
    "o1": True,
    "o1-mini": False,  # rejects reasoning_effort
    "o1-preview": False,
    "o3": True,
    "o4-mini": True,
    "gpt-5": True,
    "gpt-5-chat": False,
    "gpt-oss": True,
    "claude-3-7-sonnet": True,
    "claude-sonnet-4": True,
    "claude-opus-4": True,
    "claude-haiku-4": True,
    "deepseek-reasoner": True,
    "deepseek-r1": True,
    "qwen3": True,
    "qwq": True,
}
"""Model families that accept a reasoning level, by longest prefix; unknown models do not."""

_BOUNDARY: Final = frozenset("-:@._/ ")

OfflineFactory = Callable[[], ModelClient]
_T = TypeVar("_T")


def _suggest(word: str, choices: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f'; did you mean "{close[0]}"?' if close else f"; known providers: {', '.join(choices)}"


def _guess_provider(model: str) -> str | None:
    lowered = model.lower()
    if lowered.startswith("claude"):
        return "anthropic"
    if lowered.startswith(("gpt", "o1", "o3", "o4", "chatgpt")):
        return "openai"
    return None


def parse_model_spec(spec: str) -> tuple[str, str]:
    """Split ``"provider:model"`` at the first colon (model names may hold colons:
    ``ollama:llama3.1:8b``). ``"offline"`` alone is accepted.

    Raises:
        ModelSpecError: no provider, an unknown provider (with a suggestion), or no model.
    """
    text = spec.strip()
    provider, sep, model = text.partition(":")
    provider = provider.strip().lower()
    if not sep:
        if provider == "offline":
            return "offline", ""
        guess = _guess_provider(text)
        hint = f'; did you mean "{guess}:{text}"?' if guess else ', e.g. "openai:gpt-4o-mini"'
        raise ModelSpecError(
            spec, f'model "{text}" names no provider (write "provider:model"){hint}'
        )
    if provider not in PROVIDERS:
        raise ModelSpecError(
            spec, f'unknown provider "{provider}" in "{text}"' + _suggest(provider, PROVIDERS)
        )
    model = model.strip()
    if not model and provider != "offline":
        what = "an endpoint URL" if provider == "remote" else "a model name"
        raise ModelSpecError(spec, f'"{text}" has no model: write "{provider}:<{what}>"')
    return provider, model


def _model_part(spec: str) -> str:
    provider, sep, model = spec.strip().partition(":")
    if sep and provider.strip().lower() in PROVIDERS:
        return model.strip()
    return spec.strip()


def context_window(spec: str, overrides: Mapping[str, int] | None = None) -> int:
    """The context window of a model, in tokens.

    ``spec`` is ``"provider:model"`` or a bare model name. ``overrides`` (e.g. from
    settings) win, looked up by the full spec, then by the model name. Otherwise the
    longest matching prefix in :data:`CONTEXT_WINDOWS`, after dropping an organisation
    prefix (``meta-llama/...``); unknown models get :data:`DEFAULT_CONTEXT_WINDOW`.
    """
    model = _model_part(spec)
    if overrides:
        for key in (spec.strip(), model):
            if key in overrides:
                return overrides[key]
    return _longest_prefix(CONTEXT_WINDOWS, model, DEFAULT_CONTEXT_WINDOW)


def supports_reasoning(spec: str) -> bool:
    """Whether a model accepts a reasoning level (``reasoning_effort`` / a thinking budget).

    Sending one to a model without reasoning fails on some providers (PI #1794), so callers
    pass ``CompletionRequest.reasoning`` only when this is true. Unknown models: false.
    """
    return _longest_prefix(REASONING_MODELS, _model_part(spec), False)


def _longest_prefix(table: Mapping[str, _T], model: str, default: _T) -> _T:
    """The value of the longest key that starts the model name at a word boundary
    (``claude-sonnet-4-5-20250929`` -> ``claude``); an organisation prefix is dropped."""
    name = model.lower().rsplit("/", 1)[-1]
    best, best_len = default, -1
    for prefix, value in table.items():
        if (
            len(prefix) > best_len
            and name.startswith(prefix)
            and (len(name) == len(prefix) or name[len(prefix)] in _BOUNDARY)
        ):
            best, best_len = value, len(prefix)
    return best


def create_client(
    spec: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    token: str | None = None,
    timeout: float | None = None,
    stream: bool = False,
    offline_factory: OfflineFactory | None = None,
) -> ModelClient:
    """Build the client a ``provider:model`` string names.

    Args:
        spec: e.g. ``"openai:gpt-4o-mini"``, ``"ollama:llama3.1:8b"``,
            ``"remote:https://host/summarize"``, ``"offline"``.
        base_url: server root for ``openai``/``anthropic`` and the local servers (which
            otherwise use ``<PROVIDER>_BASE_URL`` or their default port on 127.0.0.1); the
            endpoint for ``remote`` when the spec has none.
        api_key: the provider's key; ``None`` reads ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``
            (``<PROVIDER>_API_KEY`` for local servers, which never get the OpenAI key).
        token: bearer token for the remote endpoint.
        timeout: seconds; ``None`` keeps the client's default.
        stream: use SSE streaming (OpenAI-compatible and Anthropic).
        offline_factory: builds the offline summarizer (it lives in ``contextree.compaction``).

    Raises:
        ModelSpecError: a malformed spec or unknown provider.
        ValueError: ``offline`` without a factory, ``remote`` without an endpoint.
    """
    provider, model = parse_model_spec(spec)
    seconds = DEFAULT_TIMEOUT if timeout is None else timeout
    if provider == "offline":
        if offline_factory is None:
            raise ValueError(
                'the "offline" provider needs offline_factory (the offline summarizer)'
            )
        return offline_factory()
    if provider == "remote":
        endpoint = model or base_url
        if not endpoint:
            raise ValueError('the "remote" provider needs an endpoint URL')
        try:
            return RemoteSummaryClient(endpoint, token=token, timeout=seconds)
        except ValueError as exc:  # a malformed endpoint is a malformed spec
            raise ModelSpecError(spec, str(exc)) from None
    if provider in ("openai-compact", "anthropic-compact"):
        kind = (
            OpenAICompactionClient if provider == "openai-compact" else AnthropicCompactionClient
        )
        return kind(model, base_url=base_url, api_key=api_key, timeout=seconds)
    if provider == "anthropic":
        return AnthropicClient(
            model, base_url=base_url, api_key=api_key, stream=stream, timeout=seconds
        )
    if provider == "openai":
        return OpenAIClient(
            model, base_url=base_url, api_key=api_key, stream=stream, timeout=seconds
        )
    env = provider.upper()
    return OpenAIClient(
        model,
        base_url=base_url or os.environ.get(f"{env}_BASE_URL") or LOCAL_SERVERS[provider],
        api_key=api_key if api_key is not None else os.environ.get(f"{env}_API_KEY", ""),
        stream=stream,
        provider=provider,
        timeout=seconds,
    )


def missing_api_key(client: ModelClient) -> str | None:
    """The environment variable to set before ``client`` can work: an ``openai:`` or
    ``anthropic:`` client on the provider's own service without a key (every request would
    fail, after the retries); ``None`` for every other client."""
    if isinstance(client, _HTTPModelClient):
        return client.missing_api_key
    if isinstance(client, OpenAICompactionClient | AnthropicCompactionClient):
        return client.missing_api_key
    return None
