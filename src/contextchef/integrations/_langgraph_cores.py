"""The store cores a LangGraph `ContextChefStore` runs on, from opening to closing.

A store built over a backend, a `Store`/`AsyncStore`, `"sqlite"` or `"memory"` has one core for
sync and async calls. Built from a `postgresql://` DSN it holds a sync and an async PostgreSQL
backend, each opened on first use (the sync one under a lock, for threads); an async pool
belongs to the event loop it opened in, so a call from another loop opens a new one. A store
closes the backends it opened (`owned`), never one it was given; an async pool still open on a
running loop is closed there. Here too: what `from_conn_string` accepts, and the refusal of a
sync call on the event loop of an `AsyncContextChefStore`.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any

from contextchef.chef.options import open_store
from contextchef.errors import StoreUnavailableError
from contextchef.store.backend import AsyncStorageBackend, StorageBackend
from contextchef.store.core import StoreCore
from contextchef.store.store import StoreBase

__all__ = ["DSN_SCHEMES", "Cores", "conn_options", "refuse_on_loop", "source_of"]

DSN_SCHEMES = ("postgresql://", "postgres://")


class Cores:
    """The sync and async store cores of one LangGraph store (see the module docstring)."""

    def __init__(
        self,
        store: StoreBase[Any] | StorageBackend | AsyncStorageBackend | str | None,
        pool_size: int | None,
    ) -> None:
        self.dsn: str | None = None
        self.pool_size = pool_size
        self.sync: StoreCore | None = None
        self.async_: StoreCore | None = None
        self.async_loop: asyncio.AbstractEventLoop | None = None
        self._opening = threading.Lock()
        self.closed = False
        self.owned = store is None or isinstance(store, str)  # closed by `close` if so
        if isinstance(store, str) and store.startswith(DSN_SCHEMES):
            self.dsn = store
        else:
            self.sync = self.async_ = open_store(store, asynchronous=True)

    def check_open(self) -> None:
        if self.closed:
            raise StoreUnavailableError(f"the LangGraph store over {self.describe()} is closed")

    def describe(self) -> str:
        if self.dsn is not None:
            from contextchef.store.backends.postgres._common import redact

            return redact(self.dsn)
        core = self.sync or self.async_
        return type(core.backend).__name__ if core is not None else "nothing"

    def sync_core(self) -> StoreCore:
        self.check_open()
        if self.sync is None:
            with self._opening:
                if self.sync is None:
                    from contextchef.store.backends.postgres import PostgresBackend

                    assert self.dsn is not None
                    self.sync = StoreCore(PostgresBackend(self.dsn, **self._pool()))
        return self.sync

    def async_core(self) -> StoreCore:
        self.check_open()
        loop = asyncio.get_running_loop()
        if self.dsn is not None and (self.async_ is None or self.async_loop is not loop):
            from contextchef.store.backends.postgres import AsyncPostgresBackend

            # A pool belongs to the loop it opened in: a new loop gets a new backend.
            self.async_ = StoreCore(AsyncPostgresBackend(self.dsn, **self._pool()))
            self.async_loop = loop
        assert self.async_ is not None
        return self.async_

    def _pool(self) -> dict[str, Any]:
        return {} if self.pool_size is None else {"pool_size": self.pool_size}

    def close_backends(self) -> None:
        """Close the backends, if this store opened them."""
        if not self.owned:
            return
        for core in {id(c): c for c in (self.sync, self.async_) if c is not None}.values():
            _close_backend(core.backend, self.async_loop)

    async def aclose_async_backend(self) -> None:
        """Close the async backend, awaited, if this store opened it apart from the sync one."""
        if self.owned and self.async_ is not None and self.async_ is not self.sync:
            backend_close = getattr(self.async_.backend, "close", None)
            self.async_ = None
            if backend_close is not None:
                await backend_close()


def refuse_on_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise asyncio.InvalidStateError(
        "Synchronous calls to AsyncContextChefStore are only allowed from a different thread. "
        "From the main thread, use the async interface. For example, use "
        "`await store.abatch(...)` or `await store.aget(...)`"
    )


def source_of(conn_string: str) -> Any:
    """What a store built by `from_conn_string(conn_string)` opens."""
    if conn_string == ":memory:":
        return "memory"
    if conn_string.startswith(DSN_SCHEMES):
        return conn_string
    from contextchef.store.backends.sqlite import SQLiteBackend

    return SQLiteBackend(conn_string)


def conn_options(options: dict[str, Any]) -> dict[str, Any]:
    """The constructor's keywords for `from_conn_string`'s `options`."""
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
