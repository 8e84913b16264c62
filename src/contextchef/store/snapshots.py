"""A whole namespace at once: its snapshot, and a restore that replaces it.

Flows that `StoreCore.snapshot` and `restore` run, each only where the backend has the
capability (`StoreCapabilityError` otherwise). A snapshot maps every path to its entry, sorted by
path. A restore checks the whole mapping before anything is written (see
`validation.checked_snapshot`), opens like every write flow, replaces the namespace, forgets
the read times this store kept for it and, where the namespace is indexed, embeds its entries
again in place of every vector it had.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from contextchef.store.backend import Capability, StoredEntry
from contextchef.store.indexing import IndexConfig
from contextchef.store.ops import BackendOps, Op
from contextchef.store.pending import Pending
from contextchef.store.validation import checked_snapshot

__all__ = ["restore_flow", "snapshot_flow"]


class StoreCore(Protocol):
    """What these flows use of `contextchef.store.core.StoreCore` (which calls them; a protocol,
    so that this module does not import the one that imports it)."""

    ops: BackendOps
    clock: Callable[[], float]
    index: IndexConfig | None
    _pending: Pending

    def require(self, capability: Capability, ns: str) -> None: ...
    def _open_write(self) -> Op[None]: ...
    def _index(self, ns: str, entries: Mapping[str, StoredEntry | None]) -> Op[None]: ...


def snapshot_flow(core: StoreCore, ns: str) -> Op[dict[str, StoredEntry]]:
    """See `StoreCore.snapshot`."""
    core.require("snapshot", ns)
    data = yield from core.ops.snapshot(ns)
    return {path: data[path] for path in sorted(data)}


def restore_flow(core: StoreCore, ns: str, data: Mapping[str, StoredEntry]) -> Op[None]:
    """See `StoreCore.restore`."""
    core.require("restore", ns)
    checked = checked_snapshot(ns, data, core.clock)
    yield from core._open_write()
    yield from core.ops.restore(ns, checked)
    core._pending.forget_namespace(ns)
    if core.index is not None and core.index.covers(ns):
        yield from core.ops.delete_vectors(ns, None)
        yield from core._index(ns, dict(checked))
