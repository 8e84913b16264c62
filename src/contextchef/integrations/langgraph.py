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
ranks by meaning instead, `score` set as LangGraph's stores set it (`_langgraph_index`). Built
from a `postgresql://` DSN the store holds a sync and an async PostgreSQL backend, each opened
on first use, so it serves sync code, threads and the event loop. Requires the `langgraph`
extra.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from contextchef._effects import Flow, drive_async, drive_sync
from contextchef.chef.options import open_store
from contextchef.errors import ConfigError, MissingDependencyError, StoreUnavailableError
from contextchef.integrations._keys import decode_segment, encode_segment
from contextchef.store.backend import AsyncStorageBackend, StorageBackend, StoredEntry
from contextchef.store.core import StoreCore
from contextchef.store.paths import validate_namespace
from contextchef.store.search import scan
from contextchef.store.store import StoreBase

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        TTLConfig,
        validate_op_namespace,
    )
    from langgraph.store.base.batch import AsyncBatchedBaseStore

    from contextchef.integrations import _langgraph_filter as filters
    from contextchef.integrations import _langgraph_items as items
    from contextchef.integrations import _langgraph_ttl as ttls
    from contextchef.integrations._langgraph_index import META_KEY, GraphIndex
    from contextchef.integrations._langgraph_items import path_of as _path
except ImportError as exc:  # pragma: no cover - exercised by simulating the missing extra
    raise MissingDependencyError(exc.name or "langgraph", "langgraph") from exc

__all__ = ["AsyncContextChefStore", "ContextChefStore"]

_DSN_SCHEMES = ("postgresql://", "postgres://")

_FLOW: Any = object()
"""`_single`'s answer for an operation that needs the batch flow."""

