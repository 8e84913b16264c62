"""The vectors of a semantic index in SQLite: rows of `entry_vectors` (see `steps.m007`).

Each vector is a little-endian float64 BLOB (`contextchef.store.vectors.pack`); `nearest`
reads the namespace's rows under the prefix and scores them exactly in Python (NumPy when it
is importable), so SQLite ranks exactly as the in-memory and filesystem backends do.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence

from contextchef.store.backends.sqlite._query import prefix_bounds
from contextchef.store.vectors import numpy_or_none, pack, rank, rank_matrix, unpack

__all__ = ["delete_vectors", "nearest_vectors", "put_vectors"]

_SCOPE = "project_id = ? AND namespace = ?"


def put_vectors(
    conn: sqlite3.Connection, pid: int, ns: str, vectors: Mapping[str, Sequence[float]]
) -> None:
    conn.executemany(
        "INSERT INTO entry_vectors(project_id, namespace, path, dims, vector) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT(project_id, namespace, path) "
        "DO UPDATE SET dims = excluded.dims, vector = excluded.vector",
        [(pid, ns, path, len(vector), pack(vector)) for path, vector in vectors.items()],
    )


def delete_vectors(
    conn: sqlite3.Connection, pid: int, ns: str, paths: Sequence[str] | None
) -> None:
    if paths is None:
        conn.execute(f"DELETE FROM entry_vectors WHERE {_SCOPE}", (pid, ns))
        return
    conn.executemany(
        f"DELETE FROM entry_vectors WHERE {_SCOPE} AND path = ?",
        [(pid, ns, path) for path in paths],
    )


def nearest_vectors(
    conn: sqlite3.Connection,
    pid: int,
    ns: str,
    vector: Sequence[float],
    metric: str,
    prefix: str,
    limit: int | None,
) -> list[tuple[str, float]]:
    sql = f"SELECT path, vector FROM entry_vectors WHERE {_SCOPE} AND dims = ?"
    args: list[object] = [pid, ns, len(vector)]
    if prefix:
        low, high = prefix_bounds(prefix)
        sql += " AND path >= ?" + (" AND path < ?" if high is not None else "")
        args += [low] + ([high] if high is not None else [])
    rows = conn.execute(sql, args).fetchall()
    np = numpy_or_none()
    if np is not None:  # every BLOB into one matrix, without a Python float in between
        matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype="<f8")
        matrix = matrix.reshape(len(rows), len(vector))
        paths = [str(row[0]) for row in rows]
        return rank_matrix(np, vector, paths, matrix, metric=metric, limit=limit)
    items = [(str(path), unpack(blob)) for path, blob in rows]
    return rank(vector, items, metric=metric, limit=limit)
