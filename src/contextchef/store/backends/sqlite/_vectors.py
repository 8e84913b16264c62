"""The vectors of a semantic index in SQLite: rows of `entry_vectors` (see `steps.m007`).

Each vector is a little-endian float64 BLOB (`contextchef.store.vectors.pack`), and a float32
copy for sqlite-vec (`_vec.py`), which ranks in SQL where this interpreter can load it. Else
`nearest` scores the namespace's vectors exactly, as a `VectorSet` (NumPy when it is
importable), so SQLite ranks exactly as the in-memory and filesystem backends do. The set is
read once and kept (`VectorCache`): this backend's own writes update it in place once they
commit, and another connection's commit drops it. With sqlite-vec, the set is read only once
the namespace was searched `READ_AFTER` times without a change in between.
`IndexVectors` is the backend's vector capability (`put_vectors`, `delete_vectors`, `nearest`)
over its open database.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence

from contextchef.store.backends.sqlite._database import OpenDatabase
from contextchef.store.backends.sqlite._vec import load, nearest_in_sql, pack_f32
from contextchef.store.vectors import VectorSet, pack, unpack

__all__ = [
    "IndexVectors",
    "VectorCache",
    "delete_orphans",
    "delete_vectors",
    "nearest_vectors",
    "put_vectors",
]

_SCOPE = "project_id = ? AND namespace = ?"

READ_AFTER = 8
"""Queries of a namespace sqlite-vec answers after a change before its vectors are read into
memory (about what those queries cost in all, ~0.1 s each for 100,000 vectors): a store that
writes between its searches never reads them all, one that searches on gets an in-memory product
(see `_vec`)."""


def put_vectors(
    conn: sqlite3.Connection, pid: int, ns: str, vectors: Mapping[str, Sequence[float]]
) -> None:
    conn.executemany(
        "INSERT INTO entry_vectors(project_id, namespace, path, dims, vector, vector_f32) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(project_id, namespace, path) DO UPDATE SET "
        "dims = excluded.dims, vector = excluded.vector, vector_f32 = excluded.vector_f32",
        [
            (pid, ns, path, len(vector), pack(vector), pack_f32(vector))
            for path, vector in vectors.items()
        ],
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


_ENTRY_OF_KEY = (
    "CASE WHEN instr(v.path, '//') > 0 THEN substr(v.path, 1, instr(v.path, '//') - 1) "
    "ELSE v.path END"
)
"""The entry path of a vector key (`contextchef.store.orphans.entry_of`), in SQL."""


def delete_orphans(conn: sqlite3.Connection) -> int:
    """Delete every vector whose entry is gone, in every project (`contextchef db vacuum`);
    how many. An entry is a row of `entries`, or the current version in `memories`."""
    cursor = conn.execute(
        "DELETE FROM entry_vectors AS v WHERE NOT EXISTS (SELECT 1 FROM entries AS e "
        "WHERE e.project_id = v.project_id AND e.namespace = v.namespace "
        f"AND e.path = {_ENTRY_OF_KEY}) AND NOT EXISTS (SELECT 1 FROM memories AS m "
        "WHERE m.project_id = v.project_id AND m.namespace = v.namespace "
        f"AND m.key = {_ENTRY_OF_KEY} AND m.superseded_by IS NULL AND m.deleted_at IS NULL)"
    )
    return max(cursor.rowcount, 0)


class VectorCache:
    """The vectors of the namespaces searched lately, as `VectorSet`s (NumPy rows kept with
    them), reused while the database changes only by this backend's own committed vector
    writes, which they take in place (`wrote`); another connection's commit moves SQLite's
    `PRAGMA data_version`, and a write inside a batch still open moves `writes`: either drops
    them all. Also whether
    sqlite-vec is loaded into the connection (tried once per connection, see `_vec`), and
    how many queries it answered per namespace since the last change (`in_sql`)."""

    __slots__ = ("_in_sql", "_sets", "_stamp", "vec", "writes")

    def __init__(self) -> None:
        self._sets: dict[tuple[int, str], VectorSet] = {}
        self._in_sql: dict[tuple[int, str], int] = {}
        self._stamp: tuple[int, int] | None = None
        self.writes = 0
        self.vec: tuple[sqlite3.Connection, bool] | None = None

    def _refresh(self, conn: sqlite3.Connection) -> None:
        stamp = (int(conn.execute("PRAGMA data_version").fetchone()[0]), self.writes)
        if stamp != self._stamp:
            self._sets.clear()
            self._in_sql.clear()
            self._stamp = stamp

    def in_sql(self, conn: sqlite3.Connection, pid: int, ns: str) -> bool:
        """Whether sqlite-vec should answer this query of `ns`: it is loaded, the vectors are
        not in memory already, and it answered fewer than `READ_AFTER` queries since the last
        change (counting this one)."""
        if not self.vec_loaded(conn):
            return False
        self._refresh(conn)
        if (pid, ns) in self._sets:
            return False
        count = self._in_sql[pid, ns] = self._in_sql.get((pid, ns), 0) + 1
        return count <= READ_AFTER

    def vec_loaded(self, conn: sqlite3.Connection) -> bool:
        """Whether sqlite-vec ranks on `conn` (loaded on the first call for a connection)."""
        if self.vec is None or self.vec[0] is not conn:
            self.vec = (conn, load(conn))
        return self.vec[1]

    def wrote(
        self, conn: sqlite3.Connection, pid: int, ns: str, change: Callable[[VectorSet], None]
    ) -> None:
        """This backend's own vector write, just committed on `conn`, as the `change` it makes
        to a set: the namespace's set in memory, if one is kept, takes it in place (a query
        after a write costs the write, not a read of every vector), and sqlite-vec's count
        starts again. A write inside a batch still open may yet roll back: then everything
        kept is dropped, as for another connection's commit."""
        if conn.in_transaction:
            self.writes += 1
            return
        self._in_sql.pop((pid, ns), None)
        kept = self._sets.get((pid, ns))
        if kept is not None:
            change(kept)

    def vectors(self, conn: sqlite3.Connection, pid: int, ns: str) -> VectorSet:
        self._refresh(conn)
        found = self._sets.get((pid, ns))
        if found is None:
            rows = conn.execute(
                f"SELECT path, vector FROM entry_vectors WHERE {_SCOPE}", (pid, ns)
            ).fetchall()
            found = self._sets[pid, ns] = VectorSet({str(p): unpack(blob) for p, blob in rows})
        return found


