"""Benchmark of the PostgreSQL store over loopback: put, get and search at 10k and 100k entries,
and write throughput with 4 concurrent writer processes.

Floors are measured in the same run, on the same server, into a schema migrated the same way
(GIN index and generated `tsvector` included), each interleaved with what it is the floor of
(chunk by chunk, key by key, query by query), so both see the same load on a shared machine:

- put: the same rows inserted with plain psycopg `executemany` in one transaction, and with
  `COPY … FROM STDIN`. The store's batched put (`write_many`, 1000 rows a call) is compared
  with the `executemany` floor (the same kind of statement: an upsert cannot be a `COPY`) and
  the `COPY` figure is shown for scale. Single puts (one call each) are shown too.
- get: `backend.read` against a bare `SELECT` of the same columns of the same row on one plain
  psycopg connection, the same keys in the same order.
- search (after `ANALYZE`, as autovacuum does within a minute of a bulk load; without
  statistics the planner's guesses make every search several times slower, for the floor
  too): `backend.search(limit=10)` for one or two words of a random entry, median and p95,
  and the p95 of a bare ranked full-text `SELECT` of the same query (no snippets) for scale.
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
import threading
import time
from collections.abc import Callable, Iterator
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
ROUNDS = 2
BARRIER_TIMEOUT_S = 120.0
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


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _executemany(conn: psycopg.Connection[Any], params: list[tuple[Any, ...]]) -> None:
    with conn.transaction(), conn.cursor() as cursor:
        cursor.executemany(INSERT, params)


def _copy(conn: psycopg.Connection[Any], params: list[tuple[Any, ...]]) -> None:
    with (
        conn.transaction(),
        conn.cursor() as cursor,
        cursor.copy(f"COPY entries({COLUMNS}) FROM STDIN") as copy,
    ):
        for row in params:
            copy.write_row(row)


def bench(size: int, dsn: str) -> dict[str, float]:
    """Each measurement alternates with its floor, chunk by chunk (put), key by key (get) and
    query by query (search), so both see the same load on a shared machine."""
    rows = make_rows(size)
    tag = f"{os.getpid()}_{size}"
    with (
        schema(f"bench_floor_{tag}", dsn) as floor_schema,
        schema(f"bench_copy_{tag}", dsn) as copy_schema,
        schema(f"bench_store_{tag}", dsn) as s,
    ):
        floor_conn = _migrated(dsn, floor_schema)
        copy_conn = _migrated(dsn, copy_schema)  # its own table: the floor's stays the same size
        backend = PostgresBackend(dsn, schema=s, project=PROJECT, pool_size=2)
        floor = copy = batched = 0.0
        for offset in range(0, size, BATCH):
            chunk = rows[offset : offset + BATCH]
            floor += _timed(lambda c=chunk: _executemany(floor_conn, _params(c, "bench:floor")))
            copy += _timed(lambda c=chunk: _copy(copy_conn, _params(c, "bench:copy")))
            entries = {path: StoredEntry(content) for path, content in chunk}
            batched += _timed(lambda e=entries: backend.write_many("notes", e))

        extra = make_rows(SINGLE_PUTS, seed=11, prefix="single")
        single = sum(
            _timed(lambda p=path, c=content: backend.write("vfs", p, StoredEntry(c)))
            for path, content in extra
        )

        for name in (floor_schema, s):  # what autovacuum does within a minute of a bulk load
            floor_conn.execute(f'ANALYZE "{name}".entries')

        rng = random.Random(3)
        keys = [rows[rng.randrange(size)][0] for _ in range(GETS)]
        bare_sql = (
            "SELECT content, meta, created_at, updated_at, accessed_at, bytes FROM entries "
            "WHERE project = %s AND namespace = %s AND path = %s"
        )
        bare = get = 0.0
        for key in keys:
            bare += _timed(
                lambda k=key: floor_conn.execute(bare_sql, ("bench:floor", "notes", k)).fetchone()
            )
            get += _timed(lambda k=key: backend.read("notes", k))

        timings, floor_timings = [], []
        search_sql = (
            "SELECT path, ts_rank(tsv, q) AS rank FROM entries, "
            "websearch_to_tsquery('simple', %s) AS q WHERE project = %s AND namespace = %s "
            "AND tsv @@ q ORDER BY rank DESC LIMIT 10"
        )
        for _ in range(SEARCHES):
            words = rng.choice(rows)[1].split()
            query = " ".join(rng.sample(words, k=rng.choice((1, 2))))
            floor_timings.append(
                _timed(
                    lambda q=query: floor_conn.execute(
                        search_sql, (q, "bench:floor", "notes")
                    ).fetchall()
                )
            )
            hits: list[Any] = []
            timings.append(
                _timed(lambda q=query, h=hits: h.extend(backend.search("notes", q, limit=10)))
            )
            assert hits, query
        backend.close()
        floor_conn.close()
        copy_conn.close()
    timings.sort()
    floor_timings.sort()
    return {
        "entries": size,
        "floor_us_per_row": floor / size * 1e6,
        "copy_us_per_row": copy / size * 1e6,
        "batched_put_us_per_row": batched / size * 1e6,
        "batched_vs_floor": batched / floor,
        "batched_vs_copy": batched / copy,
        "single_put_us": single / SINGLE_PUTS * 1e6,
        "bare_select_us": bare / GETS * 1e6,
        "get_us": get / GETS * 1e6,
        "get_vs_select": get / bare,
        "search_median_ms": statistics.median(timings) * 1e3,
        "search_p95_ms": timings[int(len(timings) * 0.95)] * 1e3,
        "bare_search_p95_ms": floor_timings[int(len(floor_timings) * 0.95)] * 1e3,
    }


def _writer(dsn: str, name: str, me: int, plain: bool, barrier: Any) -> None:
    """One concurrent writer: its own rows, in batches, through the store or plain psycopg."""
    rows = make_rows(ROWS_PER_WRITER, seed=100 + me, prefix=f"w{me}")
    if plain:
        conn = psycopg.connect(dsn, autocommit=True, options=f"-c search_path={name}")
        params = _params(rows, f"bench:w{me}")
        barrier.wait(BARRIER_TIMEOUT_S)
        for offset in range(0, len(params), BATCH):
            with conn.transaction(), conn.cursor() as cursor:
                cursor.executemany(INSERT, params[offset : offset + BATCH])
        conn.close()
        return
    backend = PostgresBackend(dsn, schema=name, project=f"bench:w{me}", pool_size=1)
    barrier.wait(BARRIER_TIMEOUT_S)
    for offset in range(0, len(rows), BATCH):
        chunk = rows[offset : offset + BATCH]
        backend.write_many("notes", {path: StoredEntry(content) for path, content in chunk})
    backend.close()


def _writers_rate(dsn: str, plain: bool, round_: int) -> float:
    """Rows per second of WRITERS processes writing their rows at once into a fresh schema."""
    ctx = multiprocessing.get_context("spawn")
    with schema(f"bench_conc_{os.getpid()}_{int(plain)}_{round_}", dsn) as name:
        _migrated(dsn, name).close()
        barrier = ctx.Barrier(WRITERS + 1)
        procs = [
            ctx.Process(target=_writer, args=(dsn, name, me, plain, barrier))
            for me in range(WRITERS)
        ]
        for proc in procs:
            proc.start()
        try:
            barrier.wait(BARRIER_TIMEOUT_S)
        except threading.BrokenBarrierError:
            for proc in procs:
                proc.kill()
            raise SystemExit("a writer could not start (is the server full?)") from None
        start = time.perf_counter()
        for proc in procs:
            proc.join()
        elapsed = time.perf_counter() - start
        assert all(proc.exitcode == 0 for proc in procs)
    return WRITERS * ROWS_PER_WRITER / elapsed


def concurrent(dsn: str) -> dict[str, float]:
    """WRITERS processes at once, plain psycopg then the store, alternating for ROUNDS rounds;
    the best rate of each (the least disturbed by other load on the machine)."""
    floors, stores = [], []
    for r in range(ROUNDS):
        floors.append(_writers_rate(dsn, True, r))
        stores.append(_writers_rate(dsn, False, r))
    return {
        "writers": WRITERS,
        "rows": WRITERS * ROWS_PER_WRITER,
        "floor_rows_per_s": max(floors),
        "store_rows_per_s": max(stores),
        "store_time_vs_floor": max(floors) / max(stores),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=int, nargs="*", default=[10_000, 100_000], help="none: writers only"
    )
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
        ("bare search p95 ms", "bare_search_p95_ms", "{:.2f}"),
    ]
    if results:
        print(" | ".join(title for title, _, _ in columns))
    for row in results:
        print(" | ".join(fmt.format(row[key]).rjust(len(title)) for title, key, fmt in columns))
    throughput = concurrent(args.dsn)
    print(
        f"{WRITERS} concurrent writers, {throughput['rows']} rows: store "
        f"{throughput['store_rows_per_s']:.0f} rows/s, plain executemany "
        f"{throughput['floor_rows_per_s']:.0f} rows/s "
        f"(the store takes {throughput['store_time_vs_floor']:.2f}× the floor's time)"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    payload = {"results": results, "concurrent": throughput, "at": time.time()}
    RESULTS.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
