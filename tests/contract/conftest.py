"""The contract suite runs every test here once per storage backend.

To plug a backend in, add one entry to BACKENDS: a name and a factory taking a fresh temporary
directory (persistent backends keep their files there) and returning the backend. Backends that
survive a reopen also appear in PERSISTENT, so reopen-and-read tests run against them.

Store-level tests also run once per API (`store_api`): through the synchronous `Store`, through
`AsyncStore` over the synchronous backend (worker threads), and through `AsyncStore` over the
backend presented as async-native (`NativeAsync`: every call awaited on the loop), so both
drivers and both async paths meet the same contract.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from contextchef.store import AsyncStore, FileSystemBackend, InMemoryBackend, Store
from contextchef.store.backends.inmemory import AsyncInMemoryBackend
from contextchef.store.backends.sqlite import SQLiteBackend
from tests.contract import pg
from tests.contract.helpers import Blocking, Clock, NativeAsync

BackendFactory = Callable[[Path], Any]

BACKENDS: dict[str, BackendFactory] = {}
PERSISTENT: set[str] = set()

BACKENDS["sqlite"] = lambda tmp: SQLiteBackend(tmp / "context.db", project="test:contract")
PERSISTENT.add("sqlite")
BACKENDS["memory"] = lambda tmp_path: InMemoryBackend()
BACKENDS["filesystem"] = lambda tmp_path: FileSystemBackend(tmp_path / ".context")
PERSISTENT.add("filesystem")
BACKENDS["postgres"] = pg.open_postgres  # async-native: AsyncPostgresBackend (see make_store)
PERSISTENT.add("postgres")


@pytest.fixture(scope="session", autouse=True)
def _postgres_schema() -> Iterator[None]:
    """The PostgreSQL session schema is dropped when the session ends."""
    yield
    pg.drop_schema()


@pytest.fixture(autouse=True)
def _close_postgres() -> Iterator[None]:
    yield
    pg.close_opened()


NAMESPACES = ("notes", "memory")
"""The namespaces the raw protocol tests run in: `notes` plain, `memory` versioned (declared by
the `backend` fixture, as `Memory` declares it), so the whole suite covers both storages."""

VERSIONED = "memory"
"""The namespace every `backend` of the suite keeps versions of."""


@pytest.fixture(params=NAMESPACES)
def ns(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=sorted(BACKENDS))
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def backend(backend_name: str, tmp_path: Path) -> Any:
    opened = BACKENDS[backend_name](tmp_path)
    opened.keep_versions(VERSIONED)
    return opened


@pytest.fixture(params=sorted(PERSISTENT))
def reopen(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Any]:
    """For each PERSISTENT backend: a factory of fresh instances over the same storage."""
    factory = BACKENDS[str(request.param)]
    return lambda: factory(tmp_path)


@pytest.fixture
def clock() -> Clock:
    """A controllable clock ahead of real time, so it also outranks files' own times."""
    return Clock(time.time() + 1000.0)


@pytest.fixture(params=["sync", "async", "async-native"])
def store_api(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_store(store_api: str, clock: Clock) -> Iterator[Callable[..., Any]]:
    """Build a Store (or a blocking facade over an AsyncStore) over a backend."""
    loop = asyncio.new_event_loop()
    natives: list[Any] = []

    def make(backend: Any, **options: Any) -> Any:
        options.setdefault("clock", clock)
        if store_api == "sync":
            return Store(backend, **options)
        if store_api == "async-native":
            # The in-memory backend meets the suite as the shipped AsyncInMemoryBackend,
            # PostgreSQL as AsyncPostgresBackend over the same schema and project; every other
            # backend through the generic async-native facade.
            if type(backend) is InMemoryBackend:
                backend = AsyncInMemoryBackend(backend)
            elif type(backend).__name__ == "PostgresBackend":
                backend = pg.as_async(backend)
                natives.append(backend)
            else:
                backend = NativeAsync(backend)
        return Blocking(AsyncStore(backend, **options), loop)

    yield make
    for native in natives:
        loop.run_until_complete(native.close())
    loop.run_until_complete(loop.shutdown_default_executor())
    loop.close()


@pytest.fixture
def store(make_store: Callable[..., Any], backend: Any) -> Any:
    return make_store(backend)
