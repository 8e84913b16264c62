"""Benchmark of the semantic index: indexing N notes and a top-10 query, against a floor.

The same vectors (seeded Gaussian, `--dims` numbers each) go everywhere: an embedding function
looks each note's vector up, so no model runs and every figure is the store's own cost.

- Indexing: `Store.restore` of N notes into an indexed in-memory and SQLite store (one
  embedding call and one vector write per batch of 64), per note, against the same restore
  without an index (the floor: the entries alone).
- Query, top 10 by cosine: `contextchef.store.vectors.rank` over `(path, vector)` pairs in
  pure Python and with NumPy (when importable: the pairs become a matrix on every call), the
  in-memory backend's `nearest` (with NumPy, a matrix kept between queries), the SQLite
  backend's (the first query reads the BLOBs, `first_query_sqlite_ms`; later ones reuse them
  while the database is unchanged) and PostgreSQL's, each as a ratio to a brute-force floor
  on the same vectors held in memory: NumPy (a normalised matrix, one product,
  `argpartition`) when importable, else pure Python (pre-normalised vectors, one dot product
  each, `heapq.nlargest`).

`query_after_write_<backend>_ms`: a query right after one vector is written (what a store
that writes and searches in turn pays: the SQLite exact scorer reads every vector again, the
in-memory one rebuilds its matrix, sqlite-vec reads nothing more), timed after the interleaved
rounds, since a write drops what the plain queries keep; `_min_ms` is the fastest.
sqlite-vec needs an interpreter whose `sqlite3` loads extensions, e.g. a venv of Debian's Python
with `contextchef[vec]` and NumPy (`sqlite_vec` in the results says whether it ranked).

PostgreSQL joins when `--dsn` (default: `CONTEXTCHEF_TEST_PG_DSN`, else the local test server)
answers, twice, each in a schema of its own dropped afterwards: `postgres_exact`
(`pgvector="off"`: the vectors travel in binary format and are scored in the client) and,
where the database has the `vector` extension installed, `postgres_pgvector` (the database
ranks float32 embeddings, the client rescores the best candidates exactly).

Where pgvector is installed, `postgres_hnsw` is the pgvector leg with an HNSW index built
after the notes are written (`build_vector_index`, `hnsw_build_s`): approximate, so its
`hnsw_recall_at_10` against the exact top 10 is reported beside its time.

Every figure is wall-clock time (a PostgreSQL call is mostly the server's work, which the CPU
time of this process would not count); each PostgreSQL table is analysed after the writes, as
autovacuum would. Indexing runs once. Queries: every contender timed once per round, round
after round (interleaved, so a burst of load from other work hits them alike):
`query_<name>_ms` is the median, `query_<name>_min_ms` the best round. The load average before
and after the queries is in `load`.

Run: `.venv/bin/python benchmarks/semantic.py [--notes 10000 100000] [--dims 64]
[--repeats 5] [--dsn DSN]`. Writes `benchmarks/results/semantic.json` (git-ignored).
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import os
import random
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from contextchef.store import InMemoryBackend, Store, StoredEntry
from contextchef.store.backends.sqlite import SQLiteBackend
from contextchef.store.vectors import numpy_or_none, rank

for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")  # before NumPy loads: CPU time of one thread, no spin

RESULTS = Path(__file__).parent / "results" / "semantic.json"
DSN = os.environ.get("CONTEXTCHEF_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/test")
CLOCK = time.perf_counter
"""Wall-clock time: a PostgreSQL call is mostly the server's work, which the CPU time of this
process would not count (on a shared machine, report the load and the best round too)."""


def vectors(count: int, dims: int, seed: int = 28) -> list[list[float]]:
    rng = random.Random(seed)
    return [[rng.gauss(0.0, 1.0) for _ in range(dims)] for _ in range(count)]


def median_time(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = CLOCK()
        fn()
        times.append(CLOCK() - start)
    return statistics.median(times)


def python_floor(matrix: Sequence[Sequence[float]], query: Sequence[float]) -> list[int]:
    """Brute force without NumPy: the vectors are normalised beforehand, so one dot each."""
    norm = math.sqrt(sum(x * x for x in query))
    q = [x / norm for x in query]
    scores = ((sum(a * b for a, b in zip(q, row, strict=True)), i) for i, row in enumerate(matrix))
    return [i for _, i in heapq.nlargest(10, scores)]


def postgres(dsn: str | None, schema: str, pgvector: str = "off") -> Any:
    """A PostgreSQL backend in `schema`, or None when there is no server (or no driver), or
    when `pgvector` is asked for and the database does not have it installed."""
    if not dsn:
        return None
    try:
        from contextchef.store.backends.postgres import PostgresBackend

        backend = PostgresBackend(
            dsn, schema=schema, project="bench:semantic", pool_size=2, pgvector=pgvector
        )
        backend.list("notes")
    except Exception as exc:
        print(f"PostgreSQL left out: {exc}")
        return None
    if pgvector != "off" and backend.pgvector is None:
        print("PostgreSQL with pgvector left out: the extension is not installed")
        backend.close()
        return None
    return backend


def interleaved(contenders: dict[str, Callable[[], Any]], rounds: int) -> dict[str, list[float]]:
    """Wall-clock seconds of each contender, timed once per round, in turn."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def analyse(dsn: str | None, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn or "", autocommit=True) as conn:
        conn.execute(f'ANALYZE "{schema}".entry_vectors')


