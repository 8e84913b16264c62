"""Worker processes for `test_postgres_races.py` (a module of its own, so `spawn` children
import it without pytest or the test module).

A worker opens one `PostgresBackend` over the shared schema, runs THREADS threads on it (one
`Store` each, the backend's pool shared), and reports what each thread was told: the
acknowledgements are what must never be lost or duplicated. Every phase runs for a bounded
time (`phase_s` seconds, at most `max_ops` operations). A thread that fails aborts the barrier,
so its peers stop waiting at once instead of timing out.
"""

from __future__ import annotations

import threading
import time
import traceback
from typing import Any

from contextchef.errors import StoreConflictError
from contextchef.memory import Memory
from contextchef.store import Store
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.postgres import PostgresBackend

THREADS = 4
POOL_SIZE = 2
"""Connections per worker process: 16 sessions in all contend on the same rows (and the 32
threads on the pools), leaving the shared server's other slots to everyone else."""
PROJECT = "test:pgraces"
BARRIER_TIMEOUT_S = 120.0
SHARED = "shared.md"
COUNTER = "counter"
EDITED = "edited-fact"
"""A memory key every thread edits by compare-and-swap, adding its own token."""
PLAIN = "plain-fact"
"""A memory key every thread overwrites with plain `Memory.set` calls (versions kept)."""


def create_path(index: int) -> str:
    return f"created/p{index}.md"


def _increment(entry: StoredEntry) -> tuple[str, None]:
    return str(int(entry.content) + 1), None


def _thread(
    backend: PostgresBackend,
    phase_s: float,
    max_ops: int,
    paths: int,
    barrier: Any,
    name: str,
) -> dict[str, Any]:
    """The four races in turn, every thread of every process starting each one together."""
    store = Store(backend)
    notes = store.namespace("notes")
    facts = store.namespace("memory")
    memory = Memory(store)
    report: dict[str, Any] = {
        "name": name,
        "appended": [],
        "created": [],
        "increments": 0,
        "conflicts": 0,
        "edited": [],
        "edit_conflicts": 0,
        "set": [],
    }

    barrier.wait(BARRIER_TIMEOUT_S)
    deadline = time.monotonic() + phase_s
    for index in range(max_ops):  # (a) appends to one entry
        if time.monotonic() > deadline:
            break
        line = f"{name}-{index}"
        notes.append(SHARED, line + "\n")
        report["appended"].append(line)

    barrier.wait(BARRIER_TIMEOUT_S)
    for index in range(paths):  # (b) everyone creates the same paths
        if notes.create(create_path(index), f"by {name}"):
            report["created"].append(index)

    barrier.wait(BARRIER_TIMEOUT_S)
    deadline = time.monotonic() + phase_s
    for _ in range(max_ops):  # (c) compare-and-swap increments of one counter
        if time.monotonic() > deadline:
            break
        try:
            updated = notes.update(COUNTER, _increment)
        except StoreConflictError:
            report["conflicts"] += 1  # lost every retry: nothing written, not acknowledged
            continue
        assert updated is not None, "the counter vanished"
        report["increments"] += 1

    barrier.wait(BARRIER_TIMEOUT_S)
    deadline = time.monotonic() + phase_s
    for index in range(max_ops):  # (d) memory: CAS edits of one key, plain sets of another
        if time.monotonic() > deadline:
            break
        token = f"{name}-{index}"
        try:
            facts.update(EDITED, lambda entry, t=token: (entry.content + f"[{t}]", None))
            report["edited"].append(token)
        except StoreConflictError:
            report["edit_conflicts"] += 1
        memory.set(PLAIN, token)
        report["set"].append(token)
    return report


def race(
    dsn: str,
    schema: str,
    phase_s: float,
    max_ops: int,
    paths: int,
    barrier: Any,
    out: Any,
    me: int,
) -> None:
    """Run THREADS racing threads over one backend; put one report per thread on `out`."""
    reports: list[dict[str, Any]] = []
    try:
        backend = PostgresBackend(dsn, schema=schema, project=PROJECT, pool_size=POOL_SIZE)
    except BaseException:
        barrier.abort()
        out.put([{"name": f"p{me}", "error": traceback.format_exc()}])
        raise

    def run(thread: int) -> None:
        name = f"p{me}t{thread}"
        try:
            reports.append(_thread(backend, phase_s, max_ops, paths, barrier, name))
        except BaseException:
            barrier.abort()
            reports.append({"name": name, "error": traceback.format_exc()})

    try:
        threads = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        backend.close()
    out.put(reports)


def open_at_once(dsn: str, schema: str, barrier: Any, out: Any, me: int) -> None:
    """Open (and so migrate) a brand-new schema at the same moment as the other workers, then
    write through the store once; report None, or the error."""
    try:
        barrier.wait(BARRIER_TIMEOUT_S)
        with PostgresBackend(dsn, schema=schema, project=PROJECT, pool_size=1) as backend:
            Store(backend).namespace("notes").put(f"opened-by-{me}.md", "ok")
    except BaseException:
        barrier.abort()
        out.put((me, traceback.format_exc()))
        return
    out.put((me, None))
