"""The store's read-modify-write flows: `update` (edit one entry) and `rename` (move one).

Where the backend offers `transact` (every built-in backend does), each is one atomic step of
the backend: the current entry is read, the caller's pure `change` computed and the result
written while every other writer of the paths waits (SQLite: one `BEGIN IMMEDIATE`;
PostgreSQL: `SELECT … FOR UPDATE` of those rows; the filesystem: the namespace's OS lock; in
memory: the backend's lock). Concurrent edits therefore queue instead of failing: an edit is
refused only by its own `change` (the text it edits is gone), never for contention, and a
`rename` can no longer lose an edit that lands between its copy and its delete.

A backend without `transact` gets the older protocol: `update` is a compare-and-swap loop
(`read_versioned`, compute, `replace_if`, retried up to `CAS_ATTEMPTS` times, then
`StoreConflictError`), `rename` a create of the new path followed by a delete of the old one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

from contextchef._effects import Held, Hold
from contextchef.errors import StoreConflictError
from contextchef.store.backend import Capability, StoredEntry, Version
from contextchef.store.indexing import IndexConfig
from contextchef.store.ops import BackendOps, Op
from contextchef.store.pending import Pending
from contextchef.store.validation import check_content, prepare_meta

__all__ = ["CAS_ATTEMPTS", "Change", "append_flow", "rename_flow", "update_flow"]

T = TypeVar("T")

CAS_ATTEMPTS = 8
"""How many compare-and-swap attempts `update` makes, on a backend without `transact`, before
raising `StoreConflictError`."""


class StoreCore(Protocol):
    """What these flows use of `contextchef.store.core.StoreCore` (which calls them; a protocol,
    so that this module does not import the one that imports it)."""

    backend: object
    ops: BackendOps
    clock: Callable[[], float]
    index: IndexConfig | None
    _pending: Pending
    _undeclared: set[str]

    def supports(self, capability: Capability, ns: str) -> bool: ...
    def _spelled(self, ns: str, path: str) -> Op[str]: ...
    def _open_write(self) -> Op[None]: ...
    def _index(self, ns: str, entries: Mapping[str, StoredEntry | None]) -> Op[None]: ...
    def create(
        self, ns: str, path: str, content: str, meta: Mapping[str, Any] | None
    ) -> Op[bool]: ...
    def delete(self, ns: str, path: str) -> Op[bool]: ...
    def read_versioned(
        self, ns: str, path: str
    ) -> Op[tuple[StoredEntry, Version | None] | None]: ...
    def replace_if(
        self,
        ns: str,
        path: str,
        content: str,
        meta: Mapping[str, Any] | None,
        expected: Version | None,
    ) -> Op[bool]: ...


Change = Callable[[StoredEntry], tuple[str, Mapping[str, Any] | None]]
"""What `update` and `rename` apply: the current entry to the new `(content, meta)`; pure (it
may run more than once), may raise to refuse (nothing is written)."""


def _prepared(
    core: StoreCore, ns: str, path: str, change: Change, entry: StoredEntry
) -> StoredEntry:
    content, meta = change(entry)
    check_content(content, ns=ns, path=path)
    return StoredEntry(content, prepare_meta(meta, core.clock()))


def holding(core: StoreCore, ns: str, paths: tuple[str, ...], flow: Op[T]) -> Op[T]:
    """`flow`, run holding the in-process locks of `paths` (see `contextchef._effects.Hold`):
    edits of one entry from one process queue here before they reach the backend (whose pool
    or lock they would otherwise crowd)."""
    held: Held = yield Hold(tuple((id(core.backend), ns, path) for path in paths))
    try:
        return (yield from flow)
    finally:
        held.release()


def update_flow(core: StoreCore, ns: str, path: str, change: Change) -> Op[StoredEntry | None]:
    """See `StoreCore.update`; the updated entry is brought into the semantic index after."""
    updated = yield from _update_held(core, ns, path, change)
    if updated is not None and core.index is not None:
        yield from core._index(ns, {(yield from core._spelled(ns, path)): updated})
    return updated


def _update_held(core: StoreCore, ns: str, path: str, change: Change) -> Op[StoredEntry | None]:
    path = yield from core._spelled(ns, path)
    yield from core._open_write()
    return (yield from holding(core, ns, (path,), _update(core, ns, path, change)))


def _update(core: StoreCore, ns: str, path: str, change: Change) -> Op[StoredEntry | None]:
    if not core.supports("transact", ns):
        return (yield from _compare_and_swap(core, ns, path, change))
    written: list[StoredEntry | None] = [None]

    def apply(current: Mapping[str, StoredEntry | None]) -> dict[str, StoredEntry | None]:
        entry = current.get(path)
        if entry is None:
            written[0] = None
            return {}
        written[0] = _prepared(core, ns, path, change, entry)
        return {path: written[0]}

    yield from core.ops.transact(ns, (path,), apply)
    return written[0]


def _compare_and_swap(
    core: StoreCore, ns: str, path: str, change: Change
) -> Op[StoredEntry | None]:
    for _ in range(CAS_ATTEMPTS):
        found = yield from core.read_versioned(ns, path)
        if found is None:
            return None
        content, meta = change(found[0])
        if (yield from core.replace_if(ns, path, content, meta, found[1])):
            return StoredEntry(content, meta or {})
    raise StoreConflictError(
        f"{ns}/{path} changed {CAS_ATTEMPTS} times while being edited; nothing was written",
        namespace=ns,
        path=path,
    )


def rename_flow(
    core: StoreCore, ns: str, path: str, new_path: str, change: Change
) -> Op[bool | None]:
    """See `StoreCore.rename`; both paths are brought up to date in the semantic index after."""
    moved = yield from _rename_held(core, ns, path, new_path, change)
    if moved and core.index is not None:
        old, new = (
            (yield from core._spelled(ns, path)),
            (yield from core._spelled(ns, new_path)),
        )
        yield from core._index(ns, {old: None, new: (yield from core.ops.read(ns, new))})
    return moved


def _rename_held(
    core: StoreCore, ns: str, path: str, new_path: str, change: Change
) -> Op[bool | None]:
    path = yield from core._spelled(ns, path)
    new_path = yield from core._spelled(ns, new_path)
    yield from core._open_write()
    moved = _rename(core, ns, path, new_path, change)
    outcome = yield from holding(core, ns, (path, new_path), moved)
    if outcome:
        core._pending.forget(ns, path)
    return outcome


def _rename(core: StoreCore, ns: str, path: str, new_path: str, change: Change) -> Op[bool | None]:
    if not core.supports("transact", ns):
        return (yield from _copy_then_delete(core, ns, path, new_path, change))
    outcome: list[bool | None] = [None]

    def apply(current: Mapping[str, StoredEntry | None]) -> dict[str, StoredEntry | None]:
        entry = current.get(path)
        if entry is None or current.get(new_path) is not None or new_path == path:
            outcome[0] = None if entry is None else False
            return {}
        outcome[0] = True
        # The new path first: a backend that cannot write both at once duplicates, never loses.
        return {new_path: _prepared(core, ns, new_path, change, entry), path: None}

    yield from core.ops.transact(ns, (path, new_path), apply)
    return outcome[0]


def _copy_then_delete(
    core: StoreCore, ns: str, path: str, new_path: str, change: Change
) -> Op[bool | None]:
    entry = yield from core.ops.read(ns, path)
    if entry is None:
        return None
    content, meta = change(entry)
    if new_path == path or not (yield from core.create(ns, new_path, content, meta)):
        return False
    yield from core.delete(ns, path)
    return True


def append_flow(
    core: StoreCore, ns: str, path: str, content: str, meta: Mapping[str, Any] | None
) -> Op[None]:
    """`StoreCore.append` with meta, as one `transact`: the entry (created when missing) gets
    `content` at its end and `meta` merged into its own."""

    def apply(current: Mapping[str, StoredEntry | None]) -> dict[str, StoredEntry | None]:
        existing = current.get(path)
        now = core.clock()
        merged: dict[str, Any] = dict(existing.meta) if existing is not None else {}
        merged.update(meta or {})
        merged["updated_at"] = (meta or {}).get("updated_at", now)
        combined = (existing.content if existing is not None else "") + content
        return {path: StoredEntry(combined, prepare_meta(merged, now))}

    yield from holding(core, ns, (path,), core.ops.transact(ns, (path,), apply))
