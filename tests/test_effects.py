"""The effect drivers themselves: what `drive_sync` and `drive_async` do with each effect.

Every behaviour of the library is a flow driven by one of these two functions, so these tests
pin the contract the rest of the code relies on: failures are thrown into the flow at the
`yield` (the flow decides), awaitables are refused by the sync driver and awaited by the async
one, event handlers are isolated, and the flow is always closed (its `finally` runs).
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import logging
import threading
import warnings
from collections.abc import Coroutine, Generator
from concurrent.futures import Future
from typing import Any

import pytest

from contextchef._effects import Call, Emit, Flow, Spawn, StoreOp, drive_async, drive_sync
from contextchef.errors import ConfigError
from contextchef.store.backend import StorageBackend, StoredEntry
from contextchef.store.backends.inmemory import AsyncInMemoryBackend, InMemoryBackend


class Boom(Exception):
    pass


class Fatal(BaseException):
    """Not an `Exception`: a driver must not catch it, only close the flow on its way out."""


def boom(*args: Any) -> Any:
    raise Boom("boom")


class Coroutines:
    """An async callable that keeps every coroutine it makes, to check how each one ended."""

    def __init__(self, value: object = "awaited") -> None:
        self.value = value
        self.made: list[Coroutine[Any, Any, object]] = []

    async def _run(self, *args: Any) -> object:
        await asyncio.sleep(0)
        return self.value

    def __call__(self, *args: Any) -> Coroutine[Any, Any, object]:
        coro = self._run(*args)
        self.made.append(coro)
        return coro

    def states(self) -> list[str]:
        return [inspect.getcoroutinestate(coro) for coro in self.made]


def no_unawaited_warning() -> None:
    """Collect garbage and fail if a coroutine was dropped without being awaited or closed."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]


def catching(effect: object) -> Flow[tuple[str, object]]:
    """Yield `effect`; return ("ok", result) or ("error", exception) as the flow saw it."""
    try:
        result = yield effect  # type: ignore[misc]
    except Exception as exc:
        return "error", exc
    return "ok", result


# -- Call --------------------------------------------------------------------------------------


def test_drive_sync_throws_a_config_error_into_the_flow_for_an_awaitable_call() -> None:
    hook = Coroutines()
    outcome, error = drive_sync(catching(Call.of(hook, 1, what="summarizer")))
    assert outcome == "error" and isinstance(error, ConfigError)
    assert "the summarizer returned an awaitable" in str(error)
    assert "AsyncContextChef" in str(error)
    assert hook.states() == [inspect.CORO_CLOSED]  # closed, never left dangling
    no_unawaited_warning()


def test_drive_sync_refusal_propagates_when_the_flow_does_not_catch_it() -> None:
    hook = Coroutines()

    def flow() -> Flow[object]:
        return (yield Call.of(hook, what="on_memory_update hook"))

    with pytest.raises(ConfigError, match="on_memory_update hook returned an awaitable"):
        drive_sync(flow())
    assert hook.states() == [inspect.CORO_CLOSED]
    no_unawaited_warning()


def test_drive_sync_lets_the_flow_carry_on_after_a_refused_awaitable() -> None:
    hook = Coroutines()

    def flow() -> Flow[list[object]]:
        seen: list[object] = []
        try:
            yield Call.of(hook)
        except ConfigError:
            seen.append("refused")
        seen.append((yield Call.of(lambda: "sync result")))
        return seen

    assert drive_sync(flow()) == ["refused", "sync result"]
    no_unawaited_warning()


async def test_drive_async_awaits_an_awaitable_call_and_calls_a_plain_one() -> None:
    hook = Coroutines("from the coroutine")

    def flow() -> Flow[tuple[object, object]]:
        first = yield Call.of(hook, "x")
        second = yield Call.of(lambda a, b: a + b, 2, 3)
        return first, second

    assert await drive_async(flow()) == ("from the coroutine", 5)
    assert hook.states() == [inspect.CORO_CLOSED]  # ran to completion


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_an_exception_from_a_call_is_thrown_into_the_flow_at_the_yield(kind: str) -> None:
    def flow() -> Flow[list[object]]:
        seen: list[object] = []
        try:
            yield Call.of(boom, what="summarizer")
        except Boom as exc:
            seen.append(f"caught {exc}")
        seen.append((yield Call.of(lambda: "next")))
        return seen

    result = drive_sync(flow()) if kind == "sync" else await drive_async(flow())
    assert result == ["caught boom", "next"]


