"""A model client that answers from a script: for tests of hooks, compaction and agents.

```python
client = ScriptedClient()
client.enqueue_text("## Goal\\nFix the parser")
client.enqueue_error(ModelHTTPError("scripted", "429 slow down", status=429, retry_after=1))
completion = await client.complete(request)
assert client.requests[0].system_prompt.startswith("You are")
```
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from contextree.entries.types import Usage
from contextree.llm.base import Completion, CompletionRequest

__all__ = ["ScriptedClient"]

Reply = Completion | BaseException | Callable[[CompletionRequest], Completion]


class ScriptedClient:
    """Answers each call with the next scripted reply and records every request.

    Args:
        name: the client's :attr:`name`.
        delay: seconds to wait (``asyncio.sleep``) before answering each call.
        gate: when given, each call waits for this event before answering, so a test can
            cancel a call in flight; the request is recorded before the wait.
        default: the reply when the script is empty (text or a completion); without one an
            empty script raises ``RuntimeError``.
    """

    def __init__(
        self,
        name: str = "scripted",
        *,
        delay: float = 0.0,
        gate: asyncio.Event | None = None,
        default: Completion | str | None = None,
    ) -> None:
        self.name = name
        self.delay = delay
        self.gate = gate
        if isinstance(default, str):
            default = Completion.from_text(default, model=name)
        self.default = default
        self.requests: list[CompletionRequest] = []
        """Every request seen, in order (also those that failed or were cancelled)."""
        self._script: deque[Reply] = deque()

    def __repr__(self) -> str:
        return f"ScriptedClient(name={self.name!r}, pending={len(self._script)})"

    @property
    def pending(self) -> int:
        """Replies left in the script."""
        return len(self._script)

    def enqueue(self, completion: Completion) -> None:
        """Answer a later call with this completion."""
        self._script.append(completion)

    def enqueue_text(self, text: str, *, usage: Usage | None = None) -> None:
        """Answer a later call with one text block."""
        self._script.append(Completion.from_text(text, model=self.name, usage=usage))

    def enqueue_error(self, exc: BaseException) -> None:
        """Make a later call raise ``exc``."""
        self._script.append(exc)

    def enqueue_function(self, function: Callable[[CompletionRequest], Completion]) -> None:
        """Answer a later call with ``function(request)``."""
        self._script.append(function)

    async def complete(self, request: CompletionRequest) -> Completion:
        """Record the request, wait for the gate and delay, then play the next reply."""
        self.requests.append(request)
        if self.gate is not None:
            await self.gate.wait()
        if self.delay > 0:
            await asyncio.sleep(self.delay)
        if not self._script:
            if self.default is not None:
                return self.default
            raise RuntimeError(
                f"ScriptedClient {self.name!r} has no reply left for call {len(self.requests)}; "
                "enqueue one with enqueue_text(), enqueue() or enqueue_error()"
            )
        reply = self._script.popleft()
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, Completion):
            return reply
        return reply(request)
