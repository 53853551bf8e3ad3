"""Anthropic Messages API: ``POST {base}/v1/messages``, as one JSON answer or as SSE events.

The mapping between pi's messages and Anthropic's lives here and is shared with
:class:`~contextree.llm.sdk_adapters.AnthropicSDKClient`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final

import httpx
import msgspec

from contextree.entries.types import LlmMessage, StopReason, StoredBlock, Usage
from contextree.errors import ModelResponseError
from contextree.llm._client import _HTTPModelClient
from contextree.llm._common import (
    block_type,
    count,
    json_object,
    reasoning_level,
    response_completion,
)
from contextree.llm._http import (
    DEFAULT_TIMEOUT,
    decode_json,
    stream_error,
)
from contextree.llm.base import Completion, CompletionRequest, ToolSpec, make_usage

__all__ = [
    "ANTHROPIC_VERSION",
    "DEFAULT_ANTHROPIC_BASE_URL",
    "DEFAULT_ANTHROPIC_MAX_TOKENS",
    "THINKING_BUDGETS",
    "AnthropicClient",
    "MessageStreamAccumulator",
    "build_messages_body",
    "parse_message_response",
    "thinking_budget",
    "to_anthropic_messages",
    "to_anthropic_tools",
]

DEFAULT_ANTHROPIC_BASE_URL: Final = "https://api.anthropic.com"
COMPACTION_BETA: Final = "compact-2026-01-12"
"""The beta under which Anthropic takes (and writes) ``compaction`` blocks."""
ANTHROPIC_VERSION: Final = "2023-06-01"
DEFAULT_ANTHROPIC_MAX_TOKENS: Final = 4096
"""``max_tokens`` is required by the API; this is sent when the request leaves it unset."""

THINKING_BUDGETS: Final[Mapping[str, int]] = {
    "minimal": 1024,
    "low": 1024,
    "medium": 4096,
    "high": 8192,
    "xhigh": 16384,
}
"""Thinking budget (tokens) per pi thinking level."""

_ID_CHARS: Final = re.compile(r"[^a-zA-Z0-9_-]")
_MIN_BUDGET: Final = 1024  # the API's minimum budget_tokens
_MIN_ANSWER: Final = 1024  # output tokens left for the answer after thinking

JsonDict = dict[str, Any]


# -- request mapping ------------------------------------------------------------------------


def _image(block: StoredBlock) -> JsonDict:
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": str(block.get("mimeType", "image/png")),
            "data": str(block.get("data", "")),
        },
    }


def _user_blocks(content: Any, *, what: str, role: str = "user") -> str | list[JsonDict]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ValueError(f"{what}: content must be a string or a list of blocks")
    blocks: list[JsonDict] = []
    for block in content:
        kind = block_type(block, what=what)
        if kind == "text":
            if block.get("text"):  # the API rejects empty text blocks
                blocks.append({"type": "text", "text": str(block["text"])})
        elif kind == "image":
            blocks.append(_image(block))
        else:
            raise ValueError(f'{what}: cannot send a {role} content block of type "{kind}"')
    return blocks


def _tool_id(raw: Any) -> str:
    """Anthropic accepts ids of ``[a-zA-Z0-9_-]{1,64}``; other providers' ids (OpenAI Responses
    ``call_x|fc_y``) are rewritten the same way on the call and on its result."""
    return _ID_CHARS.sub("_", str(raw or ""))[:64] or "tool_call"


def _assistant_blocks(content: Any, *, what: str, replay_thinking: bool) -> list[JsonDict]:
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise ValueError(f"{what}: assistant content must be a list of blocks")
    blocks: list[JsonDict] = []
    for block in content:
        kind = block_type(block, what=what)
        if kind == "text":
            if block.get("text"):
                blocks.append({"type": "text", "text": str(block["text"])})
        elif kind == "thinking":
            signature = block.get("thinkingSignature")
            if not signature or not replay_thinking:
                continue  # unsigned, or signed by another provider: Anthropic would reject it
            if block.get("redacted"):
                blocks.append({"type": "redacted_thinking", "data": str(signature)})
            else:
                thinking = str(block.get("thinking", ""))
                blocks.append({"type": "thinking", "thinking": thinking, "signature": signature})
        elif kind == "compaction":  # Anthropic's own compaction, sent back as it came
            blocks.append({"type": "compaction", "content": str(block.get("content", ""))})
        elif kind == "redactedThinking":  # oh-my-pi's block
            if block.get("data") and replay_thinking:
                blocks.append({"type": "redacted_thinking", "data": str(block["data"])})
        elif kind == "toolCall":
            blocks.append(
                {
                    "type": "tool_use",
                    "id": _tool_id(block.get("id")),
                    "name": str(block.get("name", "")),
                    "input": block.get("arguments") or {},
                }
            )
        else:
            raise ValueError(f'{what}: cannot send an assistant content block of type "{kind}"')
    return blocks


def _tool_result(message: LlmMessage, *, what: str) -> JsonDict:
    content = message.get("content")
    blocks = _user_blocks(content if content is not None else "", what=what, role="tool result")
    result: JsonDict = {
        "type": "tool_result",
        "tool_use_id": _tool_id(message.get("toolCallId")),
        "content": blocks,
    }
    if message.get("isError"):
        result["is_error"] = True
    return result


def to_anthropic_messages(messages: list[LlmMessage]) -> list[JsonDict]:
    """pi LLM messages as Anthropic messages.

    ``developer`` messages go as ``user``; tool results become ``tool_result`` blocks of a
    user message; thinking without a signature is dropped. Roles then alternate: consecutive
    messages of one role (tool results and a user message after them, two user messages, an
    assistant message left after a dropped one) are merged into one, ``tool_result`` blocks
    first, and messages left without content are dropped (the API rejects them; strict
    Anthropic-compatible servers reject consecutive roles too). Tool-call pairing is not
    repaired here: send :func:`~contextree.context.provider.provider_messages` output.

    Raises:
        ValueError: a role or content block type Anthropic cannot carry.
    """
    result: list[JsonDict] = []
    for index, message in enumerate(messages):
        role = message.get("role")
        what = f"message {index} ({role})"
        if role in ("user", "developer"):
            result.append(
                {"role": "user", "content": _user_blocks(message.get("content"), what=what)}
            )
        elif role == "assistant":
            # Thinking signatures are only valid for the provider that made them.
            replay = message.get("provider") in (None, "anthropic")
            blocks = _assistant_blocks(message.get("content"), what=what, replay_thinking=replay)
            result.append({"role": "assistant", "content": blocks})
        elif role == "toolResult":
            result.append({"role": "user", "content": [_tool_result(message, what=what)]})
        else:
            raise ValueError(f'{what}: cannot send a message with role "{role}" to Anthropic')
    return _alternate(result)


def _has_compaction(messages: Any) -> bool:
    return isinstance(messages, list) and any(
        isinstance(block, dict) and block.get("type") == "compaction"
        for message in messages
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for block in message["content"]
    )


def _alternate(messages: list[JsonDict]) -> list[JsonDict]:
    merged: list[JsonDict] = []
    for message in messages:
        if not message["content"]:
            continue
        previous = merged[-1] if merged else None
        if previous is None or previous["role"] != message["role"]:
            merged.append(message)
            continue
        blocks = _as_blocks(previous["content"]) + _as_blocks(message["content"])
        results = [block for block in blocks if block.get("type") == "tool_result"]
        previous["content"] = results + [b for b in blocks if b.get("type") != "tool_result"]
    return merged


def _as_blocks(content: str | list[JsonDict]) -> list[JsonDict]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def to_anthropic_tools(tools: list[ToolSpec]) -> list[JsonDict]:
    """Tool specs as Anthropic ``tools``."""
    result = []
    for tool in tools:
        if not isinstance(tool.get("name"), str) or not tool["name"]:
            raise ValueError(f"a tool spec needs a non-empty name, got {tool!r}")
        result.append(
            {
                "name": tool["name"],
                "description": str(tool.get("description", "")),
                "input_schema": tool.get("parameters") or {"type": "object", "properties": {}},
            }
        )
    return result


def thinking_budget(reasoning: str | None, max_tokens: int) -> int | None:
    """Thinking budget for a level, leaving at least 1024 tokens of ``max_tokens`` for the
    answer; ``None`` (no thinking) when unset, ``"off"``, or too little room for 1024."""
    level = reasoning_level(reasoning)
    if level is None:
        return None
    budget = min(THINKING_BUDGETS.get(level, THINKING_BUDGETS["medium"]), max_tokens - _MIN_ANSWER)
    return budget if budget >= _MIN_BUDGET else None


def build_messages_body(request: CompletionRequest, model: str, *, stream: bool) -> JsonDict:
    """The JSON body of ``POST /v1/messages`` for a request."""
    max_tokens = request.max_tokens or DEFAULT_ANTHROPIC_MAX_TOKENS
    body: JsonDict = {
        "model": model,
        "max_tokens": max_tokens,
        "messages": to_anthropic_messages(request.messages),
    }
    if request.system_prompt:
        body["system"] = request.system_prompt
    budget = thinking_budget(request.reasoning, max_tokens)
    if budget is not None:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    elif request.temperature is not None:  # thinking requires the default temperature
        body["temperature"] = request.temperature
    if request.tools:
        body["tools"] = to_anthropic_tools(request.tools)
    if stream:
        body["stream"] = True
    return body


# -- response mapping -----------------------------------------------------------------------

_STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",  # output cut off by the context window
    "tool_use": "toolUse",
    "refusal": "error",
}


def _usage(raw: Any) -> Usage:
    if not isinstance(raw, Mapping):
        return make_usage()
    return make_usage(
        input=count(raw.get("input_tokens")),
        output=count(raw.get("output_tokens")),
        cache_read=count(raw.get("cache_read_input_tokens")),
        cache_write=count(raw.get("cache_creation_input_tokens")),
    )


def _from_block(name: str, block: Any) -> StoredBlock:
    if not isinstance(block, Mapping):
        raise ModelResponseError(name, "a content block is not a JSON object")
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": str(block.get("text", ""))}
    if kind == "thinking":
        result: StoredBlock = {"type": "thinking", "thinking": str(block.get("thinking", ""))}
        if block.get("signature"):
            result["thinkingSignature"] = block["signature"]
        return result
    if kind == "redacted_thinking":  # pi's shape: the data travels as the signature
        data = block.get("data", "")
        return {"type": "thinking", "thinking": "", "thinkingSignature": data, "redacted": True}
    if kind == "tool_use":
        arguments = block.get("input")
        if not isinstance(arguments, dict):
            tool = block.get("name")
            raise ModelResponseError(name, f'the input of a call to tool "{tool}" is not an object')
        return {
            "type": "toolCall",
            "id": str(block.get("id", "")),
            "name": str(block.get("name", "")),
            "arguments": arguments,
        }
    raise ModelResponseError(name, f'the response holds a content block of unknown type "{kind}"')


def parse_message_response(
    data: Any, *, name: str, model: str, secrets: tuple[str, ...] = ()
) -> Completion:
    """A Messages API JSON answer as a :class:`Completion`.

    Raises:
        ModelResponseError: no content list, an unknown block type, or an empty answer.
        ContextOverflowError: a 200 answer that carries an overflow error.
    """
    data = json_object(name, data)
    if data.get("type") == "error" or (data.get("error") and "content" not in data):
        raise stream_error(name, data, secrets)
    blocks = data.get("content")
    if not isinstance(blocks, list):
        raise ModelResponseError(name, "the response has no content list")
    content = [_from_block(name, block) for block in blocks]
    raw = data.get("stop_reason")
    raw = raw if isinstance(raw, str) else None
    usage = _usage(data.get("usage"))
    return response_completion(
        name, data, content, usage, stop=_stop_of(raw, content), raw_stop=raw, model=model
    )


def _stop_of(raw_stop: str | None, content: list[StoredBlock]) -> tuple[StopReason, str | None]:
    """pi's stop reason for Anthropic's, and the error message a refusal carries."""
    stop_reason = _STOP_REASONS.get(raw_stop or "", "stop")
    if stop_reason == "stop" and any(b["type"] == "toolCall" for b in content):
        stop_reason = "toolUse"
    error = "the model refused to answer (refusal)" if raw_stop == "refusal" else None
    return stop_reason, error


class MessageStreamAccumulator:
    """Folds Messages API SSE events into one :class:`Completion`."""

    def __init__(self, name: str, model: str, *, secrets: tuple[str, ...] = ()) -> None:
        self._name = name
        self._secrets = secrets
        self._message: JsonDict = {"model": model, "content": [], "usage": {}}
        self._blocks: dict[int, JsonDict] = {}
        self._json: dict[int, list[str]] = {}
        self._started = False
        self._stopped = False

    def feed(self, event: str, data: Any) -> None:
        """Add one event: its SSE ``event:`` name and decoded ``data:``."""
        if not isinstance(data, Mapping):
            raise ModelResponseError(self._name, "a streamed event is not a JSON object")
        kind = data.get("type") or event
        if kind == "error":
            raise stream_error(self._name, data, self._secrets)
        if kind == "message_start":
            message = data.get("message")
            if isinstance(message, Mapping):
                self._started = True
                self._message["model"] = message.get("model") or self._message["model"]
                if isinstance(message.get("usage"), Mapping):
                    self._message["usage"] = dict(message["usage"])
        elif kind == "content_block_start":
            block = data.get("content_block")
            index = data.get("index")
            if isinstance(block, Mapping) and isinstance(index, int):
                self._blocks[index] = dict(block)
                if block.get("type") == "tool_use":
                    self._json[index] = []
        elif kind == "content_block_delta":
            self._delta(data.get("index"), data.get("delta"))
        elif kind == "message_delta":
            delta = data.get("delta")
            if isinstance(delta, Mapping) and "stop_reason" in delta:
                self._message["stop_reason"] = delta["stop_reason"]
            if isinstance(data.get("usage"), Mapping):
                # message_delta usage is cumulative; it overrides message_start's counts.
                self._message["usage"].update(
                    {k: v for k, v in data["usage"].items() if v is not None}
                )
        elif kind == "message_stop":
            self._stopped = True
        # ping, content_block_stop and event types added later need nothing

    def _delta(self, index: Any, delta: Any) -> None:
        if not isinstance(index, int) or not isinstance(delta, Mapping):
            return
        block = self._blocks.get(index)
        if block is None:
            raise ModelResponseError(self._name, f"a delta arrived for unknown block {index}")
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = str(block.get("text", "")) + str(delta.get("text", ""))
        elif kind == "thinking_delta":
            block["thinking"] = str(block.get("thinking", "")) + str(delta.get("thinking", ""))
        elif kind == "signature_delta":
            block["signature"] = str(block.get("signature", "")) + str(delta.get("signature", ""))
        elif kind == "input_json_delta":
            self._json.setdefault(index, []).append(str(delta.get("partial_json", "")))

    def finish(self) -> Completion:
        """The completion, once ``message_stop`` has arrived."""
        if not self._started:
            raise ModelResponseError(
                self._name, "stream envelope error: the stream ended before message_start"
            )
        if not self._stopped:
            raise ModelResponseError(self._name, "the stream terminated before message_stop")
        for index, parts in self._json.items():
            raw = "".join(parts)
            try:
                self._blocks[index]["input"] = decode_json(raw.encode()) if raw.strip() else {}
            except msgspec.DecodeError as exc:
                tool = self._blocks[index].get("name")
                raise ModelResponseError(
                    self._name, f'the input of a call to tool "{tool}" is not valid JSON ({exc})'
                ) from exc
        self._message["content"] = [self._blocks[i] for i in sorted(self._blocks)]
        return parse_message_response(
            self._message, name=self._name, model=str(self._message["model"])
        )


# -- the client -----------------------------------------------------------------------------


class AnthropicClient(_HTTPModelClient[MessageStreamAccumulator]):
    """A thin httpx client for ``POST {base}/v1/messages``.

    Args:
        model: e.g. ``"claude-sonnet-4-5"``.
        base_url: server root (``/v1`` may be included); else ``ANTHROPIC_BASE_URL``, else
            ``https://api.anthropic.com``.
        api_key: sent as ``x-api-key``; ``None`` reads ``ANTHROPIC_API_KEY``, ``""`` sends none.
        timeout: seconds to wait for the connection and for each read.
        stream: use SSE streaming.
        http_client: a client to use instead of one per call (it is not closed here).
        headers: extra request headers (e.g. ``anthropic-beta``).
    """

    _repr_name = "AnthropicClient"
    _default_base_url = DEFAULT_ANTHROPIC_BASE_URL
    _base_url_env = "ANTHROPIC_BASE_URL"
    _api_key_env = "ANTHROPIC_API_KEY"
    _path = "/v1/messages"
    _fixed_headers: ClassVar[Mapping[str, str]] = {"anthropic-version": ANTHROPIC_VERSION}

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        stream: bool = False,
        http_client: httpx.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(
            model,
            name=f"anthropic:{model}",
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            stream=stream,
            http_client=http_client,
            headers=headers,
        )

    def _auth_headers(self, api_key: str) -> dict[str, str]:
        return {"x-api-key": api_key}

    def _request_headers(self, body: JsonDict | None = None) -> dict[str, str]:
        headers = super()._request_headers(body)
        if body is not None and _has_compaction(body.get("messages")):
            # A compaction block is accepted only under the compaction beta.
            beta = headers.get("anthropic-beta")
            if not beta or COMPACTION_BETA not in beta.split(","):
                headers["anthropic-beta"] = f"{beta},{COMPACTION_BETA}" if beta else COMPACTION_BETA
        return headers

    def _build_body(self, request: CompletionRequest) -> JsonDict:
        return build_messages_body(request, self.model, stream=self.stream)

    def _parse_response(self, data: Any) -> Completion:
        return parse_message_response(data, name=self.name, model=self.model, secrets=self._secrets)

    def _new_accumulator(self) -> MessageStreamAccumulator:
        return MessageStreamAccumulator(self.name, self.model, secrets=self._secrets)

    def _feed(self, accumulator: MessageStreamAccumulator, event: str, data: Any) -> None:
        accumulator.feed(event, data)

    def _finish(self, accumulator: MessageStreamAccumulator, *, done: bool) -> Completion:
        return accumulator.finish()
