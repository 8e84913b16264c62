"""Exact vector scoring, written once for every backend that keeps its vectors in this process.

A backend with the `vectors` capability keeps one vector per entry (see `backend.py`) and
answers `nearest(ns, vector, metric=…)` with `(path, score)` pairs, best first. The in-memory,
filesystem and SQLite backends all score here, so they rank identically: exactly, with NumPy
when it is importable (it is not a dependency) and pure Python otherwise.

Scores (higher is better; the LangGraph `PostgresStore` reports the same numbers):

- `cosine`: the cosine similarity, in [-1, 1] (0 for a zero vector);
- `l2`: the negative Euclidean distance;
- `inner_product`: the dot product.

Scores are rounded to `SCORE_DIGITS` decimals, so NumPy and pure Python agree on ties, which
are broken by path.
"""

from __future__ import annotations

import heapq
import importlib
import math
import operator
import sys
from array import array
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

__all__ = [
    "METRICS",
    "SCORE_DIGITS",
    "Metric",
    "VectorSet",
    "numpy_or_none",
    "pack",
    "rank",
    "rank_matrix",
    "unpack",
]

Metric = Literal["cosine", "l2", "inner_product"]
METRICS: tuple[Metric, ...] = ("cosine", "l2", "inner_product")

SCORE_DIGITS = 9
"""Decimals kept in a score: below float noise of either implementation, far above ties."""


def numpy_or_none() -> Any:
    """The `numpy` module when it is importable, else None (NumPy is optional)."""
    try:
        return importlib.import_module("numpy")
    except ImportError:  # pragma: no cover - depends on the environment
        return None


def pack(vector: Sequence[float]) -> bytes:
    """`vector` as little-endian float64 bytes (how SQLite stores it in a BLOB)."""
    packed = array("d", vector)
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts
        packed.byteswap()
    return packed.tobytes()


def unpack(blob: bytes) -> tuple[float, ...]:
    """The vector `pack` wrote."""
    packed = array("d")
    packed.frombytes(blob)
    if sys.byteorder != "little":  # pragma: no cover - big-endian hosts
        packed.byteswap()
    return tuple(packed)


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return float(sum(map(operator.mul, a, b)))


def _scores_python(
    query: Sequence[float], vectors: Sequence[Sequence[float]], metric: Metric
) -> list[float]:
    if metric == "l2":
        return [-math.dist(query, vector) for vector in vectors]
    if metric == "inner_product":
        return [_dot(query, v) for v in vectors]
    q_norm = math.sqrt(_dot(query, query))
    scores = []
    for vector in vectors:
        norms = q_norm * math.sqrt(_dot(vector, vector))
        scores.append(_dot(query, vector) / norms if norms else 0.0)
    return scores


def _scores_numpy(np: Any, query: Any, matrix: Any, metric: Metric, rows: Any) -> Any:
    if metric == "l2":
        return -np.sqrt(((matrix - query) ** 2).sum(axis=1))
    dots = matrix @ query
    if metric == "inner_product":
        return dots
    norms = (np.linalg.norm(matrix, axis=1) if rows is None else rows) * np.linalg.norm(query)
    return np.where(norms == 0, 0.0, dots / np.where(norms == 0, 1.0, norms))


