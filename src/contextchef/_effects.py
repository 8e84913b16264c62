"""The one effect system: behaviour written once as flows, driven sync or async.

A *flow* is a generator that yields effects and receives their results; it never performs I/O
itself. Everything in contextchef that may wait — a summarizer, an event handler, a memory
hook, a store read — is an effect, so `ContextChef` and `AsyncContextChef` (and `Store` and
`AsyncStore`, `Memory` and `AsyncMemory`) share every line of behaviour and differ only in
their driver:

- `Call(fn, args, what)`: call user code. Its exception is thrown back into the flow at the
  `yield`, so the flow decides what a failure means. `drive_sync` refuses an awaitable result
  with `ConfigError` (thrown into the flow the same way); `drive_async` awaits it.
- `Emit(handlers, event)`: call each event handler; a raising handler is logged and skipped.
- `Spawn(flow)`: run another flow off the critical path and receive a `Handle` (`done()`,
  `result()`): a worker thread under `drive_sync`, a task on the running loop under
  `drive_async`.
- `Hold(keys)`: take the in-process locks named `keys` (all at once, in a fixed order; a flow
  already holding one takes it again), so same-process edits of one entry queue before they
  touch the backend. The flow receives a `Held` and must `release()` it (in a `finally`: the
  release never waits); whatever a flow still holds when its driver stops is released then.
  `drive_sync` takes a `threading.RLock` per key, `drive_async` an `asyncio.Lock` per key and
  event loop, owned by the task.
- `StoreOp(backend, method, args, kwargs, native)`: one storage backend call. `method` is the
  backend contract's own method (`StorageBackend.read`, or an optional capability of
  `contextchef.store.ops.CapableBackend`), so the code that builds the effect names what it
  calls (go-to-definition lands on the contract) and mypy knows the result type (`StoreOp[T]`).
  Backends satisfy the contract structurally, without inheriting it, so a driver calls the
  backend's method of that name. `drive_sync` calls it (an async-native backend is refused);
  `drive_async` awaits an async-native backend directly and runs a synchronous one in a worker
  thread, so the event loop never blocks.

Both drivers close the flow when they stop, however they stop, so its `finally` blocks run.
`intercept(flow, around)` is the one way to wrap a flow (telemetry times its store calls and
summarizer calls with it): it sees every effect go out and its outcome come back, and changes
nothing else.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
from collections.abc import Callable, Generator, Hashable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, Protocol, TypeVar

from contextchef.errors import ConfigError

__all__ = [
    "After",
    "Call",
    "Effect",
    "Emit",
    "Flow",
    "Handle",
    "Held",
    "Hold",
    "Spawn",
    "StoreOp",
    "drive_async",
    "drive_sync",
    "intercept",
]

logger = logging.getLogger("contextchef.effects")

R = TypeVar("R")
T = TypeVar("T")


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
class Spawn:
    """Effect: run `flow` in the background; the flow receives a `Handle`."""

    flow: Generator[Any, Any, Any]


@dataclass(frozen=True, slots=True)
class Hold:
    """Effect: take the in-process locks `keys`; the flow receives a `Held` to release."""

    keys: tuple[Hashable, ...]


class Held:
    """Locks a `Hold` took; `release()` gives them back (once; later calls do nothing)."""

    __slots__ = ("_undo",)

    def __init__(self, undo: list[Callable[[], None]]) -> None:
        self._undo = undo

    def release(self) -> None:
        undo, self._undo = self._undo, []
        for step in reversed(undo):
            step()


_thread_locks: dict[Hashable, list[Any]] = {}  # key -> [RLock, users]
_loop_locks: dict[
    tuple[int, Hashable], list[Any]
] = {}  # (loop, key) -> [Lock, owner, depth, users]
_registry = threading.Lock()


def _hold_sync(keys: tuple[Hashable, ...]) -> Held:
    """Take a `threading.RLock` per key, in sorted order (the registry forgets unused ones)."""
    undo: list[Callable[[], None]] = []
    try:
        for key in sorted(set(keys), key=repr):
            with _registry:
                slot = _thread_locks.setdefault(key, [threading.RLock(), 0])
                slot[1] += 1
            slot[0].acquire()
            undo.append(partial(_let_go_sync, key, slot))
    except BaseException:
        Held(undo).release()
        raise
    return Held(undo)


def _let_go_sync(key: Hashable, slot: list[Any]) -> None:
    slot[0].release()
    with _registry:
        slot[1] -= 1
        if not slot[1]:
            _thread_locks.pop(key, None)


async def _hold_async(keys: tuple[Hashable, ...]) -> Held:
    """Take an `asyncio.Lock` per key and loop, in sorted order, re-entrant for its task."""
    loop, task = id(asyncio.get_running_loop()), asyncio.current_task()
    undo: list[Callable[[], None]] = []
    try:
        for key in sorted(set(keys), key=repr):
            name = (loop, key)
            slot = _loop_locks.setdefault(name, [asyncio.Lock(), None, 0, 0])
            slot[3] += 1
            try:
                if slot[1] is not task:
                    await slot[0].acquire()
                    slot[1] = task
            except BaseException:
                _forget(name, slot)
                raise
            slot[2] += 1
            undo.append(partial(_let_go_async, name, slot))
    except BaseException:
        Held(undo).release()
        raise
    return Held(undo)


def _let_go_async(name: tuple[int, Hashable], slot: list[Any]) -> None:
    slot[2] -= 1
    if not slot[2]:
        slot[1] = None
        slot[0].release()
    _forget(name, slot)


def _forget(name: tuple[int, Hashable], slot: list[Any]) -> None:
    slot[3] -= 1
    if not slot[3]:
        _loop_locks.pop(name, None)


@dataclass(frozen=True, slots=True, init=False)
class StoreOp(Generic[T]):
    """Effect: the backend's `method(*args, **kwargs)`, where `method` is the contract's method
    (unbound, e.g. `StorageBackend.read`); `native` when the backend is async-native. The flow
    receives a `T`. Build them with `contextchef.store.ops.BackendOps`, which checks the
    arguments against `method`'s signature."""

    backend: object
    method: Callable[..., T]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    native: bool = False

    def __init__(
        self,
        backend: object,
        method: Callable[..., T],
        args: tuple[Any, ...] = (),
        kwargs: Mapping[str, Any] | None = None,
        native: bool = False,
    ) -> None:
        # One is made per store call: the slots are filled directly, a third of the cost of a
        # frozen dataclass's generated `__init__` (which goes through `object.__setattr__`).
        _set_backend(self, backend)
        _set_method(self, method)
        _set_args(self, args)
        _set_kwargs(self, {} if kwargs is None else kwargs)
        _set_native(self, native)

    @property
    def name(self) -> str:
        """The method's name: `"read"`, `"write"`, …"""
        return self.method.__name__


