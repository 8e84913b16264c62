"""`AsyncStore` and `AsyncNamespaceView`: the store for async code, over any backend.

The operations are the same flows `Store` runs (see `contextchef.store.core`); only the driver
differs. An `AsyncStorageBackend` is awaited directly. A synchronous backend needs no adapter:
each backend call runs in a worker thread, so the event loop never blocks on disk.
`AsyncStore.of(store)` shares a sync `Store`'s state (eviction policies, read times).

Concurrent `cleanup()` calls for one namespace share a single sweep.
"""

from __future__ import annotations

import asyncio
import builtins
import inspect
from collections.abc import Mapping
from typing import Any, Self, TypeVar, Unpack

from contextchef._effects import drive_async
from contextchef.store.backend import (
    ListedEntry,
    SearchHit,
    StoredEntry,
)
from contextchef.store.core import Change, PutResult, StoreCore
from contextchef.store.eviction import Caps, CleanupReport
from contextchef.store.indexing import SearchMode
from contextchef.store.offloads import Offloaded, offload_flow, resolve_flow
from contextchef.store.store import StoreBase, ViewBase

__all__ = ["AsyncNamespaceView", "AsyncStore"]

T = TypeVar("T")


class AsyncStore(StoreBase["AsyncNamespaceView"]):
    """A `Store` for async code: sync backends run in worker threads, async ones are awaited.

    Takes the same arguments as `Store`, and any `AsyncStorageBackend` as well.
    """

    def _attach(self, core: StoreCore) -> None:
        super()._attach(core)
        self._sweeps: dict[tuple[Any, ...], asyncio.Future[CleanupReport]] = {}

    def _view(self, ns: str) -> AsyncNamespaceView:
        return AsyncNamespaceView(self, ns)

    async def cleanup(self, ns: str, **caps: Unpack[Caps]) -> CleanupReport:
        """`Store.cleanup`, awaited. A call identical to a sweep already running joins it."""
        key = (ns, *sorted(caps.items()))
        running = self._sweeps.get(key)
        if running is not None:
            return await asyncio.shield(running)
        flow = self._core.cleanup(ns, **caps)
        sweep = asyncio.ensure_future(drive_async(flow))
        self._sweeps[key] = sweep
        sweep.add_done_callback(lambda _: self._sweeps.pop(key, None))
        return await asyncio.shield(sweep)

    async def flush(self) -> None:
        """See `Store.flush`."""
        await drive_async(self._core.flush())

    async def close(self) -> None:
        """`flush`, then close the backend (awaited when it is a coroutine) if it has one."""
        try:
            await self.flush()
        finally:
            close = getattr(self._core.backend, "close", None)
            if callable(close):
                closed = close()
                if inspect.isawaitable(closed):
                    await closed

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def offload(
        self,
        content: str,
        *,
        name: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Offloaded:
        """See `Store.offload`; an async event handler is awaited."""
        return await drive_async(offload_flow(self._core, content, name, meta))

    async def resolve(self, uri: str) -> str | None:
        """See `Store.resolve`."""
        return await drive_async(resolve_flow(self._core, uri))


class AsyncNamespaceView(ViewBase):
    """One namespace of an `AsyncStore`; the coroutine twin of `NamespaceView`."""

    def __init__(self, store: AsyncStore, ns: str) -> None:
        super().__init__(store._core, ns)
        self._store = store

    async def get(self, path: str) -> StoredEntry | None:
        """See `NamespaceView.get`."""
        return await drive_async(self._core.get(self._ns, path))

    async def put(
        self, path: str, content: str, meta: Mapping[str, Any] | None = None
    ) -> PutResult:
        """See `NamespaceView.put`."""
        return await drive_async(self._core.put(self._ns, path, content, meta))

    async def put_content(self, content: str, meta: Mapping[str, Any] | None = None) -> PutResult:
        """See `NamespaceView.put_content`."""
        return await drive_async(self._core.put(self._ns, None, content, meta))

    async def append(
        self, path: str, content: str, meta: Mapping[str, Any] | None = None
    ) -> PutResult:
        """See `NamespaceView.append`."""
        return await drive_async(self._core.append(self._ns, path, content, meta))

    async def create(self, path: str, content: str, meta: Mapping[str, Any] | None = None) -> bool:
        """See `NamespaceView.create`."""
        return await drive_async(self._core.create(self._ns, path, content, meta))

    async def update(self, path: str, change: Change) -> StoredEntry | None:
        """See `NamespaceView.update`."""
        return await drive_async(self._core.update(self._ns, path, change))

    async def delete(self, path: str) -> bool:
        """See `NamespaceView.delete`."""
        return await drive_async(self._core.delete(self._ns, path))

    async def list(self, prefix: str = "") -> list[ListedEntry]:
        """See `NamespaceView.list`."""
        return await drive_async(self._core.list(self._ns, prefix))

    async def entries(self, prefix: str = "") -> dict[str, StoredEntry]:
        """See `NamespaceView.entries`."""
        return await drive_async(self._core.entries(self._ns, prefix))

    async def last(self, count: int, prefix: str = "") -> dict[str, StoredEntry]:
        """See `NamespaceView.last`."""
        return await drive_async(self._core.last(self._ns, prefix, count))

    async def recent(self, limit: int, prefix: str = "", offset: int = 0) -> dict[str, StoredEntry]:
        """See `NamespaceView.recent`."""
        return await drive_async(self._core.recent(self._ns, prefix, limit, offset))

    async def directories(self, prefix: str = "") -> builtins.list[str]:
        """See `NamespaceView.directories`."""
        return await drive_async(self._core.dirs(self._ns, prefix))

    async def search(
        self,
        query: str,
        *,
        prefix: str = "",
        limit: int | None = None,
        mode: SearchMode | None = None,
        min_score: float | None = None,
    ) -> builtins.list[SearchHit]:
        """See `NamespaceView.search`."""
        return await drive_async(self._core.search(self._ns, query, prefix, limit, mode, min_score))

    async def reindex(self, prefix: str = "") -> int:
        """See `NamespaceView.reindex`."""
        return await drive_async(self._core.reindex(self._ns, prefix))

    async def exists(self, path: str) -> bool:
        """See `NamespaceView.exists`."""
        return await drive_async(self._core.exists(self._ns, path))

    async def get_physical_path(self, path: str) -> str | None:
        """See `NamespaceView.get_physical_path`."""
        return await drive_async(self._core.physical_path(self._ns, path))

    async def history(self, path: str) -> builtins.list[StoredEntry]:
        """See `NamespaceView.history`."""
        return await drive_async(self._core.history(self._ns, path))

    async def snapshot(self) -> dict[str, StoredEntry]:
        """See `NamespaceView.snapshot`."""
        return await drive_async(self._core.snapshot(self._ns))

    async def restore(self, data: Mapping[str, StoredEntry]) -> None:
        """See `NamespaceView.restore`."""
        await drive_async(self._core.restore(self._ns, data))

    async def cleanup(self, **caps: Unpack[Caps]) -> CleanupReport:
        """See `AsyncStore.cleanup`."""
        return await self._store.cleanup(self._ns, **caps)
