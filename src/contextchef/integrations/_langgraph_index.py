"""LangGraph's semantic index (`index={"embed": …, "dims": …, "fields": […]}`) on our store.

As LangGraph's own stores do, each indexed field of an item (a JSON path into its value, `"$"`
for the whole value; `SqliteStore`'s `text_fields` is the same; a path matching several texts
gives one vector each) is embedded on its
own, and a query scores an item by its best vector (max pooling). Vectors live in the backend's
`vectors` capability (see `contextchef.store.backend`), under the key `<entry path>//<field>`
(an entry path never holds `//`, so the entry's vectors share its path as a prefix); which keys
an item has is kept in its entry's meta (`vectors`), so a rewrite or a delete removes exactly
those. Scores are the metric's (`distance_type`, as `PostgresStore` takes it: `cosine`, the
default, reports the similarity; `l2` the negative distance; `inner_product` the product).

`min_score` (our addition to LangGraph's config) leaves out the items whose best score is below
it. Over a `Store` with its own index of the namespace, the two must embed alike (the same
`embed`, `dims` and metric, else `ConfigError`): this layer embeds each item's fields once, the
store does not embed the entry again (`StoreCore.put(vectors=False)`), and the store's own
search scores the entry by these vectors (`indexing.KEY_SEPARATOR`).

Sync batches call `embed_documents` / `embed_query`, async ones `aembed_documents` /
`aembed_query` (LangGraph's `ensure_embeddings` gives any function both).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from contextchef._effects import Call, Flow
from contextchef.errors import ConfigError, StoreCapabilityError
from contextchef.store.backend import StoredEntry
from contextchef.store.core import StoreCore
from contextchef.store.indexing import KEY_SEPARATOR, check_min_score
from contextchef.store.vectors import METRICS

try:
    from langgraph.store.base import PutOp
    from langgraph.store.base.embed import ensure_embeddings, get_text_at_path, tokenize_path
except ImportError as exc:  # pragma: no cover - the langgraph extra is missing
    from contextchef.errors import MissingDependencyError

    raise MissingDependencyError(exc.name or "langgraph", "langgraph") from exc

__all__ = ["META_KEY", "GraphIndex"]

META_KEY = "vectors"
"""The entry meta key listing the fields an item has vectors for."""

_SEP = KEY_SEPARATOR


class GraphIndex:
    """One LangGraph store's index configuration and its embedding calls."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        if not isinstance(config, Mapping) or "embed" not in config or "dims" not in config:
            raise ConfigError("a LangGraph index needs at least 'embed' and 'dims'")
        self.config: dict[str, Any] = dict(config)
        self.dims = int(config["dims"])
        self.metric = str(config.get("distance_type", "cosine"))
        if self.metric not in METRICS:
            raise ConfigError(f"distance_type must be one of {', '.join(METRICS)}")
        self.embeddings = ensure_embeddings(config["embed"])
        self.min_score = check_min_score(config.get("min_score"))
        self.fields = [
            (path, tokenize_path(path) if path != "$" else path)
            for path in (config.get("fields") or config.get("text_fields") or ["$"])
        ]

    @classmethod
    def of(cls, config: Mapping[str, Any] | None) -> GraphIndex | None:
        return None if config is None else cls(config)

    def shares_vectors(self, core: StoreCore, ns: str) -> bool:
        """Whether the store's own index covers `ns` (then it embeds nothing this layer
        writes); `ConfigError` when that index embeds otherwise than this one."""
        index = core.index
        if index is None or not index.covers(ns):
            return False
        if (
            index.embed is not self.config["embed"]
            or index.dims != self.dims
            or index.metric != self.metric
        ):
            raise ConfigError(
                f"the store's own index covers namespace {ns!r}: a LangGraph index over it "
                "must use the same embed, dims and distance_type (or pass no index= to search "
                "by the store's)"
            )
        return True

    def require(self, core: StoreCore, ns: str) -> None:
        if not core.supports("vectors", ns):
            raise StoreCapabilityError(
                ns, ["vectors"], hint="A LangGraph index needs a backend that keeps vectors."
            )

    def _texts(self, op: PutOp) -> dict[str, str]:
        """The texts of `op`'s value to embed, by field key (`path`, or `path.i`)."""
        if op.index is False or op.value is None:
            return {}
        fields = (
            self.fields
            if op.index is None
            else [(path, tokenize_path(path) if path != "$" else path) for path in op.index]
        )
        texts: dict[str, str] = {}
        for path, tokens in fields:
            found = get_text_at_path(op.value, tokens)
            if len(found) == 1:
                texts[path] = found[0]
            else:
                texts.update((f"{path}.{i}", text) for i, text in enumerate(found))
        return texts

    def _vectors(self, result: Any, count: int) -> list[list[float]]:
        rows = [[float(x) for x in row] for row in result]
        if len(rows) != count or any(len(row) != self.dims for row in rows):
            raise ConfigError(
                f"the embedding returned {len(rows)} vectors for {count} texts, or vectors "
                f"whose length is not dims={self.dims}"
            )
        if not all(math.isfinite(x) for row in rows for x in row):
            raise ConfigError("the embedding returned a vector with NaN or infinity")
        return rows

    def forget(
        self, core: StoreCore, ns: str, path: str, existing: StoredEntry | None
    ) -> Flow[None]:
        """Remove the vectors `existing` (the entry at `path`) has."""
        keys = existing.meta.get(META_KEY) if existing is not None else None
        if isinstance(keys, list) and keys:
            yield from core.ops.delete_vectors(ns, [path + _SEP + str(key) for key in keys])

    def embed_put(
        self,
        core: StoreCore,
        ns: str,
        path: str,
        op: PutOp,
        existing: StoredEntry | None,
        asynchronous: bool,
    ) -> Flow[list[str]]:
        """Embed `op`'s fields (one call), replace the entry's vectors; the field keys."""
        self.require(core, ns)
        yield from self.forget(core, ns, path, existing)
        texts = self._texts(op)
        if not texts:
            return []
        method = (
            self.embeddings.aembed_documents if asynchronous else self.embeddings.embed_documents
        )
        result = yield Call(method, (list(texts.values()),), "embedding")
        vectors = self._vectors(result, len(texts))
        keyed = {path + _SEP + key: vector for key, vector in zip(texts, vectors, strict=True)}
        yield from core.ops.put_vectors(ns, keyed)
        return list(texts)

    def ranked(
        self, core: StoreCore, ns: str, query: str, prefix: str, asynchronous: bool
    ) -> Flow[list[tuple[str, float]]]:
        """`(entry path, best score)` under `prefix`, best first."""
        self.require(core, ns)
        method = self.embeddings.aembed_query if asynchronous else self.embeddings.embed_query
        result = yield Call(method, (query,), "embedding")
        (vector,) = self._vectors([result], 1)
        near = yield from core.ops.nearest(ns, vector, self.metric, prefix, None)
        best: dict[str, float] = {}
        for key, score in near:  # best first: an item's first vector is its best one
            best.setdefault(key.split(_SEP, 1)[0], score)
        return list(best.items())
