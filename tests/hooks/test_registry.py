"""``HookRegistry``: registration and the runner semantics of pi's extension runner (§11)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest

from contextree.hooks import (
    BEFORE_COMPACT,
    BEFORE_TREE,
    COMPACT,
    COMPACTING,
    EVENTS,
    TREE,
    HookFailure,
    HookRegistry,
)
from contextree.hooks.events import BeforeCompactResult, CompactingResult

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def returning(calls: list[str], name: str, result: Any = None) -> Any:
    def handler(event: Any) -> Any:
        calls.append(name)
        return result

    handler.__qualname__ = name
    return handler


def async_returning(calls: list[str], name: str, result: Any = None) -> Any:
    async def handler(event: Any) -> Any:
        calls.append(name)
        return result

    handler.__qualname__ = name
    return handler


# --- registration --------------------------------------------------------------------------------


def test_the_events_are_pis() -> None:
    assert {BEFORE_COMPACT, COMPACTING, COMPACT, BEFORE_TREE, TREE} <= EVENTS
    assert (BEFORE_COMPACT, COMPACTING, COMPACT) == (
        "session_before_compact",
        "session.compacting",
        "session_compact",
    )
    assert (BEFORE_TREE, TREE) == ("session_before_tree", "session_tree")


def test_an_unknown_event_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown hook event 'session_before_compaction'") as e:
        HookRegistry().on("session_before_compaction", print)
    assert "session_before_compact" in str(e.value)


def test_handlers_are_kept_per_event_in_registration_order() -> None:
    hooks = HookRegistry()
    first, second, other = (returning([], n) for n in ("first", "second", "other"))
    hooks.on(BEFORE_COMPACT, first)
    hooks.on(COMPACT, other)
    hooks.on(BEFORE_COMPACT, second)
    assert hooks.handlers(BEFORE_COMPACT) == [first, second]
    assert hooks.handlers(COMPACT) == [other]
    assert hooks.handlers(TREE) == []
    assert hooks.has(BEFORE_COMPACT) and not hooks.has(TREE)


def test_the_returned_function_unregisters_the_handler() -> None:
    hooks = HookRegistry()
    calls: list[str] = []
    remove = hooks.on(COMPACT, returning(calls, "a"))
    hooks.on(COMPACT, returning(calls, "b"))
    remove()
    run(hooks.emit(COMPACT, object()))
    assert calls == ["b"]
    remove_b = hooks.on(TREE, returning(calls, "c"))
    remove_b()
    assert not hooks.has(TREE)


def test_registries_do_not_share_handlers() -> None:
    one, two = HookRegistry(), HookRegistry()
    one.on(COMPACT, print)
    assert not two.has(COMPACT)
    assert one.failures is not two.failures


def test_the_default_timeout_is_thirty_seconds() -> None:
    assert HookRegistry().timeout == 30.0


# --- run_before: session_before_* ----------------------------------------------------------------


def test_before_runs_every_handler_in_order_and_the_last_non_empty_result_wins() -> None:
    calls: list[str] = []
    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, returning(calls, "a", {"compaction": "A"}))
    hooks.on(BEFORE_COMPACT, async_returning(calls, "b", {"compaction": "B"}))
    hooks.on(BEFORE_COMPACT, returning(calls, "c", None))
    hooks.on(BEFORE_COMPACT, async_returning(calls, "d", {}))
    assert run(hooks.run_before(BEFORE_COMPACT, "event")) == {"compaction": "B"}
    assert calls == ["a", "b", "c", "d"]


def test_before_with_no_handlers_or_only_empty_results_gives_none() -> None:
    hooks = HookRegistry()
    assert run(hooks.run_before(BEFORE_COMPACT, "event")) is None
    hooks.on(BEFORE_COMPACT, returning([], "a", None))
    hooks.on(BEFORE_COMPACT, returning([], "b", {}))
    assert run(hooks.run_before(BEFORE_COMPACT, "event")) is None


@pytest.mark.parametrize("cancel", [{"cancel": True}, BeforeCompactResult(cancel=True)])
def test_a_cancel_returns_at_once_and_skips_the_remaining_handlers(cancel: Any) -> None:
    calls: list[str] = []
    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, returning(calls, "a", {"compaction": "A"}))
    hooks.on(BEFORE_COMPACT, async_returning(calls, "cancel", cancel))
    hooks.on(BEFORE_COMPACT, returning(calls, "after", {"compaction": "late"}))
    assert run(hooks.run_before(BEFORE_COMPACT, "event")) is cancel
    assert calls == ["a", "cancel"]


def test_a_result_that_does_not_cancel_does_not_stop_the_run() -> None:
    calls: list[str] = []
    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, returning(calls, "a", {"cancel": False, "compaction": "A"}))
    hooks.on(BEFORE_COMPACT, returning(calls, "b", BeforeCompactResult(compaction="B")))
    result = run(hooks.run_before(BEFORE_COMPACT, "event"))
    assert result == BeforeCompactResult(compaction="B")
    assert calls == ["a", "b"]


def test_the_cancel_key_can_be_chosen() -> None:
    calls: list[str] = []
    hooks = HookRegistry()
    hooks.on(BEFORE_TREE, returning(calls, "a", {"stop": True}))
    hooks.on(BEFORE_TREE, returning(calls, "b", {"other": 1}))
    assert run(hooks.run_before(BEFORE_TREE, "e", cancel_key="stop")) == {"stop": True}
    assert calls == ["a"]


def test_every_handler_gets_the_same_event() -> None:
    seen: list[Any] = []
    event = object()

    async def remember(e: Any) -> None:
        seen.append(e)

    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, seen.append)
    hooks.on(BEFORE_COMPACT, remember)
    run(hooks.run_before(BEFORE_COMPACT, event))
    assert seen == [event, event]


# --- run_last_truthy: session.compacting ---------------------------------------------------------


def test_compacting_last_truthy_result_wins_without_merging() -> None:
    calls: list[str] = []
    hooks = HookRegistry()
    hooks.on(COMPACTING, returning(calls, "a", {"context": ["a"]}))
    hooks.on(COMPACTING, async_returning(calls, "b", CompactingResult(prompt="B")))
    hooks.on(COMPACTING, returning(calls, "c", None))
    hooks.on(COMPACTING, returning(calls, "d", []))
    assert run(hooks.run_last_truthy(COMPACTING, "e")) == CompactingResult(prompt="B")
    assert calls == ["a", "b", "c", "d"]


def test_compacting_with_no_truthy_result_gives_none() -> None:
    hooks = HookRegistry()
    hooks.on(COMPACTING, returning([], "a", {}))
    assert run(hooks.run_last_truthy(COMPACTING, "e")) is None


# --- emit: notifications -------------------------------------------------------------------------


def test_emit_calls_every_handler_and_ignores_results() -> None:
    calls: list[str] = []
    hooks = HookRegistry()
    hooks.on(COMPACT, returning(calls, "a", {"cancel": True}))
    hooks.on(COMPACT, async_returning(calls, "b", "ignored"))
    hooks.on(COMPACT, returning(calls, "c"))
    assert run(hooks.emit(COMPACT, "e")) is None
    assert calls == ["a", "b", "c"]


# --- sync, async and awaitable results -----------------------------------------------------------


def test_a_sync_handler_returning_an_awaitable_is_awaited() -> None:
    async def later() -> dict[str, str]:
        return {"compaction": "from a coroutine"}

    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, lambda event: later())
    assert run(hooks.run_before(BEFORE_COMPACT, "e")) == {"compaction": "from a coroutine"}


def test_a_callable_object_with_an_async_call_works() -> None:
    class Handler:
        async def __call__(self, event: Any) -> Any:
            return {"compaction": event}

    hooks = HookRegistry()
    hooks.on(BEFORE_COMPACT, Handler())
    assert run(hooks.run_before(BEFORE_COMPACT, "E")) == {"compaction": "E"}


def test_sync_handlers_do_not_block_the_event_loop() -> None:
    # The sync handler runs in a worker thread: it can wait for something the loop does.
    async def scenario() -> Any:
        loop = asyncio.get_running_loop()
        done = asyncio.Event()

        def waits_for_the_loop(event: Any) -> Any:
            asyncio.run_coroutine_threadsafe(_set(done), loop).result(timeout=5)
            return {"compaction": "ok"}

        hooks = HookRegistry()
        hooks.on(BEFORE_COMPACT, waits_for_the_loop)
        return await hooks.run_before(BEFORE_COMPACT, "e")

    assert run(scenario()) == {"compaction": "ok"}


async def _set(event: asyncio.Event) -> None:
    event.set()


# --- failures: exceptions and timeouts -----------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_an_exception_is_reported_and_counts_as_no_result(is_async: bool) -> None:
    reported: list[HookFailure] = []
    error = RuntimeError("hook bug")

    if is_async:

        async def broken(event: Any) -> Any:
            raise error

    else:

        def broken(event: Any) -> Any:
            raise error

    hooks = HookRegistry(on_error=reported.append)
    hooks.on(BEFORE_COMPACT, returning([], "before", {"compaction": "kept"}))
    hooks.on(BEFORE_COMPACT, broken)
    assert run(hooks.run_before(BEFORE_COMPACT, "e")) == {"compaction": "kept"}
    (failure,) = reported
    assert failure.event == BEFORE_COMPACT
    assert failure.error is error and not failure.timed_out
    assert "broken" in failure.handler
    assert str(failure) == (
        f"hook {failure.handler} for session_before_compact raised RuntimeError('hook bug'); "
        "continuing without its result"
    )
    assert hooks.failures == [failure]


def test_failures_are_collected_without_an_on_error_callback() -> None:
    def broken(event: Any) -> Any:
        raise ValueError("x")

    hooks = HookRegistry()
    for event in (BEFORE_COMPACT, COMPACTING, COMPACT):
        hooks.on(event, broken)
    run(hooks.run_before(BEFORE_COMPACT, "e"))
    run(hooks.run_last_truthy(COMPACTING, "e"))
    run(hooks.emit(COMPACT, "e"))
    assert [f.event for f in hooks.failures] == [BEFORE_COMPACT, COMPACTING, COMPACT]


def test_a_handler_that_does_not_answer_in_time_counts_as_no_result() -> None:
    reported: list[HookFailure] = []
    calls: list[str] = []

    async def stuck(event: Any) -> Any:
        calls.append("stuck")
        await asyncio.Event().wait()  # never set: only the timeout ends this
        return {"cancel": True}

    hooks = HookRegistry(timeout=0.05, on_error=reported.append)
    hooks.on(BEFORE_COMPACT, returning(calls, "first", {"compaction": "first"}))
    hooks.on(BEFORE_COMPACT, stuck)
    hooks.on(BEFORE_COMPACT, returning(calls, "after"))
    assert run(hooks.run_before(BEFORE_COMPACT, "e")) == {"compaction": "first"}
    assert calls == ["first", "stuck", "after"]
    (failure,) = reported
    assert failure.timed_out and failure.error is None and failure.event == BEFORE_COMPACT
    assert str(failure).endswith("timed out; continuing without its result")


def test_cancelling_the_caller_cancels_the_handler_and_is_not_a_failure() -> None:
    async def scenario() -> tuple[bool, list[HookFailure]]:
        entered = asyncio.Event()
        cancelled = False

        async def waits(event: Any) -> None:
            nonlocal cancelled
            entered.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled = True
                raise

        hooks = HookRegistry()
        hooks.on(BEFORE_COMPACT, waits)
        task = asyncio.create_task(hooks.run_before(BEFORE_COMPACT, "e"))
        await entered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return cancelled, hooks.failures

    assert run(scenario()) == (True, [])


# --- cancel, read as every hook result is (contextree.hooks.results) ------------------------------


@dataclass
class _Result:
    cancel: bool = False


@pytest.mark.parametrize(
    ("result", "cancels"),
    [
        ({"cancel": True}, True),
        (_Result(cancel=True), True),
        (_Result(cancel=False), False),
        ({"cancel": False}, False),
    ],
)
def test_a_before_result_cancels_as_a_dict_or_an_object(result: object, cancels: bool) -> None:
    hooks = HookRegistry()
    seen: list[str] = []
    hooks.on(BEFORE_COMPACT, lambda event: result)
    hooks.on(BEFORE_COMPACT, lambda event: seen.append("second") or None)
    chosen = run(hooks.run_before(BEFORE_COMPACT, None))
    assert chosen is result
    assert seen == ([] if cancels else ["second"])


def test_the_registry_offers_no_reader_of_two_spellings() -> None:
    """Issue 12 point 9: hook results are read by contextree.hooks.results alone (a dict by
    camelCase, an object by snake_case); result_field, which tried both, is gone."""
    import contextree.hooks
    import contextree.hooks.registry

    assert not hasattr(contextree.hooks, "result_field")
    assert not hasattr(contextree.hooks.registry, "result_field")
