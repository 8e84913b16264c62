"""Benchmark of the PostgreSQL store over loopback: put, get and search at 10k and 100k entries,
and write throughput with 4 concurrent writer processes.

Floors are measured in the same run, on the same server, into a schema migrated the same way
(GIN index and generated `tsvector` included):

- put: the same rows inserted with plain psycopg `executemany` in one transaction, and with
  `COPY … FROM STDIN`. The store's batched put (`write_many`, 1000 rows a call) is compared
  with the `executemany` floor (the same kind of statement: an upsert cannot be a `COPY`) and
  the `COPY` figure is shown for scale. Single puts (one call each) are shown too.
- get: `backend.read` against a bare `SELECT content … WHERE project, namespace, path` on one
  plain psycopg connection, the same keys in the same order.
- search: `backend.search(limit=10)` for one or two words of a random entry; median and p95.
- concurrent: 4 processes each writing its own rows with `write_many`, against 4 processes
  doing the same with plain `executemany`; rows per second over the wall time.

Run: `.venv/bin/python benchmarks/store_postgres.py [--sizes 10000 100000] [--dsn DSN]`
(default DSN: `CONTEXTCHEF_TEST_PG_DSN`, else `postgresql://postgres@127.0.0.1:5432/test`).
Writes `benchmarks/results/store_postgres.json` (git-ignored); every schema it makes is dropped.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

from contextchef.store.backend import StoredEntry
from contextchef.store.backends.postgres import PostgresBackend
from contextchef.store.backends.postgres.migrations import migrate_plan

RESULTS = Path(__file__).parent / "results" / "store_postgres.json"
DSN = os.environ.get("CONTEXTCHEF_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/test")
BATCH = 1000
SINGLE_PUTS = 1000
GETS = 5000
SEARCHES = 200
WRITERS = 4
ROWS_PER_WRITER = 5000
PROJECT = "bench:store"
COLUMNS = "project, namespace, path, content, meta, created_at, updated_at, accessed_at, bytes"
INSERT = f"INSERT INTO entries({COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"


def make_rows(n: int, seed: int = 7, prefix: str = "notes") -> list[tuple[str, str]]:
    """`n` (path, content) pairs of ~40 words drawn from a 5000-word vocabulary."""
    rng = random.Random(seed)
    vocabulary = [f"w{rng.getrandbits(40):x}" for _ in range(5000)]
    return [
        (f"{prefix}/{i // 1000:03d}/{i:07d}.md", " ".join(rng.choices(vocabulary, k=40)))
        for i in range(n)
    ]


def _params(rows: list[tuple[str, str]], project: str) -> list[tuple[Any, ...]]:
    now = time.time()
    return [(project, "notes", p, c, "{}", now, now, None, len(c.encode())) for p, c in rows]


@contextmanager
def schema(name: str, dsn: str) -> Iterator[str]:
    """A schema migrated like the store's (for the floors), dropped afterwards."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    try:
        yield name
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def _migrated(dsn: str, name: str) -> psycopg.Connection[Any]:
    conn = psycopg.connect(dsn, autocommit=True, options=f"-c search_path={name}")
    plan = migrate_plan(name)
    with conn.transaction():
        try:
            query = next(plan)
            while True:
                cursor = conn.execute(query.sql, query.params)
                query = plan.send(cursor.fetchall() if cursor.description else [])
        except StopIteration:
            pass
    return conn


def floor_executemany(conn: psycopg.Connection[Any], rows: list[tuple[str, str]]) -> float:
    params = _params(rows, "bench:floor")
    start = time.perf_counter()
    with conn.transaction(), conn.cursor() as cursor:
        cursor.executemany(INSERT, params)
    return (time.perf_counter() - start) / len(rows)


def floor_copy(conn: psycopg.Connection[Any], rows: list[tuple[str, str]]) -> float:
    params = _params(rows, "bench:copy")
    start = time.perf_counter()
    with (
        conn.transaction(),
        conn.cursor() as cursor,
        cursor.copy(f"COPY entries({COLUMNS}) FROM STDIN") as copy,
    ):
        for row in params:
            copy.write_row(row)
    return (time.perf_counter() - start) / len(rows)


