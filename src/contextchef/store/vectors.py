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


class VectorSet:
    """The vectors of one namespace, by path, scored exactly (what `InMemoryBackend` and
    `FileSystemBackend` keep; not thread-safe on its own: its owner locks). With NumPy, the
    vectors are also kept as one matrix, rebuilt after a change, so a query is one product."""

    __slots__ = ("_matrix", "vectors")

    def __init__(self, vectors: Mapping[str, Sequence[float]] | None = None) -> None:
        self.vectors: dict[str, tuple[float, ...]] = {
            path: tuple(map(float, vector)) for path, vector in (vectors or {}).items()
        }
        self._matrix: dict[int, tuple[list[str], Any, Any]] | None = None  # by dims

    def put(self, vectors: Mapping[str, Sequence[float]]) -> None:
        for path, vector in vectors.items():
            self.vectors[path] = tuple(map(float, vector))
        self._matrix = None

    def delete(self, paths: Sequence[str] | None) -> None:
        self._matrix = None
        if paths is None:
            self.vectors.clear()
            return
        for path in paths:
            self.vectors.pop(path, None)

    def _matrices(self, np: Any) -> dict[int, tuple[list[str], Any, Any]]:
        """Per vector length: the paths, their vectors as a matrix, and its rows' norms."""
        if self._matrix is None:
            by_dims: dict[int, list[str]] = {}
            for path in sorted(self.vectors):
                by_dims.setdefault(len(self.vectors[path]), []).append(path)
            self._matrix = {}
            for dims, paths in by_dims.items():
                matrix = np.asarray([self.vectors[p] for p in paths], dtype=np.float64)
                self._matrix[dims] = (paths, matrix, np.linalg.norm(matrix, axis=1))
        return self._matrix

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
        paths, matrix, norms = self._matrices(np).get(len(query), ([], None, None))
        if prefix and paths:
            rows = [i for i, path in enumerate(paths) if path.startswith(prefix)]
            paths, matrix, norms = [paths[i] for i in rows], matrix[rows], norms[rows]
        return rank_matrix(np, query, paths, matrix, metric=metric, limit=limit, norms=norms)
