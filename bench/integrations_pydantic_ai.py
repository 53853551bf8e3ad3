"""The pydantic-ai adapter's overhead per turn, without the model.

One turn of an agent on :class:`~contextree.integrations.pydantic_ai.SessionHistory` costs,
beyond the model call: before the request, storing the new prompt, the threshold check and
the session's context converted to pydantic-ai messages (``SessionHistory.processor``, what
the ``prepare_model_request`` hook runs); after it, storing the response with its usage
(``SessionHistory.record``, what ``after_model_request`` runs). Both are timed together on a
copy of the generated session, with a context window large enough that no compaction fires
(a compaction is the summarizer's time, not overhead).

Two figures: the whole turn, and the adapter's own share of it (conversion both ways, marking,
storing), which is the turn less the time spent inside ``ManagedSession.llm_messages`` and
``ManagedSession.maybe_compact`` (the shared core: context, provider view, threshold and
pruning decision). ``python -m bench.integrations_pydantic_ai SESSION.jsonl`` prints both for
one file.
"""

from __future__ import annotations

import asyncio
import functools
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["TURNS", "measure_pydantic_ai_turn"]

TURNS = 30


def measure_pydantic_ai_turn(path: Path, workdir: Path, turns: int = TURNS) -> dict[str, float]:
    """``{"pydantic_ai_turn": ms, "pydantic_ai_own": ms}`` (medians per turn), or ``{}``
    without pydantic-ai installed."""
    try:
        from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
        from pydantic_ai.usage import RequestUsage

        from contextree.integrations.pydantic_ai import SessionHistory
        from contextree.store.jsonl import JsonlFileStore
    except ImportError:
        return {}
    copy = workdir / f"pydantic-ai-{path.name}"
    shutil.copyfile(path, copy)
    history = SessionHistory.open(copy, model="openai:gpt-4o", context_window=10_000_000)
    inside = [0.0]  # seconds spent in the shared core during the current turn
    session = history.session

    def timed(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                inside[0] += time.perf_counter() - start

        return wrapper

    def timed_async(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await func(*args, **kwargs)
            finally:
                inside[0] += time.perf_counter() - start

        return wrapper

    session.llm_messages = timed(session.llm_messages)  # type: ignore[method-assign]
    session.maybe_compact = timed_async(session.maybe_compact)  # type: ignore[method-assign]

    async def run() -> tuple[list[float], list[float]]:
        samples, own = [], []
        context = await history.processor([])  # warm: the first call reads the path
        for turn in range(turns):
            prompt = ModelRequest(parts=[UserPromptPart(f"turn {turn}: what next?")])
            inside[0] = 0.0
            start = time.perf_counter()
            context = await history.processor([*context, prompt])
            reply = ModelResponse(
                parts=[TextPart(f"answer {turn}")],
                usage=RequestUsage(input_tokens=5_000 + turn, output_tokens=20),
                model_name="gpt-4o",
                provider_name="openai",
            )
            history.record([reply])
            elapsed = time.perf_counter() - start
            samples.append(elapsed)
            own.append(elapsed - inside[0])
            context = [*context, reply]
        return samples, own

    samples, own = asyncio.run(run())
    if isinstance(session.tree.store, JsonlFileStore):
        session.tree.store.close()  # the descriptor kept open between appends
    copy.unlink()
    return {
        "pydantic_ai_turn": statistics.median(samples) * 1000,
        "pydantic_ai_own": statistics.median(own) * 1000,
    }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m bench.integrations_pydantic_ai SESSION.jsonl")
    session = Path(sys.argv[1])
    result = measure_pydantic_ai_turn(session, session.parent)
    if not result:
        sys.exit('pydantic-ai is not installed: pip install "contextree[pydantic-ai]"')
    print(f"{result['pydantic_ai_turn']:.2f} ms per turn, {result['pydantic_ai_own']:.2f} ms own")
