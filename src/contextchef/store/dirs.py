"""The directory listing: which directories under a prefix directly hold an entry.

A namespace index for callers that address entries by directory (the LangGraph store keeps an
item namespace per directory): `list_namespaces` needs the directories, never the entries. A
backend with `list_dirs` answers from its own index (in memory, and in SQLite's `entry_dirs`
table kept by triggers: a count of entries per directory; PostgreSQL: `SELECT DISTINCT` of each
path's directory, no content read). The generic fallback lists the prefix (paths and meta, no
content) and keeps each path's directory.

The prefix is a directory: `""` (the whole namespace) or a path ending in `/`. Every spelling
of it is asked (see `paths`, "One spelling per name"); the union comes back sorted.
"""

from __future__ import annotations

from contextchef.errors import ConfigError
from contextchef.store.ops import BackendOps, Op
from contextchef.store.paths import prefix_spellings

__all__ = ["directory_of", "dirs_flow"]


def directory_of(path: str) -> str:
    """`a/b/c.md` → `a/b/`; `c.md` → `""`."""
    return path[: path.rfind("/") + 1]


def dirs_flow(ops: BackendOps, ns: str, prefix: str, *, native: bool) -> Op[list[str]]:
    """The directories of `ns` under `prefix` directly holding an entry, sorted; `native`
    when the backend has `list_dirs` for `ns`."""
    if prefix and not (isinstance(prefix, str) and prefix.endswith("/")):
        raise ConfigError(f"a directory listing takes '' or a path ending in '/', got {prefix!r}")
    found: set[str] = set()
    for spelling in prefix_spellings(prefix):
        if native:
            found.update((yield from ops.list_dirs(ns, spelling)))
        else:
            found.update(directory_of(item.path) for item in (yield from ops.list(ns, spelling)))
    return sorted(found)
