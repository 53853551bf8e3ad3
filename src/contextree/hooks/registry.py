"""Hooks: let callers cancel, replace or steer compaction and tree navigation (§11).

Handlers are registered per event on a :class:`HookRegistry` owned by the session (never a
module-level registry). Runner semantics follow pi's extension runner:

- handlers run one after another, in registration order;
- for ``session_before_*`` events the last non-empty result wins, and a result that cancels
  returns at once, skipping the remaining handlers;
- for ``session.compacting`` the last truthy result wins (results are not merged);
- a handler that raises is reported (``on_error``) and counts as having no result;
- each handler has a timeout (30 s by default), after which it counts as having no result.

Handlers may be plain functions or coroutines; they receive one event value and return
``None``, a result value, or a ``dict`` with the result's on-disk (camelCase) keys.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

from contextree.hooks.results import hook_field

__all__ = [
    "BEFORE_COMPACT",
    "BEFORE_TREE",
    "COMPACT",
    "COMPACTING",
    "COMPACTION_EVENTS",
    "EVENTS",
    "TREE",
    "HookFailure",
    "HookRegistry",
]

BEFORE_COMPACT: Final = "session_before_compact"
COMPACTING: Final = "session.compacting"
COMPACT: Final = "session_compact"
BEFORE_TREE: Final = "session_before_tree"
TREE: Final = "session_tree"
AUTO_COMPACTION_START: Final = "auto_compaction_start"
AUTO_COMPACTION_END: Final = "auto_compaction_end"
COMPACTION_START: Final = "compaction_start"
COMPACTION_END: Final = "compaction_end"

COMPACTION_EVENTS: Final = frozenset(
    {AUTO_COMPACTION_START, AUTO_COMPACTION_END, COMPACTION_START, COMPACTION_END}
)
"""The agent's compaction events (``contextree.runtime.events``), which hooks may watch too."""
EVENTS: Final = (
    frozenset({BEFORE_COMPACT, COMPACTING, COMPACT, BEFORE_TREE, TREE}) | COMPACTION_EVENTS
)
"""Every event a handler may be registered for."""

Handler = Callable[[Any], Any | Awaitable[Any]]
DEFAULT_TIMEOUT_S: Final = 30.0


@dataclass(frozen=True, slots=True)
class HookFailure:
    """A handler that raised or timed out; reported, then treated as no result."""

    event: str
    handler: str
    error: BaseException | None
    timed_out: bool = False

    def __str__(self) -> str:
        what = "timed out" if self.timed_out else f"raised {self.error!r}"
        return f"hook {self.handler} for {self.event} {what}; continuing without its result"


@dataclass
class HookRegistry:
    """Handlers by event name, plus the runner that calls them."""

    timeout: float = DEFAULT_TIMEOUT_S
    on_error: Callable[[HookFailure], None] | None = None
    failures: list[HookFailure] = field(default_factory=list)
    _handlers: dict[str, list[Handler]] = field(default_factory=dict)

    def on(self, event: str, handler: Handler) -> Callable[[], None]:
        """Register ``handler`` for ``event``; returns a function that unregisters it."""
        if event not in EVENTS:
            raise ValueError(f"unknown hook event {event!r}; known: {', '.join(sorted(EVENTS))}")
        self._handlers.setdefault(event, []).append(handler)
        return lambda: self._handlers[event].remove(handler)

    def handlers(self, event: str) -> list[Handler]:
        return list(self._handlers.get(event, []))

    def has(self, event: str) -> bool:
        return bool(self._handlers.get(event))

    async def _call(self, event: str, handler: Handler, payload: Any) -> tuple[bool, Any]:
        """Run one handler: ``(ok, result)``; failures are reported and give ``(False, None)``."""
        name = getattr(handler, "__qualname__", repr(handler))
        try:
            if inspect.iscoroutinefunction(handler):
                result = await asyncio.wait_for(handler(payload), self.timeout)
            else:
                result = await asyncio.wait_for(asyncio.to_thread(handler, payload), self.timeout)
                if inspect.isawaitable(result):
                    result = await asyncio.wait_for(result, self.timeout)
            return True, result
        except TimeoutError:
            self._report(HookFailure(event, name, None, timed_out=True))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._report(HookFailure(event, name, exc))
        return False, None

    def _report(self, failure: HookFailure) -> None:
        self.failures.append(failure)
        if self.on_error is not None:
            self.on_error(failure)

    async def run_before(self, event: str, payload: Any, *, cancel_key: str = "cancel") -> Any:
        """Run a ``session_before_*`` event: last non-empty result wins; cancel short-circuits."""
        chosen: Any = None
        for handler in self.handlers(event):
            ok, result = await self._call(event, handler, payload)
            if not ok or not result:
                continue
            chosen = result
            if hook_field(result, cancel_key):
                return result
        return chosen

    async def run_last_truthy(self, event: str, payload: Any) -> Any:
        """Run an event whose last truthy result wins (``session.compacting``)."""
        chosen: Any = None
        for handler in self.handlers(event):
            ok, result = await self._call(event, handler, payload)
            if ok and result:
                chosen = result
        return chosen

    async def emit(self, event: str, payload: Any) -> None:
        """Notify every handler; results are ignored."""
        for handler in self.handlers(event):
            await self._call(event, handler, payload)
