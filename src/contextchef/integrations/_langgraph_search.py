"""LangGraph's `search` and `list_namespaces` for `ContextChefStore`, as flows over a store core.

`search_flow` answers a `SearchOp`. With a `query` (or a negative `offset` or `limit`, sliced as
Python slices) it reads every entry under the namespace prefix and ranks them: by meaning with
an index (`_langgraph_index`; items without vectors last), else by the backend's text search (a
substring scan where it has none). Without a query it pages most recently updated first, reading
about what it returns. `list_namespaces_flow` answers a `ListNamespacesOp` from the store's
directory index, or from the items themselves when expired ones must be left out. Expired items
are hidden under `TTLConfig["omit_expired"]` (`_langgraph_ttl`); filters are
`_langgraph_filter`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from contextchef._effects import Flow
from contextchef.errors import MissingDependencyError
from contextchef.integrations._keys import decode_segment
from contextchef.store.backend import StoredEntry
from contextchef.store.core import StoreCore
from contextchef.store.search import scan

try:
    from langgraph.store.base import ListNamespacesOp, SearchItem, SearchOp, TTLConfig

    from contextchef.integrations import _langgraph_filter as filters
    from contextchef.integrations import _langgraph_items as items
    from contextchef.integrations import _langgraph_ttl as ttls
    from contextchef.integrations._langgraph_index import GraphIndex
except ImportError as exc:  # pragma: no cover - exercised by the runtime-only install gate
    raise MissingDependencyError(exc.name or "langgraph", "langgraph") from exc

__all__ = ["list_namespaces_flow", "search_flow"]

Match = tuple[str, StoredEntry, float | None, Any]
"""An item a search keeps: its entry path, entry, score and decoded value."""


def search_flow(
    core: StoreCore,
    ns: str,
    op: SearchOp,
    now: float,
    refresh: dict[str, StoredEntry],
    index: GraphIndex | None,
    ttl_config: TTLConfig | None,
    asynchronous: bool,
) -> Flow[list[SearchItem]]:
    """The items `op` finds in the store namespace `ns`; the entries of the page it returns
    are added to `refresh` (by path) when their TTL moves on when read."""
    prefix = items.directory(tuple(op.namespace_prefix))
    whole = op.offset < 0 or op.limit < 0  # sliced as Python slices: every match first
    if op.query or whole:
        entries = yield from core.entries(ns, prefix)
        found: list[tuple[str, StoredEntry, float | None]] = []
        hits: Any = ()
        if op.query and index is not None:  # by meaning; items without vectors last
            ranked = yield from index.ranked(core, ns, op.query, prefix, asynchronous)
            cut = index.min_score
            found = [
                (path, entries[path], score)
                for path, score in ranked
                if path in entries and (cut is None or score >= cut)
            ]
            scored = {path for path, _ in ranked}
            found += [(p, entry, None) for p, entry in entries.items() if p not in scored]
        elif not op.query:
            found = [(path, entry, None) for path, entry in entries.items()]
            found.sort(key=lambda f: -items.updated(f[1]))
        elif core.supports("search", ns):
            hits = yield from core.search(ns, op.query, prefix, None)
        else:
            hits = scan(entries.items(), op.query)
        for hit in hits:
            entry = entries.get(hit.path)
            if entry is not None:
                found.append((hit.path, entry, hit.score))
        enough = None if whole else op.offset + op.limit
        kept = _matching(found, op.filter, now, enough, ttl_config)
        page = kept[op.offset : op.offset + op.limit]
    else:
        page = yield from _recent_page(core, ns, op, prefix, now, ttl_config)
    if ttls.wants_refresh(op.refresh_ttl, ttl_config):
        refresh.update((path, entry) for path, entry, _, _ in page)
    return [items.item(path, entry, score, hit=True, value=v) for path, entry, score, v in page]


def _recent_page(
    core: StoreCore, ns: str, op: SearchOp, prefix: str, now: float, ttl_config: TTLConfig | None
) -> Flow[list[Match]]:
    """The page `op` asks for in recency order. Where the backend filters (`read_recent_where`)
    the filter goes to it (`filters.pushdown`): with nothing left to check here, the backend
    pages too; else the pages it reads are checked for the rest of the filter and expiry."""
    if core.supports("read_recent_where", ns):
        where, rest = filters.pushdown(op.filter)
        if not rest and not ttls.omits_expired(ttl_config):
            found = yield from core.recent_where(ns, prefix, where, op.limit, op.offset)
            return [(p, entry, None, items.decode(entry.content)) for p, entry in found.items()]

        def read(size: int, start: int) -> Flow[dict[str, StoredEntry]]:
            return (yield from core.recent_where(ns, prefix, where, size, start))

    else:
        rest = dict(op.filter or {})

        def read(size: int, start: int) -> Flow[dict[str, StoredEntry]]:
            return (yield from core.recent(ns, prefix, size, start))

    kept = yield from _recent_matching(read, op, rest, now, ttl_config)
    return kept[op.offset : op.offset + op.limit]


def _recent_matching(
    read: Callable[[int, int], Flow[dict[str, StoredEntry]]],
    op: SearchOp,
    filter: dict[str, Any],
    now: float,
    ttl_config: TTLConfig | None,
) -> Flow[list[Match]]:
    """The first `offset + limit` matches in recency order, read page by page (`read(size,
    start)`, each page twice the last), so a search reads about what it returns."""
    wanted = op.offset + op.limit
    kept: list[Match] = []
    size, start = max(2 * wanted, 32), 0
    while wanted > 0:
        batch = yield from read(size, start)
        found = [(path, entry, None) for path, entry in batch.items()]
        kept += _matching(found, filter, now, wanted - len(kept), ttl_config)
        if len(kept) >= wanted or len(batch) < size:
            break
        start, size = start + size, size * 2
    return kept


def _matching(
    found: Iterable[tuple[str, StoredEntry, float | None]],
    filter: dict[str, Any] | None,
    now: float,
    enough: int | None,
    ttl_config: TTLConfig | None,
) -> list[Match]:
    """The items of `found` (in order) that pass `filter` and expiry, with their decoded
    values; decoding stops once `enough` are kept (None: all), and skips an entry whose text
    lacks one of the filter's `text_needles`."""
    kept: list[Match] = []
    omit = bool((ttl_config or {}).get("omit_expired", False))  # else nothing is hidden
    decode = items.decode
    needles = filters.text_needles(filter)  # an entry's text without them cannot match
    needle = needles[0] if len(needles) == 1 else None  # the common case, without `all`
    for path, entry, score in found:
        if enough is not None and len(kept) >= enough:
            break
        if needle is not None:
            if needle not in entry.content:
                continue
        elif needles and not all(n in entry.content for n in needles):
            continue
        if not items.is_item(path) or (omit and ttls.hidden(entry.meta, now, ttl_config)):
            continue
        value = decode(entry.content)
        if filter and not filters.matches_filter(value, filter):
            continue
        kept.append((path, entry, score, value))
    return kept