_DIRECTORIES = 4096
"""Namespace directories a store remembers (forgotten all at once past that)."""


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
        self._dsn: str | None = None
        self._pool_size = pool_size
        self._sync: StoreCore | None = None
        self._async: StoreCore | None = None
        self._async_loop: asyncio.AbstractEventLoop | None = None
        self._opening = threading.Lock()
        self._closed = False
        self._guard_loop = False  # set for a store opened with `async with`
        self._sweeper = ttls.Sweeper(self.sweep_ttl)
        self._directories: dict[tuple[str, ...], str] = {}
        self._owned = store is None or isinstance(store, str)  # closed by `close` if so
        if isinstance(store, str) and store.startswith(_DSN_SCHEMES):
            self._dsn = store
        else:
            self._sync = self._async = open_store(store, asynchronous=True)

    # -- construction and lifetime ------------------------------------------------------

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(
        cls, conn_string: str, *, ttl: TTLConfig | None = None, **options: Any
    ) -> Iterator[ContextChefStore]:
        """A store over `conn_string`, closed on exit: `":memory:"`, a SQLite file's path or a
        `postgresql://` DSN (`pool_config={"max_size": n}` sizes its pools; `pipeline` and
        `index` are accepted for `SqliteStore`/`PostgresStore` compatibility)."""
        store = cls(_source(conn_string), ttl=ttl, **_options(options))
        store._owned = True
        try:
            yield store
        finally:
            store.close()

    def setup(self) -> None:
        """Nothing to do: every backend creates and migrates its schema when it opens."""
        self._check_open()

    def close(self) -> None:
        """Stop the sweeper and close the backends this store opened (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._sweeper.stop()
        if not self._owned:
            return
        for core in {id(c): c for c in (self._sync, self._async) if c is not None}.values():
            _close_backend(core.backend, self._async_loop)

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
        if self._closed:
            return
        if self._owned and self._async is not None and self._async is not self._sync:
            backend_close = getattr(self._async.backend, "close", None)
            self._async = None
            if backend_close is not None:
                await backend_close()
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreUnavailableError(f"the LangGraph store over {self._describe()} is closed")

    def _describe(self) -> str:
        if self._dsn is not None:
            from contextchef.store.backends.postgres._common import redact

            return redact(self._dsn)
        core = self._sync or self._async
        return type(core.backend).__name__ if core is not None else "nothing"

    def _sync_core(self) -> StoreCore:
        self._check_open()
        if self._sync is None:
            with self._opening:
                if self._sync is None:
                    from contextchef.store.backends.postgres import PostgresBackend

                    assert self._dsn is not None
                    self._sync = StoreCore(PostgresBackend(self._dsn, **self._pool()))
        return self._sync

    def _async_core(self) -> StoreCore:
        self._check_open()
        loop = asyncio.get_running_loop()
        if self._dsn is not None and (self._async is None or self._async_loop is not loop):
            from contextchef.store.backends.postgres import AsyncPostgresBackend

            # A pool belongs to the loop it opened in: a new loop gets a new backend.
            self._async = StoreCore(AsyncPostgresBackend(self._dsn, **self._pool()))
            self._async_loop = loop
        assert self._async is not None
        return self._async

    def _pool(self) -> dict[str, Any]:
        return {} if self._pool_size is None else {"pool_size": self._pool_size}

    # -- batches ------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run `ops` (see the module docstring for the batch semantics)."""
        if self._guard_loop:
            _refuse_on_loop()
        core = self._sync_core()
        ops = list(ops)
        if len(ops) == 1 and not core.native_async:  # `get` and `put`: no flow to drive
            done = self._single(core, ops[0])
            if done is not _FLOW:
                return [done]
        return drive_sync(self._batch(core, ops, asynchronous=False))

    def _single(self, core: StoreCore, op: Op) -> Any:
        """A batch of one get or put, as plain calls on a synchronous backend (the steps of
        `_get` and `_put`), or `_FLOW` when it needs the flow (a TTL refresh, a delete, a
        write with pending ones before it, any other operation)."""
        if isinstance(op, GetOp):
            validate_op_namespace(op)
            now = core.clock()
            entry = core.get_now(self._ns, self._path(op.namespace, op.key))
            found = self._found(op, entry, now)
            if found is not None and ttls.wants_refresh(op.refresh_ttl, self.ttl_config):
                assert entry is not None
                if ttls.refreshed(entry.meta, now) is not None:
                    return _FLOW  # an item with a TTL: its expiry moves on, a write
            return found
        if isinstance(op, PutOp) and op.value is not None and self._index is None:
            validate_op_namespace(op)
            now = core.clock()
            path = self._path(op.namespace, op.key)
            content = items.value_text(op)
            meta = self._put_meta(op, core.get_now(self._ns, path), now)
            if core.put_now(self._ns, path, content, meta) is None:
                drive_sync(core.put(self._ns, path, content, meta))
            return None
        return _FLOW

    def _path(self, namespace: tuple[str, ...], key: str) -> str:
        """`items.path_of`, each namespace's directory remembered (a few thousand at most)."""
        directory = self._directories.get(namespace)
        if directory is None:
            if len(self._directories) >= _DIRECTORIES:
                self._directories.clear()
            directory = self._directories[namespace] = items.directory(namespace)
        return directory + items.KEY_MARK + encode_segment(key, what="key")

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
            elif isinstance(op, SearchOp):
                results.append((yield from self._search(core, op, now, refresh, asynchronous)))
            elif isinstance(op, ListNamespacesOp):
                results.append((yield from self._list_namespaces(core, op, now)))
            elif isinstance(op, PutOp):
                puts[op.namespace, op.key] = op
                results.append(None)
            else:
                raise ConfigError(f"unknown LangGraph store operation {type(op).__name__}")
        for put in puts.values():
            refresh.pop(_path(put.namespace, put.key), None)
        yield from self._refresh(core, refresh, now)
        for put in puts.values():
            yield from self._put(core, put, now, asynchronous)
        return results

    def _hidden(self, entry: StoredEntry, now: float) -> bool:
        omit = bool((self.ttl_config or {}).get("omit_expired", False))
        return omit and ttls.expired(entry.meta, now)

    def _refresh(self, core: StoreCore, read: dict[str, StoredEntry], now: float) -> Flow[None]:
        """Move on the expiry of the entries read with `refresh_ttl`: in one write where the
        backend has `write_many`."""
        fresh = {}
        for path, entry in read.items():
            meta = ttls.refreshed(entry.meta, now)
            if meta is not None:
                fresh[path] = StoredEntry(entry.content, meta)
        write_many = getattr(type(core.backend), "write_many", None)
        if len(fresh) > 1 and write_many is not None:
            yield core.ops.op(write_many, self._ns, fresh)
            return
        for path, entry in fresh.items():
            yield from core.put(self._ns, path, entry.content, entry.meta)

    def _get(
        self, core: StoreCore, op: GetOp, now: float, refresh: dict[str, StoredEntry]
    ) -> Flow[Item | None]:
        path = self._path(op.namespace, op.key)
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
        path = self._path(op.namespace, op.key)
        if op.value is None:
            if self._index is not None:
                yield from self._index.forget(
                    core, self._ns, path, (yield from core.get(self._ns, path))
                )
            yield from core.delete(self._ns, path)
            return
        content = items.value_text(op)
        existing = yield from core.get(self._ns, path)
        meta = self._put_meta(op, existing, now)
        if self._index is not None:
            index = self._index.embed_put(core, self._ns, path, op, existing, asynchronous)
            meta = {**(meta or {}), META_KEY: (yield from index)}
        yield from core.put(self._ns, path, content, meta)

    def _put_meta(
        self, op: PutOp, existing: StoredEntry | None, now: float
    ) -> dict[str, Any] | None:
        """The meta a put of `op` writes over `existing`: its TTL, the first `created_at`."""
        meta: dict[str, Any] = ttls.expiry_meta(op.ttl, self.ttl_config, now)
        if existing is not None:
            meta["created_at"] = existing.meta["created_at"]
        return meta or None

    def _search(
        self,
        core: StoreCore,
        op: SearchOp,
        now: float,
        refresh: dict[str, StoredEntry],
        asynchronous: bool,
    ) -> Flow[list[SearchItem]]:
        prefix = items.directory(tuple(op.namespace_prefix))
        whole = op.offset < 0 or op.limit < 0  # sliced as Python slices: every match first
        if op.query or whole:
            entries = yield from core.entries(self._ns, prefix)
            found: list[tuple[str, StoredEntry, float | None]] = []
            hits: Any = ()
            if op.query and self._index is not None:  # by meaning; items without vectors last
                ranked = yield from self._index.ranked(
                    core, self._ns, op.query, prefix, asynchronous
                )
                found = [(path, entries[path], score) for path, score in ranked if path in entries]
                scored = {path for path, _ in ranked}
                found += [(p, entry, None) for p, entry in entries.items() if p not in scored]
            elif not op.query:
                found = [(path, entry, None) for path, entry in entries.items()]
                found.sort(key=lambda f: -items.updated(f[1]))
            elif core.supports("search", self._ns):
                hits = yield from core.search(self._ns, op.query, prefix, None)
            else:
                hits = scan(entries.items(), op.query)
            for hit in hits:
                entry = entries.get(hit.path)
                if entry is not None:
                    found.append((hit.path, entry, hit.score))
            kept = self._matching(found, op, now, None if whole else op.offset + op.limit)
        else:
            kept = yield from self._recent_matching(core, op, prefix, now)
        page = kept[op.offset : op.offset + op.limit]
        if ttls.wants_refresh(op.refresh_ttl, self.ttl_config):
            refresh.update((path, entry) for path, entry, _, _ in page)
        return [items.item(path, entry, score, hit=True, value=v) for path, entry, score, v in page]

    def _recent_matching(
        self, core: StoreCore, op: SearchOp, prefix: str, now: float
    ) -> Flow[list[tuple[str, StoredEntry, float | None, Any]]]:
        """The first `offset + limit` matches in recency order, read page by page from the
        store (each page twice the last), so a search reads about what it returns."""
        wanted = op.offset + op.limit
        kept: list[tuple[str, StoredEntry, float | None, Any]] = []
        size, start = max(2 * wanted, 32), 0
        while wanted > 0:
            batch = yield from core.recent(self._ns, prefix, size, start)
            found = [(path, entry, None) for path, entry in batch.items()]
            kept += self._matching(found, op, now, wanted - len(kept))
            if len(kept) >= wanted or len(batch) < size:
                break
            start, size = start + size, size * 2
        return kept

    def _matching(
        self,
        found: Iterable[tuple[str, StoredEntry, float | None]],
        op: SearchOp,
        now: float,
        enough: int | None,
    ) -> list[tuple[str, StoredEntry, float | None, Any]]:
        """The items of `found` (in order) that `op` keeps, with their decoded values; decoding
        stops once `enough` are kept (None: all)."""
        kept: list[tuple[str, StoredEntry, float | None, Any]] = []
        for path, entry, score in found:
            if enough is not None and len(kept) >= enough:
                break
            if not items.is_item(path) or self._hidden(entry, now):
                continue
            value = items.decode(entry.content)
            if op.filter and not filters.matches_filter(value, op.filter):
                continue
            kept.append((path, entry, score, value))
        return kept

    def _list_namespaces(
        self, core: StoreCore, op: ListNamespacesOp, now: float
    ) -> Flow[list[tuple[str, ...]]]:
        namespaces: set[tuple[str, ...]] = set()
        conditions = list(op.match_conditions or ())
        if (self.ttl_config or {}).get("omit_expired", False):  # each item's expiry counts
            for entry in (yield from core.list(self._ns, "")):
                address = items.address(entry.path)
                if address is not None and not self._hidden(StoredEntry("", entry.meta), now):
                    namespaces.add(address[0])
        else:  # the store's directory index: no item is listed
            fixed = items.fixed_prefix(op)
            for directory in (yield from core.dirs(self._ns, items.directory(fixed))):
                namespaces.add(tuple(decode_segment(label) for label in directory.split("/")[:-1]))
            # A prefix condition without wildcards is what the listing was asked for: met.
            conditions = [c for c in conditions if c.match_type != "prefix" or c.path != fixed]
        matches = filters.matches_namespace
        kept = [ns for ns in namespaces if all(matches(c, ns) for c in conditions)]
        if op.max_depth is not None:
            kept = list({ns[: op.max_depth] for ns in kept})
        return sorted(kept)[op.offset : op.offset + op.limit]

    # -- TTL ----------------------------------------------------------------------------

    def sweep_ttl(self) -> int:
        """Delete the expired items; how many."""
        return drive_sync(self._sweep(self._sync_core()))

    async def asweep_ttl(self) -> int:
        """`sweep_ttl`, awaited."""
        return await drive_async(self._sweep(self._async_core()))

    def _sweep(self, core: StoreCore) -> Flow[int]:
        now = core.clock()
        listed = yield from core.list(self._ns, "")
        swept = 0
        for entry in listed:
            if items.address(entry.path) is not None and ttls.expired(entry.meta, now):
                if self._index is not None:  # the listed meta names the item's vectors
                    named = StoredEntry("", entry.meta)
                    yield from self._index.forget(core, self._ns, entry.path, named)
                swept += bool((yield from core.delete(self._ns, entry.path)))
        return swept

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
        _refuse_on_loop()
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
        store = cls(_source(conn_string), ttl=ttl, **_options(options))
        store._owned = True
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