async def test_drive_async_throws_a_failing_coroutine_into_the_flow() -> None:
    async def failing() -> None:
        await asyncio.sleep(0)
        raise Boom("late")

    outcome, error = await drive_async(catching(Call.of(failing)))
    assert outcome == "error" and isinstance(error, Boom) and str(error) == "late"


# -- StoreOp -----------------------------------------------------------------------------------


def test_drive_sync_refuses_a_store_op_on_an_async_native_backend() -> None:
    backend = AsyncInMemoryBackend()
    op = StoreOp(backend, StorageBackend.read, ("notes", "a"), {}, native=True)
    outcome, error = drive_sync(catching(op))
    assert outcome == "error" and isinstance(error, ConfigError)
    assert "AsyncInMemoryBackend" in str(error) and "AsyncContextChef" in str(error)
    with pytest.raises(ConfigError, match="async-native"):
        drive_sync(iter_once(op))
    no_unawaited_warning()


def iter_once(effect: object) -> Flow[object]:
    return (yield effect)  # type: ignore[misc]


async def test_drive_async_awaits_an_async_native_store_op_on_the_loop_thread() -> None:
    backend = AsyncInMemoryBackend()
    threads: list[int] = []
    original = backend.write

    async def write(ns: str, path: str, entry: StoredEntry) -> None:
        threads.append(threading.get_ident())
        await original(ns, path, entry)

    backend.write = write  # type: ignore[method-assign]

    def flow() -> Flow[StoredEntry | None]:
        entry = StoredEntry("hello")
        yield StoreOp(backend, StorageBackend.write, ("notes", "a", entry), {}, native=True)
        found: StoredEntry | None = yield StoreOp(
            backend, StorageBackend.read, ("notes", "a"), {}, True
        )
        return found

    found = await drive_async(flow())
    assert found is not None and found.content == "hello"
    assert threads == [threading.get_ident()]


