"""Racing PostgreSQL clients: no acknowledged write is lost or duplicated, and a schema opened by
many processes at once is migrated exactly once.

8 processes (fresh interpreters from a fork server) × 4 threads (one `PostgresBackend` per
process, its pool shared by the threads) race on one fresh schema, each phase for a bounded
time: appends to one entry, creates of the same 20 paths, compare-and-swap increments of one
counter through `Store.update`, and memory updates (compare-and-swap edits of one key through
the memory namespace, plain `Memory.set` overwrites of another, whose every version the backend
keeps). Every phase starts at a shared barrier, so all 32 threads contend from the first
operation. Separately, 8 processes open `PostgresBackend` on a brand-new schema at the same
instant, and writers survive their sessions being terminated. Each test's schema is dropped
afterwards. Like the contract suite, these skip without a server (fail under `CI=true`).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from contextchef.errors import StoreUnavailableError
from contextchef.memory import Memory
from contextchef.store import Store
from contextchef.store.backends.postgres import PostgresBackend
from contextchef.store.backends.postgres.migrations import LATEST_SCHEMA_VERSION, MIGRATIONS
from tests.contract import pg
from tests.store import postgres_race_workers as workers

pytestmark = pytest.mark.postgres

PROCESSES = 8
PHASE_S = 1.5
"""Seconds each timed phase (appends, increments, memory updates) runs."""
MAX_OPS = 200
"""At most this many operations per thread and phase."""
PATHS = 20
COLLECT_TIMEOUT_S = 120.0
JOIN_TIMEOUT_S = 120.0


def _schema() -> str:
    return f"contextchef_race_{os.getpid()}_{secrets.token_hex(4)}"


@contextmanager
def _dropped_afterwards() -> Iterator[str]:
    """A schema name nobody has used; the schema is dropped afterwards, whatever happened."""
    pg.require_server()
    import psycopg

    schema = _schema()
    try:
        yield schema
    finally:
        with psycopg.connect(pg.DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def fresh_schema() -> Iterator[str]:
    with _dropped_afterwards() as schema:
        yield schema


def _spawn(target: Callable[..., None], args: tuple[Any, ...], parties: int) -> list[Any]:
    """Run `target(*args, barrier, out, me)` in PROCESSES fresh processes; every item they
    put on `out` (one per process), failing fast when a process dies without reporting.

    The processes come from a fork server that imported the workers module once (a fresh
    interpreter each, like `spawn`, without paying the imports eight times over)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([workers.__name__])
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


@pytest.fixture(scope="module")
def raced() -> Iterator[tuple[list[dict[str, Any]], Store]]:
    """The four races, run once for the module; every thread's report and a store over the
    result."""
    with (
        _dropped_afterwards() as schema,
        PostgresBackend(pg.DSN, schema=schema, project=workers.PROJECT, pool_size=1) as backend,
    ):
        yield _race(schema, Store(backend))


def _race(fresh_schema: str, store: Store) -> tuple[list[dict[str, Any]], Store]:
    store.namespace("notes").put(workers.COUNTER, "0")
    store.namespace("memory").put(workers.EDITED, "tokens:")
    parties = PROCESSES * workers.THREADS
    args = (pg.DSN, fresh_schema, PHASE_S, MAX_OPS, PATHS)
    per_process = _spawn(workers.race, args, parties)
    reports = [report for batch in per_process for report in batch]
    errors = [f"{r['name']}:\n{r['error']}" for r in reports if "error" in r]
    assert not errors, "\n".join(errors)
    assert len(reports) == parties
    return reports, store


def test_racing_postgres_clients_lose_and_duplicate_nothing(
    raced: tuple[list[dict[str, Any]], Store],
) -> None:
    reports, store = raced
    notes = store.namespace("notes")

    # (a) every acknowledged append is in the entry exactly once, and nothing else is
    shared = notes.get(workers.SHARED)
    assert shared is not None
    acknowledged = [line for r in reports for line in r["appended"]]
    assert acknowledged, "no append was acknowledged"
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
    assert increments > 0, "no increment succeeded at all"
    counter = notes.get(workers.COUNTER)
    assert counter is not None and int(counter.content) == increments