def nearest_vectors(
    conn: sqlite3.Connection,
    cache: VectorCache,
    pid: int,
    ns: str,
    vector: Sequence[float],
    metric: str,
    prefix: str,
    limit: int | None,
) -> list[tuple[str, float]]:
    if cache.in_sql(conn, pid, ns):
        ranked = nearest_in_sql(conn, pid, ns, vector, metric, prefix, limit)
        if ranked is not None:
            return ranked
    found = cache.vectors(conn, pid, ns)
    return found.nearest(vector, metric=metric, prefix=prefix, limit=limit)


class IndexVectors:
    """`SQLiteBackend`'s `put_vectors`, `delete_vectors` and `nearest` over its open database
    `db`, each call in its own transaction (`pid()`: the project's id, resolved on first use),
    reading through one `VectorCache`."""

    __slots__ = ("_db", "_pid", "cache")

    def __init__(self, db: OpenDatabase, pid: Callable[[], int]) -> None:
        self._db, self._pid, self.cache = db, pid, VectorCache()

    def put(self, ns: str, vectors: Mapping[str, Sequence[float]]) -> None:
        pid = self._pid()
        with self._db.lock:  # the cache follows the commit before another call reads it
            with self._db.writing(f"indexing {ns}", ns=ns) as conn:
                put_vectors(conn, pid, ns, vectors)
            self.cache.wrote(conn, pid, ns, lambda kept: kept.put(vectors))

    def delete(self, ns: str, paths: Sequence[str] | None) -> None:
        pid = self._pid()
        with self._db.lock:
            with self._db.writing(f"unindexing {ns}", ns=ns) as conn:
                delete_vectors(conn, pid, ns, paths)
            self.cache.wrote(conn, pid, ns, lambda kept: kept.delete(paths))

    def nearest(
        self, ns: str, vector: Sequence[float], metric: str, prefix: str, limit: int | None
    ) -> list[tuple[str, float]]:
        pid = self._pid()
        with self._db.connection(f"searching the vectors of {ns}", ns=ns) as conn:
            return nearest_vectors(conn, self.cache, pid, ns, vector, metric, prefix, limit)