def bench(size: int, dsn: str) -> dict[str, float]:
    rows = make_rows(size)
    tag = f"{os.getpid()}_{size}"
    with schema(f"bench_floor_{tag}", dsn) as floor_schema, schema(f"bench_store_{tag}", dsn) as s:
        floor_conn = _migrated(dsn, floor_schema)
        floor = floor_executemany(floor_conn, rows)
        copy = floor_copy(floor_conn, rows)

        backend = PostgresBackend(dsn, schema=s, project=PROJECT, pool_size=2)
        start = time.perf_counter()
        for offset in range(0, size, BATCH):
            chunk = rows[offset : offset + BATCH]
            backend.write_many("notes", {path: StoredEntry(content) for path, content in chunk})
        batched = (time.perf_counter() - start) / size

        extra = make_rows(SINGLE_PUTS, seed=11, prefix="single")
        start = time.perf_counter()
        for path, content in extra:
            backend.write("vfs", path, StoredEntry(content))
        single = (time.perf_counter() - start) / SINGLE_PUTS

        rng = random.Random(3)
        keys = [rows[rng.randrange(size)][0] for _ in range(GETS)]
        bare_sql = "SELECT content FROM entries WHERE project = %s AND namespace = %s AND path = %s"
        start = time.perf_counter()
        for key in keys:
            floor_conn.execute(bare_sql, ("bench:floor", "notes", key)).fetchone()
        bare = (time.perf_counter() - start) / GETS
        start = time.perf_counter()
        for key in keys:
            backend.read("notes", key)
        get = (time.perf_counter() - start) / GETS

        timings = []
        for _ in range(SEARCHES):
            words = rng.choice(rows)[1].split()
            query = " ".join(rng.sample(words, k=rng.choice((1, 2))))
            start = time.perf_counter()
            hits = backend.search("notes", query, limit=10)
            timings.append(time.perf_counter() - start)
            assert hits, query
        backend.close()
        floor_conn.close()
    return {
        "entries": size,
        "floor_us_per_row": floor * 1e6,
        "copy_us_per_row": copy * 1e6,
        "batched_put_us_per_row": batched * 1e6,
        "batched_vs_floor": batched / floor,
        "batched_vs_copy": batched / copy,
        "single_put_us": single * 1e6,
        "bare_select_us": bare * 1e6,
        "get_us": get * 1e6,
        "get_vs_select": get / bare,
        "search_median_ms": statistics.median(timings) * 1e3,
        "search_p95_ms": sorted(timings)[int(len(timings) * 0.95)] * 1e3,
    }


def _writer(dsn: str, name: str, me: int, plain: bool, barrier: Any) -> None:
    """One concurrent writer: its own rows, in batches, through the store or plain psycopg."""
    rows = make_rows(ROWS_PER_WRITER, seed=100 + me, prefix=f"w{me}")
    if plain:
        conn = psycopg.connect(dsn, autocommit=True, options=f"-c search_path={name}")
        params = _params(rows, f"bench:w{me}")
        barrier.wait()
        for offset in range(0, len(params), BATCH):
            with conn.transaction(), conn.cursor() as cursor:
                cursor.executemany(INSERT, params[offset : offset + BATCH])
        conn.close()
        return
    backend = PostgresBackend(dsn, schema=name, project=f"bench:w{me}", pool_size=1)
    barrier.wait()
    for offset in range(0, len(rows), BATCH):
        chunk = rows[offset : offset + BATCH]
        backend.write_many("notes", {path: StoredEntry(content) for path, content in chunk})
    backend.close()


def concurrent(dsn: str) -> dict[str, float]:
    """Rows per second of WRITERS processes writing at once: the store, then plain psycopg."""
    ctx = multiprocessing.get_context("spawn")
    rates = {}
    for plain in (True, False):
        with schema(f"bench_conc_{os.getpid()}_{int(plain)}", dsn) as name:
            _migrated(dsn, name).close()
            barrier = ctx.Barrier(WRITERS + 1)
            procs = [
                ctx.Process(target=_writer, args=(dsn, name, me, plain, barrier))
                for me in range(WRITERS)
            ]
            for proc in procs:
                proc.start()
            barrier.wait()
            start = time.perf_counter()
            for proc in procs:
                proc.join()
            elapsed = time.perf_counter() - start
            assert all(proc.exitcode == 0 for proc in procs)
            rates["floor" if plain else "store"] = WRITERS * ROWS_PER_WRITER / elapsed
    return {
        "writers": WRITERS,
        "rows": WRITERS * ROWS_PER_WRITER,
        "floor_rows_per_s": rates["floor"],
        "store_rows_per_s": rates["store"],
        "floor_vs_store": rates["floor"] / rates["store"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--dsn", default=DSN)
    args = parser.parse_args()
    results = [bench(size, args.dsn) for size in args.sizes]
    columns = [
        ("entries", "entries", "{:.0f}"),
        ("floor µs/row", "floor_us_per_row", "{:.1f}"),
        ("COPY µs/row", "copy_us_per_row", "{:.1f}"),
        ("batched µs/row", "batched_put_us_per_row", "{:.1f}"),
        ("× floor", "batched_vs_floor", "{:.2f}"),
        ("single put µs", "single_put_us", "{:.0f}"),
        ("SELECT µs", "bare_select_us", "{:.0f}"),
        ("get µs", "get_us", "{:.0f}"),
        ("× SELECT", "get_vs_select", "{:.2f}"),
        ("search med ms", "search_median_ms", "{:.2f}"),
        ("search p95 ms", "search_p95_ms", "{:.2f}"),
    ]
    print(" | ".join(title for title, _, _ in columns))
    for row in results:
        print(" | ".join(fmt.format(row[key]).rjust(len(title)) for title, key, fmt in columns))
    throughput = concurrent(args.dsn)
    print(
        f"{WRITERS} concurrent writers, {throughput['rows']} rows: store "
        f"{throughput['store_rows_per_s']:.0f} rows/s, plain executemany "
        f"{throughput['floor_rows_per_s']:.0f} rows/s "
        f"(store takes {throughput['floor_vs_store']:.2f}× the floor's time)"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    payload = {"results": results, "concurrent": throughput, "at": time.time()}
    RESULTS.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
