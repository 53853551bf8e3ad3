"""Adapters for the official SDKs, for users who already hold an ``AsyncOpenAI`` or
``AsyncAnthropic`` client (extras ``[openai]`` and ``[anthropic]``).

They reuse the wire mappings of :mod:`contextree.llm.openai_compat` and
:mod:`contextree.llm.anthropic` and turn SDK exceptions into ours, so no SDK type leaves
this package. The SDKs are imported only when an adapter is built. The SDK's own retries
stack on top of contextree's: build the SDK client with ``max_retries=0`` to leave retrying
to contextree's runtime.
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from contextree.errors import (
    ModelError,
    ModelResponseError,
    ModelTimeoutError,
    ModelUnreachableError,
)
from contextree.llm._http import http_error_from_body, redact
from contextree.llm.anthropic import build_messages_body, parse_message_response
from contextree.llm.base import Completion, CompletionRequest
from contextree.llm.openai_compat import build_chat_body, parse_chat_completion

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic
    from openai import AsyncOpenAI

__all__ = ["AnthropicSDKClient", "OpenAISDKClient"]


def _require(module: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f'the {module} SDK is not installed; run: pip install "contextree[{module}]"'
        ) from exc


def _split_kwargs(method: Callable[..., Any], body: Mapping[str, Any]) -> dict[str, Any]:
    """Pass keys the SDK method names as keywords and the rest through ``extra_body``."""
    try:
        known = set(inspect.signature(method).parameters)
    except (TypeError, ValueError):
        known = set()
    kwargs = {key: value for key, value in body.items() if key in known}
    extra = {key: value for key, value in body.items() if key not in known}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


def _dump(name: str, response: Any) -> Any:
    dump = getattr(response, "model_dump", None)
    if dump is None:
        raise ModelResponseError(name, f"the SDK returned an unexpected {type(response).__name__}")
    return dump(mode="json", exclude_unset=False)


def _secrets(client: Any) -> tuple[str, ...]:
    key = getattr(client, "api_key", None)
    return (key,) if isinstance(key, str) and len(key) >= 8 else ()


async def _call(
    sdk: ModuleType,
    name: str,
    call: Callable[..., Awaitable[Any]],
    kwargs: dict[str, Any],
    secrets: tuple[str, ...],
) -> Any:
    """Run an SDK call, turning its exceptions into ours."""
    try:
        return await call(**kwargs)
    except sdk.APIStatusError as exc:
        try:  # the raw body, so the error reads exactly as with the httpx clients
            raw = str(exc.response.text)
        except Exception:  # a streamed response that was never read
            raw = ""
        raise http_error_from_body(
            name, status=exc.status_code, headers=exc.response.headers, raw=raw, secrets=secrets
        ) from None
    except json.JSONDecodeError as exc:  # the SDKs let a malformed 2xx body through
        raise ModelResponseError(name, f"the response is not valid JSON ({exc})") from None
    except sdk.APITimeoutError:
        raise ModelTimeoutError(name, "request timed out (SDK)") from None
    except sdk.APIConnectionError as exc:
        cause = exc.__cause__
        reason = f" ({cause})" if cause is not None and str(cause) else ""
        # As the httpx clients: a refused connection is not worth retrying.
        refused = any(word in reason.lower() for word in ("refused", "all connection attempts"))
        error = ModelUnreachableError if refused else ModelError
        raise error(name, f"connection error: the SDK could not reach the server{reason}") from None
    except sdk.APIError as exc:
        message = redact(str(exc.message), secrets)
        raise ModelResponseError(name, f"the SDK reported an error: {message}") from None


class OpenAISDKClient:
    """A :class:`~contextree.llm.base.ModelClient` over an ``openai.AsyncOpenAI`` client."""

    def __init__(self, client: AsyncOpenAI, model: str, *, provider: str = "openai") -> None:
        self._sdk = _require("openai")
        self._client = client
        self.model = model
        self.name = f"{provider}:{model}"

    def __repr__(self) -> str:
        return f"OpenAISDKClient(model={self.model!r})"

    async def complete(self, request: CompletionRequest) -> Completion:
        """One chat completion through the SDK (not streamed)."""
        body = build_chat_body(request, self.model, stream=False)
        create = self._client.chat.completions.create
        kwargs = _split_kwargs(create, body)
        response = await _call(self._sdk, self.name, create, kwargs, _secrets(self._client))
        return parse_chat_completion(_dump(self.name, response), name=self.name, model=self.model)


class AnthropicSDKClient:
    """A :class:`~contextree.llm.base.ModelClient` over an ``anthropic.AsyncAnthropic`` client."""

    def __init__(self, client: AsyncAnthropic, model: str) -> None:
        self._sdk = _require("anthropic")
        self._client = client
        self.model = model
        self.name = f"anthropic:{model}"

    def __repr__(self) -> str:
        return f"AnthropicSDKClient(model={self.model!r})"

    async def complete(self, request: CompletionRequest) -> Completion:
        """One Messages API call through the SDK (not streamed)."""
        body = build_messages_body(request, self.model, stream=False)
        create = self._client.messages.create
        kwargs = _split_kwargs(create, body)
        response = await _call(self._sdk, self.name, create, kwargs, _secrets(self._client))
        return parse_message_response(_dump(self.name, response), name=self.name, model=self.model)
