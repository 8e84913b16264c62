"""The "last N" read: the last `count` entries under a prefix, in path order, in one request.

What a log-shaped namespace needs (a conversation's items, one entry per append, named by a
zero-padded sequence number): its tail, at a cost that does not grow with what came before.
A backend with `read_last` answers with one query (SQLite and PostgreSQL: `ORDER BY path DESC
LIMIT count`; in memory: a sort of the prefix's paths). The generic fallback, for a backend
without it, lists the prefix (paths and meta, no content) and reads entries from the end until
it has `count` of them, so it still reads no content it does not return.

Paths compare by code point, as `Store.list` sorts them; every spelling of the prefix is read
(see `paths`, "One spelling per name") and the union's last `count` returned.
"""

from __future__ import annotations

from contextchef.errors import ConfigError
from contextchef.store.backend import StoredEntry
from contextchef.store.ops import BackendOps, Op
from contextchef.store.paths import prefix_spellings

__all__ = ["last_flow"]


def last_flow(
    ops: BackendOps, ns: str, prefix: str, count: int, *, native: bool
) -> Op[dict[str, StoredEntry]]:
    """The last `count` entries of `ns` under `prefix`, ordered by path (oldest first);
    `native` when the backend has `read_last` for `ns`."""
    if isinstance(count, bool) or not isinstance(count, int):
        raise ConfigError(f"count must be an int, got {count!r}")
    spellings = prefix_spellings(prefix)
    if count <= 0:
        return {}
    if native and len(spellings) == 1:  # the backend's answer is already the last, in order
        return dict((yield from ops.read_last(ns, spellings[0], count)))
    found: dict[str, StoredEntry] = {}
    for spelling in spellings:
        if native:
            found.update((yield from ops.read_last(ns, spelling, count)))
            continue
        listed = sorted(item.path for item in (yield from ops.list(ns, spelling)))
        taken = 0
        for path in reversed(listed):
            if taken == count:
                break
            entry = yield from ops.read(ns, path)
            if entry is not None:  # deleted since the listing: the next one down stands in
                found[path] = entry
                taken += 1
    return {path: found[path] for path in sorted(found)[-count:]}
