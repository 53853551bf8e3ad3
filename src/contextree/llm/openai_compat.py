"""OpenAI-compatible chat completions: OpenAI itself, vLLM, llama.cpp, Ollama, proxies.

``POST {base}/v1/chat/completions``, as one JSON answer or as SSE chunks. The mapping
between pi's messages and the chat format lives here and is shared with
:class:`~contextree.llm.sdk_adapters.OpenAISDKClient`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import httpx
import msgspec

from contextree.entries.types import LlmMessage, StopReason, StoredBlock, Usage
from contextree.errors import ModelResponseError
from contextree.llm._client import _HTTPModelClient
from contextree.llm._common import (
    block_type,
    build_completion,
    count,
    json_object,
    reasoning_level,
    response_completion,
)
from contextree.llm._http import (
    DEFAULT_TIMEOUT,
    decode_json,
    encode_json,
    stream_error,
)
from contextree.llm.base import Completion, CompletionRequest, ToolSpec, make_usage

__all__ = [
    "DEFAULT_OPENAI_BASE_URL",
    "ChatStreamAccumulator",
    "OpenAIClient",
    "build_chat_body",
    "parse_chat_completion",
    "to_openai_messages",
    "to_openai_tools",
]

DEFAULT_OPENAI_BASE_URL: Final = "https://api.openai.com"

JsonDict = dict[str, Any]


# -- request mapping ------------------------------------------------------------------------


def _image_part(block: StoredBlock) -> JsonDict:
    url = f"data:{block.get('mimeType', 'image/png')};base64,{block.get('data', '')}"
    return {"type": "image_url", "image_url": {"url": url}}


def _user_content(content: Any, *, what: str) -> str | list[JsonDict]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ValueError(f"{what}: content must be a string or a list of blocks")
    parts: list[JsonDict] = []
    for block in content:
        kind = block_type(block, what=what)
        if kind == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind == "image":
            parts.append(_image_part(block))
        else:
            raise ValueError(f'{what}: cannot send a user content block of type "{kind}"')
    if all(part["type"] == "text" for part in parts):
        # Plain strings are what every OpenAI-compatible server accepts.
        return "\n".join(part["text"] for part in parts)
    return parts


def _assistant_message(message: LlmMessage, *, what: str) -> JsonDict | None:
    content: Any = message.get("content")  # read as the file holds it
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise ValueError(f"{what}: assistant content must be a list of blocks")
    texts: list[str] = []
    calls: list[JsonDict] = []
    for block in content:
        kind = block_type(block, what=what)
        if kind == "text":
            if block.get("text"):
                texts.append(str(block["text"]))
        elif kind in ("thinking", "redactedThinking"):
            continue  # reasoning is not sent back through chat completions
        elif kind == "toolCall":
            arguments = block.get("arguments") or {}
            calls.append(
                {
                    "id": str(block.get("id", "")),
                    "type": "function",
                    "function": {
                        "name": str(block.get("name", "")),
                        "arguments": encode_json(arguments).decode(),
                    },
                }
            )
        else:
            raise ValueError(f'{what}: cannot send an assistant content block of type "{kind}"')
    if not texts and not calls:
        return None  # only thinking: nothing the chat format can carry
    result: JsonDict = {"role": "assistant", "content": "\n".join(texts) if texts else None}
    if calls:
        result["tool_calls"] = calls
    return result


def _tool_message(message: LlmMessage, *, what: str) -> tuple[JsonDict, list[JsonDict]]:
    """The ``tool`` message, and the images it held (tool messages cannot carry images)."""
    content: Any = message.get("content")  # read as the file holds it
    texts: list[str] = []
    images: list[JsonDict] = []
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for block in content:
            kind = block_type(block, what=what)
            if kind == "text":
                texts.append(str(block.get("text", "")))
            elif kind == "image":
                images.append(_image_part(block))
            else:
                raise ValueError(f'{what}: cannot send a tool result block of type "{kind}"')
    else:
        raise ValueError(f"{what}: tool result content must be a string or a list of blocks")
    text = "\n".join(texts) or ("(see attached image)" if images else "")
    tool = {"role": "tool", "tool_call_id": str(message.get("toolCallId", "")), "content": text}
    return tool, images


def to_openai_messages(system_prompt: str, messages: list[LlmMessage]) -> list[JsonDict]:
    """pi LLM messages as chat-completion messages, the system prompt first.

    ``developer`` messages go as ``user``; thinking blocks are dropped; tool-result images
    follow the tool messages in a ``user`` message.

    Raises:
        ValueError: a role or content block type the chat format cannot carry.
    """
    result: list[JsonDict] = []
    if system_prompt:
        result.append({"role": "system", "content": system_prompt})
    pending_images: list[JsonDict] = []

    def flush_images() -> None:
        if pending_images:
            text = {"type": "text", "text": "Attached image(s) from tool result:"}
            result.append({"role": "user", "content": [text, *pending_images]})
            pending_images.clear()

    for index, message in enumerate(messages):
        role = message.get("role")
        what = f"message {index} ({role})"
        if role != "toolResult":
            flush_images()
        if role in ("user", "developer"):
            result.append(
                {"role": "user", "content": _user_content(message.get("content"), what=what)}
            )
        elif role == "assistant":
            mapped = _assistant_message(message, what=what)
            if mapped is not None:
                result.append(mapped)
        elif role == "toolResult":
            tool, images = _tool_message(message, what=what)
            result.append(tool)
            pending_images.extend(images)
        else:
            raise ValueError(f'{what}: cannot send a message with role "{role}" to a chat model')
    flush_images()
    return result


def to_openai_tools(tools: list[ToolSpec]) -> list[JsonDict]:
    """Tool specs as chat-completion ``tools``."""
    result = []
    for tool in tools:
        if not isinstance(tool.get("name"), str) or not tool["name"]:
            raise ValueError(f"a tool spec needs a non-empty name, got {tool!r}")
        function: JsonDict = {
            "name": tool["name"],
            "description": str(tool.get("description", "")),
            "parameters": tool.get("parameters") or {"type": "object", "properties": {}},
        }
        result.append({"type": "function", "function": function})
    return result


def build_chat_body(request: CompletionRequest, model: str, *, stream: bool) -> JsonDict:
    """The JSON body of ``POST /v1/chat/completions`` for a request."""
    body: JsonDict = {
        "model": model,
        "messages": to_openai_messages(request.system_prompt, request.messages),
    }
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    if (effort := reasoning_level(request.reasoning)) is not None:
        body["reasoning_effort"] = effort
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.tools:
        body["tools"] = to_openai_tools(request.tools)
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


# -- response mapping -----------------------------------------------------------------------


def _usage(raw: Any) -> Usage:
    if not isinstance(raw, Mapping):
        return make_usage()
    details = raw.get("prompt_tokens_details")
    cached = count(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    prompt = count(raw.get("prompt_tokens"))
    return make_usage(
        input=max(0, prompt - cached), output=count(raw.get("completion_tokens")), cache_read=cached
    )


def _stop_reason(finish: str | None, has_calls: bool) -> tuple[StopReason, str | None]:
    if finish == "length":
        return "length", None
    if finish == "content_filter":
        return "error", "the provider stopped the response: content_filter"
    if finish in ("tool_calls", "function_call") or has_calls:
        return "toolUse", None
    return "stop", None


def _arguments(name: str, tool: str, raw: Any) -> JsonDict:
    if isinstance(raw, dict):
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    try:
        value = decode_json(raw.encode() if isinstance(raw, str) else bytes(raw))
    except (msgspec.DecodeError, TypeError) as exc:
        raise ModelResponseError(
            name, f'the arguments of a call to tool "{tool}" are not valid JSON ({exc})'
        ) from exc
    if not isinstance(value, dict):
        raise ModelResponseError(
            name, f'the arguments of a call to tool "{tool}" are not an object'
        )
    return value


def _tool_call(name: str, index: int, call_id: Any, tool: Any, raw_args: Any) -> StoredBlock:
    tool_name = str(tool or "")
    return {
        "type": "toolCall",
        "id": str(call_id) if call_id else f"call_{index}",
        "name": tool_name,
        "arguments": _arguments(name, tool_name, raw_args),
    }


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # some servers answer with content parts
        return "".join(
            str(p.get("text", "")) for p in content if isinstance(p, Mapping) and "text" in p
        )
    return ""


def _reasoning_of(message: Mapping[str, Any]) -> str:
    for key in ("reasoning_content", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def parse_chat_completion(
    data: Any, *, name: str, model: str, secrets: tuple[str, ...] = ()
) -> Completion:
    """A chat-completion JSON answer as a :class:`Completion`.

    Raises:
        ModelResponseError: no choices, no message, bad tool-call arguments, or an empty answer.
        ContextOverflowError: a 200 answer that carries an overflow error.
    """
    data = json_object(name, data)
    choices = data.get("choices")
    if not choices and data.get("error"):
        raise stream_error(name, data, secrets)
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise ModelResponseError(name, "the response has no choices")
    message = choices[0].get("message")
    if not isinstance(message, Mapping):
        raise ModelResponseError(name, "the first choice has no message")
    content: list[StoredBlock] = []
    if reasoning := _reasoning_of(message):
        content.append({"type": "thinking", "thinking": reasoning})
    if text := _text_of(message.get("content")):
        content.append({"type": "text", "text": text})
    raw_calls = message.get("tool_calls") or []
    for index, call in enumerate(raw_calls if isinstance(raw_calls, list) else []):
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping):
            raise ModelResponseError(name, f"tool call {index} has no function")
        content.append(
            _tool_call(name, index, call.get("id"), function.get("name"), function.get("arguments"))
        )
    finish = choices[0].get("finish_reason")
    finish = finish if isinstance(finish, str) else None
    stop = _stop_reason(finish, any(b["type"] == "toolCall" for b in content))
    usage = _usage(data.get("usage"))
    return response_completion(name, data, content, usage, stop=stop, raw_stop=finish, model=model)


class ChatStreamAccumulator:
    """Folds chat-completion SSE chunks into one :class:`Completion`."""

    def __init__(self, name: str, model: str, *, secrets: tuple[str, ...] = ()) -> None:
        self._name = name
        self._model = model
        self._secrets = secrets
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish: str | None = None
        self._usage: Usage | None = None

    def feed(self, chunk: Any) -> None:
        """Add one decoded ``data:`` chunk."""
        if not isinstance(chunk, Mapping):
            raise ModelResponseError(self._name, "a streamed chunk is not a JSON object")
        if chunk.get("error"):
            raise stream_error(self._name, chunk, self._secrets)
        if isinstance(chunk.get("model"), str) and chunk["model"]:
            self._model = chunk["model"]
        if isinstance(chunk.get("usage"), Mapping):
            self._usage = _usage(chunk["usage"])
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            return
        choice = choices[0]
        delta = choice.get("delta")
        if isinstance(delta, Mapping):
            if isinstance(delta.get("content"), str):
                self._text.append(delta["content"])
            if reasoning := _reasoning_of(delta):
                self._reasoning.append(reasoning)
            for position, call in enumerate(delta.get("tool_calls") or []):
                self._add_call(position, call)
        if isinstance(choice.get("finish_reason"), str):
            self._finish = choice["finish_reason"]

    def _add_call(self, position: int, call: Any) -> None:
        if not isinstance(call, Mapping):
            return
        index = call.get("index")
        index = index if isinstance(index, int) else position
        entry = self._calls.setdefault(index, {"id": None, "name": "", "arguments": []})
        if call.get("id"):
            entry["id"] = call["id"]
        function = call.get("function")
        if isinstance(function, Mapping):
            if function.get("name"):
                entry["name"] = function["name"]
            if isinstance(function.get("arguments"), str):
                entry["arguments"].append(function["arguments"])

    def finish(self, *, done: bool) -> Completion:
        """The completion; ``done`` says whether ``[DONE]`` arrived."""
        if self._finish is None and not done:
            raise ModelResponseError(
                self._name, "the stream terminated before the response was complete"
            )
        content: list[StoredBlock] = []
        if self._reasoning:
            content.append({"type": "thinking", "thinking": "".join(self._reasoning)})
        if self._text and (text := "".join(self._text)):
            content.append({"type": "text", "text": text})
        for index in sorted(self._calls):
            call = self._calls[index]
            content.append(
                _tool_call(self._name, index, call["id"], call["name"], "".join(call["arguments"]))
            )
        stop_reason, error = _stop_reason(self._finish, bool(self._calls))
        return build_completion(
            self._name,
            content=content,
            usage=self._usage or make_usage(),
            stop_reason=stop_reason,
            error_message=error,
            model=self._model,
            provider_stop_reason=self._finish,
        )


# -- the client -----------------------------------------------------------------------------


SERIAL_PROVIDERS: Final = frozenset({"llamacpp", "ollama"})
"""Local servers that take one request at a time (one slot by default)."""


class OpenAIClient(_HTTPModelClient[ChatStreamAccumulator]):
    """A thin httpx client for ``POST {base}/v1/chat/completions``.

    Args:
        model: the model name the server knows, e.g. ``"gpt-4o-mini"`` or ``"llama3.1:8b"``.
        base_url: server root (``/v1`` may be included); else ``OPENAI_BASE_URL``, else
            ``https://api.openai.com``.
        api_key: bearer token; ``None`` reads ``OPENAI_API_KEY``, ``""`` sends none.
        timeout: seconds to wait for the connection and for each read.
        stream: use SSE streaming (long answers do not hit proxy idle timeouts).
        http_client: a client to use instead of one per call (it is not closed here).
        headers: extra request headers.
        provider: the provider part of :attr:`name` (``"vllm"``, ``"ollama"``, ...).

    ``parallel_requests`` is false for ``llamacpp`` and ``ollama``: they serve one request at
    a time by default, and llama-cpp-python's server ends a running stream when another
    request arrives, so the compaction sends its summaries one after the other.
    """

    _repr_name = "OpenAIClient"
    _default_base_url = DEFAULT_OPENAI_BASE_URL
    _base_url_env = "OPENAI_BASE_URL"
    _api_key_env = "OPENAI_API_KEY"
    _path = "/v1/chat/completions"
    _stream_sentinel = "[DONE]"

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
        provider: str = "openai",
    ) -> None:
        super().__init__(
            model,
            name=f"{provider}:{model}",
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            stream=stream,
            http_client=http_client,
            headers=headers,
        )
        self.parallel_requests = provider not in SERIAL_PROVIDERS

    def _auth_headers(self, api_key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {api_key}"}

    def _build_body(self, request: CompletionRequest) -> JsonDict:
        return build_chat_body(request, self.model, stream=self.stream)

    def _parse_response(self, data: Any) -> Completion:
        return parse_chat_completion(data, name=self.name, model=self.model, secrets=self._secrets)

    def _new_accumulator(self) -> ChatStreamAccumulator:
        return ChatStreamAccumulator(self.name, self.model, secrets=self._secrets)

    def _feed(self, accumulator: ChatStreamAccumulator, event: str, data: Any) -> None:
        accumulator.feed(data)

    def _finish(self, accumulator: ChatStreamAccumulator, *, done: bool) -> Completion:
        return accumulator.finish(done=done)
