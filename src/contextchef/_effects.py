"""Effects: how flows written once reach the outside world, driven sync or async.

A *flow* is a generator that yields effects and receives their results. `drive_sync` performs
each effect with plain calls; `drive_async` awaits whatever returns an awaitable. Every piece of
behaviour that may touch user code (a summarizer, an event handler, a hook) is written as a flow,
so `ContextChef` and `AsyncContextChef` share every line of it.

- `Call(fn, *args)`: call user code. Its exception is thrown back into the flow at the `yield`,
  so the flow decides what a failure means. Under `drive_sync`, a coroutine result is refused
  with `ConfigError` (thrown into the flow the same way).
- `Emit(handlers, event)`: call each event handler; a raising handler is logged and skipped.
- `Dual(sync, async_, *args)`: the same operation in two implementations (e.g. a store write
  through `Store` or `AsyncStore`); each driver calls its own, and errors come back as for `Call`.
- `Spawn(flow)`: start another flow off the critical path and get a handle with `done()` and
  `result()`: a worker thread under `drive_sync`, a task on the running loop under
  `drive_async`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable, Generator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from contextchef.errors import ConfigError

__all__ = [
    "Call",
    "Dual",
    "Effect",
    "Emit",
    "Flow",
    "Handle",
    "Spawn",
    "drive_async",
    "drive_sync",
]

logger = logging.getLogger("contextchef._effects")

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Call:
    """Effect: call `fn(*args)`; the flow receives its result or its exception."""

    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    what: str = "callback"

    @classmethod
    def of(cls, fn: Callable[..., Any], *args: Any, what: str = "callback") -> Call:
        return cls(fn, args, what)


@dataclass(frozen=True, slots=True)
class Emit:
    """Effect: call each handler with `event`, isolating their failures."""

    handlers: tuple[Callable[[Any], Any], ...]
    event: object


@dataclass(frozen=True, slots=True)
class Dual:
    """Effect: `sync(*args)` under `drive_sync`, `await async_(*args)` under `drive_async`."""

    sync: Callable[..., Any]
    async_: Callable[..., Any]
    args: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class Spawn:
    """Effect: run `flow` in the background; the flow receives a handle (`done()`, `result()`)."""

    flow: Generator[Any, Any, Any]


class Handle(Protocol):
    """What `Spawn` returns: a `concurrent.futures.Future` or an `asyncio.Task`."""

    def done(self) -> bool: ...

    def result(self) -> Any: ...


Effect = Call | Dual | Emit | Spawn
Flow = Generator[Effect, Any, R]


def _report(handler: Callable[[Any], Any], exc: BaseException) -> None:
    logger.warning("event handler %r raised %r; carrying on", handler, exc)


def _refuse(outcome: Any, what: str) -> ConfigError:
    if inspect.iscoroutine(outcome):
        outcome.close()
    return ConfigError(f"the {what} returned an awaitable; use AsyncContextChef (or the async API)")


def _spawn_thread(flow: Flow[Any]) -> Future[Any]:
    future: Future[Any] = Future()

    def work() -> None:
        try:
            future.set_result(drive_sync(flow))
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=work, name="contextchef-background", daemon=True).start()
    return future


# What `_steps` hands its driver: an awaitable some effect returned, and who returned it.
_Pending = tuple[Awaitable[Any], str]


def _steps(flow: Flow[R], *, asynchronous: bool) -> Generator[_Pending, Any, R]:
    """Run `flow`, performing every effect; each awaitable an effect returns is yielded to the
    driver, which sends back its result (async) or throws back a refusal (sync)."""
    send: Any = None
    error: BaseException | None = None
    while True:
        try:
            effect = flow.throw(error) if error is not None else flow.send(send)
        except StopIteration as stop:
            result: R = stop.value
            return result
        send, error = None, None
        if isinstance(effect, Spawn):
            send = (
                asyncio.ensure_future(drive_async(effect.flow))
                if asynchronous
                else _spawn_thread(effect.flow)
            )
        elif isinstance(effect, Emit):
            for handler in effect.handlers:
                try:
                    outcome = handler(effect.event)
                    if inspect.isawaitable(outcome):
                        yield outcome, "event handler"
                except Exception as exc:
                    _report(handler, exc)
        else:
            if isinstance(effect, Dual):
                fn, what = (effect.async_ if asynchronous else effect.sync), "store operation"
            else:
                fn, what = effect.fn, effect.what
            try:
                send = fn(*effect.args)
                if inspect.isawaitable(send):
                    send = yield send, what
            except Exception as exc:
                send, error = None, exc


def drive_sync(flow: Flow[R]) -> R:
    """Run `flow` to completion with plain calls; an awaitable result is refused."""
    steps = _steps(flow, asynchronous=False)
    refusal: BaseException | None = None
    while True:
        try:
            awaitable, what = steps.throw(refusal) if refusal is not None else next(steps)
        except StopIteration as stop:
            result: R = stop.value
            return result
        refusal = _refuse(awaitable, what)


async def drive_async(flow: Flow[R]) -> R:
    """Run `flow` to completion, awaiting every awaitable an effect returns."""
    steps = _steps(flow, asynchronous=True)
    send: Any = None
    error: BaseException | None = None
    while True:
        try:
            awaitable, _ = steps.throw(error) if error is not None else steps.send(send)
        except StopIteration as stop:
            result: R = stop.value
            return result
        try:
            send, error = await awaitable, None
        except Exception as exc:
            send, error = None, exc
