"""AsyncStore: sync backends in worker threads, async backends awaited, shared state, sweeps."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from contextchef.errors import ConfigError, StoreCapabilityError
from contextchef.store import (
    AsyncStorageBackend,
    AsyncStore,
    InMemoryBackend,
    ListedEntry,
    SearchHit,
    Store,
    StoredEntry,
)


class ThreadRecorder(InMemoryBackend):
    """A sync backend that notes which thread each read ran on."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[int] = set()

    def read(self, ns: str, path: str) -> StoredEntry | None:
        self.threads.add(threading.get_ident())
        return super().read(ns, path)


class NativeAsync:
    """An AsyncStorageBackend: coroutines over a dict, plus an async `search`."""

    def __init__(self) -> None:
        self.inner = InMemoryBackend()
        self.threads: set[int] = set()
        self.lists = 0
        self.gate: asyncio.Event | None = None

    async def read(self, ns: str, path: str) -> StoredEntry | None:
        self.threads.add(threading.get_ident())
        return self.inner.read(ns, path)

    async def write(self, ns: str, path: str, entry: StoredEntry) -> None:
        self.inner.write(ns, path, entry)

    async def delete(self, ns: str, path: str) -> bool:
        return self.inner.delete(ns, path)

    async def list(self, ns: str, prefix: str = "") -> list[ListedEntry]:
        self.lists += 1
        if self.gate is not None:
            await self.gate.wait()
        return self.inner.list(ns, prefix)

    async def search(
        self, ns: str, query: str, *, prefix: str = "", limit: int | None = None
    ) -> list[SearchHit]:
        return self.inner.search(ns, query, prefix=prefix, limit=limit)


async def test_a_sync_backend_runs_in_worker_threads() -> None:
    backend = ThreadRecorder()
    notes = AsyncStore(backend).namespace("notes")
    await notes.put("a.md", "a")
    assert (await notes.get("a.md")).content == "a"
    assert backend.threads and threading.get_ident() not in backend.threads


async def test_an_async_backend_is_awaited_directly() -> None:
    backend = NativeAsync()
    assert isinstance(backend, AsyncStorageBackend)
    store = AsyncStore(backend)
    notes = store.namespace("notes")
    assert await notes.put("a.md", "Alpha") == ("a.md", "context://notes/a.md")
    await notes.append("a.md", " beta")
    assert (await notes.get("a.md")).content == "Alpha beta"
    assert backend.threads == {threading.get_ident()}
    assert [hit.path for hit in await notes.search("ALPHA")] == ["a.md"]
    assert list(await notes.entries()) == ["a.md"]
    assert await notes.exists("a.md") is True
    with pytest.raises(StoreCapabilityError):
        await notes.snapshot()
    assert (await store.cleanup("notes", max_files=0)).paths == ["a.md"]
    with pytest.raises(ConfigError, match="AsyncStore"):
        Store(backend)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        Store.of(store)


async def test_concurrent_sweeps_of_a_namespace_are_coalesced() -> None:
    backend = NativeAsync()
    store = AsyncStore(backend)
    for path in ("a", "b", "c"):
        await store.namespace("notes").put(path, path)
    backend.gate = asyncio.Event()
    first = asyncio.ensure_future(store.cleanup("notes", max_files=1))
    second = asyncio.ensure_future(store.namespace("notes").cleanup(max_files=1))
    await asyncio.sleep(0)
    backend.gate.set()
    one, two = await asyncio.gather(first, second)
    assert one is two
    assert backend.lists == 1
    assert len(one.evicted) == 2


async def test_async_and_sync_stores_share_state() -> None:
    now = [100.0]
    store = Store(InMemoryBackend(), clock=lambda: now[0])
    notes = store.namespace("notes")
    for path in ("a", "b"):
        now[0] += 1
        notes.put(path, path)
    now[0] += 1
    notes.get("a")  # remembered by the shared core, not by the backend
    async_store = AsyncStore.of(store)
    assert AsyncStore.of(async_store) is async_store
    assert (await async_store.cleanup("notes", max_files=1)).paths == ["b"]
    assert Store.of(async_store).namespace("notes").get("a").content == "a"


def test_not_a_backend() -> None:
    for bogus in (object(), "dir", {"read": 1}):
        with pytest.raises(ConfigError, match="not a storage backend"):
            Store(bogus)  # type: ignore[arg-type]
        with pytest.raises(ConfigError):
            AsyncStore(bogus)  # type: ignore[arg-type]


def test_async_parity_of_a_whole_scenario() -> None:
    """The same scenario through Store and AsyncStore yields the same observable results."""

    def scenario_sync() -> list[Any]:
        store = Store(InMemoryBackend(), clock=lambda: 42.0)
        notes = store.namespace("notes")
        out: list[Any] = [notes.put("a", "x"), notes.put_content("y" * 10), notes.append("a", "z")]
        out += [
            notes.get("a"),
            notes.list(),
            notes.search("x"),
            store.cleanup("notes", max_files=1),
        ]
        return out

    async def scenario_async() -> list[Any]:
        store = AsyncStore(InMemoryBackend(), clock=lambda: 42.0)
        notes = store.namespace("notes")
        out: list[Any] = [await notes.put("a", "x"), await notes.put_content("y" * 10)]
        out += [await notes.append("a", "z"), await notes.get("a"), await notes.list()]
        out += [await notes.search("x"), await store.cleanup("notes", max_files=1)]
        return out

    sync_result = scenario_sync()
    async_result = asyncio.run(scenario_async())
    # Native append stamps wall-clock times; compare everything but those two floats.
    assert repr(sync_result[:3]) == repr(async_result[:3])
    assert sync_result[3].content == async_result[3].content
    assert [item.path for item in sync_result[4]] == [item.path for item in async_result[4]]
    assert [hit.path for hit in sync_result[5]] == [hit.path for hit in async_result[5]]
    assert sync_result[6].paths == async_result[6].paths
