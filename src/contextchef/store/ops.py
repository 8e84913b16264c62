"""Typed backend requests: each method yields one `StoreOp` and returns the backend's answer.

`BackendOps` is bound to one backend (and knows whether it is async-native), so a store flow
reads as plain code — `entry = yield from ops.read(ns, path)` — while the driver decides how
to wait (see `contextchef._effects`).
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Generator
from typing import Any, TypeVar

from contextchef._effects import StoreOp
from contextchef.store.backend import ListedEntry, SearchHit, StoredEntry, Version

__all__ = ["BackendOps", "Op", "is_async_backend"]

T = TypeVar("T")

Op = Generator[StoreOp, Any, T]
"""A store flow: yields `StoreOp`s, returns a `T`."""


def is_async_backend(backend: object) -> bool:
    """Whether `backend.read` is a coroutine function (an `AsyncStorageBackend`)."""
    return inspect.iscoroutinefunction(getattr(backend, "read", None))


class BackendOps:
    """The requests a store flow makes of one backend."""

    __slots__ = ("backend", "native")

    def __init__(self, backend: object) -> None:
        self.backend = backend
        self.native = is_async_backend(backend)

    def op(self, method: str, *args: Any, **kwargs: Any) -> StoreOp:
        """The effect of `backend.<method>(*args, **kwargs)`."""
        return StoreOp(self.backend, method, args, kwargs, self.native)

    def call(self, method: str, args: tuple[Any, ...]) -> StoreOp:
        """The effect of `backend.<method>(*args)`: `op` for the hottest requests, which pass
        no keywords (one call with no argument packing)."""
        return StoreOp(self.backend, method, args, None, self.native)

    def read(self, ns: str, path: str) -> Op[StoredEntry | None]:
        result: StoredEntry | None = yield self.op("read", ns, path)
        return result

    def write(self, ns: str, path: str, entry: StoredEntry) -> Op[None]:
        yield self.op("write", ns, path, entry)

    def create(self, ns: str, path: str, entry: StoredEntry) -> Op[bool]:
        return bool((yield self.op("create", ns, path, entry)))

    def read_versioned(self, ns: str, path: str) -> Op[tuple[StoredEntry, Version] | None]:
        result: tuple[StoredEntry, Version] | None = yield self.op("read_versioned", ns, path)
        return result

    def replace_if(self, ns: str, path: str, entry: StoredEntry, expected: Version) -> Op[bool]:
        return bool((yield self.op("replace_if", ns, path, entry, expected)))

    def delete(self, ns: str, path: str) -> Op[bool]:
        return bool((yield self.op("delete", ns, path)))

    def list(self, ns: str, prefix: str) -> Op[list[ListedEntry]]:
        result: list[ListedEntry] = yield self.op("list", ns, prefix)
        return list(result)

    def read_all(self, ns: str, prefix: str) -> Op[dict[str, StoredEntry]]:
        result: dict[str, StoredEntry] = yield self.op("read_all", ns, prefix)
        return dict(result)

    def exists(self, ns: str, path: str) -> Op[bool]:
        return bool((yield self.op("exists", ns, path)))

    def append(self, ns: str, path: str, content: str) -> Op[None]:
        yield self.op("append", ns, path, content)

    def search(
        self, ns: str, query: str, prefix: str, limit: int | None
    ) -> Op[builtins.list[SearchHit]]:
        hits: builtins.list[SearchHit] = yield self.op(
            "search", ns, query, prefix=prefix, limit=limit
        )
        return builtins.list(hits)

    def snapshot(self, ns: str) -> Op[dict[str, StoredEntry]]:
        result: dict[str, StoredEntry] = yield self.op("snapshot", ns)
        return dict(result)

    def restore(self, ns: str, data: dict[str, StoredEntry]) -> Op[None]:
        yield self.op("restore", ns, data)

    def history(self, ns: str, path: str) -> Op[builtins.list[StoredEntry]]:
        versions: builtins.list[StoredEntry] = yield self.op("history", ns, path)
        return builtins.list(versions)

    def touch(self, ns: str, path: str, when: float) -> Op[None]:
        yield self.op("touch", ns, path, when)

    def get_physical_path(self, ns: str, path: str) -> Op[str | None]:
        result: str | None = yield self.op("get_physical_path", ns, path)
        return result