class ThreadRecorder(InMemoryBackend):
    """A synchronous backend that records the thread of every read."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[int] = []

    def read(self, ns: str, path: str) -> StoredEntry | None:
        self.threads.append(threading.get_ident())
        return super().read(ns, path)


async def test_drive_async_runs_a_sync_store_op_in_a_worker_thread() -> None:
    backend = ThreadRecorder()
    backend.write("notes", "a", StoredEntry("hello"))
    found = await drive_async(iter_once(StoreOp(backend, StorageBackend.read, ("notes", "a"))))
    assert isinstance(found, StoredEntry) and found.content == "hello"
    assert len(backend.threads) == 1 and backend.threads[0] != threading.get_ident()


def test_drive_sync_runs_a_sync_store_op_in_the_calling_thread() -> None:
    backend = ThreadRecorder()
    drive_sync(iter_once(StoreOp(backend, StorageBackend.read, ("notes", "a"))))
    assert backend.threads == [threading.get_ident()]


class FailingBackend(InMemoryBackend):
    def read(self, ns: str, path: str) -> StoredEntry | None:
        raise Boom("disk gone")


class AsyncFailingBackend(AsyncInMemoryBackend):
    async def read(self, ns: str, path: str) -> StoredEntry | None:
        raise Boom("disk gone")


@pytest.mark.parametrize("kind", ["sync", "async", "async-native"])
async def test_an_exception_from_a_store_op_is_thrown_into_the_flow(kind: str) -> None:
    backend: object = AsyncFailingBackend() if kind == "async-native" else FailingBackend()
    native = kind == "async-native"

    def flow() -> Flow[list[object]]:
        seen: list[object] = []
        try:
            yield StoreOp(backend, StorageBackend.read, ("notes", "a"), {}, native)
        except Boom as exc:
            seen.append(f"caught {exc}")
        seen.append((yield Call.of(lambda: "went on")))
        return seen

    result = drive_sync(flow()) if kind == "sync" else await drive_async(flow())
    assert result == ["caught disk gone", "went on"]


# -- Emit --------------------------------------------------------------------------------------


def emitting(handlers: tuple[Any, ...]) -> Flow[str]:
    yield Emit(handlers, {"event": 1})
    return "finished"


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_emit_isolates_a_raising_handler_and_the_flow_continues(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[object] = []
    handlers = (seen.append, boom, lambda event: seen.append(("after", event)))
    with caplog.at_level(logging.WARNING, logger="contextchef.effects"):
        flow = emitting(handlers)
        result = drive_sync(flow) if kind == "sync" else await drive_async(flow)
    assert result == "finished"
    assert seen == [{"event": 1}, ("after", {"event": 1})]
    assert any("Boom('boom')" in record.getMessage() for record in caplog.records)


async def test_drive_async_awaits_an_async_event_handler() -> None:
    seen: list[object] = []

    async def handler(event: object) -> None:
        await asyncio.sleep(0)
        seen.append(event)

    assert await drive_async(emitting((handler,))) == "finished"
    assert seen == [{"event": 1}]


def test_drive_sync_skips_an_async_event_handler_with_a_warning_and_closes_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    handler = Coroutines()
    seen: list[object] = []
    with caplog.at_level(logging.WARNING, logger="contextchef.effects"):
        assert drive_sync(emitting((handler, seen.append))) == "finished"
    assert seen == [{"event": 1}]
    assert handler.states() == [inspect.CORO_CLOSED]
    assert any("awaitable" in record.getMessage() for record in caplog.records)
    no_unawaited_warning()


# -- Spawn -------------------------------------------------------------------------------------


def background(threads: list[int]) -> Flow[str]:
    threads.append(threading.get_ident())
    value = yield Call.of(lambda: "spawned")
    return f"{value} result"


def test_drive_sync_spawn_returns_a_future_whose_result_is_the_spawned_flows() -> None:
    threads: list[int] = []

    def flow() -> Flow[object]:
        handle = yield Spawn(background(threads))
        return handle

    handle = drive_sync(flow())
    assert isinstance(handle, Future)
    assert handle.result(timeout=5) == "spawned result" and handle.done()
    assert threads and threads[0] != threading.get_ident()  # off the caller's thread


def test_drive_sync_spawned_failure_is_the_futures_exception() -> None:
    def failing() -> Flow[None]:
        yield Call.of(boom)

    handle = drive_sync(iter_once(Spawn(failing())))
    assert isinstance(handle, Future)
    with pytest.raises(Boom):
        handle.result(timeout=5)


async def test_drive_async_spawn_returns_a_task_whose_result_is_the_spawned_flows() -> None:
    threads: list[int] = []
    handle = await drive_async(iter_once(Spawn(background(threads))))
    assert isinstance(handle, asyncio.Task)
    assert await handle == "spawned result"
    assert handle.done() and handle.result() == "spawned result"
    assert threads == [threading.get_ident()]  # a task on the running loop


# -- closing the flow --------------------------------------------------------------------------


def closable(closed: list[str], effect: object) -> Flow[object]:
    try:
        return (yield effect)  # type: ignore[misc]
    finally:
        closed.append("finally")


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_the_flow_is_closed_when_an_uncaught_error_stops_the_driver(kind: str) -> None:
    closed: list[str] = []
    with pytest.raises(Boom):
        flow = closable(closed, Call.of(boom))
        drive_sync(flow) if kind == "sync" else await drive_async(flow)
    assert closed == ["finally"]


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_the_flow_is_closed_when_a_base_exception_escapes_the_driver(kind: str) -> None:
    def fatal() -> None:
        raise Fatal

    closed: list[str] = []
    flow = closable(closed, Call.of(fatal))
    with pytest.raises(Fatal):
        drive_sync(flow) if kind == "sync" else await drive_async(flow)
    assert closed == ["finally"]
    assert inspect.getgeneratorstate(flow) == inspect.GEN_CLOSED


async def test_cancelling_drive_async_while_it_awaits_a_call_closes_the_flow() -> None:
    started = asyncio.Event()

    async def slow() -> None:
        started.set()
        await asyncio.sleep(60)

    closed: list[str] = []
    flow = closable(closed, Call.of(slow))
    task = asyncio.ensure_future(drive_async(flow))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert closed == ["finally"]
    assert inspect.getgeneratorstate(flow) == inspect.GEN_CLOSED


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_the_flow_is_closed_when_it_returns(kind: str) -> None:
    closed: list[str] = []
    flow = closable(closed, Call.of(lambda: 7))
    result = drive_sync(flow) if kind == "sync" else await drive_async(flow)
    assert result == 7 and closed == ["finally"]


# -- not an effect -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_yielded_non_effect_is_a_config_error_thrown_into_the_flow(kind: str) -> None:
    flow = catching("read the disk")
    outcome, error = drive_sync(flow) if kind == "sync" else await drive_async(flow)
    assert outcome == "error" and isinstance(error, ConfigError)
    assert "'read the disk'" in str(error) and "not an effect" in str(error)

    uncaught: Generator[Any, Any, Any] = iter_once(42)
    with pytest.raises(ConfigError, match="42, which is not an effect"):
        drive_sync(uncaught) if kind == "sync" else await drive_async(uncaught)
