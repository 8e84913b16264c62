"""Which spelling of an entry's name is stored: the lookups behind "One spelling per name".

`paths.entry_spellings` says which spellings a name may be stored under (NFC first); these flows
ask the backend which one is. `StoreCore._spelled` runs `stored_flow` for every flow that
addresses one entry; a name with a single spelling (every ASCII name) costs no request.
"""

from __future__ import annotations

from collections.abc import Callable

from contextchef.store.backend import Capability
from contextchef.store.ops import BackendOps, Op

__all__ = ["exists_flow", "stored_flow"]

Supports = Callable[[Capability, str], bool]
"""`StoreCore.supports`: whether the backend offers a capability for a namespace."""


def stored_flow(
    ops: BackendOps, ns: str, spellings: tuple[str, ...], supports: Supports
) -> Op[str]:
    """The first of `spellings` that is stored; the first (NFC) when none is."""
    if len(spellings) > 1:
        for spelling in spellings:
            if (yield from exists_flow(ops, ns, spelling, supports)):
                return spelling
    return spellings[0]


def exists_flow(ops: BackendOps, ns: str, path: str, supports: Supports) -> Op[bool]:
    """Whether `path` (spelled as given) holds an entry: the backend's `exists`, else a read."""
    if supports("exists", ns):
        return (yield from ops.exists(ns, path))
    return (yield from ops.read(ns, path)) is not None
