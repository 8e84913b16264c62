"""sqlite-vec, where this interpreter can load it: a semantic index ranked in SQL.

`pip install contextchef[vec]` brings `sqlite-vec`; it is used when it is importable *and* the
interpreter's `sqlite3` can load extensions (`enable_load_extension`: Debian's and most system
Pythons can, some builds, pyenv's among them, cannot). Then `nearest` with a `limit` and the
cosine or L2 metric asks SQLite for the best candidates by the float32 copy of each vector
(`entry_vectors.vector_f32`, see `steps.m008`), `CANDIDATES` times more than asked, and
rescores those exactly from the float64 `vector` (`contextchef.store.vectors.rank`): scores
and ties are exactly those of every other backend, while no vector but the candidates' is read
into Python. Everything else (no limit, the inner product, no sqlite-vec) scores exactly from
the vectors `VectorCache` keeps (`_vectors.py`).
"""

from __future__ import annotations

import sqlite3
import sys
from array import array
from collections.abc import Sequence

from contextchef.store.vectors import numpy_or_none, rank, unpack

__all__ = ["CANDIDATES", "DISTANCES", "load", "nearest_in_sql", "pack_f32"]

DISTANCES = {"cosine": "vec_distance_cosine", "l2": "vec_distance_l2"}
"""sqlite-vec's distance (lower is nearer) for each metric it ranks."""

CANDIDATES = 4
"""Candidates fetched per hit asked (at least 32 more): float32 rounding may reorder near
neighbours, never by that much."""


def pack_f32(vector: Sequence[float]) -> bytes:
    """`vector` as little-endian float32 bytes (sqlite-vec's vector format)."""
    packed = array("f", vector)
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts
        packed.byteswap()
    return packed.tobytes()


def load(conn: sqlite3.Connection) -> bool:
    """Load sqlite-vec into `conn`; False when it is not installed or cannot be loaded."""
    enable = getattr(conn, "enable_load_extension", None)
    if enable is None:
        return False
    try:
        import sqlite_vec  # the `vec` extra
    except ImportError:
        return False
    try:
        enable(True)
        try:
            sqlite_vec.load(conn)
        finally:
            enable(False)
    except (sqlite3.Error, AttributeError, OSError):
        return False
    return True


def nearest_in_sql(
    conn: sqlite3.Connection,
    pid: int,
    ns: str,
    vector: Sequence[float],
    metric: str,
    prefix: str,
    limit: int | None,
) -> list[tuple[str, float]] | None:
    """The best `limit` `(path, score)` pairs, ranked by sqlite-vec and rescored exactly; None
    when sqlite-vec does not rank this query (no limit, or the inner product)."""
    distance = DISTANCES.get(metric)
    if distance is None or limit is None:
        return None
    if limit <= 0:
        return []
    scope = "project_id = ? AND namespace = ? AND dims = ? AND substr(path, 1, ?) = ?"
    args = (pid, ns, len(vector), len(prefix), prefix)
    rows = conn.execute(
        f"SELECT path, vector, {distance}(vector_f32, ?) AS d FROM entry_vectors "
        f"WHERE {scope} AND vector_f32 IS NOT NULL ORDER BY d IS NULL, d, path LIMIT ?",
        (pack_f32(vector), *args, limit * CANDIDATES + 32),
    ).fetchall()
    rows += conn.execute(  # none since m008 filled them in; kept exact all the same
        f"SELECT path, vector, NULL FROM entry_vectors WHERE {scope} AND vector_f32 IS NULL",
        args,
    ).fetchall()
    items = [(str(path), unpack(blob)) for path, blob, _ in rows]
    return rank(vector, items, metric=metric, limit=limit, numpy=numpy_or_none())
