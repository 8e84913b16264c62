"""LangGraph: `ContextChefStore`, a drop-in for `InMemoryStore`, `SqliteStore` and `PostgresStore`.

    with ContextChefStore.from_conn_string("graph.db", ttl={"default_ttl": 60}) as store:
        graph = builder.compile(store=store)

Items live in one store namespace (`langgraph` by default): an item of namespace
`("users", "42")` under key `prefs` is the entry `users/42/=prefs`, every label and key
percent-encoded (see `_keys`; `=` is always encoded inside one, so an entry never collides with a
namespace directory). The entry holds the value as JSON; `created_at` and `updated_at` are the
entry's times (an update keeps `created_at`), `ttl`/`expires_at` its TTL (`_langgraph_ttl`).
The store namespace belongs to this store: `list_namespaces` reads the store's directory index
(`NamespaceView.directories`, no item listed) unless expired items must be left out.

`batch` and `abatch` run one flow (the sync and async drivers of `contextchef._effects`), with
`InMemoryStore`'s batch semantics: the reads of a batch (gets, searches, namespace listings) see
the store as it was before the batch, then its puts apply, the last put of a key winning.
Filters are `SqliteStore`'s (`_langgraph_filter`: dotted paths, `$eq` `$ne` `$gt` `$gte` `$lt`
`$lte`, a hostile key a `ValueError`). Without a query, `search` pages most recently updated
first, as `SqliteStore` and `PostgresStore` do (`InMemoryStore` pages in insertion order); a text
`query` goes to the backend's own search (SQLite's FTS5, PostgreSQL's full-text search, a
substring scan elsewhere), hits ordered by score; with `index=` (LangGraph's `IndexConfig`) it
ranks by meaning instead, `score` set as LangGraph's stores set it (`_langgraph_index`; the
search and namespace listing flows are `_langgraph_search`). Built from a `postgresql://` DSN
the store holds a sync and an async PostgreSQL backend, each opened on first use, so it serves
sync code, threads and the event loop (`_langgraph_cores`). Requires the `langgraph` extra.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import Any, Literal, cast

from contextchef._effects import Flow, drive_async, drive_sync
from contextchef.errors import ConfigError, MissingDependencyError
from contextchef.integrations._langgraph_cores import (
    Cores,
    conn_options,
    refuse_on_loop,
    source_of,
)
from contextchef.store.backend import AsyncStorageBackend, StorageBackend, StoredEntry
from contextchef.store.core import StoreCore
from contextchef.store.paths import validate_namespace
from contextchef.store.store import StoreBase

try:
    from langgraph.store.base import (
        NOT_PROVIDED,
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        NotProvided,
        Op,
        PutOp,
        Result,
        SearchOp,
        TTLConfig,
        validate_op_namespace,
    )
    from langgraph.store.base.batch import AsyncBatchedBaseStore

    from contextchef.integrations import _langgraph_filter as filters
    from contextchef.integrations import _langgraph_hot as hot
    from contextchef.integrations import _langgraph_items as items
    from contextchef.integrations import _langgraph_ttl as ttls
    from contextchef.integrations._langgraph_index import META_KEY, GraphIndex
    from contextchef.integrations._langgraph_items import path_of as _path
    from contextchef.integrations._langgraph_search import list_namespaces_flow, search_flow
except ImportError as exc:  # pragma: no cover - exercised by simulating the missing extra
    raise MissingDependencyError(exc.name or "langgraph", "langgraph") from exc

__all__ = ["AsyncContextChefStore", "ContextChefStore"]


class ContextChefStore(BaseStore):
    """LangGraph's `BaseStore` on a contextchef store (see the module docstring).

    Args:
        store: a backend, a `Store`/`AsyncStore`, `"sqlite"` (the machine's database), `"memory"`
            (the default) or a `postgresql://` DSN (a sync and an async backend, each opened on
            first use). An async-native backend serves `abatch` (and the `a*` methods) only.
        namespace: the store namespace holding the items.
        ttl: LangGraph's `TTLConfig` (`default_ttl` minutes, `refresh_on_read`, `omit_expired`,
            `sweep_interval_minutes`).
        index: LangGraph's `IndexConfig` (`embed`, `dims`, `fields`; `distance_type` as
            `PostgresStore` takes it): `search(query=...)` ranks by it (`_langgraph_index`).
        pool_size: for a DSN, the most connections each of its backends holds.
    """

    supports_ttl: bool = True

    def __init__(
        self,
        store: StoreBase[Any] | StorageBackend | AsyncStorageBackend | str | None = None,
        *,
        namespace: str = "langgraph",
        ttl: TTLConfig | None = None,
        index: Any = None,
        pool_size: int | None = None,
    ) -> None:
        self._ns = validate_namespace(namespace)
        self.ttl_config: TTLConfig | None = ttl
        self._index = GraphIndex.of(index)  # see `_langgraph_index`
        self.index_config = None if self._index is None else self._index.config
        self.embeddings = None if self._index is None else self._index.embeddings
        self._guard_loop = False  # set for a store opened with `async with`
        self._sweeper = ttls.Sweeper(self.sweep_ttl)
        self._paths = items.Paths()  # entry paths, remembered
        self._cores = Cores(store, pool_size)  # see `_langgraph_cores`
        if self._index is not None and self._cores.sync is not None:
            self._index.shares_vectors(self._cores.sync, self._ns)  # a mismatch fails here

    # -- construction and lifetime ------------------------------------------------------

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(
        cls, conn_string: str, *, ttl: TTLConfig | None = None, **options: Any
    ) -> Iterator[ContextChefStore]:
        """A store over `conn_string`, closed on exit: `":memory:"`, a SQLite file's path or a
        `postgresql://` DSN (`pool_config={"max_size": n}` sizes its pools; `pipeline` and
        `index` are accepted for `SqliteStore`/`PostgresStore` compatibility)."""
        store = cls(source_of(conn_string), ttl=ttl, **conn_options(options))
        store._cores.owned = True
        try:
            yield store
        finally:
            store.close()

    def setup(self) -> None:
        """Nothing to do: every backend creates and migrates its schema when it opens."""
        self._check_open()

    def close(self) -> None:
        """Stop the sweeper and close the backends this store opened (idempotent)."""
        if self._cores.closed:
            return
        self._cores.closed = True
        self._sweeper.stop()
        self._cores.close_backends()

    def __enter__(self) -> ContextChefStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> ContextChefStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """`close`, awaiting an async backend's pool."""
        if self._cores.closed:
            return
        await self._cores.aclose_async_backend()
        self.close()

    def _check_open(self) -> None:
        self._cores.check_open()

    def _sync_core(self) -> StoreCore:
        return self._cores.sync_core()

    def _async_core(self) -> StoreCore:
        return self._cores.async_core()

    # -- batches ------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run `ops` (see the module docstring for the batch semantics)."""
        if self._guard_loop:
            refuse_on_loop()
        core = self._sync_core()
        ops = list(ops)
        if len(ops) == 1 and not core.native_async:  # `get` and `put`: no flow to drive
            done = hot.single(core, self._ns, self._paths, ops[0], self._index, self.ttl_config)
            if done is not hot.FLOW:
                return [done]
        return drive_sync(self._batch(core, ops, asynchronous=False))

    # `BaseStore.get` and `put` (a batch of one operation), without building the operation
    # where the namespace was accepted before and a synchronous backend answers.

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        cores, key = self._cores, key if type(key) is str else str(key)
        core, path = cores.sync, self._paths.known(namespace, key)
        # Plain calls unless closed, async, or an `AsyncContextChefStore` (through its loop).
        if (
            path
            and core is not None
            and not (cores.closed or self._guard_loop or core.native_async)
        ):
            found = hot.get_now(core, self._ns, path, namespace, key, refresh_ttl, self.ttl_config)
            if found is not hot.FLOW:
                return cast("Item | None", found)
        return super().get(namespace, key, refresh_ttl=refresh_ttl)

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        core = self._hot_core()
        key = key if type(key) is str else str(key)
        path = self._paths.known(namespace, key)
        if (
            core is not None
            and path is not None
            and namespace  # `BaseStore.put`'s own rules: not empty, not under "langgraph"
            and namespace[0] != "langgraph"
            and value is not None
            and self._index is None
            and (ttl is NOT_PROVIDED or ttl is None)
        ):
            hot.put_now(core, self._ns, path, namespace, key, value, ttl, self.ttl_config)
            return
        super().put(namespace, key, value, index, ttl=ttl)

    def _hot_core(self) -> StoreCore | None:
        """The core a single get or put runs on as plain calls, or None (closed, an async
        backend, or an `AsyncContextChefStore`, whose sync calls go through its loop)."""
        cores = self._cores
        core = cores.sync
        if core is None or cores.closed or self._guard_loop or core.native_async:
            return None
        return core

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch`, awaited."""
        core = self._async_core()
        return await drive_async(self._batch(core, list(ops), asynchronous=True))

    def _batch(self, core: StoreCore, ops: list[Op], asynchronous: bool) -> Flow[list[Result]]:
        for op in ops:
            validate_op_namespace(op)
            if isinstance(op, SearchOp):
                filters.check_filter(op.filter)
        now = core.clock()
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        refresh: dict[str, StoredEntry] = {}  # entries read with `refresh_ttl`, by path
        for op in ops:
            if isinstance(op, GetOp):
                results.append((yield from self._get(core, op, now, refresh)))
            elif isinstance(op, SearchOp):  # see `_langgraph_search`
                found = search_flow(
                    core, self._ns, op, now, refresh, self._index, self.ttl_config, asynchronous
                )
                results.append((yield from found))
            elif isinstance(op, ListNamespacesOp):
                listed = list_namespaces_flow(core, self._ns, op, now, self.ttl_config)
                results.append((yield from listed))
            elif isinstance(op, PutOp):
                puts[op.namespace, op.key] = op
                results.append(None)
            else:
                raise ConfigError(f"unknown LangGraph store operation {type(op).__name__}")
        for put in puts.values():
            refresh.pop(_path(put.namespace, put.key), None)
        yield from ttls.refresh_flow(core, self._ns, refresh, now)
        for put in puts.values():
            yield from self._put(core, put, now, asynchronous)
        return results

    def _hidden(self, entry: StoredEntry, now: float) -> bool:
        return ttls.hidden(entry.meta, now, self.ttl_config)

    def _get(
        self, core: StoreCore, op: GetOp, now: float, refresh: dict[str, StoredEntry]
    ) -> Flow[Item | None]:
        path = self._paths.path(op.namespace, op.key)
        entry = yield from core.get(self._ns, path)
        found = self._found(op, entry, now)
        if found is not None and ttls.wants_refresh(op.refresh_ttl, self.ttl_config):
            assert entry is not None
            refresh[path] = entry
        return found

    def _found(self, op: GetOp, entry: StoredEntry | None, now: float) -> Item | None:
        """What a get of `op` returns when the store holds `entry`."""
        if entry is None or self._hidden(entry, now):
            return None
        return items.item_of(tuple(op.namespace), op.key, entry)

    def _put(self, core: StoreCore, op: PutOp, now: float, asynchronous: bool) -> Flow[None]:
        path = self._paths.path(op.namespace, op.key)
        if op.value is None:
            if self._index is not None:
                yield from self._index.forget(
                    core, self._ns, path, (yield from core.get(self._ns, path))
                )
            yield from core.delete(self._ns, path)
            return
        content = items.value_text(op.namespace, op.key, op.value)
        existing = yield from core.get(self._ns, path)
        meta = hot.put_meta(op.ttl, self.ttl_config, existing, now)
        shared = False
        if self._index is not None:
            shared = self._index.shares_vectors(core, self._ns)  # then the store embeds nothing
            index = self._index.embed_put(core, self._ns, path, op, existing, asynchronous)
            meta = {**(meta or {}), META_KEY: (yield from index)}
        yield from core.put(self._ns, path, content, meta, vectors=not shared)

    # -- TTL ----------------------------------------------------------------------------

    def sweep_ttl(self) -> int:
        """Delete the expired items; how many."""
        return drive_sync(ttls.sweep_flow(self._sync_core(), self._ns, self._index))

    async def asweep_ttl(self) -> int:
        """`sweep_ttl`, awaited."""
        return await drive_async(ttls.sweep_flow(self._async_core(), self._ns, self._index))

    def start_ttl_sweeper(self, sweep_interval_minutes: int | None = None) -> Any:
        """Sweep every `sweep_interval_minutes` (default: the TTL config's, else 5) on a thread;
        a future that stops it when cancelled (done at once without a TTL config)."""
        return self._sweeper.start(self.ttl_config, sweep_interval_minutes)

    def stop_ttl_sweeper(self, timeout: float | None = None) -> Any:
        """Stop the sweeper; False when it was still running after `timeout` seconds."""
        return self._sweeper.stop(timeout)


class AsyncContextChefStore(AsyncBatchedBaseStore, ContextChefStore):
    """The drop-in for `AsyncSqliteStore` and `AsyncPostgresStore`, built inside a running event
    loop: like theirs, its `a*` calls made in one tick of the loop run as one `abatch` (equal
    reads answered once), `setup`, `sweep_ttl` and the sweeper methods are coroutines, and a
    sync call raises `asyncio.InvalidStateError` on the loop's own thread (it would block the
    loop) while another thread's runs on the loop."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        ContextChefStore.__init__(self, *args, **kwargs)
        self._guard_loop = True
        self._loop = asyncio.get_running_loop()
        self._aqueue = asyncio.Queue()
        self._task = None
        self._ensure_task()
        self._sweeper = ttls.Sweeper(self._sweep_on_loop)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        refuse_on_loop()
        return asyncio.run_coroutine_threadsafe(self.abatch(ops), self._loop).result()

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
        await ContextChefStore.aclose(self)

    @classmethod
    @contextlib.asynccontextmanager
    async def from_conn_string(  # type: ignore[override]
        cls, conn_string: str, *, ttl: TTLConfig | None = None, **options: Any
    ) -> AsyncIterator[AsyncContextChefStore]:
        """`ContextChefStore.from_conn_string`, entered with `async with`."""
        store = cls(source_of(conn_string), ttl=ttl, **conn_options(options))
        store._cores.owned = True
        try:
            yield store
        finally:
            await store.aclose()

    async def setup(self) -> None:  # type: ignore[override]
        self._check_open()

    async def sweep_ttl(self) -> int:  # type: ignore[override]
        return await self.asweep_ttl()

    async def start_ttl_sweeper(self, sweep_interval_minutes: int | None = None) -> Any:
        return self._sweeper.start(self.ttl_config, sweep_interval_minutes)

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        return await asyncio.to_thread(self._sweeper.stop, timeout)

    def _sweep_on_loop(self) -> int:
        """`asweep_ttl` run on the store's loop (the sweeper thread's sweep)."""
        if self._loop.is_closed():
            return 0
        sweep = self.asweep_ttl()
        try:
            return asyncio.run_coroutine_threadsafe(sweep, self._loop).result()
        except RuntimeError:  # the loop closed meanwhile
            sweep.close()
            return 0
