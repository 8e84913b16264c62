"""Test doubles shared by the contract suite: a clock, a sync facade, backend wrappers."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from contextchef.store import ListedEntry, StoredEntry


class Clock:
    """A settable time source: `clock()` returns the current value, `advance()` moves it."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        self.now += seconds
        return self.now


class Blocking:
    """Presents an AsyncStore (or one of its views) with the synchronous API, for the suite."""

    def __init__(self, target: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._target = target
        self._loop = loop

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._target, name)
        if name == "namespace":
            return lambda ns: Blocking(attr(ns), self._loop)
        if inspect.iscoroutinefunction(attr):
            return lambda *args, **kwargs: self._loop.run_until_complete(attr(*args, **kwargs))
        return attr


class Minimal:
    """Exposes only the four required methods of another backend: no optional capability."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def read(self, ns: str, path: str) -> StoredEntry | None:
        return self._inner.read(ns, path)  # type: ignore[no-any-return]

    def write(self, ns: str, path: str, entry: StoredEntry) -> None:
        self._inner.write(ns, path, entry)

    def delete(self, ns: str, path: str) -> bool:
        return self._inner.delete(ns, path)  # type: ignore[no-any-return]

    def list(self, ns: str, prefix: str = "") -> list[ListedEntry]:
        return self._inner.list(ns, prefix)  # type: ignore[no-any-return]


class Spy:
    """Forwards everything to another backend and records each call's method name."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr) or name == "supports":
            return attr

        def record(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return attr(*args, **kwargs)

        return record


class FailingDeletes(Spy):
    """A Spy whose delete raises for the given paths."""

    def __init__(self, inner: Any, failing: set[str]) -> None:
        super().__init__(inner)
        self.failing = failing

    def delete(self, ns: str, path: str) -> bool:
        if path in self.failing:
            raise OSError(f"cannot delete {path}")
        return self._inner.delete(ns, path)  # type: ignore[no-any-return]


class NativeAsync:
    """Presents any synchronous backend as an async-native one (coroutine methods), so the
    store-level suite also runs through the async driver's awaited path on every backend.
    Capabilities are the inner backend's: a method it lacks is missing here too."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr) or name == "supports":
            return attr

        async def call(*args: Any, **kwargs: Any) -> Any:
            return attr(*args, **kwargs)

        return call


class CompareAndSwapOnly(Spy):
    """A Spy that hides `transact`: a third-party backend with the compare-and-swap
    capabilities (`read_versioned`, `replace_if`) but no native read-modify-write."""

    def __getattr__(self, name: str) -> Any:
        if name == "transact":
            raise AttributeError(name)
        return super().__getattr__(name)

    def supports(self, capability: str, ns: str) -> bool:
        return capability != "transact" and bool(self._inner.supports(capability, ns))
