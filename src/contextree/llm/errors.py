"""Sorting provider failures: context overflow, retryable, authentication, fatal.

The pattern lists are pi's and oh-my-pi's (pi-behaviour.md §10.2 and §10.3 step 7); they
match provider error text case-insensitively. :func:`classify` applies them to our own
exceptions, so the runtime never needs to know which provider failed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Final, Literal

from contextree.errors import (
    ContextOverflowError,
    ModelHTTPError,
    ModelTimeoutError,
    ModelUnreachableError,
)

__all__ = [
    "OVERFLOW_PATTERNS",
    "RETRYABLE_PATTERNS",
    "USAGE_LIMIT_PATTERNS",
    "ErrorKind",
    "classify",
    "is_auth_error",
    "is_context_overflow",
    "is_overflow_text",
    "is_retryable_error",
    "parse_retry_after",
]

ErrorKind = Literal["overflow", "retryable", "auth", "fatal"]

# The patterns below are sources, compiled by re's own cache the first time an error is
# sorted: a process that never sees a provider error (``compact`` with the offline
# summarizer) does not compile them (6 ms, with email.utils 3 ms more, of its start-up).
_NOT_OVERFLOW: Final = r"(?i)^(Throttling error|Service unavailable):|rate limit|too many requests"
"""PI 0.73.1 rules these out before testing the overflow patterns."""

OVERFLOW_PATTERNS: Final[tuple[str, ...]] = (
    # PI and OMP
    r"prompt is too long",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    r"request_too_large",
    r"model_context_window_exceeded",
    # OMP only
    r"request exceeds the maximum size",
    r"payload too large",
    r"entity too large",
    r"\b413\b.*\b(request|payload|entity)\b.*\btoo large\b",
    r"requested tokens?.*exceed.*context (window|length|size)",
    r"context (window|length|size).*(exceeded|overflow|too small)",
    r"(prompt|input).*(too long|too large).*(context|n_ctx)",
    r"requested tokens?.*(exceeds?|greater than).*(n_ctx|context)",
    r"^4(00|13)\s*(status code)?\s*\(no body\)",  # Cerebras, Mistral
    # PI 0.73.1 only
    r"too large for model with \d+ maximum context length",  # Mistral
    r"prompt too long; exceeded (?:max )?context length",  # Ollama
)
"""Error text meaning "the prompt does not fit" (§10.2), tested case-insensitively."""

_OVERFLOW: Final = "(?i)" + "|".join(f"(?:{p})" for p in OVERFLOW_PATTERNS)

RETRYABLE_PATTERNS: Final[tuple[str, ...]] = (
    r"overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504"
    r"|service.?unavailable|server.?error|internal.?error|network.?error|connection.?error"
    r"|connection.?refused|other side closed|fetch failed|upstream.?connect"
    r"|reset before headers|socket hang up|timed? out|timeout|terminated|retry delay"
    r"|stream stall|no error details in response",
    r"socket (?:was )?closed|unexpected(?:ly)? clos(?:e|ed|ing)",  # an unexpected socket close
    r"stream envelope error.*before message_start",  # Anthropic
)
"""Transient failures worth retrying (§10.3 step 7)."""

USAGE_LIMIT_PATTERNS: Final[tuple[str, ...]] = (
    r"usage.?limit|usage_limit_reached|usage_not_included|limit_reached|quota.?exceeded"
    r"|resource.?exhausted",
)
"""Usage-limit failures; retryable too, usually after a long retry-after (§10.3 step 7)."""

_RETRYABLE: Final = "(?i)" + "|".join(f"(?:{p})" for p in RETRYABLE_PATTERNS + USAGE_LIMIT_PATTERNS)

_AUTH: Final = (
    r"(?i)auth_unavailable|no auth available|invalid api key|unauthorized"
    r"|invalid x-api-key|incorrect api key|authentication_error|^40[13]\b"
)

_DURATION: Final = (
    r"^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?"
    r"(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$"
)


def is_overflow_text(text: str) -> bool:
    """True when a provider error message says the prompt does not fit (§10.2 patterns).

    Throttling, "service unavailable", rate-limit and too-many-requests messages are never
    overflow, even when they also mention tokens (PI's exclusions).
    """
    if not text or re.search(_NOT_OVERFLOW, text):
        return False
    return re.search(_OVERFLOW, text) is not None


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def is_context_overflow(message: Mapping[str, Any], context_window: int | None) -> bool:
    """pi's ``isContextOverflow``: did this assistant message fail because the prompt was too big?

    An ``error`` stop reason whose ``errorMessage`` matches :data:`OVERFLOW_PATTERNS` is an
    overflow. With a context window, so is a *silent* overflow: any stop reason with
    ``input + cacheRead + cacheWrite > context_window`` (OMP), or a ``length`` stop with no
    output and ``input + cacheRead >= 0.99 * context_window`` (PI).
    """
    stop_reason = message.get("stopReason")
    error = message.get("errorMessage")
    if stop_reason == "error" and isinstance(error, str) and is_overflow_text(error):
        return True
    if not context_window or context_window <= 0:
        return False
    usage = message.get("usage")
    if not isinstance(usage, Mapping):
        return False
    prompt = _int(usage.get("input")) + _int(usage.get("cacheRead"))
    if prompt + _int(usage.get("cacheWrite")) > context_window:
        return True
    return (
        stop_reason == "length"
        and _int(usage.get("output")) == 0
        and (prompt >= 0.99 * context_window)
    )


def is_retryable_error(text: str, *, retry_after: float | None = None) -> bool:
    """True when a failure is worth retrying (§10.3 step 7).

    A parsed retry-after value makes any error retryable; otherwise the text must match a
    transient or usage-limit pattern. Overflow text is never retryable: it needs compaction.
    """
    if is_overflow_text(text):
        return False
    if retry_after is not None:
        return True
    return re.search(_RETRYABLE, text) is not None


def is_auth_error(error: str | int) -> bool:
    """True for a missing or rejected credential: status 401/403 or its usual wording."""
    if isinstance(error, int):
        return error in (401, 403)
    return re.search(_AUTH, error) is not None


def _parse_number(value: str) -> float | None:
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _parse_duration(value: str) -> float | None:
    """``"1s"``, ``"6m0s"``, ``"20ms"``, ``"1h2m3.5s"`` (OpenAI's rate-limit reset format)."""
    match = re.match(_DURATION, value.strip())
    if match is None or not any(match.groups()):
        return None
    hours, minutes, seconds, millis = (float(g) if g else 0.0 for g in match.groups())
    return hours * 3600 + minutes * 60 + seconds + millis / 1000


def parse_retry_after(headers: Mapping[str, str], *, now: float) -> float | None:
    """Seconds to wait before retrying, from a response's headers, or ``None``.

    Checked in order: ``retry-after-ms``; ``retry-after`` (seconds or an HTTP date);
    ``x-ratelimit-reset-ms``; ``x-ratelimit-reset`` (epoch seconds, relative seconds, or a
    duration like ``"6m0s"``). Header names are case-insensitive. A time in the past gives 0.

    Args:
        headers: response headers.
        now: the current time as a Unix timestamp (injected, so tests are deterministic).
    """
    lowered = {key.lower(): value for key, value in headers.items()}

    def relative(seconds: float) -> float:
        return max(0.0, seconds)

    if (raw := lowered.get("retry-after-ms")) is not None and (
        ms := _parse_number(raw)
    ) is not None:
        return relative(ms / 1000)
    if (raw := lowered.get("retry-after")) is not None:
        if (seconds := _parse_number(raw)) is not None:
            return relative(seconds)
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(raw.strip())
        except (TypeError, ValueError, IndexError):
            when = None
        if when is not None:
            return relative(when.timestamp() - now)
    if (raw := lowered.get("x-ratelimit-reset-ms")) is not None and (
        ms := _parse_number(raw)
    ) is not None:
        # Large values are epoch milliseconds, small ones a relative delay.
        return relative(ms / 1000 - now if ms > 1e12 else ms / 1000)
    if (raw := lowered.get("x-ratelimit-reset")) is not None:
        if (seconds := _parse_number(raw)) is not None:
            return relative(seconds - now if seconds > 1e9 else seconds)
        if (duration := _parse_duration(raw)) is not None:
            return relative(duration)
    return None


def classify(exc: BaseException) -> ErrorKind:
    """Sort a failed model call: ``"overflow"`` (compact, then retry), ``"retryable"`` (back off,
    then retry), ``"auth"`` (try another credential or model) or ``"fatal"`` (a
    :class:`~contextree.errors.ModelUnreachableError` among them: a refused connection).
    """
    text = str(exc)
    if isinstance(exc, ModelUnreachableError):
        # Unlike pi, which retries "connection refused" (its text is in RETRYABLE_PATTERNS):
        # nothing listens there, or there is no key; ~14 s of retries cannot change that.
        return "fatal"
    if isinstance(exc, ContextOverflowError) or is_overflow_text(text):
        return "overflow"
    status = exc.status if isinstance(exc, ModelHTTPError) else None
    if (status is not None and is_auth_error(status)) or is_auth_error(text):
        return "auth"
    retry_after = exc.retry_after if isinstance(exc, ModelHTTPError) else None
    if isinstance(exc, ModelTimeoutError) or is_retryable_error(text, retry_after=retry_after):
        return "retryable"
    if status is not None and (status in (408, 409, 425, 429) or status >= 500):
        return "retryable"
    return "fatal"