def rank_matrix(
    np: Any,
    query: Sequence[float],
    paths: Sequence[str],
    matrix: Any,
    *,
    metric: str = "cosine",
    limit: int | None = None,
    norms: Any = None,
) -> list[tuple[str, float]]:
    """`rank` over a NumPy matrix whose rows are the vectors of `paths`, in place of the
    items: one product for every score, then only the best `limit` (and whatever ties with
    the last of them) are rounded and ordered in Python, exactly as `rank` orders them.
    `norms`: the rows' norms, when the caller keeps them between queries."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
    if not len(paths) or (limit is not None and limit <= 0):
        return []
    raw = _scores_numpy(np, np.asarray(query, dtype=np.float64), matrix, metric, norms)
    chosen = np.arange(len(paths))
    if limit is not None and limit < len(paths):
        kth = -np.partition(-raw, limit - 1)[limit - 1]
        chosen = np.nonzero(raw >= kth - 10.0**-SCORE_DIGITS)[0]  # near ties may round equal
    scored = [(paths[i], round(float(raw[i]), SCORE_DIGITS)) for i in chosen.tolist()]
    scored.sort(key=_order)
    return scored if limit is None else scored[:limit]


def rank(
    query: Sequence[float],
    items: Iterable[tuple[str, Sequence[float]]],
    *,
    metric: str = "cosine",
    limit: int | None = None,
    numpy: Any = None,
) -> list[tuple[str, float]]:
    """`(path, score)` for every item, best first (ties by path), at most `limit`.

    `numpy` is the module to score with (`numpy_or_none()`), or None for pure Python. Items whose
    vector has another length than `query` are skipped (an index re-configured with other dims).
    """
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
    chosen: Metric = metric
    pairs = [(path, vector) for path, vector in items if len(vector) == len(query)]
    if not pairs or (limit is not None and limit <= 0):
        return []
    if numpy is not None:
        matrix = numpy.asarray([vector for _, vector in pairs], dtype=numpy.float64)
        paths = [path for path, _ in pairs]
        return rank_matrix(numpy, query, paths, matrix, metric=chosen, limit=limit)
    raw = _scores_python(query, [vector for _, vector in pairs], chosen)
    scored = [
        (path, round(score, SCORE_DIGITS)) for (path, _), score in zip(pairs, raw, strict=True)
    ]
    if limit is not None and limit < len(scored):  # the best `limit` only: no full sort
        return heapq.nsmallest(limit, scored, key=_order)
    scored.sort(key=_order)
    return scored


def _order(item: tuple[str, float]) -> tuple[float, str]:
    return (-item[1], item[0])


class _Rows:
    """The vectors of one length as the rows of a NumPy matrix, kept up to date in place: a
    new path takes a new row (the matrix doubles when full), a changed vector rewrites its
    row, a deleted one is replaced by the last row. So a query after a write costs the write's
    rows, not a rebuild of every row (the order of rows never matters: `rank_matrix` orders
    by score, then path)."""

    __slots__ = ("at", "matrix", "norms", "paths")

    def __init__(self, np: Any, dims: int, vectors: Mapping[str, tuple[float, ...]]) -> None:
        self.paths = list(vectors)
        self.at = {path: row for row, path in enumerate(self.paths)}
        self.matrix = np.empty((max(len(self.paths), 16), dims), dtype=np.float64)
        self.norms = np.empty(len(self.matrix), dtype=np.float64)
        count = len(self.paths)
        if count:
            self.matrix[:count] = np.asarray(list(vectors.values()), dtype=np.float64)
            self.norms[:count] = np.linalg.norm(self.matrix[:count], axis=1)

    def set(self, np: Any, path: str, vector: tuple[float, ...]) -> None:
        row = self.at.get(path)
        if row is None:
            row = len(self.paths)
            if row == len(self.matrix):  # full: twice the rows, the filled ones copied
                grown = np.empty((2 * row, self.matrix.shape[1]), dtype=np.float64)
                grown[:row] = self.matrix
                norms = np.empty(2 * row, dtype=np.float64)
                norms[:row] = self.norms
                self.matrix, self.norms = grown, norms
            self.paths.append(path)
            self.at[path] = row
        self.matrix[row] = vector
        # normed as one row of a matrix, exactly as the rows of a fresh one are
        self.norms[row] = np.linalg.norm(self.matrix[row : row + 1], axis=1)[0]

    def drop(self, path: str) -> None:
        row = self.at.pop(path, None)
        if row is None:
            return
        last = len(self.paths) - 1
        if row != last:
            moved = self.paths[last]
            self.paths[row], self.at[moved] = moved, row
            self.matrix[row], self.norms[row] = self.matrix[last], self.norms[last]
        self.paths.pop()

    def view(self) -> tuple[list[str], Any, Any]:
        count = len(self.paths)
        return self.paths, self.matrix[:count], self.norms[:count]


class VectorSet:
    """The vectors of one namespace, by path, scored exactly (what `InMemoryBackend` and
    `FileSystemBackend` keep; not thread-safe on its own: its owner locks). With NumPy, the
    vectors are also kept as matrix rows per vector length (`_Rows`), made at the first query
    and kept up to date by every change after it, so a query is one product."""

    __slots__ = ("_rows", "vectors")

    def __init__(self, vectors: Mapping[str, Sequence[float]] | None = None) -> None:
        self.vectors: dict[str, tuple[float, ...]] = {
            path: tuple(map(float, vector)) for path, vector in (vectors or {}).items()
        }
        self._rows: dict[int, _Rows] | None = None  # by vector length, once queried

    def put(self, vectors: Mapping[str, Sequence[float]]) -> None:
        rows = self._rows
        np = numpy_or_none() if rows is not None else None
        for path, vector in vectors.items():
            value = tuple(map(float, vector))
            before = self.vectors.get(path)
            self.vectors[path] = value
            if rows is not None:
                if before is not None and len(before) != len(value):
                    rows[len(before)].drop(path)
                kept = rows.get(len(value))
                if kept is None:
                    kept = rows[len(value)] = _Rows(np, len(value), {})
                kept.set(np, path, value)

    def delete(self, paths: Sequence[str] | None) -> None:
        if paths is None:
            self.vectors.clear()
            self._rows = None
            return
        for path in paths:
            before = self.vectors.pop(path, None)
            if before is not None and self._rows is not None:
                self._rows[len(before)].drop(path)

    def _matrices(self, np: Any) -> dict[int, _Rows]:
        """Per vector length: the paths and their vectors as matrix rows, with their norms."""
        if self._rows is None:
            by_dims: dict[int, dict[str, tuple[float, ...]]] = {}
            for path, vector in self.vectors.items():
                by_dims.setdefault(len(vector), {})[path] = vector
            self._rows = {dims: _Rows(np, dims, found) for dims, found in by_dims.items()}
        return self._rows

    def nearest(
        self,
        query: Sequence[float],
        *,
        metric: str = "cosine",
        prefix: str = "",
        limit: int | None = None,
    ) -> list[tuple[str, float]]:
        np = numpy_or_none()
        if np is None:
            items = [(p, v) for p, v in self.vectors.items() if p.startswith(prefix)]
            return rank(query, items, metric=metric, limit=limit)
        kept = self._matrices(np).get(len(query))
        if kept is None:  # no vector of its length (the metric is still checked)
            return rank_matrix(np, query, [], None, metric=metric, limit=limit)
        paths, matrix, norms = kept.view()
        if prefix and paths:
            rows = [i for i, path in enumerate(paths) if path.startswith(prefix)]
            paths, matrix, norms = [paths[i] for i in rows], matrix[rows], norms[rows]
        return rank_matrix(np, query, paths, matrix, metric=metric, limit=limit, norms=norms)
