"""HTTP plumbing shared by the httpx clients and the SDK adapters.

One POST with our timeout and error translation, SSE framing, and the mapping of an error
response (status, headers, body) to our exceptions. Keys never reach a message: every text
that may echo a request passes through :func:`redact`.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final
from urllib.parse import urlsplit

import httpx
import msgspec

from contextree.errors import (
    ContextOverflowError,
    ModelError,
    ModelHTTPError,
    ModelResponseError,
    ModelSpecError,
    ModelTimeoutError,
    ModelUnreachableError,
)
from contextree.llm.errors import is_overflow_text, parse_retry_after

DEFAULT_TIMEOUT: Final = 600.0
"""Seconds to wait for a connection and for each read of a model response."""

_CONNECT_TIMEOUT: Final = 30.0
_MAX_ERROR_TEXT: Final = 500


def redact(text: str, secrets: Sequence[str]) -> str:
    """Replace every secret in ``text`` with ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def env_or(explicit: str | None, variable: str) -> str | None:
    """``explicit`` if given (``""`` counts: it means "none"), else the environment variable."""
    if explicit is not None:
        return explicit
    return os.environ.get(variable) or None


def resolve_base_url(explicit: str | None, variable: str, default: str) -> str:
    """The server root without a trailing ``/`` or ``/v1``: we add ``/v1/...`` ourselves.

    Raises:
        ModelSpecError: not an http(s) URL (found here, as one line, rather than as a
            traceback from inside httpx at the first request).
    """
    given = explicit or os.environ.get(variable)
    base = (given or default).strip().rstrip("/")
    if base.endswith("/v1"):
        base = base[: -len("/v1")]
    try:
        parsed = httpx.URL(base)
        # urlsplit too: httpx takes "http://[bad" (quoting the bracket), urllib does not.
        usable = parsed.scheme in ("http", "https") and bool(urlsplit(base).hostname)
    except (httpx.InvalidURL, TypeError, ValueError):
        usable = False
    if not usable:
        source = "the base URL" if explicit else variable
        raise ModelSpecError(
            base, f"{source} {base!r} is not an http(s) URL; write http://host:port"
        )
    return base


def origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL: where a connection went, without path or query."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return "<invalid url>"
    port = f":{parsed.port}" if parsed.port is not None else ""
    return f"{parsed.scheme}://{parsed.host}{port}"


def decode_json(data: bytes) -> Any:
    """Decode JSON bytes; raises ``msgspec.DecodeError`` on malformed input."""
    return msgspec.json.decode(data)


def encode_json(value: Any) -> bytes:
    return msgspec.json.encode(value)


@contextmanager
def translate_transport_errors(name: str, url: str, timeout: float) -> Iterator[None]:
    """Turn httpx transport failures into our errors, naming the host but never a header."""
    where = origin(url)
    try:
        yield
    except httpx.TimeoutException as exc:
        phase = "connecting to" if isinstance(exc, httpx.ConnectTimeout) else "waiting for"
        raise ModelTimeoutError(
            name, f"request timed out after {timeout:g} s {phase} {where}"
        ) from exc
    except httpx.ConnectError as exc:
        reason = str(exc) or type(exc).__name__
        refused = "refused" in reason.lower() or "all connection attempts failed" in reason.lower()
        text = "connection refused" if refused else reason
        # Refused: nothing listens there, which a retry a few seconds later does not change.
        error = ModelUnreachableError if refused else ModelError
        raise error(
            name, f"connection error: cannot reach {where} ({text}); is the server running?"
        ) from exc
    except httpx.UnsupportedProtocol as exc:
        raise ModelSpecError(name, f"{name}: the URL {url!r} is not an http(s) URL") from exc
    except httpx.TransportError as exc:
        reason = str(exc) or type(exc).__name__
        raise ModelError(name, f"network error talking to {where}: {reason}") from exc
    except httpx.InvalidURL as exc:
        raise ModelSpecError(name, f"{name}: invalid URL {url!r} ({exc})") from exc


@asynccontextmanager
async def post(
    *,
    name: str,
    url: str,
    headers: Mapping[str, str],
    body: Any,
    timeout: float,
    http_client: httpx.AsyncClient | None,
) -> AsyncIterator[httpx.Response]:
    """POST ``body`` as JSON and yield the streaming response, whatever its status.

    Transport failures while sending or while the caller reads become our errors. A client
    made here is closed on exit, also on cancellation.
    """
    limits = httpx.Timeout(timeout, connect=min(timeout, _CONNECT_TIMEOUT))
    client = http_client if http_client is not None else httpx.AsyncClient(timeout=limits)
    try:
        with translate_transport_errors(name, url, timeout):
            request = client.build_request(
                "POST",
                url,
                content=encode_json(body),
                headers={"content-type": "application/json", **headers},
                timeout=limits,
            )
            response = await client.send(request, stream=True)
            try:
                yield response
            finally:
                await response.aclose()
    finally:
        if http_client is None:
            await client.aclose()


