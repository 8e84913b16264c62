"""The store's reads over a prefix: its listing, its entries and search (by text or meaning).

Flows that `StoreCore.list`, `entries` and `search` run (the other prefix reads have their own
modules: `last`, `dirs`, `recent`). Every spelling of the prefix is read (see `paths`, "One
spelling per name"): entries stored under another spelling of it are merged in, each path once.
Whether the backend can do a step natively is asked through `supports` (the core's cached
`StoreCore.supports`), never of the backend directly.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from operator import attrgetter

from contextchef.errors import ConfigError, StoreCapabilityError
from contextchef.store.backend import Capability, ListedEntry, SearchHit, StoredEntry
from contextchef.store.indexing import (
    IndexConfig,
    check_min_score,
    resolve_mode,
    semantic_search_flow,
)
from contextchef.store.ops import BackendOps, Op
from contextchef.store.paths import prefix_spellings

__all__ = ["entries_flow", "list_flow", "search_flow"]

Supports = Callable[[Capability, str], bool]
"""`StoreCore.supports`: whether the backend offers a capability for a namespace."""


def list_flow(ops: BackendOps, ns: str, prefix: str) -> Op[list[ListedEntry]]:
    """See `StoreCore.list`."""
    spellings = prefix_spellings(prefix)
    listed = yield from ops.list(ns, spellings[0])
    for other in spellings[1:]:  # entries stored under another spelling of the prefix
        known = {item.path for item in listed}
        listed += [i for i in (yield from ops.list(ns, other)) if i.path not in known]
    return sorted(listed, key=attrgetter("path"))


def entries_flow(
    ops: BackendOps, ns: str, prefix: str, supports: Supports
) -> Op[dict[str, StoredEntry]]:
    """See `StoreCore.entries`."""
    found: dict[str, StoredEntry] = {}
    for spelling in prefix_spellings(prefix):
        if supports("read_all", ns):
            found.update((yield from ops.read_all(ns, spelling)))
            continue
        for listed in (yield from ops.list(ns, spelling)):
            entry = yield from ops.read(ns, listed.path)
            if entry is not None:
                found[listed.path] = entry
    return {path: found[path] for path in sorted(found)}


def search_flow(
    ops: BackendOps,
    index: IndexConfig | None,
    ns: str,
    query: str,
    prefix: str,
    limit: int | None,
    mode: str | None,
    supports: Supports,
    min_score: float | None = None,
    defer: Callable[[Hashable, Callable[[], Op[None]]], None] | None = None,
) -> Op[list[SearchHit]]:
    """See `StoreCore.search`."""
    if not isinstance(query, str) or not query:
        raise ConfigError("a search query must be a non-empty str")
    spellings = prefix_spellings(prefix)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
        raise ConfigError(f"a search limit must be an int or None, got {limit!r}")
    chosen = resolve_mode(index, ns, mode)
    check_min_score(min_score)
    if chosen != "lexical" and index is not None:
        lexical = None
        if chosen == "hybrid" and supports("search", ns):
            lexical = lambda pool: _lexical(ops, ns, query, spellings, pool, supports)  # noqa: E731
        return (
            yield from semantic_search_flow(
                ops,
                index,
                ns,
                query,
                spellings[0],
                limit,
                lexical,
                min_score=min_score,
                defer=defer,
            )
        )
    return (yield from _lexical(ops, ns, query, spellings, limit, supports))


def _lexical(
    ops: BackendOps,
    ns: str,
    query: str,
    spellings: tuple[str, ...],
    limit: int | None,
    supports: Supports,
) -> Op[list[SearchHit]]:
    """The backend's text search over every spelling of the prefix, at most `limit` hits."""
    if not supports("search", ns):
        raise StoreCapabilityError(ns, ["search"])
    hits = yield from ops.search(ns, query, spellings[0], limit)
    for other in spellings[1:]:  # entries stored under another spelling of the prefix
        if limit is not None and len(hits) >= limit:
            break
        more = yield from ops.search(ns, query, other, limit)
        known = {hit.path for hit in hits}
        hits += [hit for hit in more if hit.path not in known]
    return hits if limit is None else hits[:limit]
