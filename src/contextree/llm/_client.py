"""The httpx model client shared by :class:`~contextree.llm.openai_compat.OpenAIClient` and
:class:`~contextree.llm.anthropic.AnthropicClient`.

It owns the constructor's handling of base URL, key, headers and secrets, the request
headers, and :meth:`_HTTPModelClient.complete` (POST, status check, then one JSON answer or
an SSE stream fed to an accumulator). A provider supplies its endpoint, environment
variables, auth header and the mapping of requests and responses through a few hooks.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import aclosing
from typing import Any, ClassVar, Generic, TypeVar

import httpx

from contextree.errors import ModelUnreachableError
from contextree.llm._http import (
    decode_event_data,
    env_or,
    is_event_stream,
    iter_sse,
    post,
    raise_for_status,
    read_json,
    resolve_base_url,
)
from contextree.llm.base import Completion, CompletionRequest

AccumulatorT = TypeVar("AccumulatorT")


class _HTTPModelClient(Generic[AccumulatorT]):
    """Base of the thin httpx clients; subclasses set the class attributes and hooks."""

    _repr_name: ClassVar[str]
    """The class name shown by ``repr``."""
    _default_base_url: ClassVar[str]
    _base_url_env: ClassVar[str]
    _api_key_env: ClassVar[str]
    _path: ClassVar[str]
    """Appended to the base URL, e.g. ``/v1/messages``."""
    _fixed_headers: ClassVar[Mapping[str, str]] = {}
    """Sent after ``accept`` and before the auth header."""
    _stream_sentinel: ClassVar[str | None] = None
    """Event data that ends a stream (OpenAI's ``[DONE]``); ``None`` when there is none."""

    def __init__(
        self,
        model: str,
        *,
        name: str,
        base_url: str | None,
        api_key: str | None,
        timeout: float,
        stream: bool,
        http_client: httpx.AsyncClient | None,
        headers: Mapping[str, str] | None,
    ) -> None:
        self.model = model
        self.name = name
        self.base_url = resolve_base_url(base_url, self._base_url_env, self._default_base_url)
        self.url = f"{self.base_url}{self._path}"
        self.timeout = timeout
        self.stream = stream
        self._http_client = http_client
        self._api_key = env_or(api_key, self._api_key_env) or ""
        self._headers = dict(headers or {})
        self._secrets = tuple(s for s in (self._api_key, *self._headers.values()) if len(s) >= 8)

    @property
    def missing_api_key(self) -> str | None:
        """The environment variable to set when this client talks to its provider's own
        service without a key (every request would fail); ``None`` when it has one or talks to
        another server (a base URL given or in the environment: local servers need none)."""
        if self._api_key or self.base_url.rstrip("/") != self._default_base_url.rstrip("/"):
            return None
        return self._api_key_env

    def __repr__(self) -> str:
        return (
            f"{self._repr_name}(model={self.model!r}, base_url={self.base_url!r}, "
            f"stream={self.stream})"
        )

    def _request_headers(self, body: dict[str, Any] | None = None) -> dict[str, str]:
        """The headers of a request with ``body`` (a provider may add some for it)."""
        headers = {
            "accept": "text/event-stream" if self.stream else "application/json",
            **self._fixed_headers,
        }
        if self._api_key:
            headers.update(self._auth_headers(self._api_key))
        headers.update(self._headers)
        return headers

    # -- provider hooks ---------------------------------------------------------------------

    def _auth_headers(self, api_key: str) -> dict[str, str]:
        raise NotImplementedError

    def _build_body(self, request: CompletionRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _parse_response(self, data: Any) -> Completion:
        raise NotImplementedError

    def _new_accumulator(self) -> AccumulatorT:
        raise NotImplementedError

    def _feed(self, accumulator: AccumulatorT, event: str, data: Any) -> None:
        raise NotImplementedError

    def _finish(self, accumulator: AccumulatorT, *, done: bool) -> Completion:
        """The completion; ``done`` says whether :attr:`_stream_sentinel` arrived."""
        raise NotImplementedError

    # -- the call ---------------------------------------------------------------------------

    async def complete(self, request: CompletionRequest) -> Completion:
        """One model call; see :class:`~contextree.llm.base.ModelClient`."""
        env = self.missing_api_key
        if env is not None and self._http_client is None:
            # The provider would answer 401 (or, offline, not at all, after the retries); say
            # what is missing without sending the conversation. (An injected httpx client may
            # authenticate by itself.)
            raise ModelUnreachableError(
                self.name,
                f"{self.name} needs an API key: set {env} (or pass --base-url for a server that "
                "needs none)",
            )
        body = self._build_body(request)
        async with post(
            name=self.name,
            url=self.url,
            headers=self._request_headers(body),
            body=body,
            timeout=self.timeout,
            http_client=self._http_client,
        ) as response:
            await raise_for_status(self.name, response, self._secrets)
            if not (self.stream and is_event_stream(response)):
                return self._parse_response(await read_json(self.name, response))
            accumulator = self._new_accumulator()
            done = False
            async with aclosing(iter_sse(response)) as events:
                async for event in events:
                    if self._stream_sentinel is not None and (
                        event.data.strip() == self._stream_sentinel
                    ):
                        done = True
                        break
                    self._feed(accumulator, event.event, decode_event_data(self.name, event.data))
            return self._finish(accumulator, done=done)
