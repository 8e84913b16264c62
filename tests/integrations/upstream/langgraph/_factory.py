"""The one thing the vendored LangGraph store tests change: the store classes they build.

`InMemoryStore`, `SqliteStore` and `PostgresStore` are `ContextChefStore`;
`AsyncSqliteStore` and `AsyncPostgresStore` are `AsyncContextChefStore`. Their
`from_conn_string` takes upstream's arguments: `":memory:"` is an in-memory store of its own, a
file path a contextchef SQLite database there, a `postgresql://` DSN the PostgreSQL backend
(`pool_config={"max_size": n}` sizes its pools). Names of upstream's private SQL helpers
resolve to `private_helper`, which fails: the tests that call them are listed as not
applicable (see ../NOT_APPLICABLE.md).
"""

from __future__ import annotations

from typing import Any
from unittest import mock

from contextchef._effects import Flow, drive_async, drive_sync
from contextchef.integrations.langgraph import AsyncContextChefStore, ContextChefStore, _path

InMemoryStore = ContextChefStore
SqliteStore = ContextChefStore
PostgresStore = ContextChefStore
AsyncSqliteStore = AsyncContextChefStore
AsyncPostgresStore = AsyncContextChefStore


def private_helper(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("an upstream private helper: this test is not applicable")


SqliteIndexConfig = dict
BaseSqliteStore = private_helper
NS_MATCH_FUNCTION = "ns_match"
_escape_glob_literal = private_helper
_namespace_match_pattern = private_helper
_escape_like_literal = private_helper


class MockerFixture:
    """pytest-mock's `stub` and `spy`, undone after the test."""

    def __init__(self) -> None:
        self._patches: list[Any] = []

    def stub(self, name: str | None = None) -> mock.MagicMock:
        return mock.MagicMock(spec=lambda *args, **kwargs: None, name=name)

    def spy(self, obj: Any, name: str) -> mock.MagicMock:
        method = getattr(obj, name)
        if isinstance(obj, type):
            spy = mock.MagicMock(side_effect=lambda *a, **k: method(*a, **k))

            def wrapper(*args: Any, **kwargs: Any) -> Any:
                return spy(*args, **kwargs)

            patch = mock.patch.object(obj, name, wrapper)
        else:
            spy = mock.MagicMock(side_effect=method)
            patch = mock.patch.object(obj, name, spy)
        patch.start()
        self._patches.append(patch)
        return spy

    def stopall(self) -> None:
        for patch in reversed(self._patches):
            patch.stop()


from tests.contract import pg  # noqa: E402
from tests.integrations.upstream.langgraph.embed_test_utils import (  # noqa: E402
    CharacterEmbeddings as CharacterEmbeddings,
)

DEFAULT_URI = pg.DSN
VECTOR_TYPES = ["vector", "halfvec"]
"""Upstream's `tests/conftest.py` values: the server (here, the one our PostgreSQL tests use)."""


def schema_dsn(schema: str) -> str:
    """`DEFAULT_URI` naming a schema of its own: each test's empty store, as upstream's
    fixtures create a database per test."""
    return f"{pg.DSN}{'&' if '?' in pg.DSN else '?'}contextchef_schema={schema}"


def _entry(store: Any, ns: tuple[str, ...], key: str) -> tuple[Any, str, Any]:
    core = store._sync_core()
    path = _path(ns, key)
    return core, path, drive_sync(core.get(store._ns, path))


def expire_now(store: Any, ns: tuple[str, ...], key: str) -> None:
    """Upstream's `_expire_now` (an UPDATE of its private table): the item's `expires_at` a
    minute ago, the item unswept."""
    core, path, entry = _entry(store, ns, key)
    meta = {**entry.meta, "expires_at": core.clock() - 60}
    drive_sync(core.put(store._ns, path, entry.content, meta))


def row_exists(store: Any, ns: tuple[str, ...], key: str) -> bool:
    return _entry(store, ns, key)[2] is not None


def stored_expires_at(store: Any, ns: tuple[str, ...], key: str) -> Any:
    return _entry(store, ns, key)[2].meta.get("expires_at")


def updated_seconds_ago(store: Any, ns: tuple[str, ...], key: str, seconds: float) -> None:
    """Upstream's UPDATE of `updated_at` in its private table, on our entry."""
    core, path, entry = _entry(store, ns, key)
    meta = {**entry.meta, "updated_at": core.clock() - seconds}
    drive_sync(core.put(store._ns, path, entry.content, meta))


def _backdate(core: Any, namespace: str, seconds: float) -> Flow[None]:
    """Every item's `expires_at` `seconds` earlier: to the store, `seconds` have passed."""
    for entry in (yield from core.list(namespace, "")):
        if entry.meta.get("expires_at") is None:
            continue
        stored = yield from core.get(namespace, entry.path)
        meta = {**stored.meta, "expires_at": stored.meta["expires_at"] - seconds}
        yield from core.put(namespace, entry.path, stored.content, meta)


def elapse(store: Any, seconds: float) -> None:
    """Upstream's `time.sleep(seconds)` in its TTL test, without the wait: the items age by
    `seconds`, then the sweep that the running sweeper (every TTL/2, less than any of those
    sleeps) would have made in that time."""
    drive_sync(_backdate(store._sync_core(), store._ns, seconds))
    store.sweep_ttl()


async def aelapse(store: Any, seconds: float) -> None:
    """`elapse` for the async store: upstream's `await asyncio.sleep(seconds)`."""
    await drive_async(_backdate(store._async_core(), store._ns, seconds))
    await store.asweep_ttl()
