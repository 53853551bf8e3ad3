"""Model clients behind one small protocol, and the classification of their failures.

``import contextree.llm`` never imports the ``openai`` or ``anthropic`` SDKs; only building
an :class:`OpenAISDKClient` or :class:`AnthropicSDKClient` does. The HTTP clients (and httpx
under them) are imported when first named: a command that only reads a session (``contextree
context``) spent a third of its time importing httpx through this package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from contextree.llm.base import Completion, CompletionRequest, ModelClient, ToolSpec, make_usage
from contextree.llm.errors import (
    ErrorKind,
    classify,
    is_auth_error,
    is_context_overflow,
    is_overflow_text,
    is_retryable_error,
    parse_retry_after,
)

if TYPE_CHECKING:
    from contextree.llm.anthropic import AnthropicClient
    from contextree.llm.openai_compat import OpenAIClient
    from contextree.llm.registry import (
        DEFAULT_CONTEXT_WINDOW,
        context_window,
        create_client,
        parse_model_spec,
        supports_reasoning,
    )
    from contextree.llm.remote import RemoteSummaryClient
    from contextree.llm.scripted import ScriptedClient
    from contextree.llm.sdk_adapters import AnthropicSDKClient, OpenAISDKClient

_LAZY = {
    "AnthropicClient": "anthropic",
    "OpenAIClient": "openai_compat",
    "DEFAULT_CONTEXT_WINDOW": "registry",
    "context_window": "registry",
    "create_client": "registry",
    "parse_model_spec": "registry",
    "supports_reasoning": "registry",
    "RemoteSummaryClient": "remote",
    "ScriptedClient": "scripted",
    "AnthropicSDKClient": "sdk_adapters",
    "OpenAISDKClient": "sdk_adapters",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "AnthropicClient",
    "AnthropicSDKClient",
    "Completion",
    "CompletionRequest",
    "ErrorKind",
    "ModelClient",
    "OpenAIClient",
    "OpenAISDKClient",
    "RemoteSummaryClient",
    "ScriptedClient",
    "ToolSpec",
    "classify",
    "context_window",
    "create_client",
    "is_auth_error",
    "is_context_overflow",
    "is_overflow_text",
    "is_retryable_error",
    "make_usage",
    "parse_model_spec",
    "parse_retry_after",
    "supports_reasoning",
]