_set_backend, _set_method, _set_args, _set_kwargs, _set_native = (
    vars(StoreOp)[name].__set__ for name in ("backend", "method", "args", "kwargs", "native")
)


class Handle(Protocol):
    """What `Spawn` returns: a `concurrent.futures.Future` or an `asyncio.Task`."""

    def done(self) -> bool: ...

    def result(self) -> Any: ...


Effect = Call | Emit | Spawn | StoreOp[Any] | Hold
Flow = Generator[Effect, Any, R]
After = Callable[[Any, BaseException | None], None]
"""What `intercept`'s `around` may return for an effect: called with `(result, None)` once the
effect has been performed, `(None, error)` when it raised (the error then goes into the flow as
usual), or `(None, exc)` with a `GeneratorExit` when the flow is closed while it waits."""


def _refusal(outcome: Any, what: str) -> ConfigError:
    """The error `drive_sync` throws into a flow whose effect returned an awaitable."""
    if inspect.iscoroutine(outcome):
        outcome.close()
    return ConfigError(
        f"the {what} returned an awaitable, which the synchronous API cannot wait for; "
        "use AsyncContextChef (or the async API: AsyncStore, AsyncMemory)"
    )


def _report(handler: Callable[[Any], Any], exc: BaseException) -> None:
    logger.warning("event handler %r raised %r; carrying on", handler, exc)


def _spawn_thread(flow: Flow[Any]) -> Future[Any]:
    future: Future[Any] = Future()

    def work() -> None:
        try:
            future.set_result(drive_sync(flow))
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=work, name="contextchef-background", daemon=True).start()
    return future


