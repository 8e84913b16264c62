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

import importlib
import math
import sys
from array import array
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, cast

__all__ = [
    "METRICS",
    "SCORE_DIGITS",
    "Metric",
    "VectorSet",
    "numpy_or_none",
    "pack",
    "rank",
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


def _score_python(query: Sequence[float], vector: Sequence[float], metric: Metric) -> float:
    if metric == "l2":
        return -math.sqrt(sum((a - b) * (a - b) for a, b in zip(query, vector, strict=True)))
    dot = math.fsum(a * b for a, b in zip(query, vector, strict=True))
    if metric == "inner_product":
        return dot
    norms = math.sqrt(math.fsum(a * a for a in query)) * math.sqrt(math.fsum(b * b for b in vector))
    return dot / norms if norms else 0.0


def _scores_numpy(
    np: Any, query: Sequence[float], vectors: Sequence[Sequence[float]], metric: Metric
) -> list[float]:
    matrix = np.asarray(vectors, dtype=np.float64)
    q = np.asarray(query, dtype=np.float64)
    if metric == "l2":
        return cast(list[float], (-np.sqrt(((matrix - q) ** 2).sum(axis=1))).tolist())
    dots = matrix @ q
    if metric == "inner_product":
        return cast(list[float], dots.tolist())
    norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(q)
    safe = np.where(norms == 0, 1.0, norms)
    return cast(list[float], np.where(norms == 0, 0.0, dots / safe).tolist())


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
        raw = _scores_numpy(numpy, query, [vector for _, vector in pairs], chosen)
    else:
        raw = [_score_python(query, vector, chosen) for _, vector in pairs]
    scored = [
        (path, round(score, SCORE_DIGITS)) for (path, _), score in zip(pairs, raw, strict=True)
    ]
    scored.sort(key=lambda item: (-item[1], item[0]))
    return scored if limit is None else scored[:limit]


class VectorSet:
    """The vectors of one namespace, by path, scored exactly (what `InMemoryBackend` and
    `FileSystemBackend` keep; not thread-safe on its own: its owner locks)."""

    __slots__ = ("vectors",)

    def __init__(self, vectors: Mapping[str, Sequence[float]] | None = None) -> None:
        self.vectors: dict[str, tuple[float, ...]] = {
            path: tuple(map(float, vector)) for path, vector in (vectors or {}).items()
        }

    def put(self, vectors: Mapping[str, Sequence[float]]) -> None:
        for path, vector in vectors.items():
            self.vectors[path] = tuple(map(float, vector))

    def delete(self, paths: Sequence[str] | None) -> None:
        if paths is None:
            self.vectors.clear()
            return
        for path in paths:
            self.vectors.pop(path, None)

    def nearest(
        self,
        query: Sequence[float],
        *,
        metric: str = "cosine",
        prefix: str = "",
        limit: int | None = None,
    ) -> list[tuple[str, float]]:
        items = [(p, v) for p, v in self.vectors.items() if p.startswith(prefix)]
        return rank(query, items, metric=metric, limit=limit, numpy=numpy_or_none())
