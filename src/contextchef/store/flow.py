"""Store logic written once, as generators of backend calls, and the two drivers that run them.

Every store operation (get, put, cleanup, …) is a *flow*: a generator that yields `Call`s
naming a backend method and its arguments, receives each result (or has the backend's exception
thrown into it), and returns the operation's result. `run_sync` answers the calls with plain
method calls; `run_async` awaits them on an async-native backend, or runs the whole flow in a
worker thread (`asyncio.to_thread`) for a synchronous one. So `Store` and `AsyncStore` share
every line of policy and differ only in how they wait.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Generator, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple, TypeVar

from contextchef.store.backend import ListedEntry, SearchHit, StoredEntry

__all__ = [
    "Call",
    "Flow",
    "is_async_backend",
    "run_async",
    "run_sync",
]

T = TypeVar("T")


_NO_KWARGS: Mapping[str, Any] = MappingProxyType({})


class Call(NamedTuple):
    """One request to the backend: `getattr(backend, method)(*args, **kwargs)`."""

    method: str
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any] = _NO_KWARGS


Flow = Generator[Call, Any, T]


def is_async_backend(backend: object) -> bool:
    """Whether `backend.read` is a coroutine function (an `AsyncStorageBackend`)."""
    return inspect.iscoroutinefunction(getattr(backend, "read", None))


def run_sync(backend: object, flow: Flow[T]) -> T:
    """Drive `flow` against a synchronous backend."""
    try:
        call = next(flow)
        while True:
            try:
                result = getattr(backend, call.method)(*call.args, **call.kwargs)
            except Exception as exc:
                call = flow.throw(exc)
            else:
                call = flow.send(result)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


async def run_async(backend: object, flow: Flow[T], *, native: bool) -> T:
    """Drive `flow`: await each call on a `native` async backend, else use a worker thread."""
    if not native:
        return await asyncio.to_thread(run_sync, backend, flow)
    try:
        call = next(flow)
        while True:
            try:
                result = getattr(backend, call.method)(*call.args, **call.kwargs)
                if inspect.isawaitable(result):
                    result = await result
            except Exception as exc:
                call = flow.throw(exc)
            else:
                call = flow.send(result)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


# Typed requests: `entry = yield from read(ns, path)` keeps flows fully typed.


def read(ns: str, path: str) -> Generator[Call, Any, StoredEntry | None]:
    result: StoredEntry | None = yield Call("read", (ns, path))
    return result


def write(ns: str, path: str, entry: StoredEntry) -> Generator[Call, Any, None]:
    yield Call("write", (ns, path, entry))


def delete(ns: str, path: str) -> Generator[Call, Any, bool]:
    result = yield Call("delete", (ns, path))
    return bool(result)


def list_entries(ns: str, prefix: str) -> Generator[Call, Any, list[ListedEntry]]:
    result: list[ListedEntry] = yield Call("list", (ns, prefix))
    return list(result)


def read_all(ns: str, prefix: str) -> Generator[Call, Any, dict[str, StoredEntry]]:
    result: dict[str, StoredEntry] = yield Call("read_all", (ns, prefix))
    return dict(result)


def exists(ns: str, path: str) -> Generator[Call, Any, bool]:
    result = yield Call("exists", (ns, path))
    return bool(result)


def append(ns: str, path: str, content: str) -> Generator[Call, Any, None]:
    yield Call("append", (ns, path, content))


def search(
    ns: str, query: str, prefix: str, limit: int | None
) -> Generator[Call, Any, list[SearchHit]]:
    result: list[SearchHit] = yield Call("search", (ns, query), {"prefix": prefix, "limit": limit})
    return list(result)


def snapshot(ns: str) -> Generator[Call, Any, dict[str, StoredEntry]]:
    result: dict[str, StoredEntry] = yield Call("snapshot", (ns,))
    return dict(result)


def restore(ns: str, data: dict[str, StoredEntry]) -> Generator[Call, Any, None]:
    yield Call("restore", (ns, data))


def get_physical_path(ns: str, path: str) -> Generator[Call, Any, str | None]:
    result: str | None = yield Call("get_physical_path", (ns, path))
    return result
