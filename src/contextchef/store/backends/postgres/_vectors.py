"""The plans of the `vectors` capability on PostgreSQL: rows of `entry_vectors` (m005, m006).

A vector is a little-endian float64 `BYTEA` (`contextchef.store.vectors.pack`), keyed by
project, namespace and path (encoded as entry paths are, see `_sql.encode`): the exact value,
which every score comes from, so every backend ranks alike (`contextchef.store.vectors`).

Without pgvector, `nearest` reads the namespace's vectors under the prefix in PostgreSQL's
binary format (the bytes as they are, no hex text to decode) and scores them in the client,
NumPy when importable. Measured against the alternative of scoring in the database
(`float8[]` columns, a dot product over `unnest`), this is faster by far: at 10k vectors of 64
numbers, ~20 ms against ~100-170 ms (and 3x faster than the same rows in text format); the
database has no exact vector arithmetic of its own to beat one matrix product.

With pgvector (`_pgvector.PgVector`), each row also has an `embedding vector` (float32): the
database ranks by it with the metric's operator (`<=>` cosine, `<->` L2, `<#>` negative inner
product), `ORDER BY … LIMIT` with the project, namespace, dims and prefix filters in SQL, and
only a pool of the best candidates travels to the client, which rescores them exactly from
their float64 bytes. The pool is `limit` plus `POOL_SLACK`, grown while the float32 distance
of its last row is within `tolerance` of the `limit`-th (a near tie float32 could misorder),
so the answer is the exact scorer's: same paths, same scores. Rows without an embedding (a
number beyond float32, a zero vector, or written by a backend not using pgvector) are always
fetched and scored exactly too. A query without a limit, or one pgvector cannot rank (a zero
vector), is scored exactly in the client.

An HNSW index is never built behind the caller's back, because it changes the answer: it
answers from a graph walk, so it can miss some of the exact top-k (recall below 1), and every
backend's contract is the exact ranking. Where it pays, `build_vector_index(dims, metric)`
builds one (`_pgvector.hnsw_index`: a partial index over `embedding::vector(dims)` per
metric, which the query here matches, with iterative scans on pgvector 0.8+ so the project,
namespace and prefix filters still let `limit` rows through). It pays when a namespace holds
so many vectors that the exact scan is too slow for the caller. Measured here (2 shared cores,
load ~5, vectors of 64 numbers, top 10, `benchmarks/semantic.py`): the exact scan answers in
~7 ms at 10k and ~50-75 ms at 100k (linear: about a second at 1M), an HNSW query in ~4-10 ms,
so below ~50k vectors per namespace it saves a few milliseconds and is not worth its costs:
90 s to build at 100k (writers wait meanwhile), a slower write per vector (the graph insert),
memory for the graph, and exactness (recall@10 0.8 at 100k on random vectors, the hardest
case; real embeddings cluster and fare better).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from contextchef.store.backends.postgres._pgvector import PgVector, embedding_of
from contextchef.store.backends.postgres._sql import Plan, Query, decode, encode
from contextchef.store.vectors import METRICS, numpy_or_none, pack, rank, rank_matrix, unpack

__all__ = ["HNSW_EF_SEARCH", "POOL_SLACK", "delete_vectors", "nearest", "put_vectors", "tolerance"]

_SCOPE = "project = %s AND namespace = %s"
_IN_SCOPE = f"{_SCOPE} AND dims = %s AND starts_with(path, %s)"

_OPERATORS = {"cosine": "<=>", "l2": "<->", "inner_product": "<#>"}
"""pgvector's distance operator per metric (smaller is nearer)."""

POOL_SLACK = 32
"""Candidates fetched beyond `limit`, so float32 near ties at the cut are rescored exactly."""

HNSW_EF_SEARCH = 200
"""The fewest candidates an HNSW scan keeps (pgvector's default, 40, found 7 of the true top
10 among 20k random vectors of 64 numbers here; 200 found 9.5, at ~5 ms)."""


