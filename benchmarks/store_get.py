"""`Store.get` against a raw `SELECT` of the same row, on SQLite and PostgreSQL, as a ratio.

A read should cost one read: the time it records for eviction waits in memory and is written
with the next write (see `contextchef.store.pending`). The floor is timed in the same run and
interleaved with the measured side: a prepared `SELECT` of the same columns of the same row on a
plain `sqlite3` / `psycopg` connection. Reported per backend: µs per `Store.get`, µs per raw
`SELECT`, and their ratio (min and median over the rounds), plus the load average.

Run: `.venv/bin/python benchmarks/store_get.py [--rounds 15] [--gets 2000] [--no-postgres]`.
Before/after: run it once with `PYTHONPATH=<other checkout>/src` for the other side.
PostgreSQL: `CONTEXTCHEF_BENCH_PG_DSN` (default `postgresql://postgres@127.0.0.1:5432/test`),
in a throwaway schema dropped afterwards.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contextchef.store import Store
from contextchef.store.backends.sqlite import SQLiteBackend

CONTENT = "x" * 1024
DSN = os.environ.get("CONTEXTCHEF_BENCH_PG_DSN", "postgresql://postgres@127.0.0.1:5432/test")


def per_op(count: int, run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) / count * 1e6


def interleaved(
    gets: int, rounds: int, ours: Callable[[], object], floor: Callable[[], object]
) -> dict[str, float]:
    """µs per op of `ours` and `floor`, alternating, and their ratio per round."""
    mine: list[float] = []
    base: list[float] = []

    def repeat(action: Callable[[], object]) -> Callable[[], None]:
        def run() -> None:
            for _ in range(gets):
                action()

        return run

    ours_n, floor_n = repeat(ours), repeat(floor)
    ours_n(), floor_n()  # warm
    for _ in range(rounds):
        mine.append(per_op(gets, ours_n))
        base.append(per_op(gets, floor_n))
    ratios = [a / b for a, b in zip(mine, base, strict=True)]
    return {
        "get_us": statistics.median(mine),
        "select_us": statistics.median(base),
        "ratio_min": min(ratios),
        "ratio_median": statistics.median(ratios),
    }


def flush(store: Store) -> None:
    flushing = getattr(store, "flush", None)  # absent before reads stopped writing
    if callable(flushing):
        flushing()


def bench_sqlite(gets: int, rounds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "context.db"
        backend = SQLiteBackend(db, project="bench:get")
        store = Store(backend)
        notes = store.namespace("notes")
        notes.put("a.md", CONTENT)
        raw = sqlite3.connect(db, isolation_level=None)
        select = (
            "SELECT e.content, e.meta, e.created_at, e.updated_at, a.accessed_at, e.bytes "
            "FROM entries AS e LEFT JOIN entry_access AS a ON a.entry_id = e.id "
            "WHERE e.project_id = ? AND e.namespace = ? AND e.path = ?"
        )
        pid = backend.project.id

        def floor() -> object:
            return raw.execute(select, (pid, "notes", "a.md")).fetchone()

        result = interleaved(gets, rounds, lambda: notes.get("a.md"), floor)
        raw.close()
        flush(store)
        backend.close()
        return result


def bench_postgres(gets: int, rounds: int) -> dict[str, float] | None:
    try:
        import psycopg

        from contextchef.store.backends.postgres import PostgresBackend
    except ImportError:
        return None
    schema = f"bench_get_{secrets.token_hex(4)}"
    try:
        backend = PostgresBackend(DSN, schema=schema, project="bench:get", pool_size=1)
    except Exception as exc:  # no server: say so and go on
        print(f"PostgreSQL skipped: {exc}")
        return None
    raw = psycopg.connect(DSN, autocommit=True)
    try:
        store = Store(backend)
        notes = store.namespace("notes")
        notes.put("a.md", CONTENT)
        select = (
            f'SELECT content, meta, created_at, updated_at, accessed_at, bytes FROM "{schema}".'
            "entries WHERE project = %s AND namespace = %s AND path = %s"
        )
        params = (backend.project, "notes", "a.md")
        raw.execute(select, params, prepare=True)

        def floor() -> Any:
            return raw.execute(select, params, prepare=True).fetchone()

        result = interleaved(gets, rounds, lambda: notes.get("a.md"), floor)
        flush(store)
        return result
    finally:
        backend.close()
        raw.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        raw.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--gets", type=int, default=2000)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; {args.rounds} rounds × {args.gets} gets")
    print(f"{'backend':<11}{'get µs':>9}{'SELECT µs':>11}{'× min':>8}{'× median':>10}")
    results = {"sqlite": bench_sqlite(args.gets, args.rounds)}
    if not args.no_postgres:
        found = bench_postgres(max(args.gets // 4, 1), args.rounds)
        if found is not None:
            results["postgres"] = found
    for name, row in results.items():
        print(
            f"{name:<11}{row['get_us']:>9.1f}{row['select_us']:>11.1f}"
            f"{row['ratio_min']:>8.2f}{row['ratio_median']:>10.2f}"
        )


if __name__ == "__main__":
    main()