def _refuse_on_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise asyncio.InvalidStateError(
        "Synchronous calls to AsyncContextChefStore are only allowed from a different thread. "
        "From the main thread, use the async interface. For example, use "
        "`await store.abatch(...)` or `await store.aget(...)`"
    )


def _source(conn_string: str) -> Any:
    if conn_string == ":memory:":
        return "memory"
    if conn_string.startswith(_DSN_SCHEMES):
        return conn_string
    from contextchef.store.backends.sqlite import SQLiteBackend

    return SQLiteBackend(conn_string)


def _options(options: dict[str, Any]) -> dict[str, Any]:
    unknown = set(options) - {"pool_config", "pipeline", "index", "namespace"}
    if unknown:
        raise TypeError(f"from_conn_string() got unexpected keyword arguments {sorted(unknown)}")
    chosen: dict[str, Any] = {"index": options.get("index")}
    if "namespace" in options:
        chosen["namespace"] = options["namespace"]
    pool = options.get("pool_config") or {}
    if "max_size" in pool:
        chosen["pool_size"] = int(pool["max_size"])
    return chosen


def _close_backend(backend: object, loop: asyncio.AbstractEventLoop | None) -> None:
    close = getattr(backend, "close", None)
    if close is None:
        return
    result = close()
    if asyncio.iscoroutine(result):  # an async pool: closed on its loop if it still runs
        if loop is not None and loop.is_running():
            with contextlib.suppress(RuntimeError):
                asyncio.run_coroutine_threadsafe(result, loop)
                return
        result.close()
