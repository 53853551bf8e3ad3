"""The providers' own compaction, used as summarizers.

- ``openai-compact:MODEL``: OpenAI's Responses API compaction, ``POST {base}/v1/responses/compact``
  with ``{model, input, instructions?}``. The answer (``object: "response.compaction"``) holds
  ``output``, the items that replace the conversation: among them a ``compaction`` item whose
  ``encrypted_content`` only OpenAI can read.
- ``anthropic-compact:MODEL``: Anthropic's server-side compaction in the Messages API (beta
  header ``compact-2026-01-12``): ``context_management.edits`` with a ``compact_20260112`` edit
  (its ``trigger`` in input tokens, at least 50,000; ``pause_after_compaction`` so the model
  stops after compacting). The answer's ``compaction`` content block carries a readable summary
  and is sent back as it is in later requests.

Both return a :class:`ProviderCompaction`: the items to send back to that provider, and a
readable summary when the provider gives one. They are no chat models: :meth:`complete` fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import httpx

from contextree.entries.types import LlmMessage, Usage
from contextree.errors import ModelError, ModelResponseError
from contextree.llm._http import (
    DEFAULT_TIMEOUT,
    env_or,
    post,
    raise_for_status,
    read_json,
    resolve_base_url,
)
from contextree.llm.anthropic import ANTHROPIC_VERSION, COMPACTION_BETA, to_anthropic_messages
from contextree.llm.base import Completion, CompletionRequest, make_usage

__all__ = [
    "ANTHROPIC_COMPACTION_BETA",
    "ANTHROPIC_MIN_TRIGGER",
    "AnthropicCompactionClient",
    "OpenAICompactionClient",
    "ProviderCompaction",
    "anthropic_blocks",
    "to_responses_input",
]

ANTHROPIC_COMPACTION_BETA: Final = COMPACTION_BETA
ANTHROPIC_MIN_TRIGGER: Final = 50_000
"""The smallest ``trigger`` Anthropic accepts: a shorter conversation is not compacted."""

_CONTINUE = "Compact the conversation so far; the work continues in the next request."


@dataclass(frozen=True, slots=True)
class ProviderCompaction:
    """What a provider's compaction returned."""

    provider: str
    """``openai`` or ``anthropic``: the only provider the items mean something to."""
    model: str
    items: list[dict[str, Any]]
    """Sent back to that provider instead of the compacted messages (opaque)."""
    summary: str | None
    """A readable summary, when the provider gives one (Anthropic); OpenAI's is encrypted."""
    usage: Usage = field(default_factory=make_usage)


class _CompactionClient:
    """What both clients share: a base URL, a key, one JSON POST."""

    provider: str
    _path: str
    _base_env: str
    _key_env: str
    _default_base: str

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.model = model
        self.name = f"{self.provider}-compact:{model}"
        self.base_url = resolve_base_url(base_url, self._base_env, self._default_base)
        self.url = f"{self.base_url}{self._path}"
        self.timeout = timeout
        self._api_key = env_or(api_key, self._key_env) or ""
        self._http_client = http_client
        self._secrets = (self._api_key,) if len(self._api_key) >= 8 else ()

    @property
    def missing_api_key(self) -> str | None:
        """As the chat clients: a key is needed on the provider's own service only."""
        own = self.base_url.rstrip("/") == self._default_base.rstrip("/")
        return self._key_env if own and not self._api_key else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    async def complete(self, request: CompletionRequest) -> Completion:
        """Not a chat model: summaries come from :meth:`compact_messages`."""
        raise ModelError(self.name, "a provider's compaction writes no text completions")

    async def _post(self, headers: dict[str, str], body: dict[str, Any]) -> Any:
        async with post(
            name=self.name,
            url=self.url,
            headers=headers,
            body=body,
            timeout=self.timeout,
            http_client=self._http_client,
        ) as response:
            await raise_for_status(self.name, response, self._secrets)
            return await read_json(self.name, response)