def test_racing_memory_updates_are_never_silently_lost(
    raced: tuple[list[dict[str, Any]], Store],
) -> None:
    reports, store = raced

    # compare-and-swap edits: every acknowledged one is in the value exactly once, no other
    edited = store.namespace("memory").get(workers.EDITED)
    assert edited is not None and edited.content.startswith("tokens:")
    found = edited.content.removeprefix("tokens:").removeprefix("[").removesuffix("]")
    acknowledged = sorted(token for r in reports for token in r["edited"])
    assert acknowledged, "no memory edit was acknowledged"
    assert sorted(found.split("][")) == acknowledged

    # plain overwrites: the last one wins the value, and every acknowledged one is a version
    sets = {token for r in reports for token in r["set"]}
    history = Memory(store).history(workers.PLAIN)
    values = [entry.value for entry in history]
    assert set(values) == sets and len(values) == len(sets)
    current = Memory(store).get(workers.PLAIN)
    assert current is not None and current.value == values[-1]


def test_processes_opening_a_new_schema_at_once_migrate_it_once(fresh_schema: str) -> None:
    import psycopg

    results = dict(_spawn(workers.open_at_once, (pg.DSN, fresh_schema), PROCESSES))
    assert len(results) == PROCESSES == 8
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


TERMINATE_S = 3.0
"""How long the writers run while their sessions are terminated."""


def test_terminated_sessions_lose_no_acknowledged_write(fresh_schema: str) -> None:
    """Writers run while an admin connection terminates the pool's sessions again and again:
    each call succeeds or raises `StoreUnavailableError`, writing continues on fresh
    connections, and every acknowledged write is there afterwards."""
    import psycopg

    backend = PostgresBackend(pg.DSN, schema=fresh_schema, project="test:terminate", pool_size=3)
    store = Store(backend)
    stop = threading.Event()
    acknowledged: dict[str, list[str]] = {}
    unavailable: dict[str, int] = {}
    failures: list[str] = []

    def write(name: str) -> None:
        notes, memory = store.namespace("notes"), Memory(store)
        ok: list[str] = acknowledged.setdefault(name, [])
        index = 0
        while not stop.is_set():
            index += 1
            line = f"{name}-{index}"
            try:
                if index % 3 == 0:
                    notes.append(f"{name}.log", line + "\n")
                elif index % 3 == 1:
                    notes.put(f"{name}/{index}.md", line)
                else:
                    memory.set(f"{name}-fact", line)
            except StoreUnavailableError:
                unavailable[name] = unavailable.get(name, 0) + 1
                continue
            except Exception as exc:  # anything else is a failure of the guarantee
                failures.append(f"{name}: {type(exc).__name__}: {exc}")
                return
            ok.append(line)

    terminated = 0
    application = f"contextchef:{fresh_schema}"
    writers = [threading.Thread(target=write, args=(f"w{t}",)) for t in range(4)]
    try:
        for thread in writers:
            thread.start()
        with psycopg.connect(pg.DSN, autocommit=True) as admin:
            deadline = time.monotonic() + TERMINATE_S
            while time.monotonic() < deadline and not failures:
                time.sleep(0.1)
                rows = admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = %s AND pid <> pg_backend_pid()",
                    (application,),
                ).fetchall()
                terminated += sum(1 for (done,) in rows if done)
        time.sleep(0.3)  # the writers go on after the last termination
    finally:
        stop.set()
        for thread in writers:
            thread.join(30)
    try:
        assert not failures, failures
        assert terminated > 0, "no session was terminated: the test proved nothing"
        assert sum(unavailable.values()) > 0, "no call noticed a terminated session"
        notes, memory = store.namespace("notes"), Memory(store)
        for name, lines in acknowledged.items():
            assert lines, f"{name} never wrote after a termination"
            log = notes.get(f"{name}.log")
            logged = log.content.splitlines() if log is not None else []
            assert len(logged) == len(set(logged)), f"{name}: an append landed twice"
            facts = {entry.value for entry in memory.history(f"{name}-fact")}
            for line in lines:
                index = int(line.rsplit("-", 1)[1])
                if index % 3 == 0:
                    assert line in logged, f"acknowledged append {line} is lost"
                elif index % 3 == 1:
                    entry = notes.get(f"{name}/{index}.md")
                    assert entry is not None and entry.content == line, f"{line} is lost"
                else:
                    assert line in facts, f"acknowledged memory write {line} is lost"
        notes.put("after.md", "the next call reconnects")  # no termination since: must work
        assert notes.get("after.md") is not None
    finally:
        backend.close()
