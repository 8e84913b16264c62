"""The Agents SDK session and the LangGraph store on PostgreSQL: a fleet shares one database.

Two backends (two machines, as far as the server can tell) write one session at once and
neither loses nor interleaves items; LangGraph's text query runs through PostgreSQL's search.
Skips without a server (fails under CI=true), like the contract suite.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from contextchef import AsyncPostgresBackend, PostgresBackend
from contextchef.integrations.langgraph import ContextChefStore
from contextchef.integrations.openai_agents import ContextChefSession
from tests.contract import pg

pytestmark = pytest.mark.postgres


@pytest.fixture
def schema() -> Iterator[str]:
    """A schema of its own, dropped afterwards."""
    yield from pg.throwaway_schema("contextchef_test")


async def test_two_machines_append_to_one_session(schema: str) -> None:
    machines = [AsyncPostgresBackend(pg.DSN, schema=schema, project="test:fleet") for _ in range(2)]
    try:
        sessions = [ContextChefSession("user-7", backend) for backend in machines]
        batches = [[{"role": "user", "content": f"{n}-{i}"} for i in range(2)] for n in range(16)]
        await asyncio.gather(*(sessions[n % 2].add_items(b) for n, b in enumerate(batches)))
        stored = await sessions[0].get_items()
        pairs = [stored[i : i + 2] for i in range(0, len(stored), 2)]
        assert sorted(map(json.dumps, pairs)) == sorted(map(json.dumps, batches))
        popped = await asyncio.gather(*(sessions[n % 2].pop_item() for n in range(6)))
        assert len({json.dumps(p) for p in popped}) == 6
        assert await sessions[1].get_items() == stored[:-6]
    finally:
        for backend in machines:
            await backend.close()


def test_a_langgraph_query_uses_postgres_search(schema: str) -> None:
    backend = PostgresBackend(pg.DSN, schema=schema, project="test:graph")
    try:
        store = ContextChefStore(backend)
        store.put(("notes",), "1", {"text": "apples are red"})
        store.put(("notes",), "2", {"text": "bananas are yellow"})
        assert [hit.key for hit in store.search(("notes",), query="apples")] == ["1"]
        assert store.list_namespaces() == [("notes",)]
    finally:
        backend.close()


def _dsn(schema: str) -> str:
    return f"{pg.DSN}{'&' if '?' in pg.DSN else '?'}contextchef_schema={schema}"


def test_a_store_from_a_dsn_serves_sync_code_threads_and_the_loop(schema: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ContextChefStore(_dsn(schema)) as store:
        store.put(("sync",), "k", {"n": 1})
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda i: store.put(("threads",), str(i), {"n": i}), range(8)))

        async def on_the_loop() -> list[str]:
            await store.aput(("loop",), "k", {"n": 2})
            return [item.key for item in await store.asearch(("threads",), limit=100)]

        assert sorted(asyncio.run(on_the_loop())) == [str(i) for i in range(8)]
        assert store.list_namespaces() == [("loop",), ("sync",), ("threads",)]
        assert store.get(("loop",), "k").value == {"n": 2}  # type: ignore[union-attr]


def test_ten_thousand_concurrent_aputs_queue_on_a_pool_of_two(schema: str) -> None:
    store = ContextChefStore(_dsn(schema), pool_size=2)

    async def put_all() -> None:
        await asyncio.gather(*(store.aput(("many",), str(i), {"i": i}) for i in range(10_000)))
        assert len(await store.asearch(("many",), limit=20_000)) == 10_000
        await store.aclose()

    asyncio.run(put_all())


def test_a_pool_that_cannot_connect_says_so_naming_the_dsn_without_its_password() -> None:
    from contextchef import StoreUnavailableError

    dsn = "postgresql://postgres:s3cret-pw@127.0.0.1:1/test"
    with pytest.raises(StoreUnavailableError) as caught:
        PostgresBackend(dsn, connect_timeout=1)
    message = str(caught.value)
    assert "\n" not in message and "s3cret-pw" not in message
    assert "cannot connect to PostgreSQL at postgresql://postgres:***@127.0.0.1:1/test" in message