class OpenAICompactionClient(_CompactionClient):
    """``openai-compact:MODEL``: ``POST /v1/responses/compact``."""

    provider = "openai"
    _path = "/v1/responses/compact"
    _base_env = "OPENAI_BASE_URL"
    _key_env = "OPENAI_API_KEY"
    _default_base = "https://api.openai.com"

    async def compact_messages(
        self, messages: Sequence[LlmMessage], *, instructions: str | None = None
    ) -> ProviderCompaction:
        body: dict[str, Any] = {"model": self.model, "input": to_responses_input(messages)}
        if instructions:
            body["instructions"] = instructions
        headers = {"authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        data = await self._post(headers, body)
        output = data.get("output") if isinstance(data, dict) else None
        if not isinstance(output, list) or not any(
            isinstance(item, dict) and item.get("type") == "compaction" for item in output
        ):
            raise ModelResponseError(self.name, "the compaction response has no compaction item")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return ProviderCompaction(
            "openai",
            self.model,
            [item for item in output if isinstance(item, dict)],
            None,
            make_usage(_int(usage, "input_tokens"), _int(usage, "output_tokens")),
        )


class AnthropicCompactionClient(_CompactionClient):
    """``anthropic-compact:MODEL``: ``POST /v1/messages`` with a ``compact_20260112`` edit."""

    provider = "anthropic"
    _path = "/v1/messages"
    _base_env = "ANTHROPIC_BASE_URL"
    _key_env = "ANTHROPIC_API_KEY"
    _default_base = "https://api.anthropic.com"

    max_tokens = 4096

    async def compact_messages(
        self, messages: Sequence[LlmMessage], *, instructions: str | None = None
    ) -> ProviderCompaction:
        edit: dict[str, Any] = {
            "type": "compact_20260112",
            "trigger": {"type": "input_tokens", "value": ANTHROPIC_MIN_TRIGGER},
            "pause_after_compaction": True,
        }
        if instructions:
            edit["instructions"] = instructions
        wire = to_anthropic_messages(
            [*messages, {"role": "user", "content": [{"type": "text", "text": _CONTINUE}]}]
        )
        body = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": wire,
            "context_management": {"edits": [edit]},
        }
        headers = {
            "anthropic-version": ANTHROPIC_VERSION,
            "anthropic-beta": ANTHROPIC_COMPACTION_BETA,
        }
        if self._api_key:
            headers["x-api-key"] = self._api_key
        data = await self._post(headers, body)
        content = data.get("content") if isinstance(data, dict) else None
        blocks = [
            block
            for block in (content if isinstance(content, list) else [])
            if isinstance(block, dict) and block.get("type") == "compaction"
        ]
        if not blocks or not isinstance(blocks[-1].get("content"), str):
            raise ModelResponseError(
                self.name,
                "no compaction block in the response (Anthropic compacts only conversations "
                f"over {ANTHROPIC_MIN_TRIGGER:,} input tokens)",
            )
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return ProviderCompaction(
            "anthropic",
            self.model,
            [blocks[-1]],
            blocks[-1]["content"],
            make_usage(
                _int(usage, "input_tokens"),
                _int(usage, "output_tokens"),
                _int(usage, "cache_read_input_tokens"),
                _int(usage, "cache_creation_input_tokens"),
            ),
        )


def anthropic_blocks(items: Any) -> list[dict[str, Any]]:
    """The ``compaction`` blocks among stored items, in the shape Anthropic takes back."""
    return [
        {"type": "compaction", "content": str(item.get("content", ""))}
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, dict) and item.get("type") == "compaction"
    ]


def _int(mapping: Any, key: str) -> int:
    value = mapping.get(key) if isinstance(mapping, dict) else None
    return value if isinstance(value, int) else 0


def to_responses_input(messages: Sequence[LlmMessage]) -> list[dict[str, Any]]:
    """pi LLM messages as Responses API input items: user and developer messages with
    ``input_text``, assistant text as ``output_text`` messages, tool calls as
    ``function_call`` and results as ``function_call_output``. Thinking is left out: OpenAI
    takes back only its own encrypted reasoning items."""
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if role in ("user", "developer"):
            parts = [
                {"type": "input_text", "text": str(b.get("text", ""))}
                for b in blocks
                if isinstance(b, dict) and b.get("type") == "text"
            ]
            items.append({"role": role, "content": parts})
        elif role == "assistant":
            items.extend(_assistant_items(blocks))
        elif role == "toolResult":
            text = "\n".join(
                str(b.get("text", ""))
                for b in blocks
                if isinstance(b, dict) and b.get("type") == "text"
            )
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": str(message.get("toolCallId", "")),
                    "output": text,
                }
            )
    return items


def _assistant_items(blocks: Sequence[Any]) -> list[dict[str, Any]]:
    import json

    items: list[dict[str, Any]] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and block.get("text"):
            items.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": str(block["text"])}],
                }
            )
        elif block.get("type") == "toolCall":
            items.append(
                {
                    "type": "function_call",
                    "call_id": str(block.get("id", "")),
                    "name": str(block.get("name", "")),
                    "arguments": json.dumps(block.get("arguments") or {}, ensure_ascii=False),
                }
            )
    return items
