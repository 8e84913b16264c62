"""Vectors whose entry is gone, and how they are found and deleted.

A semantic index keeps its vectors beside the entries (see `indexing`). A write through an
indexed store removes an entry's vectors with it, but an entry can go without them: deleted by
a process whose store has no index, by a backend path that bypasses the store, or by a crash
between the two writes. A search meets such a vector (`nearest` returns it, the entry read
finds nothing): it skips it and defers `prune_flow` to the core's next write (a read never
writes; see `pending`), which checks again that each entry is still gone before deleting, in
batches of `PRUNE_BATCH`.

Vector keys: the entry's path, or `<path>//<name>` (`KEY_SEPARATOR`) for the further vectors of
an entry with several (an entry path never holds `//`); `entry_of` maps a key to its entry.
"""

from __future__ import annotations

from collections.abc import Sequence

from contextchef.store.ops import BackendOps, Op

__all__ = ["KEY_SEPARATOR", "PRUNE_BATCH", "entry_of", "prune_flow"]

KEY_SEPARATOR = "//"
"""Between an entry's path and the name of one of its further vectors."""

PRUNE_BATCH = 256
"""Orphaned vectors checked and deleted per backend call."""


def entry_of(key: str) -> str:
    """The path of the entry the vector `key` belongs to."""
    return key.split(KEY_SEPARATOR, 1)[0]


def prune_flow(ops: BackendOps, ns: str, keys: Sequence[str]) -> Op[int]:
    """Delete the vectors `keys` of `ns` whose entry is (still) gone; how many."""
    deleted = 0
    for start in range(0, len(keys), PRUNE_BATCH):
        batch = keys[start : start + PRUNE_BATCH]
        gone: list[str] = []
        absent: dict[str, bool] = {}
        for key in batch:
            path = entry_of(key)
            if path not in absent:
                absent[path] = (yield from ops.read(ns, path)) is None
            if absent[path]:
                gone.append(key)
        if gone:
            yield from ops.delete_vectors(ns, gone)
            deleted += len(gone)
    return deleted
