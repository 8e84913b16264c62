"""Memory's expiry: the sweep that parts live entries from expired ones, and what expiring does.

An entry expires by time or by turns (`MemoryEntry.is_expired`). Outside a compile an expired
entry is deleted when found (`expire_flow`), announced through `on_memory_expired` and a
`MemoryChange("expire")`. A compile writes nothing: it announces the entry now, remembers its key
in `core.expiring` and leaves the delete to the store's next write (`StoreCore.defer`), which
spares an entry rewritten meanwhile (`delete_if_expired`); a later delete of an announced entry
is not announced twice.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol

from contextchef._effects import Flow
from contextchef.memory.entry import MEMORY_NAMESPACE, MemoryChange, MemoryEntry, read_entry
from contextchef.memory.hooks import call_hook
from contextchef.memory.order import MemoryOrder, ordered
from contextchef.store.core import StoreCore
from contextchef.store.ops import Op

__all__ = ["expire_flow", "sweep_flow"]

NS = MEMORY_NAMESPACE


class MemoryCore(Protocol):
    """What these flows use of `contextchef.memory.core.MemoryCore` (which calls them; a
    protocol, so that this module does not import the one that imports it)."""

    store: StoreCore
    clock: Callable[[], float]
    order: MemoryOrder
    on_expired: Callable[[MemoryEntry], object] | None
    expiring: set[str]

    @property
    def turn(self) -> int: ...
    def _notify(self, change: MemoryChange) -> Flow[None]: ...


def sweep_flow(
    core: MemoryCore, *, defer: bool = False
) -> Flow[tuple[tuple[MemoryEntry, ...], tuple[str, ...]]]:
    """The live entries, in the memory's order, and the keys that expired now. With `defer`
    (the compile path) an expired entry is announced now and deleted with the store's next
    write."""
    now, turn = core.clock(), core.turn
    live: list[MemoryEntry] = []
    expired: list[str] = []
    expiring = core.expiring
    for key, stored in (yield from core.store.entries(NS, "")).items():
        entry = read_entry(key, stored)
        if not entry.is_expired(now, turn):
            expiring.discard(key)  # rewritten since: the deferred delete spares it
            live.append(entry)
        elif defer and key not in expiring:
            yield from _announce(core, entry)
            expiring.add(key)
            core.store.defer((NS, key, id(core)), partial(delete_if_expired, core, key))
            expired.append(key)
        elif not defer:
            yield from expire_flow(core, entry)
            if key not in expiring:
                expired.append(key)
    return ordered(live, core.order), tuple(expired)


def delete_if_expired(core: MemoryCore, key: str) -> Op[None]:
    """The deferred delete of an expired entry: only if it is still there and expired."""
    if key not in core.expiring:
        return
    core.expiring.discard(key)
    stored = yield from core.store.ops.read(NS, key)
    if stored is not None and read_entry(key, stored).is_expired(core.clock(), core.turn):
        yield from core.store.delete(NS, key)


def expire_flow(core: MemoryCore, entry: MemoryEntry) -> Flow[None]:
    """Delete an expired entry, announcing it unless a compile already did."""
    announced = entry.key in core.expiring
    core.expiring.discard(entry.key)
    if not announced:
        yield from call_hook("on_memory_expired", core.on_expired, entry)
    yield from core.store.delete(NS, entry.key)
    if not announced:
        yield from core._notify(MemoryChange("expire", entry.key, None, entry.value))


def _announce(core: MemoryCore, entry: MemoryEntry) -> Flow[None]:
    yield from call_hook("on_memory_expired", core.on_expired, entry)
    yield from core._notify(MemoryChange("expire", entry.key, None, entry.value))
