"""`AsyncPostgresBackend`: the PostgreSQL store for async code, natively over
`psycopg_pool.AsyncConnectionPool` (no thread hop). It runs the same plans of `_sql.py` as
`PostgresBackend` (see backend.py for what both guarantee); only the call style differs.
"""

from __future__ import annotations

import asyncio
import builtins
import contextvars
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from contextchef.errors import StoreError, StoreUnavailableError
from contextchef.store.backend import ListedEntry, SearchHit, StoredEntry, Transaction, Version
from contextchef.store.backends.postgres import _sql, _vectors
from contextchef.store.backends.postgres._base import RACES, Base, raced
from contextchef.store.backends.postgres._common import NOT_ALONE, execute_async, redact, translate
from contextchef.store.backends.postgres._pgvector import PgVector
from contextchef.store.backends.postgres._sql import Plan
from contextchef.store.backends.postgres.migrations import migrate_plan

__all__ = ["AsyncPostgresBackend"]

log = logging.getLogger("contextchef.store.backends.postgres.asynchronous")


_OPENING: contextvars.ContextVar[bool] = contextvars.ContextVar("_OPENING", default=False)
"""True in the task opening an `AsyncPostgresBackend` (its migration runs before it is ready)."""


class AsyncPostgresBackend(Base):
    """The async protocol, natively, over `psycopg_pool.AsyncConnectionPool`.

    Same arguments as `PostgresBackend`. The pool opens (and the schema migrates) on the first
    call, or explicitly with `await backend.open()`; `await backend.close()` ends it.
    """

    def _start(self) -> None:
        self._pool: Any = None
        # Created on first use, in the loop using the backend: one opening however many
        # coroutines arrive at once, and at most `pool_size` of them holding or awaiting a
        # connection, the others queueing here without the pool's `connect_timeout`.
        self._opening: asyncio.Lock | None = None
        self._slots: asyncio.Semaphore | None = None
        self._ready = False  # the pool is open and the schema migrated

    async def open(self) -> None:
        """Open the pool and migrate the schema (idempotent)."""
        if self._ready:
            return
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if not self._ready:
                await self._open()

    async def _open(self) -> None:
        from psycopg_pool import AsyncConnectionPool

        pool = AsyncConnectionPool(self._dsn, **self._pool_options())
        try:
            await pool.open(wait=True, timeout=self._connect_timeout)
        except Exception as exc:
            await pool.close()
            raise await asyncio.to_thread(self._unreachable) from exc
        self._pool = pool
        token = _OPENING.set(True)  # this task's queries run before the backend is ready
        try:
            await self._run(migrate_plan(self.schema), "migrating the schema")
            self._versioned = await self._run(*self._versioned_plan())
            self.pgvector = await self._find_pgvector()
        except BaseException:
            self._pool = None
            await pool.close()
            raise
        finally:
            _OPENING.reset(token)
        self._ready = True

    async def _find_pgvector(self) -> PgVector | None:
        """See `PostgresBackend._find_pgvector`."""
        steps = self._pgvector_steps()
        try:
            plan, doing = next(steps)
            while True:
                plan, doing = steps.send(await self._run(plan, doing))
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        except StoreUnavailableError:
            raise
        except StoreError as exc:
            self._without_pgvector(exc)
            return None

    async def close(self) -> None:
        """Close every pooled connection."""
        self._ready = False
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()

    async def __aenter__(self) -> AsyncPostgresBackend:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _run(
        self, plan: Plan, doing: str, ns: str | None = None, path: str | None = None
    ) -> Any:
        if not self._ready and not _OPENING.get():
            await self.open()
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._pool_size)
        try:
            with translate(doing, ns, path):
                async with self._slots, self._pool.connection() as conn:
                    try:
                        query = next(plan)
                    except StopIteration as done:
                        return done.value  # nothing to ask the server
                    if query.alone:
                        try:
                            plan.send(await execute_async(conn, query))
                        except StopIteration as done:
                            return done.value
                        raise RuntimeError(NOT_ALONE)
                    async with conn.transaction():  # committed only when the plan returns
                        try:
                            while True:
                                query = plan.send(await execute_async(conn, query))
                        except StopIteration as done:
                            return done.value
        except StoreUnavailableError:
            await self._recover()
            raise

    async def _recover(self) -> None:
        """See `PostgresBackend._recover`."""
        try:
            if self._pool is not None:
                await self._pool.check()
        except Exception as exc:  # never mask the error being raised
            log.debug("checking the pool after a lost connection failed: %s", redact(str(exc)))

    async def read(self, ns: str, path: str) -> StoredEntry | None:
        return await self._run(_sql.read(self.project, ns, path), f"reading {ns}/{path}", ns, path)  # type: ignore[no-any-return]

    async def write(self, ns: str, path: str, entry: StoredEntry) -> None:
        await self._run(_sql.write(self.project, ns, path, entry), f"writing {ns}/{path}", ns, path)

    async def write_many(self, ns: str, entries: Mapping[str, StoredEntry]) -> None:
        """See `PostgresBackend.write_many`."""
        plan = _sql.write_many(self.project, ns, entries)
        await self._run(plan, f"writing {len(entries)} in {ns}", ns)

    async def delete(self, ns: str, path: str) -> bool:
        return bool(await self._run(_sql.delete(self.project, ns, path), f"deleting {ns}/{path}"))

    async def list(self, ns: str, prefix: str = "") -> builtins.list[ListedEntry]:
        return await self._run(_sql.listing(self.project, ns, prefix), f"listing {ns}", ns)  # type: ignore[no-any-return]

    async def read_all(self, ns: str, prefix: str = "") -> dict[str, StoredEntry]:
        return await self._run(_sql.read_all(self.project, ns, prefix), f"reading {ns}", ns)  # type: ignore[no-any-return]

    async def read_recent(
        self, ns: str, prefix: str, limit: int, offset: int
    ) -> dict[str, StoredEntry]:
        plan = _sql.read_recent(self.project, ns, prefix, limit, offset)
        return await self._run(plan, f"reading a page of {ns}", ns)  # type: ignore[no-any-return]

    async def list_dirs(self, ns: str, prefix: str) -> builtins.list[str]:
        plan = _sql.list_dirs(self.project, ns, prefix)
        return await self._run(plan, f"listing the directories of {ns}", ns)  # type: ignore[no-any-return]

    async def read_last(self, ns: str, prefix: str, count: int) -> dict[str, StoredEntry]:
        plan = _sql.read_last(self.project, ns, prefix, count)
        return await self._run(plan, f"reading the last {count} of {ns}", ns)  # type: ignore[no-any-return]

    async def exists(self, ns: str, path: str) -> bool:
        return bool(await self._run(_sql.exists(self.project, ns, path), f"checking {ns}/{path}"))

    async def append(self, ns: str, path: str, content: str) -> None:
        await self._run(_sql.append(self.project, ns, path, content), f"appending to {ns}/{path}")

    async def create(self, ns: str, path: str, entry: StoredEntry) -> bool:
        plan = _sql.create(self.project, ns, path, entry)
        return bool(await self._run(plan, f"creating {ns}/{path}", ns, path))

    async def read_versioned(self, ns: str, path: str) -> tuple[StoredEntry, Version] | None:
        plan = _sql.read_versioned(self.project, ns, path)
        return await self._run(plan, f"reading {ns}/{path}", ns, path)  # type: ignore[no-any-return]

    async def replace_if(self, ns: str, path: str, entry: StoredEntry, expected: Version) -> bool:
        plan = _sql.replace_if(self.project, ns, path, entry, expected)
        return bool(await self._run(plan, f"writing {ns}/{path}", ns, path))

    async def transact(
        self, ns: str, paths: Sequence[str], change: Transaction
    ) -> Mapping[str, StoredEntry | None]:
        """See `PostgresBackend.transact`."""
        for _ in range(RACES):
            try:
                plan = _sql.transact(self.project, ns, paths, change)
                return await self._run(plan, f"editing {ns}/{paths[0]}", ns, paths[0])  # type: ignore[no-any-return]
            except _sql.Raced:
                continue
        raise raced(ns, paths)

    async def search(
        self, ns: str, query: str, *, prefix: str = "", limit: int | None = None
    ) -> builtins.list[SearchHit]:
        plan = _sql.search(self.project, ns, query, prefix, limit)
        return await self._run(plan, f"searching {ns}", ns)  # type: ignore[no-any-return]

    async def snapshot(self, ns: str) -> dict[str, StoredEntry]:
        return await self.read_all(ns)

    async def restore(self, ns: str, snapshot: Mapping[str, StoredEntry]) -> None:
        await self._run(_sql.restore(self.project, ns, snapshot), f"restoring {ns}", ns)

    async def get_physical_path(self, ns: str, path: str) -> str | None:
        """None: an entry is a database row, not a file."""
        del ns, path
        return None

    async def put_vectors(self, ns: str, vectors: Mapping[str, Sequence[float]]) -> None:
        await self._run(
            _vectors.put_vectors(self.project, ns, vectors, self.pgvector), f"indexing {ns}", ns
        )

    async def delete_vectors(self, ns: str, paths: Sequence[str] | None = None) -> None:
        plan = _vectors.delete_vectors(self.project, ns, paths)
        await self._run(plan, f"unindexing {ns}", ns)

    async def nearest(
        self,
        ns: str,
        vector: Sequence[float],
        *,
        metric: str = "cosine",
        prefix: str = "",
        limit: int | None = None,
    ) -> builtins.list[tuple[str, float]]:
        plan = _vectors.nearest(self.project, ns, vector, metric, prefix, limit, self.pgvector)
        return await self._run(plan, f"searching the vectors of {ns}", ns)  # type: ignore[no-any-return]

    async def build_vector_index(self, dims: int, metric: str = "cosine") -> str:
        """See `PostgresBackend.build_vector_index`."""
        if not self._ready:
            await self.open()
        plan = self._hnsw_plan(dims, metric)
        return await self._run(plan, f"building the HNSW index of {dims}-long vectors")  # type: ignore[no-any-return]

    async def touch(self, ns: str, path: str, accessed_at: float) -> None:
        plan = _sql.touch(self.project, ns, path, float(accessed_at))
        await self._run(plan, f"touching {ns}/{path}", ns, path)

    async def keep_versions(self, ns: str) -> None:
        """See `PostgresBackend.keep_versions`."""
        if not self._ready:
            await self.open()
        if ns not in self._versioned:
            await self._run(_sql.keep_versions(self.project, ns), f"versioning {ns}", ns)
            self._versioned |= {ns}

    async def history(self, ns: str, path: str) -> builtins.list[StoredEntry]:
        """See `PostgresBackend.history`."""
        if not self._ready:
            await self.open()
        if ns not in self._versioned:
            self._versioned = await self._run(*self._versioned_plan())
        plan = self._history_plan(ns, path)
        return await self._run(plan, f"reading the history of {ns}/{path}", ns, path)  # type: ignore[no-any-return]
