"""Concurrent edits are serialised, never refused for contention, and none is lost.

Every durable backend (SQLite, the filesystem, PostgreSQL): 6 processes × 120 `str_replace`
commands of the `context` tool on one entry; a `rename` moving an entry back and forth while
other processes insert lines into it; 100 edits of one entry gathered in one event loop, through
`AsyncStore` and through the chef's `context` tool. And a PostgreSQL read while another
transaction holds the entry's row lock answers without waiting for it.

The weaker guarantees of backends without `transact` (compare-and-swap, refused after repeated
contention) are covered in tests/contract/test_atomic_contract.py and tests/store/test_races.py.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import secrets
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from contextchef import AsyncContextChef, prompts
from contextchef.store import AsyncStore, Store, StoredEntry
from tests.contract import pg
from tests.store import edit_race_workers as workers

KINDS = ("sqlite", "filesystem", "postgres")
PROCESSES = 6
EDITS = 120


@contextmanager
def _location(kind: str) -> Iterator[str]:
    """A fresh directory, or a fresh PostgreSQL schema dropped afterwards."""
    if kind != "postgres":
        with tempfile.TemporaryDirectory() as tmp:
            yield tmp
        return
    pg.require_server()
    import psycopg

    schema = f"contextchef_edits_{os.getpid()}_{secrets.token_hex(4)}"
    try:
        yield schema
    finally:
        with psycopg.connect(pg.DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture(params=KINDS)
def place(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    kind = str(request.param)
    with _location(kind) as where:
        yield kind, where


def _race(jobs: list[tuple[Callable[..., None], int]], kind: str, where: str) -> dict[int, Any]:
    """Run each `(worker, amount)` of `jobs` in a spawned process, all starting together;
    their reports by worker number."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(len(jobs))
    out = ctx.Queue()
    procs = [
        ctx.Process(target=worker, args=(kind, where, amount, barrier, out, me))
        for me, (worker, amount) in enumerate(jobs)
    ]
    for proc in procs:
        proc.start()
    try:
        reports = dict(out.get(timeout=300) for _ in procs)
    finally:
        for proc in procs:
            proc.join(30)
            if proc.is_alive():
                proc.kill()
    assert all(proc.exitcode == 0 for proc in procs), [proc.exitcode for proc in procs]
    return reports


def _notes(kind: str, where: str) -> Any:
    return Store(workers.open_backend(kind, where)).namespace("notes")


def test_processes_editing_one_entry_are_never_refused(place: tuple[str, str]) -> None:
    kind, where = place
    _notes(kind, where).put("shared.md", "".join(f"w{me}=0\n" for me in range(PROCESSES)))
    reports = _race([(workers.step_counter, EDITS)] * PROCESSES, kind, where)
    assert [other for _, other in reports.values()] == [[]] * PROCESSES  # nothing refused
    assert [done for done, _ in reports.values()] == [EDITS] * PROCESSES
    expected = "".join(f"w{me}={EDITS}\n" for me in range(PROCESSES))
    assert _notes(kind, where).get("shared.md").content == expected


def test_rename_racing_edits_loses_none(place: tuple[str, str]) -> None:
    kind, where = place
    _notes(kind, where).put("a.md", "start\n")
    jobs = [(workers.rename_back_and_forth, 40)] + [(workers.insert_wherever, 30)] * 3
    reports = _race(jobs, kind, where)
    assert reports[0] == (40, [])  # every rename landed (nobody else moves the entry)
    acknowledged = [line for me in (1, 2, 3) for line in reports[me][0]]
    assert [reports[me][1] for me in (1, 2, 3)] == [[], [], []]
    assert len(acknowledged) == 90
    notes = _notes(kind, where)
    assert notes.get("b.md") is None  # 40 renames: back at a.md
    lines = notes.get("a.md").content.splitlines()
    assert sorted(lines) == sorted([*acknowledged, "start"])


# -- one process, one event loop -----------------------------------------------------------


def _open_async(kind: str, where: str, tmp_path: Path) -> Any:
    if kind == "postgres-native":
        from contextchef.store.backends.postgres import AsyncPostgresBackend

        return AsyncPostgresBackend(pg.DSN, schema=where, project=workers.PROJECT, pool_size=2)
    return workers.open_backend(kind, where)


ASYNC_KINDS = (*KINDS, "postgres-native")


