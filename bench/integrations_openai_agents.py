"""The OpenAI Agents SDK session's overhead per turn on a generated session (model excluded).

A turn is what the SDK's runner asks of
:class:`~contextree.integrations.openai_agents.ContextreeSession` around one model call:
``get_items()`` (the compacted context as SDK items) and then ``add_items()`` with the items
that model call produced, as the runner hands them over after a tool call - the
``function_call`` and its ``function_call_output`` in one batch, with the run's
``RunContextWrapper`` whose usage holds the request's measured tokens (so the threshold check
runs on real numbers). ``add_items`` stores them and runs the threshold check. The runner
reads the session once per run; within a run, ``model_input_filter`` reads the context again
before each model call, which costs about what ``get_items`` does.

The copy of the session is opened with a context window large enough that no compaction
fires (a compaction is the summarizer's time, not overhead). Two figures: the whole turn, and
the adapter's own share of it (pi <-> item conversion, usage, storing), which is the turn
less the time spent inside ``ManagedSession.llm_messages`` and ``ManagedSession.maybe_compact``
(the shared core every framework adapter pays alike: context, provider view, threshold and
pruning decision). Needs the ``[openai-agents]`` extra; without it the rows stay empty.

``python -m bench.integrations_openai_agents [SESSION.jsonl]`` prints the figures for one
file (default: a generated 10k-entry session).
"""

from __future__ import annotations

import asyncio
import functools
import gc
import json
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["TURNS", "measure_openai_agents_turn"]

TURNS = 100


def measure_openai_agents_turn(path: Path, workdir: Path, turns: int = TURNS) -> dict[str, float]:
    """``{"openai_agents_turn": ms, "openai_agents_own": ms}`` (medians per turn) on a copy
    of ``path``, or ``{}`` without the OpenAI Agents SDK installed."""
    try:
        from agents.run_context import RunContextWrapper
        from agents.usage import RequestUsage, Usage
        from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

        from contextree.integrations.openai_agents import ContextreeSession
        from contextree.store.jsonl import JsonlFileStore
    except ImportError:
        return {}

    copy = workdir / f"openai-agents-{path.name}"
    shutil.copyfile(path, copy)
    session = ContextreeSession.open(copy, model="openai:gpt-4o", context_window=10_000_000)
    managed = session.managed
    inside = [0.0]  # seconds spent in the shared core during the current turn

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

    managed.llm_messages = timed(managed.llm_messages)  # type: ignore[method-assign]
    managed.maybe_compact = timed_async(managed.maybe_compact)  # type: ignore[method-assign]
    run = RunContextWrapper[None](context=None, usage=Usage())

    def model_call(turn: int) -> list[Any]:
        """What the runner hands ``add_items`` after one model call and its tool: the call
        (as a chat-completions model's item: placeholder id, model in ``provider_data``) and
        the tool's output; the request's usage is recorded on the run, as the SDK does."""
        tokens = 50_000 + 60 * turn
        run.usage.request_usage_entries.append(
            RequestUsage(
                input_tokens=tokens,
                output_tokens=40,
                total_tokens=tokens + 40,
                input_tokens_details=InputTokensDetails(cached_tokens=0, cache_write_tokens=0),
                output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
            )
        )
        call = f"bench_{turn}"
        return [
            {
                "type": "function_call",
                "call_id": call,
                "name": "read",
                "arguments": json.dumps({"path": f"f{turn}.py"}),
                "id": "__fake_id__",
                "provider_data": {"model": "gpt-4o", "response_id": f"chatcmpl-{turn}"},
            },
            {
                "type": "function_call_output",
                "call_id": call,
                "output": f"contents of f{turn}.py\n" + "x = 1\n" * 40,
            },
        ]

    async def measure() -> tuple[list[float], list[float]]:
        await session.get_items(wrapper=run)  # warm: the first call reads the leaf path
        samples, own = [], []
        for turn in range(turns):
            items = model_call(turn)
            gc.collect()
            inside[0] = 0.0
            start = time.perf_counter()
            await session.get_items(wrapper=run)
            await session.add_items(items, run)
            elapsed = time.perf_counter() - start
            samples.append(elapsed)
            own.append(elapsed - inside[0])
        return samples, own

    samples, own = asyncio.run(measure())
    if isinstance(managed.tree.store, JsonlFileStore):
        managed.tree.store.close()  # the descriptor kept open between appends
    copy.unlink()
    return {
        "openai_agents_turn": statistics.median(samples) * 1000,
        "openai_agents_own": statistics.median(own) * 1000,
    }


if __name__ == "__main__":
    import tempfile

    from bench.generate import generate_session

    with tempfile.TemporaryDirectory(prefix="contextree-bench-") as tmp:
        if len(sys.argv) > 1:
            session_path = Path(sys.argv[1])
        else:
            session_path = generate_session(Path(tmp) / "session-10k.jsonl", 10_000).path
        result = measure_openai_agents_turn(session_path, Path(tmp))
        if not result:
            sys.exit('no OpenAI Agents SDK: pip install "contextree[openai-agents]"')
        for key, value in result.items():
            print(f"{key}: {value:.3f} ms")
