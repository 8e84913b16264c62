"""The vectors of a semantic index on disk: one hidden JSON file per namespace.

`<namespace dir>/.vectors.json` maps each indexed path to its vector (a dotfile: listing skips
it, and the TypeScript reference never sees it). It is rewritten whole, atomically (temporary
file, `os.replace`), under the namespace lock the backend's writes hold; reads take no lock and
see the old file or the new one. Scoring is `contextchef.store.vectors`, exact.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from contextchef.errors import StoreError
from contextchef.store.backends.filesystem.fileio import atomic_replace, read_regular
from contextchef.store.vectors import VectorSet

__all__ = ["VECTORS_FILE", "change_vectors", "load_vectors", "save_vectors"]

VECTORS_FILE = ".vectors.json"


def load_vectors(dfd: int | None, ns: str) -> VectorSet:
    """The vectors stored in the namespace directory `dfd` (empty when it has none)."""
    if dfd is None:
        return VectorSet()
    found = read_regular(dfd, VECTORS_FILE, VECTORS_FILE)
    if found is None:
        return VectorSet()
    try:
        data = json.loads(found[0])
        return VectorSet({str(path): vector for path, vector in data.items()})
    except (ValueError, TypeError, AttributeError) as exc:
        raise StoreError(f"the vectors file of {ns!r} is damaged: {exc}", namespace=ns) from exc


def save_vectors(dfd: int, vectors: VectorSet, temp: str, *, fsync: bool) -> None:
    """Write `vectors` over the namespace's vectors file, atomically."""
    body = json.dumps({path: list(v) for path, v in sorted(vectors.vectors.items())})
    atomic_replace(dfd, VECTORS_FILE, body.encode(), temp, fsync=fsync, where=VECTORS_FILE)


def change_vectors(
    dfd: int, ns: str, change: Callable[[VectorSet], None], temp: str, *, fsync: bool
) -> None:
    """Load, `change` and save the namespace's vectors (the caller holds the namespace lock)."""
    vectors = load_vectors(dfd, ns)
    change(vectors)
    save_vectors(dfd, vectors, temp, fsync=fsync)
