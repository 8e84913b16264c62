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
  while the database is unchanged; with sqlite-vec loaded, `sqlite_vec: true`, it ranks in SQL
  and reads only the candidates) and PostgreSQL's, each as a ratio to a brute-force floor
  on the same vectors held in memory: NumPy (a normalised matrix, one product,
  `argpartition`) when importable, else pure Python (pre-normalised vectors, one dot product
  each, `heapq.nlargest`).

`query_after_write_<backend>_ms`: a query right after one vector is written (what a store
that writes and searches in turn pays: the SQLite exact scorer reads every vector again, the
in-memory one rebuilds its matrix, sqlite-vec reads nothing more). Each query figure is the
median of `--repeats` runs; `_min_ms` is the fastest.

PostgreSQL joins when `--dsn` (default: `CONTEXTCHEF_TEST_PG_DSN`, else the local test server)
answers: the same two figures in a schema of its own, dropped afterwards (vectors as `bytea`,
scored in the client; `pgvector` is not used yet).

Run: `.venv/bin/python benchmarks/semantic.py [--notes 10000] [--dims 64] [--repeats 5]
[--dsn DSN]`; sqlite-vec needs an interpreter whose `sqlite3` loads extensions, e.g. a venv of
Debian's Python with `contextchef[vec]` and NumPy. Writes `benchmarks/results/semantic.json`
(git-ignored).
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
CLOCK = time.process_time
"""CPU time of the process (NumPy's threads included): on a machine shared with other work,
wall time mostly measures the others."""


def vectors(count: int, dims: int, seed: int = 28) -> list[list[float]]:
    rng = random.Random(seed)
    return [[rng.gauss(0.0, 1.0) for _ in range(dims)] for _ in range(count)]


def times(fn: Callable[[], Any], repeats: int) -> list[float]:
    measured = []
    for _ in range(repeats):
        start = CLOCK()
        fn()
        measured.append(CLOCK() - start)
    return measured


def median_time(fn: Callable[[], Any], repeats: int) -> float:
    return statistics.median(times(fn, repeats))


def record(figures: dict[str, Any], key: str, fn: Callable[[], Any], repeats: int) -> None:
    """`key_ms` (the median of `repeats` runs) and `key_min_ms` (the fastest)."""
    measured = times(fn, repeats)
    figures[f"{key}_ms"] = 1e3 * statistics.median(measured)
    figures[f"{key}_min_ms"] = 1e3 * min(measured)


def python_floor(matrix: Sequence[Sequence[float]], query: Sequence[float]) -> list[int]:
    """Brute force without NumPy: the vectors are normalised beforehand, so one dot each."""
    norm = math.sqrt(sum(x * x for x in query))
    q = [x / norm for x in query]
    scores = ((sum(a * b for a, b in zip(q, row, strict=True)), i) for i, row in enumerate(matrix))
    return [i for _, i in heapq.nlargest(10, scores)]


def postgres(dsn: str | None, schema: str) -> Any:
    """A PostgreSQL backend in `schema`, or None when there is no server (or no driver)."""
    if not dsn:
        return None
    try:
        from contextchef.store.backends.postgres import PostgresBackend

        backend = PostgresBackend(dsn, schema=schema, project="bench:semantic", pool_size=2)
        backend.list("notes")
    except Exception as exc:
        print(f"PostgreSQL left out: {exc}")
        return None
    return backend


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
    figures: dict[str, Any] = {"notes": notes, "dims": dims, "numpy": np is not None}

    tag = secrets.token_hex(3)
    schemas = [f"bench_semantic_{tag}_{i}" for i in range(2)]
    makers: list[tuple[str, Callable[[int], Any]]] = [
        ("memory", lambda i: InMemoryBackend()),
        ("sqlite", lambda i: SQLiteBackend(Path(tmp) / f"s{i}.db", project="bench:s")),
    ]
    if postgres(dsn, schemas[0]) is not None:
        makers.append(("postgres", lambda i: postgres(dsn, schemas[i])))
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
            figures[f"first_query_{name}_ms"] = 1e3 * median_time(
                lambda backend=backend: backend.nearest("notes", query, limit=10), 1
            )  # SQLite reads its vectors here, then keeps them while the database is unchanged
            record(
                figures,
                f"query_{name}",
                lambda backend=backend: backend.nearest("notes", query, limit=10),
                repeats,
            )

            def write_then_query(backend: Any = backend) -> Any:
                backend.put_vectors("notes", {"n/000000.md": rows[0]})
                return backend.nearest("notes", query, limit=10)

            record(figures, f"query_after_write_{name}", write_then_query, repeats)
            vec = getattr(getattr(backend, "_vectors", None), "vec", None)
            if vec is not None:
                figures[f"{name}_vec"] = bool(vec[1])  # sqlite-vec ranked the SQLite queries

    if dsn and len(makers) > 2:
        for name in schemas:
            drop(dsn, name)
    items = [(f"n/{i:06d}.md", tuple(row)) for i, row in enumerate(rows)]
    record(figures, "query_python", lambda: rank(query, items, limit=10), repeats)
    if np is not None:
        record(figures, "query_numpy", lambda: rank(query, items, limit=10, numpy=np), repeats)
        matrix = np.asarray(rows, dtype=np.float64)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        q = np.asarray(query, dtype=np.float64)

        def numpy_floor() -> Any:
            scores = matrix @ (q / np.linalg.norm(q))
            top = np.argpartition(-scores, 10)[:10]
            return top[np.argsort(-scores[top])]

        floor_ms = 1e3 * median_time(numpy_floor, max(50, repeats * 10))  # fast: more runs
        figures["floor"] = "numpy brute force"
    else:
        normalised = [[x / math.sqrt(sum(y * y for y in row)) for x in row] for row in rows]
        floor_ms = 1e3 * median_time(lambda: python_floor(normalised, query), repeats)
        figures["floor"] = "pure-Python brute force (NumPy is not installed)"
    figures["floor_ms"] = floor_ms
    for key in [k for k in figures if k.startswith("query_") and k.endswith("_ms")]:
        if not key.endswith("_min_ms"):
            figures[key.replace("_ms", "_vs_floor")] = figures[key] / floor_ms
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--dims", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dsn", default=DSN, help="PostgreSQL to measure ('' to leave it out)")
    args = parser.parse_args()
    results = [bench(notes, args.dims, args.repeats, args.dsn) for notes in args.notes]
    for row in results:
        row["load_average"] = os.getloadavg()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    for row in results:
        print(json.dumps(row, indent=2))


if __name__ == "__main__":
    main()
