"""Worker processes for `test_postgres_races.py` (a module of its own, so `spawn` children
import it without pytest or the test module).

A worker opens one `PostgresBackend` over the shared schema, runs THREADS threads on it (one
`Store` each, the backend's pool shared), and reports what each thread was told: the
acknowledgements are what must never be lost or duplicated. A thread that fails aborts the
barrier, so its peers stop waiting at once instead of timing out.
"""

from __future__ import annotations

import threading
import traceback
from typing import Any

from contextchef.errors import StoreConflictError
from contextchef.store import Store
from contextchef.store.backend import StoredEntry
from contextchef.store.backends.postgres import PostgresBackend

THREADS = 2
PROJECT = "test:pgraces"
BARRIER_TIMEOUT_S = 90.0
SHARED = "shared.md"
COUNTER = "counter"


def create_path(index: int) -> str:
    return f"created/p{index}.md"


def _increment(entry: StoredEntry) -> tuple[str, None]:
    return str(int(entry.content) + 1), None


def _thread(
    backend: PostgresBackend, ops: int, paths: int, barrier: Any, name: str
) -> dict[str, Any]:
    """The three races in turn, every thread of every process starting each one together."""
    notes = Store(backend).namespace("notes")
    report: dict[str, Any] = {"name": name, "appended": [], "created": [], "increments": 0}
    barrier.wait(BARRIER_TIMEOUT_S)
    for index in range(ops):  # (a) appends to one entry
        line = f"{name}-{index}"
        notes.append(SHARED, line + "\n")
        report["appended"].append(line)
    barrier.wait(BARRIER_TIMEOUT_S)
    for index in range(paths):  # (b) everyone creates the same paths
        if notes.create(create_path(index), f"by {name}"):
            report["created"].append(index)
    barrier.wait(BARRIER_TIMEOUT_S)
    conflicts = 0
    for _ in range(ops):  # (c) compare-and-swap increments of one counter
        try:
            updated = notes.update(COUNTER, _increment)
        except StoreConflictError:
            conflicts += 1  # lost CAS_ATTEMPTS races: nothing written, not acknowledged
            continue
        assert updated is not None, "the counter vanished"
        report["increments"] += 1
    report["conflicts"] = conflicts
    return report


def race(dsn: str, schema: str, ops: int, paths: int, barrier: Any, out: Any, me: int) -> None:
    """Run THREADS racing threads over one backend; put one report per thread on `out`."""
    reports: list[dict[str, Any]] = []
    try:
        backend = PostgresBackend(dsn, schema=schema, project=PROJECT, pool_size=THREADS)
    except BaseException:
        barrier.abort()
        out.put([{"name": f"p{me}", "error": traceback.format_exc()}])
        raise

    def run(thread: int) -> None:
        name = f"p{me}t{thread}"
        try:
            reports.append(_thread(backend, ops, paths, barrier, name))
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