def list_namespaces_flow(
    core: StoreCore, ns: str, op: ListNamespacesOp, now: float, ttl_config: TTLConfig | None
) -> Flow[list[tuple[str, ...]]]:
    """The item namespaces `op` lists in the store namespace `ns`, sorted, one page."""
    namespaces: set[tuple[str, ...]] = set()
    conditions = list(op.match_conditions or ())
    if (ttl_config or {}).get("omit_expired", False):  # each item's expiry counts
        for entry in (yield from core.list(ns, "")):
            address = items.address(entry.path)
            if address is not None and not ttls.hidden(entry.meta, now, ttl_config):
                namespaces.add(address[0])
    else:  # the store's directory index: no item is listed
        fixed = items.fixed_prefix(op)
        for directory in (yield from core.dirs(ns, items.directory(fixed))):
            namespaces.add(tuple(decode_segment(label) for label in directory.split("/")[:-1]))
        # A prefix condition without wildcards is what the listing was asked for: met.
        conditions = [c for c in conditions if c.match_type != "prefix" or c.path != fixed]
    matches = filters.matches_namespace
    kept = [names for names in namespaces if all(matches(c, names) for c in conditions)]
    if op.max_depth is not None:
        kept = list({names[: op.max_depth] for names in kept})
    return sorted(kept)[op.offset : op.offset + op.limit]
