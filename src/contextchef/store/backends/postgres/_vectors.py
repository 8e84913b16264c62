"""The plans of the `vectors` capability on PostgreSQL: rows of `entry_vectors` (m005).

A vector is a little-endian float64 `BYTEA` (`contextchef.store.vectors.pack`), keyed by
project, namespace and path (encoded as entry paths are, see `_sql.encode`). `nearest` reads
the namespace's vectors under the prefix and scores them exactly in the client, as the SQLite
backend does (NumPy when importable), so every backend ranks alike. (`pgvector`, where the
server has it, is a later step.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from contextchef.store.backends.postgres._sql import Plan, Query, decode, encode
from contextchef.store.vectors import numpy_or_none, pack, rank, rank_matrix, unpack

__all__ = ["delete_vectors", "nearest", "put_vectors"]

_SCOPE = "project = %s AND namespace = %s"


def put_vectors(pid: str, ns: str, vectors: Mapping[str, Sequence[float]]) -> Plan:
    rows = [(pid, ns, encode(path), len(v), pack(v)) for path, v in vectors.items()]
    if rows:
        yield Query(
            "INSERT INTO entry_vectors (project, namespace, path, dims, vector) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (project, namespace, path) "
            "DO UPDATE SET dims = excluded.dims, vector = excluded.vector",
            rows,
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


def nearest(
    pid: str, ns: str, vector: Sequence[float], metric: str, prefix: str, limit: int | None
) -> Plan:
    rows = yield Query(
        f"SELECT path, vector FROM entry_vectors WHERE {_SCOPE} AND dims = %s "
        "AND starts_with(path, %s)",
        (pid, ns, len(vector), encode(prefix)),
        alone=True,
    )
    np = numpy_or_none()
    if np is not None:
        matrix = np.frombuffer(b"".join(bytes(row[1]) for row in rows), dtype="<f8")
        paths = [decode(str(row[0])) for row in rows]
        matrix = matrix.reshape(len(rows), len(vector))
        return rank_matrix(np, vector, paths, matrix, metric=metric, limit=limit)
    items = [(decode(str(path)), unpack(bytes(blob))) for path, blob in rows]
    return rank(vector, items, metric=metric, limit=limit)
