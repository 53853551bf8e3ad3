"""The LangChain middleware's overhead per agent turn on a generated session (model excluded).

A turn is what ``ContextreeMiddleware.wrap_model_call`` does around one model call in
``create_agent``'s loop: store the tool result that arrived since the last call, run the
threshold check, build the request from the session's context (pi -> LangChain conversion),
then store the reply. The model is a handler that returns a prepared ``AIMessage`` at once.
Two figures: the whole turn, and the adapter's own share (the turn minus the time spent in
``ManagedSession.maybe_compact_sync`` and ``llm_messages``, the shared core's work that every
framework adapter pays alike). The first turn also reads the LangChain ids already on the
branch (once per middleware) and is reported on its own. Needs the ``[langchain]`` extra; without it
the rows stay empty.

``python -m bench.integrations_langchain [SESSION.jsonl]`` prints the figures for one file.
"""

from __future__ import annotations

import gc
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from bench.metrics import Metric, Target

__all__ = ["TURNS", "langchain_metrics", "measure_langchain_turn"]

TURNS = 200


def langchain_metrics() -> list[Metric]:
    """The rows this module fills (10k column only)."""
    return [
        Metric(
            "langchain_turn",
            f"LangChain middleware + ManagedSession, per turn (median of {TURNS})",
            "ms",
            target=Target("<", 5, "10k"),
        ),
        Metric("langchain_adapter", "  of it the middleware's own work", "ms"),
        Metric("langchain_first", "LangChain middleware, first turn (reads ids)", "ms"),
    ]


class _Timed:
    """Wraps a ``ManagedSession`` method and adds up the seconds spent in it."""

    def __init__(self, method: Callable[..., Any]) -> None:
        self.method = method
        self.seconds = 0.0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.method(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - start


def measure_langchain_turn(path: Path, workdir: Path, turns: int = TURNS) -> dict[str, float]:
    """Per-turn milliseconds on a copy of ``path``; ``{}`` without the extra."""
    try:
        from langchain.agents.middleware import AgentState, ModelRequest, ModelResponse
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import (
            AIMessage,
            AnyMessage,
            BaseMessage,
            HumanMessage,
            ToolMessage,
        )

        from contextree.integrations.core import ManagedSession
        from contextree.integrations.langchain import ContextreeMiddleware
        from contextree.store.jsonl import JsonlFileStore
    except ImportError:
        return {}

    copy = workdir / f"langchain-{path.name}"
    shutil.copyfile(path, copy)
    session = ManagedSession.open(copy, model="openai:gpt-4o")
    # The session's own work (threshold check, pruning, context building) is timed apart,
    # so the adapter's share - sync, conversion, storing the reply - can be read off.
    core = [_Timed(session.maybe_compact_sync), _Timed(session.llm_messages)]
    session.maybe_compact_sync, session.llm_messages = core  # type: ignore[method-assign]
    middleware = ContextreeMiddleware(session)
    model = GenericFakeChatModel(messages=iter(()))
    state: list[BaseMessage] = [HumanMessage("Keep going with the refactoring.")]

    def one_turn(turn: int) -> tuple[float, float]:
        call = f"bench_{turn}"
        answer = AIMessage(
            content="",
            tool_calls=[{"id": call, "name": "read", "args": {"path": f"f{turn}.py"}}],
            usage_metadata={"input_tokens": 50_000, "output_tokens": 40, "total_tokens": 50_040},
            response_metadata={"model_provider": "openai", "model_name": "gpt-4o"},
            id=f"lc_{call}",
        )

        def handler(request: ModelRequest[Any]) -> ModelResponse[Any]:
            return ModelResponse(result=[answer])

        request = ModelRequest(
            model=model,
            messages=cast("list[AnyMessage]", list(state)),
            state=cast("AgentState[Any]", {"messages": state}),
        )
        gc.collect()
        before = sum(timer.seconds for timer in core)
        start = time.perf_counter()
        response = middleware.wrap_model_call(request, handler)
        elapsed = time.perf_counter() - start
        in_core = sum(timer.seconds for timer in core) - before
        # What the agent loop does next: the reply and its tool's result join the state.
        assert isinstance(response, ModelResponse)
        state.extend(response.result)
        output = f"contents of f{turn}.py\n" + "x = 1\n" * 40
        state.append(ToolMessage(output, tool_call_id=call, name="read", id=f"tool_{call}"))
        return elapsed, elapsed - in_core

    first, _ = one_turn(0)
    timings = [one_turn(turn) for turn in range(1, turns + 1)]
    if isinstance(session.tree.store, JsonlFileStore):
        session.tree.store.close()  # the descriptor kept open between appends
    copy.unlink()
    return {
        "langchain_first": first * 1000,
        "langchain_turn": statistics.median(total for total, _ in timings) * 1000,
        "langchain_adapter": statistics.median(own for _, own in timings) * 1000,
    }


if __name__ == "__main__":
    import tempfile

    from bench.generate import generate_session

    with tempfile.TemporaryDirectory(prefix="contextree-bench-") as tmp:
        if len(sys.argv) > 1:
            session_path = Path(sys.argv[1])
        else:
            session_path = generate_session(Path(tmp) / "session-10k.jsonl", 10_000).path
        for key, value in measure_langchain_turn(session_path, Path(tmp)).items():
            print(f"{key}: {value:.3f} ms")
