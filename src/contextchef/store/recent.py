"""The recency page: entries under a prefix, most recently updated first, one page at a time.

What a caller paging through a namespace by recency needs (the LangGraph store's `search`
without a query): `limit` entries from `offset` in the order `updated_at` descending, then path
(code points) ascending, so it reads a page rather than the namespace. A backend with
`read_recent` answers with one query (SQLite and PostgreSQL: `ORDER BY updated_at DESC, path
LIMIT … OFFSET …`; in memory: a sort of the prefix's entries). The generic fallback reads the
prefix's entries and sorts them.

Every spelling of the prefix is read (see `paths`, "One spelling per name"): with more than
one, each is read from its start and the union sorted and sliced.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from contextchef.errors import ConfigError
from contextchef.store.backend import StoredEntry
from contextchef.store.paths import prefix_spellings

if TYPE_CHECKING:  # the backends import `recency_key` without the effect system
    from contextchef.store.ops import BackendOps, Op
    from contextchef.store.where import Condition

__all__ = ["BEYOND", "recency_key", "recent_flow", "recent_page", "recent_where_flow"]

BEYOND = 2**62
"""More entries than any namespace holds: a larger limit or offset is read as this one (SQL
integers stop at 2**63 - 1)."""


def recency_key(item: tuple[str, StoredEntry]) -> tuple[float, str]:
    """The sort key of the recency order: newest first, then by path."""
    updated = item[1].meta.get("updated_at")
    if type(updated) is float:  # what the store writes: no ABC check (a sort's cost)
        return (-updated, item[0])
    return (-float(updated) if isinstance(updated, int | float) else 0.0, item[0])


def recent_page(
    items: Iterable[tuple[str, StoredEntry]], limit: int, offset: int
) -> dict[str, StoredEntry]:
    """The page `[offset, offset + limit)` of `items` in the recency order (`recency_key`): a
    page of a small share of the entries is taken with a heap (`heapq.nsmallest`, equal to the
    sorted slice) rather than a sort of them all."""
    listed = items if isinstance(items, list) else list(items)
    wanted = offset + limit
    if wanted * 4 < len(listed):
        return dict(heapq.nsmallest(wanted, listed, key=recency_key)[offset:])
    return dict(sorted(listed, key=recency_key)[offset:wanted])


def _recent(entries: Mapping[str, StoredEntry], limit: int, offset: int) -> dict[str, StoredEntry]:
    return recent_page(list(entries.items()), limit, offset)


def recent_flow(
    ops: BackendOps,
    ns: str,
    prefix: str,
    limit: int,
    offset: int,
    *,
    native: bool,
    entries: Callable[[str, str], Op[dict[str, StoredEntry]]],
) -> Op[dict[str, StoredEntry]]:
    """`limit` entries of `ns` under `prefix` from `offset`, most recently updated first;
    `native` when the backend has `read_recent` for `ns`, else `entries(ns, prefix)` (the
    store's own read of a prefix) is sorted."""
    _check_page(limit, offset)
    spellings = prefix_spellings(prefix)
    if limit == 0:
        return {}
    limit, offset = min(limit, BEYOND), min(offset, BEYOND)
    if native and len(spellings) == 1:
        return dict((yield from ops.read_recent(ns, spellings[0], limit, offset)))
    if not native:
        return _recent((yield from entries(ns, prefix)), limit, offset)
    found: dict[str, StoredEntry] = {}
    for spelling in spellings:
        found.update((yield from ops.read_recent(ns, spelling, offset + limit, 0)))
    return _recent(found, limit, offset)


def _check_page(limit: int, offset: int) -> None:
    for name, number in (("limit", limit), ("offset", offset)):
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise ConfigError(f"{name} must be an int >= 0, got {number!r}")


def recent_where_flow(
    ops: BackendOps, ns: str, prefix: str, where: Condition, limit: int, offset: int
) -> Op[dict[str, StoredEntry]]:
    """`recent_flow` over only the entries of `ns` matching `where`, filtered and paged by a
    backend with `read_recent_where` for `ns` (see `contextchef.store.where`)."""
    _check_page(limit, offset)
    spellings = prefix_spellings(prefix)
    if limit == 0:
        return {}
    limit, offset = min(limit, BEYOND), min(offset, BEYOND)
    if len(spellings) == 1:
        return dict((yield from ops.read_recent_where(ns, spellings[0], where, limit, offset)))
    found: dict[str, StoredEntry] = {}
    for spelling in spellings:
        found.update((yield from ops.read_recent_where(ns, spelling, where, offset + limit, 0)))
    return _recent(found, limit, offset)
