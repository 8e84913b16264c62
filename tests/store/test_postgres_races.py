"""Racing PostgreSQL clients: no acknowledged write is lost or duplicated, and a schema opened by
many processes at once is migrated exactly once.

4 `spawn`ed processes × 2 threads (one `PostgresBackend` per process, its pool shared by the
threads) race on one fresh schema: appends to one entry, creates of the same 20 paths, and
compare-and-swap increments of one counter through `Store.update`. Every phase starts at a
shared barrier, so all eight threads contend from the first operation. Separately, 4 processes
open `PostgresBackend` on a brand-new schema at the same instant. Each test's schema is dropped
afterwards. Like the contract suite, these skip without a server (fail under `CI=true`).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import secrets
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from contextchef.store import Store
from contextchef.store.backends.postgres import PostgresBackend
from contextchef.store.backends.postgres.migrations import LATEST_SCHEMA_VERSION, MIGRATIONS
from tests.contract import pg
from tests.store import postgres_race_workers as workers

pytestmark = pytest.mark.postgres

PROCESSES = 4
OPS = 25
"""Appends and increments per thread."""
PATHS = 20
COLLECT_TIMEOUT_S = 120.0
JOIN_TIMEOUT_S = 120.0


def _schema() -> str:
    return f"contextchef_race_{os.getpid()}_{secrets.token_hex(4)}"


@pytest.fixture
def fresh_schema() -> Iterator[str]:
    """A schema name nobody has used; the schema is dropped afterwards, whatever happened."""
    pg.require_server()
    import psycopg

    schema = _schema()
    try:
        yield schema
    finally:
        with psycopg.connect(pg.DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _spawn(target: Callable[..., None], args: tuple[Any, ...], parties: int) -> list[Any]:
    """Run `target(*args, barrier, out, me)` in PROCESSES spawned processes; every item they
    put on `out` (one per process), failing fast when a process dies without reporting."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(parties)
    out = ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args, barrier, out, me)) for me in range(PROCESSES)]
    for proc in procs:
        proc.start()
    items: list[Any] = []
    try:
        deadline = time.monotonic() + COLLECT_TIMEOUT_S
        while len(items) < PROCESSES:
            try:
                items.append(out.get(timeout=1))  # a bounded wait, re-checking the workers
            except queue.Empty:
                dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
                assert not dead, f"a worker died without reporting: exit codes {dead}"
                assert time.monotonic() < deadline, f"only {len(items)} of {PROCESSES} reported"
    finally:
        for proc in procs:
            proc.join(JOIN_TIMEOUT_S)
            if proc.is_alive():
                proc.kill()
                proc.join()
    assert [proc.exitcode for proc in procs] == [0] * PROCESSES
    return items


@pytest.fixture
def raced(fresh_schema: str) -> tuple[list[dict[str, Any]], Store]:
    """The three races, run once; every thread's report and a store over the result."""
    backend = PostgresBackend(pg.DSN, schema=fresh_schema, project=workers.PROJECT, pool_size=1)
    pg.OPENED.append(backend)  # closed by the suite's teardown
    store = Store(backend)
    store.namespace("notes").put(workers.COUNTER, "0")
    parties = PROCESSES * workers.THREADS
    per_process = _spawn(workers.race, (pg.DSN, fresh_schema, OPS, PATHS), parties)
    reports = [report for batch in per_process for report in batch]
    errors = [f"{r['name']}:\n{r['error']}" for r in reports if "error" in r]
    assert not errors, "\n".join(errors)
    assert len(reports) == parties
    return reports, store


@pytest.fixture(autouse=True)
def _close_backends() -> Iterator[None]:
    yield
    pg.close_opened()


def test_racing_postgres_clients_lose_and_duplicate_nothing(
    raced: tuple[list[dict[str, Any]], Store],
) -> None:
    reports, store = raced
    notes = store.namespace("notes")

    # (a) every acknowledged append is in the entry exactly once, and nothing else is
    shared = notes.get(workers.SHARED)
    assert shared is not None
    acknowledged = [line for r in reports for line in r["appended"]]
    assert len(acknowledged) == len(reports) * OPS
    assert sorted(shared.content.splitlines()) == sorted(acknowledged)
    assert shared.content.endswith("\n")

    # (b) exactly one True per path across every thread of every process, and it wrote it
    winners = sorted(index for r in reports for index in r["created"])
    assert winners == list(range(PATHS))
    for r in reports:
        for index in r["created"]:
            entry = notes.get(workers.create_path(index))
            assert entry is not None and entry.content == f"by {r['name']}"

    # (c) the counter counts exactly the acknowledged compare-and-swap increments
    increments = sum(r["increments"] for r in reports)
    conflicts = sum(r["conflicts"] for r in reports)
    assert increments + conflicts == len(reports) * OPS
    assert increments > 0, "no increment succeeded at all"
    counter = notes.get(workers.COUNTER)
    assert counter is not None and int(counter.content) == increments


def test_processes_opening_a_new_schema_at_once_migrate_it_once(fresh_schema: str) -> None:
    import psycopg

    results = dict(_spawn(workers.open_at_once, (pg.DSN, fresh_schema), PROCESSES))
    assert results == dict.fromkeys(range(PROCESSES)), "\n".join(
        f"worker {me}:\n{error}" for me, error in results.items() if error
    )
    with psycopg.connect(pg.DSN) as conn:
        rows = conn.execute(
            f'SELECT version, name FROM "{fresh_schema}".schema_migrations ORDER BY version'
        ).fetchall()
        entries = conn.execute(
            f'SELECT path FROM "{fresh_schema}".entries WHERE project = %s ORDER BY path',
            (workers.PROJECT,),
        ).fetchall()
    assert rows == [(version, name) for version, (name, _) in enumerate(MIGRATIONS, start=1)]
    assert rows[-1][0] == LATEST_SCHEMA_VERSION
    assert entries == [(f"opened-by-{me}.md",) for me in range(PROCESSES)]
