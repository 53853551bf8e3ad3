"""The remote summarization endpoint (pi-behaviour.md §7.6, ``compaction.remoteEndpoint``).

``POST <endpoint>`` with ``{"systemPrompt", "prompt"}``; the answer is
``{"summary": str, "shortSummary"?: str}``. ``contextree serve`` implements the other side.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import msgspec

from contextree.errors import ModelHTTPError, ModelResponseError
from contextree.llm._common import user_text
from contextree.llm._http import (
    DEFAULT_TIMEOUT,
    decode_json,
    origin,
    post,
    reason_phrase,
    redact,
)
from contextree.llm.base import Completion, CompletionRequest
from contextree.llm.errors import parse_retry_after

__all__ = ["RemoteSummaryClient"]


class RemoteSummaryClient:
    """Summaries from a remote endpoint; the request must hold exactly one user message.

    The completion's text is ``summary``; a ``shortSummary`` string lands in
    ``completion.extra["shortSummary"]``. Errors carry pi's exact wording:
    ``"Remote compaction failed (<status> <reason>)"`` (:class:`ModelHTTPError`) and
    ``"Remote compaction response missing summary"`` (:class:`ModelResponseError`).

    Args:
        endpoint: the full URL to POST to.
        token: sent as ``Authorization: Bearer <token>`` when given.
        timeout: seconds to wait for the connection and for each read.
        http_client: a client to use instead of one per call (it is not closed here).
    """

    summarizes_turn_prefix = False
    """§7.6: a split turn's prefix is always summarized locally, never sent here."""

    def __init__(
        self,
        endpoint: str,
        *,
        token: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        if not endpoint.startswith(("http://", "https://")):
            raise ValueError(f"remote endpoint must be an http(s) URL, got {endpoint!r}")
        self.endpoint = endpoint
        self.name = "remote"
        self.timeout = timeout
        self._token = token or ""
        self._http_client = http_client
        self._secrets = (self._token,) if self._token else ()

    def __repr__(self) -> str:
        return f"RemoteSummaryClient(endpoint={origin(self.endpoint)!r})"

    @staticmethod
    def _prompt(request: CompletionRequest) -> str:
        if len(request.messages) != 1 or request.messages[0].get("role") not in (
            "user",
            "developer",
        ):
            roles = [m.get("role") for m in request.messages]
            raise ValueError(
                f"the remote summary endpoint takes exactly one user message, got roles {roles}"
            )
        return user_text(request.messages[0].get("content"), what="remote summary prompt")

    async def complete(self, request: CompletionRequest) -> Completion:
        """POST the prompt; see :class:`~contextree.llm.base.ModelClient`."""
        body = {"systemPrompt": request.system_prompt, "prompt": self._prompt(request)}
        headers = {"authorization": f"Bearer {self._token}"} if self._token else {}
        async with post(
            name=self.name,
            url=self.endpoint,
            headers=headers,
            body=body,
            timeout=self.timeout,
            http_client=self._http_client,
        ) as response:
            raw = await response.aread()
            if not 200 <= response.status_code < 300:
                status = response.status_code
                status_text = f"{status} {reason_phrase(response)}".strip()
                raise ModelHTTPError(
                    self.name,
                    f"Remote compaction failed ({status_text})",
                    status=status,
                    retry_after=parse_retry_after(response.headers, now=time.time()),
                    body=redact(raw.decode("utf-8", errors="replace"), self._secrets)[:10_000]
                    or None,
                )
        try:
            data: Any = decode_json(raw)
        except msgspec.DecodeError as exc:
            raise ModelResponseError(self.name, "Remote compaction response is not JSON") from exc
        summary = data.get("summary") if isinstance(data, dict) else None
        if not isinstance(summary, str):
            raise ModelResponseError(self.name, "Remote compaction response missing summary")
        extra: dict[str, Any] = {}
        if isinstance(data.get("shortSummary"), str):
            extra["shortSummary"] = data["shortSummary"]
        return Completion(content=[{"type": "text", "text": summary}], model=self.name, extra=extra)
