"""Memory's model-path edits: `edit` (and `update`) and `rename`, each one store transaction.

Concurrent edits queue in the store (`StoreCore.update`/`rename`, see `contextchef.store.edits`)
instead of failing. The `on_memory_update` hook is asked before the transaction, and again
should another writer change the value it approved meanwhile (`_Stale`, at most `_HOOK_ROUNDS`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from contextchef._effects import Flow
from contextchef.errors import EntryExistsError, StoreConflictError
from contextchef.events import MemoryActor
from contextchef.memory.entry import (
    MEMORY_NAMESPACE,
    TTL,
    UNSET,
    Expiry,
    MemoryChange,
    MemoryEntry,
    Unset,
    entry_meta,
    read_entry,
)
from contextchef.memory.hooks import UpdateHook, ask_veto
from contextchef.memory.turns import TurnCounter
from contextchef.store.backend import StoredEntry
from contextchef.store.core import StoreCore

__all__ = ["edit_flow", "exists_error", "rename_flow"]

NS = MEMORY_NAMESPACE


class MemoryCore(Protocol):
    """What these flows use of `contextchef.memory.core.MemoryCore` (which calls them; a
    protocol, so that this module does not import the one that imports it)."""

    store: StoreCore
    counter: TurnCounter
    on_update: UpdateHook | None
    clock: Callable[[], float]

    @property
    def turn(self) -> int: ...
    def _check_allowed(self, key: str) -> None: ...
    def _check_size(self, key: str, value: object, old: str | None) -> None: ...
    def _live(self, key: str) -> Flow[MemoryEntry]: ...
    def _existing(self, key: str) -> Flow[MemoryEntry]: ...
    def _get(self, key: str) -> Flow[MemoryEntry | None]: ...
    def _written(
        self, entry: MemoryEntry, old: MemoryEntry | None, by: MemoryActor
    ) -> Flow[MemoryEntry]: ...
    def _notify(self, change: MemoryChange) -> Flow[None]: ...
    def _build(
        self,
        key: str,
        value: str,
        old: MemoryEntry | None,
        description: str | Unset | None,
        ttl: TTL | Unset | Expiry,
        *,
        like: MemoryEntry | None = None,
    ) -> MemoryEntry: ...


def edit_flow(
    core: MemoryCore, key: str, change: Callable[[str], str], description: str | Unset | None
) -> Flow[MemoryEntry]:
    """Set `key` to `change(current value)` as one store transaction (`StoreCore.update`):
    concurrent edits queue, none is refused for contention. `change` may raise to refuse
    (nothing is written). With an `on_memory_update` hook, the hook is asked first about
    the value it would replace; should another writer change that value before the write,
    the hook is asked again about the new one."""
    core._check_allowed(key)
    yield from core.counter.load()
    for _ in range(_HOOK_ROUNDS):
        seen = yield from core._live(key)
        if core.on_update is not None:
            value = change(seen.value)
            core._check_size(key, value, seen.value)
            yield from ask_veto(core.on_update, key, value, seen.value)
        landed: list[tuple[MemoryEntry, MemoryEntry]] = []
        apply = _edit_step(core, key, change, description, seen, landed)
        try:
            if (yield from core.store.update(NS, key, apply)) is None:
                continue  # deleted meanwhile: `_live` says so
        except _Stale:
            continue
        return (yield from core._written(*landed[0], "model"))
    raise _kept_changing(key)


def _edit_step(
    core: MemoryCore,
    key: str,
    change: Callable[[str], str],
    description: str | Unset | None,
    seen: MemoryEntry,
    landed: list[tuple[MemoryEntry, MemoryEntry]],
) -> Callable[[StoredEntry], tuple[str, dict[str, Any]]]:
    """The store change of one `edit` attempt; it leaves `(new entry, old entry)` in
    `landed` and raises `_Stale` when the entry is not the one the hook was asked about."""

    def apply(stored: StoredEntry) -> tuple[str, dict[str, Any]]:
        old = read_entry(key, stored)
        if old.is_expired(core.clock(), core.turn):
            raise _Stale
        if core.on_update is not None and old.value != seen.value:
            raise _Stale  # the hook approved another value: ask it again
        value = change(old.value)
        core._check_size(key, value, old.value)
        entry = core._build(key, value, old, description, UNSET)
        landed[:] = [(entry, old)]
        return value, entry_meta(entry)

    return apply


def rename_flow(core: MemoryCore, key: str, new_key: str) -> Flow[MemoryEntry]:
    """Move `key` to `new_key` in one store transaction (`StoreCore.rename`), so an edit
    landing meanwhile is moved with it, never lost."""
    core._check_allowed(new_key)
    for _ in range(_HOOK_ROUNDS):
        old = yield from core._existing(key)
        if (yield from core._get(new_key)) is not None:
            raise exists_error(new_key)
        yield from ask_veto(core.on_update, new_key, old.value, None)
        yield from ask_veto(core.on_update, key, None, old.value)
        landed: list[tuple[MemoryEntry, MemoryEntry]] = []
        apply = _move_step(core, key, new_key, old, landed)
        try:
            outcome = yield from core.store.rename(NS, key, new_key, apply)
        except _Stale:
            continue
        if outcome is None:
            continue  # deleted meanwhile: `_existing` says so
        if not outcome:
            raise exists_error(new_key)
        moved, current = landed[0]
        yield from core._written(moved, None, "model")
        yield from core._notify(MemoryChange("delete", key, None, current.value, "model"))
        return moved
    raise _kept_changing(key)


def _move_step(
    core: MemoryCore,
    key: str,
    new_key: str,
    seen: MemoryEntry,
    landed: list[tuple[MemoryEntry, MemoryEntry]],
) -> Callable[[StoredEntry], tuple[str, dict[str, Any]]]:
    """The store change of one `rename` attempt (see `_edit_step`)."""

    def apply(stored: StoredEntry) -> tuple[str, dict[str, Any]]:
        current = read_entry(key, stored)
        if current.is_expired(core.clock(), core.turn) or (
            core.on_update is not None and current.value != seen.value
        ):
            raise _Stale
        expiry = (current.expires_at, current.expires_at_turn)
        moved = core._build(new_key, current.value, None, current.description, expiry, like=current)
        landed[:] = [(moved, current)]
        return current.value, entry_meta(moved)

    return apply


_HOOK_ROUNDS = 64
"""How often an edit asks `on_memory_update` again because another writer changed the value the
hook approved (without a hook an edit never retries: the store serialises it)."""


class _Stale(Exception):
    """Raised inside a transaction whose entry is no longer the one the flow read (expired, or
    changed after the hook approved it): nothing is written, the flow reads again."""


def _kept_changing(key: str) -> StoreConflictError:
    return StoreConflictError(
        f"memory key {key!r} changed {_HOOK_ROUNDS} times while the hook was asked",
        namespace=NS,
        path=key,
    )


def exists_error(key: str) -> EntryExistsError:
    return EntryExistsError(f"memory key {key!r} already exists", namespace=NS, path=key)
