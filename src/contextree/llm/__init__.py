"""Model clients behind one small protocol, and the classification of their failures.

``import contextree.llm`` never imports the ``openai`` or ``anthropic`` SDKs; only building
an :class:`OpenAISDKClient` or :class:`AnthropicSDKClient` does.
"""

from contextree.llm.anthropic import AnthropicClient
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
