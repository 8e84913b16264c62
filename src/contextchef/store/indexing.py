"""Recall by meaning: an optional semantic index over the store's entries.

`Store(backend, index={"embed": fn, "dims": 384, "fields": ["content"]})` keeps one vector per
entry beside it, in the backend (its `vectors` capability, see `backend.py`). The embedding
function is yours — nothing is downloaded and no model ships with contextchef:

- a callable `fn(texts: list[str]) -> list[list[float]]` (one batch per call), sync, or async
  under `AsyncStore`;
- or an object with `embed_documents(texts)` (and optionally `embed_query(text)`), such as a
  LangChain `Embeddings`; `aembed_documents` / `aembed_query` when it has only those.

Every write through the store (put, append, create, update, rename, restore) embeds the entries
it wrote, in batches of `batch_size`, after the write; a delete removes the vector; `reindex`
embeds entries written before the index was configured (or by a store without it). `fields`
name what is embedded: `"content"` is the entry's text, any other name a key of its meta
(strings as they are, other values as JSON); the texts of the fields present are joined by a
newline, and an entry with none gets no vector.

Search (`NamespaceView.search(query, mode=…)`): `"lexical"` is the backend's text search,
`"semantic"` the nearest vectors (score: the metric's, see `contextchef.store.vectors`), and
`"hybrid"` (the default when the namespace is indexed) fuses both rankings by reciprocal rank
fusion — each hit scores `sum(1 / (RRF_K + rank))` over the rankings it appears in. Every hit
says how it matched in `SearchHit.matched`. `min_score` (the index's, or the search call's) cuts
the semantic ranking: a vector scoring below it is no match by meaning, so neither mode returns
such noise; text matches are never cut.

An entry may have several vectors: besides the one keyed by its path, any number keyed
`<path>//<name>` (`KEY_SEPARATOR`; LangGraph's fields, see `integrations._langgraph_index`). A
search scores an entry by its best vector. A vector whose entry is gone (deleted by a process
without the index) is skipped, and deleted with the next write (see `orphans`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from contextchef._effects import Call
from contextchef.errors import ConfigError, StoreCapabilityError, StoreError
from contextchef.store.backend import SearchHit, StoredEntry, backend_supports
from contextchef.store.ops import BackendOps, Op
from contextchef.store.orphans import KEY_SEPARATOR, entry_of, prune_flow
from contextchef.store.paths import validate_namespace
from contextchef.store.search import SNIPPET_RADIUS, snippet
from contextchef.store.vectors import METRICS, Metric

__all__ = [
    "KEY_SEPARATOR",
    "RRF_K",
    "SEARCH_MODES",
    "IndexConfig",
    "SearchMode",
    "check_min_score",
    "embed_query_flow",
    "fuse",
    "hybrid_hits",
    "index_flow",
    "require_vectors",
    "resolve_mode",
    "semantic_hit",
    "semantic_search_flow",
    "text_of",
]

SearchMode = Literal["lexical", "semantic", "hybrid"]
SEARCH_MODES: tuple[SearchMode, ...] = get_args(SearchMode)

RRF_K = 60
"""The reciprocal rank fusion constant (the value of the original paper)."""


@dataclass(frozen=True, slots=True)
class IndexConfig:
    """A semantic index: the embedding function, its dimension, what to embed and how to score.

    Args:
        embed: your embedding function or object (see the module docstring).
        dims: the length of every vector it returns (checked).
        fields: what of an entry is embedded: `"content"`, or meta keys.
        metric: `"cosine"` (default), `"l2"` (scores are negative distances) or
            `"inner_product"`.
        namespaces: the namespaces indexed; None (default) for every namespace.
        batch_size: texts per call of the embedding function.
        min_score: the lowest score (the metric's) a match by meaning may have; None (default)
            for no cut-off. A search's own `min_score` overrides it.
    """

    embed: Any
    dims: int
    fields: tuple[str, ...] = ("content",)
    metric: Metric = "cosine"
    namespaces: frozenset[str] | None = None
    batch_size: int = 64
    min_score: float | None = None

    def __post_init__(self) -> None:
        if not (callable(self.embed) or _method(self.embed, "documents") is not None):
            raise ConfigError(
                "index embed must be a callable texts -> vectors, or an object with "
                f"embed_documents(); got {self.embed!r}"
            )
        if isinstance(self.dims, bool) or not isinstance(self.dims, int) or self.dims < 1:
            raise ConfigError(f"index dims must be a positive int, got {self.dims!r}")
        if not self.fields or not all(isinstance(f, str) and f for f in self.fields):
            raise ConfigError(f"index fields must be non-empty names, got {self.fields!r}")
        if self.metric not in METRICS:
            raise ConfigError(f"index metric must be one of {', '.join(METRICS)}")
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int):
            raise ConfigError(f"index batch_size must be an int, got {self.batch_size!r}")
        if self.batch_size < 1:
            raise ConfigError(f"index batch_size must be at least 1, got {self.batch_size}")
        check_min_score(self.min_score)

    @classmethod
    def coerce(cls, value: IndexConfig | Mapping[str, Any]) -> IndexConfig:
        """`value` itself, or the config a plain dict describes."""
        if isinstance(value, IndexConfig):
            return value
        if not isinstance(value, Mapping):
            raise ConfigError(f"index must be a dict or IndexConfig, got {value!r}")
        known = {"embed", "dims", "fields", "metric", "namespaces", "batch_size", "min_score"}
        unknown = sorted(set(value) - known)
        if unknown:
            raise ConfigError(f"unknown index option(s): {', '.join(map(str, unknown))}")
        if "embed" not in value or "dims" not in value:
            raise ConfigError("an index needs at least 'embed' and 'dims'")
        fields = value.get("fields", ("content",))
        namespaces = value.get("namespaces")
        if isinstance(fields, str) or isinstance(namespaces, str):
            raise ConfigError("index fields and namespaces are lists of names, not one string")
        return cls(
            embed=value["embed"],
            dims=value["dims"],
            fields=tuple(fields),
            metric=value.get("metric", "cosine"),
            namespaces=None
            if namespaces is None
            else frozenset(validate_namespace(ns) for ns in namespaces),
            batch_size=value.get("batch_size", 64),
            min_score=value.get("min_score"),
        )

    def covers(self, ns: str) -> bool:
        """Whether namespace `ns` is indexed."""
        return self.namespaces is None or ns in self.namespaces


def check_min_score(min_score: object) -> float | None:
    """`min_score` when it is None or a finite number, else `ConfigError`."""
    if min_score is None:
        return None
    if isinstance(min_score, bool) or not isinstance(min_score, int | float):
        raise ConfigError(f"min_score must be a number or None, got {min_score!r}")
    if not math.isfinite(min_score):
        raise ConfigError(f"min_score must be finite, got {min_score!r}")
    return float(min_score)


def require_vectors(index: IndexConfig, backend: object) -> None:
    """`StoreCapabilityError` unless `backend` keeps vectors in every namespace `index` covers."""
    for ns in sorted(index.namespaces or {""}):
        if not backend_supports(backend, "vectors", ns):
            raise StoreCapabilityError(
                ns or "*",
                ["vectors"],
                hint="A semantic index needs a backend that keeps vectors.",
            )


def _method(embed: Any, kind: str) -> Callable[..., Any] | None:
    """`embed_<kind>` of an embeddings object, else its `aembed_<kind>`, else None."""
    for name in (f"embed_{kind}", f"aembed_{kind}"):
        found = getattr(embed, name, None)
        if callable(found):
            return cast(Callable[..., Any], found)
    return None


def text_of(entry: StoredEntry, fields: Sequence[str]) -> str | None:
    """What `fields` of `entry` say, joined by newlines; None when none is present."""
    parts: list[str] = []
    for name in fields:
        if name == "content":
            value: Any = entry.content
        elif name in entry.meta:
            value = entry.meta[name]
        else:
            continue
        text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        if text:
            parts.append(text)
    return "\n".join(parts) if parts else None


def _checked(vectors: Any, count: int, dims: int) -> list[tuple[float, ...]]:
    """The embedding function's answer as `count` vectors of `dims` finite floats."""
    try:
        rows = [tuple(float(x) for x in row) for row in vectors]
    except (TypeError, ValueError) as exc:
        raise StoreError(
            f"the embedding function returned something else than vectors: {exc}"
        ) from exc
    if len(rows) != count:
        raise StoreError(f"the embedding function returned {len(rows)} vectors for {count} texts")
    for row in rows:
        if len(row) != dims:
            raise StoreError(
                f"the embedding function returned a vector of {len(row)} numbers; "
                f"the index was configured with dims={dims}"
            )
        if not all(math.isfinite(x) for x in row):
            raise StoreError("the embedding function returned a vector with NaN or infinity")
    return rows


def _embed_documents(index: IndexConfig, texts: list[str]) -> Op[list[tuple[float, ...]]]:
    fn = _method(index.embed, "documents") or index.embed
    vectors = yield Call(fn, (texts,), "embedding")
    return _checked(vectors, len(texts), index.dims)


def embed_query_flow(index: IndexConfig, query: str) -> Op[tuple[float, ...]]:
    """The vector of a search query (`embed_query` when the object has one)."""
    fn = _method(index.embed, "query")
    if fn is None:
        return (yield from _embed_documents(index, [query]))[0]
    vector = yield Call(fn, (query,), "embedding")
    return _checked([vector], 1, index.dims)[0]


def index_flow(
    ops: BackendOps, index: IndexConfig, ns: str, entries: Mapping[str, StoredEntry | None]
) -> Op[None]:
    """Bring the vectors of `entries` (path to current entry, None when gone) up to date:
    embed those with text in batches, remove the vectors of the others."""
    texts: dict[str, str] = {}
    gone: list[str] = []
    for path, entry in entries.items():
        text = None if entry is None else text_of(entry, index.fields)
        if text is None:
            gone.append(path)
        else:
            texts[path] = text
    if gone:
        yield from ops.delete_vectors(ns, gone)
    paths = list(texts)
    for start in range(0, len(paths), index.batch_size):
        batch = paths[start : start + index.batch_size]
        vectors = yield from _embed_documents(index, [texts[path] for path in batch])
        yield from ops.put_vectors(ns, dict(zip(batch, vectors, strict=True)))


def fuse(rankings: Iterable[tuple[str, Sequence[str]]]) -> list[tuple[str, float, tuple[str, ...]]]:
    """Reciprocal rank fusion of named rankings (best first each): `(path, score, matched)`,
    best first, ties by path; `matched` names the rankings the path appears in."""
    scores: dict[str, float] = {}
    matched: dict[str, list[str]] = {}
    for name, ranking in rankings:
        for position, path in enumerate(ranking, start=1):
            scores[path] = scores.get(path, 0.0) + 1.0 / (RRF_K + position)
            matched.setdefault(path, []).append(name)
    fused = [(path, round(score, 9), tuple(matched[path])) for path, score in scores.items()]
    fused.sort(key=lambda item: (-item[1], item[0]))
    return fused


def semantic_hit(path: str, entry: StoredEntry, score: float) -> SearchHit:
    """A hit found by meaning alone: the head of the entry stands in for a snippet."""
    return SearchHit(
        path=path,
        meta=entry.meta,
        snippet=snippet(entry.content, 0, 0, radius=SNIPPET_RADIUS * 2),
        score=score,
        matched=("semantic",),
    )


def resolve_mode(index: IndexConfig | None, ns: str, mode: str | None) -> SearchMode:
    """The search mode to run: `mode`, or hybrid where `ns` is indexed and lexical elsewhere;
    `ConfigError` for an unknown mode or a semantic one without an index."""
    indexed = index is not None and index.covers(ns)
    if mode is None:
        return "hybrid" if indexed else "lexical"
    if mode not in SEARCH_MODES:
        raise ConfigError(f"search mode must be one of {', '.join(SEARCH_MODES)}, got {mode!r}")
    if mode != "lexical" and not indexed:
        raise ConfigError(
            f"search mode {mode!r} needs a semantic index over namespace {ns!r} "
            "(Store(backend, index={'embed': ..., 'dims': ...}))"
        )
    return mode


def _prune_later(ops: BackendOps, ns: str, keys: Sequence[str]) -> Op[None]:
    yield from prune_flow(ops, ns, keys)


def semantic_search_flow(
    ops: BackendOps,
    index: IndexConfig,
    ns: str,
    query: str,
    prefix: str,
    limit: int | None,
    lexical: Callable[[int | None], Op[list[SearchHit]]] | None,
    *,
    min_score: float | None = None,
    defer: Callable[[Hashable, Callable[[], Op[None]]], None] | None = None,
) -> Op[list[SearchHit]]:
    """The `semantic` search (`lexical` None) or the `hybrid` one (`lexical(pool)` runs the
    text search): hits best first, each entry read for its meta and snippet. Vectors scoring
    below `min_score` (else the index's) are left out; an entry scores its best vector. A
    vector whose entry is gone is skipped, and its deletion handed to `defer` (the core's
    deferred writes: a read never writes)."""
    if limit is not None and limit <= 0:
        return []
    cut = index.min_score if min_score is None else check_min_score(min_score)
    pool = None if limit is None else max(limit * 4, 20)
    vector = yield from embed_query_flow(index, query)
    near = yield from ops.nearest(ns, vector, index.metric, prefix, pool)
    similarity: dict[str, float] = {}
    keys: dict[str, list[str]] = {}
    for key, score in near:  # best first: an entry's first vector is its best one
        if cut is not None and score < cut:
            break
        path = entry_of(key)
        similarity.setdefault(path, score)
        keys.setdefault(path, []).append(key)
    found: dict[str, StoredEntry] = {}
    orphans: list[str] = []
    for path in similarity:
        entry = yield from ops.read(ns, path)
        if entry is None:
            orphans += keys[path]
        else:
            found[path] = entry
    if orphans and defer is not None:
        gone = tuple(orphans)
        defer(("orphan vectors", ns, gone), lambda: _prune_later(ops, ns, gone))
    semantic = [
        semantic_hit(path, found[path], similarity[path]) for path in similarity if path in found
    ]
    if lexical is None:
        return semantic if limit is None else semantic[:limit]
    return hybrid_hits((yield from lexical(pool)), semantic, limit)


def hybrid_hits(
    text_hits: Sequence[SearchHit], semantic: Sequence[SearchHit], limit: int | None
) -> list[SearchHit]:
    """Hits by text and by meaning (each best first) fused by reciprocal rank fusion, at most
    `limit`: a hit keeps its text snippet when its text matched, the entry's head otherwise."""
    by_path = {hit.path: hit for hit in semantic}
    by_path.update((hit.path, hit) for hit in text_hits)
    fused = fuse(
        (("lexical", [h.path for h in text_hits]), ("semantic", [h.path for h in semantic]))
    )
    return [
        SearchHit(
            path=path,
            meta=by_path[path].meta,
            snippet=by_path[path].snippet,
            score=score,
            matched=matched,
        )
        for path, score, matched in (fused if limit is None else fused[:limit])
    ]