@dataclass(frozen=True)
class SSEEvent:
    """One server-sent event: its ``event:`` name (``"message"`` if absent) and joined data."""

    event: str
    data: str


async def iter_sse(response: httpx.Response) -> AsyncGenerator[SSEEvent, None]:
    """Frame a ``text/event-stream`` body into events (comments and ``id:``/``retry:`` skipped)."""
    event = ""
    data: list[str] = []
    async for line in response.aiter_lines():
        if not line:
            if data:
                yield SSEEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
    if data:
        yield SSEEvent(event or "message", "\n".join(data))


def is_event_stream(response: httpx.Response) -> bool:
    content_type: str = response.headers.get("content-type", "")
    return content_type.startswith("text/event-stream")


def provider_error_text(payload: Any, raw: str) -> tuple[str, str]:
    """The provider's error message and its code/type words, from a decoded error body.

    Understands ``{"error": {"message", "type", "code"}}`` (OpenAI, Anthropic, llama.cpp),
    ``{"error": "..."}`` (Ollama) and ``{"message" | "detail": ...}`` (vLLM, proxies). Falls
    back to the raw body text, shortened.
    """
    message, codes = "", []
    if isinstance(payload, Mapping):
        error = payload.get("error")
        if isinstance(error, Mapping):
            message = _first_str(error, "message", "detail")
            codes = [str(error[k]) for k in ("type", "code") if error.get(k) is not None]
        elif isinstance(error, str):
            message = error
        if not message:
            message = _first_str(payload, "message", "detail", "error_message")
        codes += [str(payload[k]) for k in ("type", "code") if isinstance(payload.get(k), str)]
    if not message:
        message = " ".join(raw.split())
    if len(message) > _MAX_ERROR_TEXT:
        message = message[:_MAX_ERROR_TEXT] + "..."
    return message, " ".join(code for code in codes if code not in ("error",))


def _first_str(mapping: Mapping[str, Any], *keys: str) -> str:
    for key in keys:
        value = mapping.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def http_error(
    name: str,
    *,
    status: int,
    headers: Mapping[str, str],
    payload: Any,
    raw: str,
    secrets: Sequence[str],
) -> ModelError:
    """The error for a non-2xx answer: ``"<status> <provider message>"`` like the SDKs word it.

    A message matching an overflow pattern gives :class:`ContextOverflowError`; anything
    else :class:`ModelHTTPError` with the status and parsed retry-after.
    """
    message, codes = provider_error_text(payload, raw)
    message = redact(message, secrets)
    detail = f"{status} {message}" if message else f"{status} status code (no body)"
    if is_overflow_text(f"{detail} {codes}".rstrip()):
        return ContextOverflowError(name, detail)
    return ModelHTTPError(
        name,
        detail,
        status=status,
        retry_after=parse_retry_after(headers, now=time.time()),
        body=redact(raw, secrets)[:10_000] or None,
    )


def http_error_from_body(
    name: str, *, status: int, headers: Mapping[str, str], raw: str, secrets: Sequence[str]
) -> ModelError:
    """:func:`http_error` for a raw error body (decoded as JSON when it is JSON)."""
    try:
        payload = decode_json(raw.encode()) if raw.strip() else None
    except msgspec.DecodeError:
        payload = None
    return http_error(
        name, status=status, headers=headers, payload=payload, raw=raw, secrets=secrets
    )


async def raise_for_status(name: str, response: httpx.Response, secrets: Sequence[str]) -> None:
    """Raise :func:`http_error` for a non-2xx response (after reading its body)."""
    if 200 <= response.status_code < 300:
        return
    raw = (await response.aread()).decode("utf-8", errors="replace")
    raise http_error_from_body(
        name, status=response.status_code, headers=response.headers, raw=raw, secrets=secrets
    )


async def read_json(name: str, response: httpx.Response) -> Any:
    """The whole body as JSON, or :class:`ModelResponseError`."""
    raw = await response.aread()
    try:
        return decode_json(raw)
    except msgspec.DecodeError as exc:
        raise ModelResponseError(name, f"the response is not valid JSON ({exc})") from exc


def decode_event_data(name: str, data: str) -> Any:
    try:
        return decode_json(data.encode())
    except msgspec.DecodeError as exc:
        raise ModelResponseError(name, f"a streamed event is not valid JSON ({exc})") from exc


def reason_phrase(response: httpx.Response) -> str:
    """The status line's reason phrase, or the standard one for the status."""
    if response.reason_phrase:
        return response.reason_phrase
    try:
        return HTTPStatus(response.status_code).phrase
    except ValueError:
        return ""


def stream_error(name: str, payload: Any, secrets: Sequence[str]) -> ModelError:
    """The error for an error event inside a 200 response (an SSE ``error`` event)."""
    message, codes = provider_error_text(payload, "")
    text = redact(": ".join(part for part in (codes, message) if part), secrets)
    text = text or "the provider reported an error without details"
    if is_overflow_text(text):
        return ContextOverflowError(name, text)
    return ModelResponseError(name, text)