def _not_an_effect(effect: object) -> ConfigError:
    return ConfigError(f"a flow yielded {effect!r}, which is not an effect")


def drive_sync(flow: Flow[R]) -> R:
    """Run `flow` to completion with plain calls; an awaitable result is refused."""
    send: Any = None
    error: BaseException | None = None
    try:
        while True:
            try:
                effect = flow.throw(error) if error is not None else flow.send(send)
            except StopIteration as stop:
                result: R = stop.value
                return result
            send, error = None, None
            # Class patterns without captures: capturing positional fields costs far more than
            # reading the attributes (this loop runs once per store call).
            match effect:
                case StoreOp():
                    if effect.native:
                        what = f"{type(effect.backend).__name__} (async-native) backend"
                        error = _refusal(None, what)
                        continue
                    try:  # the backend's implementation of the contract's method
                        method = getattr(effect.backend, effect.method.__name__)
                        send = method(*effect.args, **effect.kwargs)
                    except Exception as exc:
                        error = exc
                case Call():
                    try:
                        send = effect.fn(*effect.args)
                    except Exception as exc:
                        error = exc
                        continue
                    if inspect.isawaitable(send):
                        send, error = None, _refusal(send, effect.what)
                case Emit():
                    for handler in effect.handlers:
                        try:
                            outcome = handler(effect.event)
                            if inspect.isawaitable(outcome):
                                raise _refusal(outcome, "event handler")
                        except Exception as exc:
                            _report(handler, exc)
                case Spawn():
                    send = _spawn_thread(effect.flow)
                case Hold():
                    send = _hold_sync(effect.keys)
                case _:
                    error = _not_an_effect(effect)
    finally:
        flow.close()


async def _await_store(op: StoreOp[Any]) -> Any:
    method = getattr(op.backend, op.method.__name__)  # the backend's implementation
    if op.native:
        return await method(*op.args, **op.kwargs)
    return await asyncio.to_thread(method, *op.args, **op.kwargs)


async def _maybe_await(value: Any) -> Any:
    return (await value) if inspect.isawaitable(value) else value


async def drive_async(flow: Flow[R]) -> R:
    """Run `flow` to completion, awaiting every awaitable an effect returns."""
    send: Any = None
    error: BaseException | None = None
    try:
        while True:
            try:
                effect = flow.throw(error) if error is not None else flow.send(send)
            except StopIteration as stop:
                result: R = stop.value
                return result
            send, error = None, None
            match effect:
                case StoreOp():
                    try:
                        send = await _await_store(effect)
                    except Exception as exc:
                        error = exc
                case Call():
                    try:
                        send = await _maybe_await(effect.fn(*effect.args))
                    except Exception as exc:
                        error = exc
                case Emit():
                    for handler in effect.handlers:
                        try:
                            await _maybe_await(handler(effect.event))
                        except Exception as exc:
                            _report(handler, exc)
                case Spawn():
                    send = asyncio.ensure_future(drive_async(effect.flow))
                case Hold():
                    send = await _hold_async(effect.keys)
                case _:
                    error = _not_an_effect(effect)
    finally:
        flow.close()


def intercept(flow: Flow[R], around: Callable[[Effect], After | None]) -> Flow[R]:
    """`flow`, wrapped: `around(effect)` runs before each effect goes out to the driver, and
    what it returns (if anything) runs with the effect's outcome before `flow` gets it (see
    `After`). Results, errors, the return value and closing all pass through unchanged, so a
    wrapped flow behaves exactly as the flow under either driver."""
    send: Any = None
    error: BaseException | None = None
    try:
        while True:
            try:
                effect = flow.throw(error) if error is not None else flow.send(send)
            except StopIteration as stop:
                result: R = stop.value
                return result
            after = around(effect)
            try:
                send, error = (yield effect), None
            except Exception as exc:  # the effect failed: `flow` decides what that means
                send, error = None, exc
            except BaseException as exc:  # closed while waiting: `flow` is closed below
                if after is not None:
                    after(None, exc)
                raise
            if after is not None:
                after(send, error)
    finally:
        flow.close()