def put_vectors(
    pid: str, ns: str, vectors: Mapping[str, Sequence[float]], pv: PgVector | None = None
) -> Plan:
    """Store or replace vectors, their parameters in binary format (`%b`: no float printed
    and parsed back; twice as fast with pgvector's `float8[]` embeddings)."""
    if not vectors:
        return
    if pv is None:
        yield Query(
            "INSERT INTO entry_vectors (project, namespace, path, dims, vector) "
            "VALUES (%b, %b, %b, %b, %b) ON CONFLICT (project, namespace, path) "
            "DO UPDATE SET dims = excluded.dims, vector = excluded.vector",
            [(pid, ns, encode(path), len(v), pack(v)) for path, v in vectors.items()],
            many=True,
        )
        return
    yield Query(
        "INSERT INTO entry_vectors (project, namespace, path, dims, vector, embedding) "
        f"VALUES (%b, %b, %b, %b, %b, %b::float8[]::{pv.type}) "
        "ON CONFLICT (project, namespace, path) DO UPDATE SET dims = excluded.dims, "
        "vector = excluded.vector, embedding = excluded.embedding",
        [(pid, ns, encode(path), len(v), pack(v), embedding_of(v)) for path, v in vectors.items()],
        many=True,
    )


def delete_vectors(pid: str, ns: str, paths: Sequence[str] | None) -> Plan:
    if paths is None:
        yield Query(f"DELETE FROM entry_vectors WHERE {_SCOPE}", (pid, ns), alone=True)
    elif paths:
        yield Query(
            f"DELETE FROM entry_vectors WHERE {_SCOPE} AND path = %s",
            [(pid, ns, encode(path)) for path in paths],
            many=True,
        )


def tolerance(dims: int, distance: float) -> float:
    """How far pgvector's float32 distance may lie from the float64 one, with a wide margin:
    a dot product of `dims` float32 terms errs by at most about `dims * 2**-24` times the
    product of the norms (1 for cosine; for L2 and inner product, the distance's own scale
    stands in for it, right for vectors of like norms), plus the 9 decimals scores keep."""
    return 4.0 * dims * 2.0**-24 * (1.0 + abs(distance)) + 1e-9


def nearest(
    pid: str,
    ns: str,
    vector: Sequence[float],
    metric: str,
    prefix: str,
    limit: int | None,
    pv: PgVector | None = None,
) -> Plan:
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
    if limit is not None and limit <= 0:
        return []
    scope = (pid, ns, len(vector), encode(prefix))
    query = None if pv is None or limit is None else embedding_of(vector)
    if pv is None or limit is None or query is None:
        rows = yield Query(
            f"SELECT path, vector FROM entry_vectors WHERE {_IN_SCOPE}",
            scope,
            alone=True,
            binary=True,
        )
        return _scored(rows, vector, metric, limit)
    pool = limit + POOL_SLACK
    # The cast is what an HNSW index of these dims indexes (see `_pgvector.hnsw_index`).
    embedding = f"embedding::{pv.type}({len(vector):d})"
    distance = f"{embedding} {pv.operator(_OPERATORS[metric])} %s::float8[]::{pv.type}"
    while True:
        if pv.iterative_scans:  # where an HNSW index answers: go on until `pool` pass
            yield Query(
                "SELECT set_config('hnsw.ef_search', %s, true), "
                "set_config('hnsw.iterative_scan', 'relaxed_order', true)",
                (str(min(max(4 * pool, HNSW_EF_SEARCH), 1000)),),
            )
        rows = yield Query(
            f"(SELECT path, vector, {distance} AS distance FROM entry_vectors "
            f"WHERE {_IN_SCOPE} AND embedding IS NOT NULL ORDER BY distance LIMIT %s) "
            "UNION ALL (SELECT path, vector, NULL FROM entry_vectors "
            f"WHERE {_IN_SCOPE} AND embedding IS NULL)",
            (query, *scope, pool, *scope),
            binary=True,
        )
        ranked = sorted(float(row[2]) for row in rows if row[2] is not None)
        if len(ranked) < pool or ranked[-1] - ranked[limit - 1] > tolerance(
            len(vector), ranked[limit - 1]
        ):
            return _scored([row[:2] for row in rows], vector, metric, limit)
        pool *= 4


def _scored(
    rows: Sequence[Sequence[Any]], vector: Sequence[float], metric: str, limit: int | None
) -> list[tuple[str, float]]:
    """The exact `(path, score)` of `(path, float64 bytes)` rows (binary format: `bytes`
    already, joined without a copy each), best first."""
    np = numpy_or_none()
    if np is not None:
        matrix = np.frombuffer(b"".join([row[1] for row in rows]), dtype="<f8")
        paths = [decode(row[0]) for row in rows]
        matrix = matrix.reshape(len(rows), len(vector))
        return rank_matrix(np, vector, paths, matrix, metric=metric, limit=limit)
    items = [(decode(str(path)), unpack(bytes(blob))) for path, blob in rows]
    return rank(vector, items, metric=metric, limit=limit)
