"""`AsyncInMemoryBackend`: the in-memory backend as coroutines, for testing async code paths."""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence

from contextchef.store.backend import ListedEntry, SearchHit, StoredEntry, Transaction, Version
from contextchef.store.backends.inmemory.backend import InMemoryBackend

__all__ = ["AsyncInMemoryBackend"]


class AsyncInMemoryBackend:
    """An async-native `AsyncStorageBackend` over an `InMemoryBackend`: the same semantics, as
    coroutines, for testing async code paths (an `AsyncStore` awaits it with no thread hop)."""

    def __init__(self, inner: InMemoryBackend | None = None) -> None:
        self.inner = inner if inner is not None else InMemoryBackend()

    async def read(self, ns: str, path: str) -> StoredEntry | None:
        return self.inner.read(ns, path)

    async def write(self, ns: str, path: str, entry: StoredEntry) -> None:
        self.inner.write(ns, path, entry)

    async def delete(self, ns: str, path: str) -> bool:
        return self.inner.delete(ns, path)

    async def list(self, ns: str, prefix: str = "") -> builtins.list[ListedEntry]:
        return self.inner.list(ns, prefix)

    async def read_all(self, ns: str, prefix: str = "") -> dict[str, StoredEntry]:
        return self.inner.read_all(ns, prefix)

    async def read_last(self, ns: str, prefix: str, count: int) -> dict[str, StoredEntry]:
        return self.inner.read_last(ns, prefix, count)

    async def read_recent(
        self, ns: str, prefix: str, limit: int, offset: int
    ) -> dict[str, StoredEntry]:
        return self.inner.read_recent(ns, prefix, limit, offset)

    async def list_dirs(self, ns: str, prefix: str) -> builtins.list[str]:
        return self.inner.list_dirs(ns, prefix)

    async def exists(self, ns: str, path: str) -> bool:
        return self.inner.exists(ns, path)

    async def append(self, ns: str, path: str, content: str) -> None:
        self.inner.append(ns, path, content)

    async def search(
        self, ns: str, query: str, *, prefix: str = "", limit: int | None = None
    ) -> builtins.list[SearchHit]:
        return self.inner.search(ns, query, prefix=prefix, limit=limit)

    async def create(self, ns: str, path: str, entry: StoredEntry) -> bool:
        return self.inner.create(ns, path, entry)

    async def read_versioned(self, ns: str, path: str) -> tuple[StoredEntry, Version] | None:
        return self.inner.read_versioned(ns, path)

    async def replace_if(self, ns: str, path: str, entry: StoredEntry, expected: Version) -> bool:
        return self.inner.replace_if(ns, path, entry, expected)

    async def transact(
        self, ns: str, paths: Sequence[str], change: Transaction
    ) -> Mapping[str, StoredEntry | None]:
        return self.inner.transact(ns, paths, change)

    async def snapshot(self, ns: str) -> dict[str, StoredEntry]:
        return self.inner.snapshot(ns)

    async def restore(self, ns: str, snapshot: Mapping[str, StoredEntry]) -> None:
        self.inner.restore(ns, snapshot)

    def supports(self, capability: str, ns: str) -> bool:
        """The inner backend's answer (a plain call: capabilities are configuration)."""
        return self.inner.supports(capability, ns)

    async def keep_versions(self, ns: str) -> None:
        self.inner.keep_versions(ns)

    async def put_vectors(self, ns: str, vectors: Mapping[str, Sequence[float]]) -> None:
        self.inner.put_vectors(ns, vectors)

    async def delete_vectors(self, ns: str, paths: Sequence[str] | None = None) -> None:
        self.inner.delete_vectors(ns, paths)

    async def nearest(
        self,
        ns: str,
        vector: Sequence[float],
        *,
        metric: str = "cosine",
        prefix: str = "",
        limit: int | None = None,
    ) -> builtins.list[tuple[str, float]]:
        return self.inner.nearest(ns, vector, metric=metric, prefix=prefix, limit=limit)

    async def history(self, ns: str, path: str) -> builtins.list[StoredEntry]:
        return self.inner.history(ns, path)
