"""Typed backend requests: each method yields one `StoreOp` and returns the backend's answer.

`BackendOps` is bound to one backend (and knows whether it is async-native), so a store flow
reads as plain code — `entry = yield from ops.read(ns, path)` — while the driver decides how
to wait (see `contextchef._effects`). Every request names the contract method it calls
(`StorageBackend.read`, `CapableBackend.search`, …): go-to-definition on it lands on the
contract, and mypy checks the arguments against its signature and knows what comes back.
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar, TypeVarTuple

from contextchef._effects import Call, Hold, StoreOp
from contextchef.store.backend import (
    ListedEntry,
    SearchHit,
    StorageBackend,
    StoredEntry,
    Transaction,
    Version,
)
from contextchef.store.where import Condition

__all__ = ["BackendOps", "CapableBackend", "Op", "is_async_backend"]

T = TypeVar("T")
P = ParamSpec("P")
Ts = TypeVarTuple("Ts")

Op = Generator[StoreOp[Any] | Hold | Call, Any, T]
"""A store flow: yields `StoreOp`s (and, around an edit, the `Hold` of its entries; for a
semantic index, the `Call` of the user's embedding function), returns a `T`."""


class CapableBackend(StorageBackend, Protocol):
    """A backend with every optional capability: the methods a store flow may call, each only
    after `supports()` said the backend has it (see `StorageBackend` for what each promises).
    An async-native backend has the same methods as coroutines."""

    def read_all(self, ns: str, prefix: str = "") -> dict[str, StoredEntry]: ...

    def read_last(self, ns: str, prefix: str, count: int) -> dict[str, StoredEntry]: ...

    def list_dirs(self, ns: str, prefix: str) -> builtins.list[str]: ...

    def read_recent(
        self, ns: str, prefix: str, limit: int, offset: int
    ) -> dict[str, StoredEntry]: ...

    def read_recent_where(
        self, ns: str, prefix: str, where: Condition, limit: int, offset: int
    ) -> dict[str, StoredEntry]: ...

    def exists(self, ns: str, path: str) -> bool: ...

    def append(self, ns: str, path: str, content: str) -> None: ...

    def search(
        self, ns: str, query: str, *, prefix: str = "", limit: int | None = None
    ) -> builtins.list[SearchHit]: ...

    def snapshot(self, ns: str) -> dict[str, StoredEntry]: ...

    def restore(self, ns: str, snapshot: Mapping[str, StoredEntry]) -> None: ...

    def get_physical_path(self, ns: str, path: str) -> str | None: ...

    def touch(self, ns: str, path: str, accessed_at: float) -> None: ...

    def history(self, ns: str, path: str) -> builtins.list[StoredEntry]: ...

    def create(self, ns: str, path: str, entry: StoredEntry) -> bool: ...

    def read_versioned(self, ns: str, path: str) -> tuple[StoredEntry, Version] | None: ...

    def replace_if(self, ns: str, path: str, entry: StoredEntry, expected: Version) -> bool: ...

    def keep_versions(self, ns: str) -> None: ...

    def transact(
        self, ns: str, paths: tuple[str, ...], change: Transaction
    ) -> Mapping[str, StoredEntry | None]: ...

    def put_vectors(self, ns: str, vectors: Mapping[str, Sequence[float]]) -> None: ...

    def delete_vectors(self, ns: str, paths: Sequence[str] | None = None) -> None: ...

    def nearest(
        self,
        ns: str,
        vector: Sequence[float],
        *,
        metric: str = "cosine",
        prefix: str = "",
        limit: int | None = None,
    ) -> builtins.list[tuple[str, float]]: ...


def is_async_backend(backend: object) -> bool:
    """Whether `backend.read` is a coroutine function (an `AsyncStorageBackend`)."""
    return inspect.iscoroutinefunction(getattr(backend, "read", None))


class BackendOps:
    """The requests a store flow makes of one backend."""

    __slots__ = ("backend", "native")

    def __init__(self, backend: object) -> None:
        self.backend = backend
        self.native = is_async_backend(backend)

    def op(
        self, method: Callable[Concatenate[Any, P], T], /, *args: P.args, **kwargs: P.kwargs
    ) -> StoreOp[T]:
        """The effect of the backend's `method(*args, **kwargs)`."""
        return StoreOp(self.backend, method, args, kwargs, self.native)

    def call(self, method: Callable[[Any, *Ts], T], args: tuple[*Ts]) -> StoreOp[T]:
        """The effect of the backend's `method(*args)`: `op` for the hottest requests, which
        pass no keywords (one call with no argument packing)."""
        return StoreOp(self.backend, method, args, None, self.native)

    def read(self, ns: str, path: str) -> Op[StoredEntry | None]:
        return (yield from _answer(self.call(StorageBackend.read, (ns, path))))

    def write(self, ns: str, path: str, entry: StoredEntry) -> Op[None]:
        yield self.call(StorageBackend.write, (ns, path, entry))

    def create(self, ns: str, path: str, entry: StoredEntry) -> Op[bool]:
        return bool((yield self.call(CapableBackend.create, (ns, path, entry))))

    def read_versioned(self, ns: str, path: str) -> Op[tuple[StoredEntry, Version] | None]:
        return (yield from _answer(self.call(CapableBackend.read_versioned, (ns, path))))

    def replace_if(self, ns: str, path: str, entry: StoredEntry, expected: Version) -> Op[bool]:
        request = self.call(CapableBackend.replace_if, (ns, path, entry, expected))
        return bool((yield request))

    def delete(self, ns: str, path: str) -> Op[bool]:
        return bool((yield self.call(StorageBackend.delete, (ns, path))))

    def list(self, ns: str, prefix: str) -> Op[builtins.list[ListedEntry]]:
        listed = yield from _answer(self.call(StorageBackend.list, (ns, prefix)))
        return builtins.list(listed)

    def read_all(self, ns: str, prefix: str) -> Op[dict[str, StoredEntry]]:
        return dict((yield from _answer(self.call(CapableBackend.read_all, (ns, prefix)))))

    def read_last(self, ns: str, prefix: str, count: int) -> Op[dict[str, StoredEntry]]:
        request = self.call(CapableBackend.read_last, (ns, prefix, count))
        return dict((yield from _answer(request)))

    def list_dirs(self, ns: str, prefix: str) -> Op[builtins.list[str]]:
        request = self.call(CapableBackend.list_dirs, (ns, prefix))
        return builtins.list((yield from _answer(request)))

    def read_recent(
        self, ns: str, prefix: str, limit: int, offset: int
    ) -> Op[dict[str, StoredEntry]]:
        request = self.call(CapableBackend.read_recent, (ns, prefix, limit, offset))
        return dict((yield from _answer(request)))

    def read_recent_where(
        self, ns: str, prefix: str, where: Condition, limit: int, offset: int
    ) -> Op[dict[str, StoredEntry]]:
        request = self.call(CapableBackend.read_recent_where, (ns, prefix, where, limit, offset))
        return dict((yield from _answer(request)))

    def exists(self, ns: str, path: str) -> Op[bool]:
        return bool((yield self.call(CapableBackend.exists, (ns, path))))

    def append(self, ns: str, path: str, content: str) -> Op[None]:
        yield self.call(CapableBackend.append, (ns, path, content))

    def search(
        self, ns: str, query: str, prefix: str, limit: int | None
    ) -> Op[builtins.list[SearchHit]]:
        request = self.op(CapableBackend.search, ns, query, prefix=prefix, limit=limit)
        return builtins.list((yield from _answer(request)))

    def snapshot(self, ns: str) -> Op[dict[str, StoredEntry]]:
        return dict((yield from _answer(self.call(CapableBackend.snapshot, (ns,)))))

    def restore(self, ns: str, data: dict[str, StoredEntry]) -> Op[None]:
        yield self.call(CapableBackend.restore, (ns, data))

    def history(self, ns: str, path: str) -> Op[builtins.list[StoredEntry]]:
        return builtins.list((yield from _answer(self.call(CapableBackend.history, (ns, path)))))

    def touch(self, ns: str, path: str, when: float) -> Op[None]:
        yield self.call(CapableBackend.touch, (ns, path, when))

    def keep_versions(self, ns: str) -> Op[None]:
        yield self.call(CapableBackend.keep_versions, (ns,))

    def transact(
        self, ns: str, paths: tuple[str, ...], change: Transaction
    ) -> Op[Mapping[str, StoredEntry | None]]:
        return (yield from _answer(self.call(CapableBackend.transact, (ns, paths, change))))

    def put_vectors(self, ns: str, vectors: Mapping[str, Sequence[float]]) -> Op[None]:
        yield self.call(CapableBackend.put_vectors, (ns, vectors))

    def delete_vectors(self, ns: str, paths: Sequence[str] | None) -> Op[None]:
        yield self.call(CapableBackend.delete_vectors, (ns, paths))

    def nearest(
        self, ns: str, vector: Sequence[float], metric: str, prefix: str, limit: int | None
    ) -> Op[builtins.list[tuple[str, float]]]:
        request = self.op(
            CapableBackend.nearest, ns, vector, metric=metric, prefix=prefix, limit=limit
        )
        found = yield from _answer(request)
        return [(str(path), float(score)) for path, score in found]

    def get_physical_path(self, ns: str, path: str) -> Op[str | None]:
        return (yield from _answer(self.call(CapableBackend.get_physical_path, (ns, path))))


def _answer(request: StoreOp[T]) -> Op[T]:
    """Issue `request`; its answer, typed as the contract method's result."""
    answer: T = yield request
    return answer
