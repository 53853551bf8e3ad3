"""Retries and fallback models around a model client (pi-behaviour §10.3 step 7, §10.4).

:class:`FallbackClient` is itself a :class:`~contextree.llm.base.ModelClient`: it tries each
candidate in order, retrying retryable failures with exponential backoff (or the provider's
retry-after, whichever is longer). A delay over ``max_delay_ms`` moves on to the next candidate
when there is one; auth failures and other non-retryable errors move on at once. Overflow
errors are never retried here: they need a compaction, not a second identical request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from contextree.errors import ModelError, ModelHTTPError
from contextree.llm.base import Completion, CompletionRequest, ModelClient
from contextree.llm.errors import classify
from contextree.settings.schema import RetrySettings

__all__ = ["Attempt", "FallbackClient", "retry_delay_ms"]

Sleep = Callable[[float], Awaitable[None]]


def retry_delay_ms(attempt: int, settings: RetrySettings, retry_after_s: float | None) -> float:
    """``baseDelayMs * 2**attempt``, or the provider's retry-after when that is longer."""
    delay = settings.base_delay_ms * (2**attempt)
    if retry_after_s is not None:
        delay = max(delay, retry_after_s * 1000)
    return float(delay)


@dataclass(frozen=True, slots=True)
class Attempt:
    """One failed call, for diagnostics and events."""

    model: str
    attempt: int
    kind: str
    error: str
    delay_ms: float | None = None


@dataclass
class FallbackClient:
    """Candidates tried in order, each with retries; the first success wins."""

    candidates: Sequence[ModelClient]
    settings: RetrySettings = field(default_factory=RetrySettings)
    sleep: Sleep = asyncio.sleep
    attempts: list[Attempt] = field(default_factory=list)
    retry_overflow: bool = False
    name: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            self.name = self.candidates[0].name if self.candidates else "none"

    @property
    def parallel_requests(self) -> bool:
        """False when any candidate's server takes one request at a time."""
        return all(getattr(client, "parallel_requests", True) for client in self.candidates)

    async def complete(self, request: CompletionRequest) -> Completion:
        if not self.candidates:
            raise ModelError("none", "Compaction failed: no available model")
        last: BaseException | None = None
        for position, client in enumerate(self.candidates):
            more = position < len(self.candidates) - 1
            attempt = 0
            while True:
                try:
                    return await client.complete(request)
                except asyncio.CancelledError:
                    raise
                except ModelError as exc:
                    last = exc
                    kind = classify(exc)
                    if kind == "overflow" and not self.retry_overflow:
                        self.attempts.append(Attempt(client.name, attempt, kind, str(exc)))
                        if more:
                            break
                        raise
                    retry_after = exc.retry_after if isinstance(exc, ModelHTTPError) else None
                    can_retry = (
                        kind == "retryable"
                        and self.settings.enabled
                        and attempt < self.settings.max_retries
                    )
                    if not can_retry:
                        self.attempts.append(Attempt(client.name, attempt, kind, str(exc)))
                        break
                    delay = retry_delay_ms(attempt, self.settings, retry_after)
                    self.attempts.append(Attempt(client.name, attempt, kind, str(exc), delay))
                    if delay > self.settings.max_delay_ms and more:
                        break
                    await self.sleep(delay / 1000)
                    attempt += 1
        assert last is not None
        raise last