@pytest.fixture(params=ASYNC_KINDS)
async def loop_place(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    kind = str(request.param)
    with _location("postgres" if kind.startswith("postgres") else kind) as where:
        backend = _open_async(kind, where, tmp_path)
        yield backend
        closed = getattr(backend, "close", lambda: None)()
        if asyncio.iscoroutine(closed):
            await closed


def _increment(entry: StoredEntry) -> tuple[str, None]:
    return str(int(entry.content) + 1), None


async def test_gathered_store_edits_all_land(loop_place: Any) -> None:
    notes = AsyncStore(loop_place).namespace("notes")
    await notes.put("counter", "0")
    results = await asyncio.gather(*(notes.update("counter", _increment) for _ in range(100)))
    assert all(result is not None for result in results)
    assert (await notes.get("counter")).content == "100"
    assert sorted(int(result.content) for result in results) == list(range(1, 101))


async def test_gathered_tool_edits_are_never_refused(loop_place: Any) -> None:
    chef = AsyncContextChef(store=loop_place, tools="unified")
    uri = workers.URI
    await chef.handle_tool("context", {"command": "create", "path": uri, "file_text": "start"})

    async def insert(index: int) -> str:
        arguments = {"command": "insert", "path": uri, "insert_line": 0, "insert_text": f"i{index}"}
        return await chef.handle_tool("context", arguments)

    replies = await asyncio.gather(*(insert(i) for i in range(100)))
    assert replies == [prompts.inserted(uri, 1, 1)] * 100
    entry = await AsyncStore(loop_place).namespace("notes").get("shared.md")
    assert sorted(entry.content.splitlines()) == sorted(["start", *(f"i{i}" for i in range(100))])


async def test_gathered_memory_edits_and_a_rename_lose_nothing(loop_place: Any) -> None:
    chef = AsyncContextChef(store=loop_place, tools="unified", memory={})
    uri, moved = "context://memory/log", "context://memory/moved"
    await chef.handle_tool("context", {"command": "create", "path": uri, "file_text": "start"})

    async def insert(index: int) -> str:
        await asyncio.sleep(0)
        arguments = {"command": "insert", "path": uri, "insert_line": 0, "insert_text": f"m{index}"}
        return await chef.handle_tool("context", arguments)

    async def rename() -> str:
        await asyncio.sleep(0.01)
        return await chef.handle_tool(
            "context", {"command": "rename", "path": uri, "new_path": moved}
        )

    *replies, renamed = await asyncio.gather(*(insert(i) for i in range(40)), rename())
    assert renamed == prompts.renamed(uri, moved)
    done = [f"m{i}" for i, reply in enumerate(replies) if reply == prompts.inserted(uri, 1, 1)]
    others = {reply for reply in replies if reply != prompts.inserted(uri, 1, 1)}
    assert all(reply.startswith("Error: nothing is stored at") for reply in others), others
    assert await chef.memory.get("log") is None
    entry = await chef.memory.get("moved")
    assert sorted(entry.value.splitlines()) == sorted(["start", *done])


# -- PostgreSQL: readers never wait for a writer ---------------------------------------------


@pytest.mark.parametrize("native", [False, True], ids=["sync", "async"])
def test_postgres_read_does_not_wait_for_a_row_lock(native: bool, tmp_path: Path) -> None:
    """While another transaction holds `FOR UPDATE` on the row, `read` and `touch` (what a
    `get` does) answer at once; with a 1 s statement timeout a wait would raise instead."""
    with _location("postgres") as schema:
        import psycopg

        from contextchef.store.backends.postgres import AsyncPostgresBackend, PostgresBackend

        options: dict[str, Any] = {
            "schema": schema,
            "project": workers.PROJECT,
            "statement_timeout": 1.0,
        }
        backend = PostgresBackend(pg.DSN, **options)
        Store(backend).namespace("notes").put("held.md", "text")
        with psycopg.connect(pg.DSN, autocommit=False) as holder:
            holder.execute(f'SET search_path TO "{schema}"')
            holder.execute(
                "SELECT 1 FROM entries WHERE namespace = 'notes' AND path = 'held.md' FOR UPDATE"
            ).fetchall()
            if native:

                async def get() -> tuple[str, str]:
                    reader = AsyncPostgresBackend(pg.DSN, **options)
                    try:
                        await reader.touch("notes", "held.md", 1_900_000_000.0)
                        got = await reader.read("notes", "held.md")
                        viewed = await AsyncStore(reader).namespace("notes").get("held.md")
                        return got.content, viewed.content
                    finally:
                        await reader.close()

                assert asyncio.run(get()) == ("text", "text")
            else:
                backend.touch("notes", "held.md", 1_900_000_000.0)
                assert backend.read("notes", "held.md").content == "text"
                assert Store(backend).namespace("notes").get("held.md").content == "text"
            holder.rollback()
        backend.close()