def drop(dsn: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def bench(notes: int, dims: int, repeats: int, dsn: str | None = None) -> dict[str, Any]:
    np = numpy_or_none()
    data = vectors(notes + 1, dims)
    query, rows = data[0], data[1:]
    texts = {f"note {i}": row for i, row in enumerate(rows)}
    snapshot = {f"n/{i:06d}.md": StoredEntry(f"note {i}") for i in range(notes)}

    def embed(batch: list[str]) -> list[list[float]]:
        return [texts.get(text, query) for text in batch]

    index = {"embed": embed, "dims": dims}

    def snapshot_vectors() -> Any:
        return ((f"n/{i:06d}.md", row) for i, row in enumerate(rows))

    figures: dict[str, Any] = {"notes": notes, "dims": dims, "numpy": np is not None}

    tag = secrets.token_hex(3)
    schemas: list[str] = []

    def pg_maker(mode: str) -> Callable[[int], Any]:
        def make(i: int) -> Any:
            schemas.append(f"bench_semantic_{tag}_{len(schemas)}")
            return postgres(dsn, schemas[-1], pgvector=mode)

        return make

    makers: list[tuple[str, Callable[[int], Any]]] = [
        ("memory", lambda i: InMemoryBackend()),
        ("sqlite", lambda i: SQLiteBackend(Path(tmp) / f"s{i}.db", project="bench:s")),
    ]
    pg_legs = (("postgres_exact", "off"), ("postgres_pgvector", "installed"))
    for name, mode in (*pg_legs, ("postgres_hnsw", "installed")):
        probe = pg_maker(mode)(0)
        if probe is not None:
            probe.close()
            makers.append((name, pg_maker(mode)))
    searchers: dict[str, Callable[[], Any]] = {}
    opened: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in makers:
            plain = Store(make(0)).namespace("notes")
            floor = median_time(lambda plain=plain: plain.restore(snapshot), 1)
            indexed_store = Store(make(1), index=index)
            indexed = indexed_store.namespace("notes")
            cost = median_time(lambda indexed=indexed: indexed.restore(snapshot), 1)
            figures[f"index_{name}_us_per_note"] = cost / notes * 1e6
            figures[f"index_{name}_vs_plain_restore"] = cost / floor
            backend: Any = indexed_store.backend
            opened.append(backend)
            if name.startswith("postgres"):
                analyse(dsn, schemas[-1])
            if name == "postgres_hnsw":
                start = CLOCK()
                backend.build_vector_index(dims, "cosine")
                figures["hnsw_build_s"] = CLOCK() - start
                analyse(dsn, schemas[-1])
                found = {path for path, _ in backend.nearest("notes", query, limit=10)}
                exact = {path for path, _ in rank(query, list(snapshot_vectors()), limit=10)}
                figures["hnsw_recall_at_10"] = len(found & exact) / 10
            figures[f"first_query_{name}_ms"] = 1e3 * median_time(
                lambda backend=backend: backend.nearest("notes", query, limit=10), 1
            )  # SQLite reads its vectors here, then keeps them while the database is unchanged
            searchers[name] = lambda backend=backend: backend.nearest("notes", query, limit=10)

        items = [(f"n/{i:06d}.md", tuple(row)) for i, row in enumerate(rows)]
        searchers["python"] = lambda: rank(query, items, limit=10)
        if np is not None:
            searchers["numpy"] = lambda: rank(query, items, limit=10, numpy=np)
            matrix = np.asarray(rows, dtype=np.float64)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            q = np.asarray(query, dtype=np.float64)

            def numpy_floor() -> Any:
                scores = matrix @ (q / np.linalg.norm(q))
                top = np.argpartition(-scores, 10)[:10]
                return top[np.argsort(-scores[top])]

            searchers["floor"] = numpy_floor
            figures["floor"] = "numpy brute force"
        else:
            normalised = [[x / math.sqrt(sum(y * y for y in row)) for x in row] for row in rows]
            searchers["floor"] = lambda: python_floor(normalised, query)
            figures["floor"] = "pure-Python brute force (NumPy is not installed)"
        figures["load"] = os.getloadavg()
        times = interleaved(searchers, repeats)
        figures["load"] = [round(x, 2) for x in (*figures["load"], *os.getloadavg())]
        for (name, _), backend in zip(makers, opened, strict=True):  # after the plain queries:
            vec = getattr(getattr(backend, "_vectors", None), "vec", None)  # a write drops caches
            if vec is not None:
                figures[f"{name}_vec"] = bool(vec[1])  # sqlite-vec ranked the SQLite queries

            def write_then_query(backend: Any = backend) -> Any:
                backend.put_vectors("notes", {"n/000000.md": rows[0]})
                return backend.nearest("notes", query, limit=10)

            spent = []
            for _ in range(repeats):
                start = CLOCK()
                write_then_query()
                spent.append(CLOCK() - start)
            figures[f"query_after_write_{name}_ms"] = 1e3 * statistics.median(spent)
            figures[f"query_after_write_{name}_min_ms"] = 1e3 * min(spent)
        for backend in opened:
            if hasattr(backend, "close") and type(backend).__name__ != "InMemoryBackend":
                backend.close()

    if dsn:
        for name in schemas:
            drop(dsn, name)
    floor_times = times.pop("floor")
    floor_ms = figures["floor_ms"] = 1e3 * statistics.median(floor_times)
    figures["floor_min_ms"] = 1e3 * min(floor_times)
    for name, spent in times.items():
        figures[f"query_{name}_ms"] = 1e3 * statistics.median(spent)
        figures[f"query_{name}_min_ms"] = 1e3 * min(spent)
        figures[f"query_{name}_vs_floor"] = figures[f"query_{name}_ms"] / floor_ms
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--dims", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dsn", default=DSN, help="PostgreSQL to measure ('' to leave it out)")
    args = parser.parse_args()
    results = [bench(notes, args.dims, args.repeats, args.dsn) for notes in args.notes]
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    for row in results:
        print(json.dumps(row, indent=2))


if __name__ == "__main__":
    main()
