"""`AsyncStore` and `AsyncNamespaceView`: the store for async code, over any backend.

The operations are the same flows `Store` runs (see `contextchef.store.core`); only the driver
differs. An `AsyncStorageBackend` is awaited directly. A synchronous backend needs no adapter:
each operation runs in a worker thread with `asyncio.to_thread`, so the event loop never blocks
on disk. `AsyncStore.of(store)` shares a sync `Store`'s state (eviction policies, read times).

Concurrent `cleanup()` calls for one namespace share a single sweep.
"""

from __future__ import annotations

import asyncio
import builtins
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

from contextchef.store.backend import (
    AsyncStorageBackend,
    ListedEntry,
    SearchHit,
    StorageBackend,
    StoredEntry,
)
from contextchef.store.core import PutResult, StoreCore
from contextchef.store.eviction import CleanupReport, EvictionPolicy
from contextchef.store.flow import Flow, run_async
from contextchef.store.store import StoreBase, ViewBase

__all__ = ["AsyncNamespaceView", "AsyncStore"]

T = TypeVar("T")


async def _drive(core: StoreCore, flow: Flow[T]) -> T:
    return await run_async(core.backend, flow, native=core.native_async)


class AsyncStore(StoreBase):
    """A `Store` for async code: sync backends run in worker threads, async ones are awaited."""

    def __init__(
        self,
        backend: StorageBackend | AsyncStorageBackend,
        *,
        eviction: Mapping[str, EvictionPolicy | Mapping[str, Any]] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._core = StoreCore(backend, eviction=eviction, clock=clock)
        self._views: dict[str, AsyncNamespaceView] = {}
        self._sweeps: dict[str, asyncio.Future[CleanupReport]] = {}

    @classmethod
    def of(
        cls, source: StorageBackend | AsyncStorageBackend | StoreBase, **options: Any
    ) -> AsyncStore:
        """`source` itself when it is an AsyncStore; one sharing a `Store`'s state; else a new
        AsyncStore over the backend `source` (with `options`)."""
        if isinstance(source, AsyncStore):
            return source
        if isinstance(source, StoreBase):
            store = cls.__new__(cls)
            store._core = source._core
            store._views = {}
            store._sweeps = {}
            return store
        return cls(source, **options)

    def __repr__(self) -> str:
        return f"AsyncStore({self._core.backend!r})"

    def namespace(self, ns: str) -> AsyncNamespaceView:
        """The async view of namespace `ns`."""
        view = self._views.get(ns)
        if view is None:
            view = self._views[ns] = AsyncNamespaceView(self, ns)
        return view

    async def cleanup(
        self,
        ns: str,
        *,
        max_files: float | None = None,
        max_bytes: float | None = None,
        max_age: float | None = None,
    ) -> CleanupReport:
        """`Store.cleanup`, awaited; a sweep already running for `ns` is joined, not repeated."""
        running = self._sweeps.get(ns)
        if running is not None:
            return await asyncio.shield(running)
        flow = self._core.cleanup(ns, max_files=max_files, max_bytes=max_bytes, max_age=max_age)
        sweep = asyncio.ensure_future(_drive(self._core, flow))
        self._sweeps[ns] = sweep
        sweep.add_done_callback(lambda _: self._sweeps.pop(ns, None))
        return await asyncio.shield(sweep)


class AsyncNamespaceView(ViewBase):
    """One namespace of an `AsyncStore`; the coroutine twin of `NamespaceView`."""

    def __init__(self, store: AsyncStore, ns: str) -> None:
        super().__init__(store._core, ns)
        self._store = store

    async def get(self, path: str) -> StoredEntry | None:
        """See `NamespaceView.get`."""
        return await _drive(self._core, self._core.get(self._ns, path))

    @overload
    async def put(self, content: str, /, *, meta: Mapping[str, Any] | None = None) -> PutResult: ...

    @overload
    async def put(
        self, path: str, content: str, /, meta: Mapping[str, Any] | None = None
    ) -> PutResult: ...

    async def put(
        self, first: str, content: str | None = None, /, meta: Mapping[str, Any] | None = None
    ) -> PutResult:
        """See `NamespaceView.put`."""
        path, body = (None, first) if content is None else (first, content)
        return await _drive(self._core, self._core.put(self._ns, path, body, meta))

    async def append(
        self, path: str, content: str, meta: Mapping[str, Any] | None = None
    ) -> PutResult:
        """See `NamespaceView.append`."""
        return await _drive(self._core, self._core.append(self._ns, path, content, meta))

    async def delete(self, path: str) -> bool:
        """See `NamespaceView.delete`."""
        return await _drive(self._core, self._core.delete(self._ns, path))

    async def list(self, prefix: str = "") -> list[ListedEntry]:
        """See `NamespaceView.list`."""
        return await _drive(self._core, self._core.list(self._ns, prefix))

    async def entries(self, prefix: str = "") -> dict[str, StoredEntry]:
        """See `NamespaceView.entries`."""
        return await _drive(self._core, self._core.entries(self._ns, prefix))

    async def search(
        self, query: str, *, prefix: str = "", limit: int | None = None
    ) -> builtins.list[SearchHit]:
        """See `NamespaceView.search`."""
        return await _drive(self._core, self._core.search(self._ns, query, prefix, limit))

    async def exists(self, path: str) -> bool:
        """See `NamespaceView.exists`."""
        return await _drive(self._core, self._core.exists(self._ns, path))

    async def get_physical_path(self, path: str) -> str | None:
        """See `NamespaceView.get_physical_path`."""
        return await _drive(self._core, self._core.physical_path(self._ns, path))

    async def snapshot(self) -> dict[str, StoredEntry]:
        """See `NamespaceView.snapshot`."""
        return await _drive(self._core, self._core.snapshot(self._ns))

    async def restore(self, data: Mapping[str, StoredEntry]) -> None:
        """See `NamespaceView.restore`."""
        await _drive(self._core, self._core.restore(self._ns, data))

    async def cleanup(
        self,
        *,
        max_files: float | None = None,
        max_bytes: float | None = None,
        max_age: float | None = None,
    ) -> CleanupReport:
        """See `AsyncStore.cleanup`."""
        return await self._store.cleanup(
            self._ns, max_files=max_files, max_bytes=max_bytes, max_age=max_age
        )
