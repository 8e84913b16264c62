"""Memory's policy, once: every operation as a flow over the store's `memory/` namespace.

`MemoryCore` holds what memory knows beyond the store (the key allowlist, the default TTL, the
selector, the hooks, how turns are counted) and turns each operation into a flow of effects (see
`contextchef._effects`): store reads and writes are `StoreOp`s, the host's hooks are `Call`s.
The turn count itself lives in the store (see `memory.turns`): each public flow re-reads it, so
every `Memory` and chef over one store counts the same turns.
`Memory` drives the flows synchronously and `AsyncMemory` awaits them, so an async-native
backend is awaited without a thread hop and an async `on_memory_update` hook really decides.

The model path is atomic where the store allows (`StoreCore.create`/`update`/`rename`):
`create` is create-if-absent, `update`/`edit` one store transaction over the stored entry and
`rename` one that moves it (see `contextchef.store.edits`), so concurrent edits queue instead of
failing. The veto hook is asked before the transaction, and again should another writer change
the value it approved meanwhile.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, get_args

from contextchef._effects import Call, Emit, Flow
from contextchef._limits import (
    DEFAULT_MAX_BLOCK_BYTES,
    DEFAULT_MAX_VALUE_BYTES,
    byte_size,
    size_limit,
)
from contextchef.errors import (
    ConfigError,
    EntryNotFoundError,
    MemoryKeyNotAllowedError,
    MemoryValueTooLargeError,
)
from contextchef.events import MemoryActor, MemoryChanged, MemoryExpired
from contextchef.memory.block import fit_memory_block
from contextchef.memory.build import build_entry
from contextchef.memory.edits import edit_flow, exists_error, rename_flow
from contextchef.memory.entry import (
    MEMORY_NAMESPACE,
    TTL,
    UNSET,
    Expiry,
    MemoryArtifacts,
    MemoryChange,
    MemoryEntry,
    MemoryPlacement,
    Unset,
    entry_meta,
    parse_ttl,
    read_entry,
)
from contextchef.memory.expiry import expire_flow, sweep_flow
from contextchef.memory.hooks import UpdateHook, ask_veto, call_hook
from contextchef.memory.order import MemoryOrder, Sequencer, check_order
from contextchef.memory.snapshot import restore_flow, snapshot_flow
from contextchef.memory.turns import TurnCounter, TurnMode
from contextchef.messages import Message
from contextchef.prompts import Vocabulary, as_vocabulary
from contextchef.store.core import StoreCore
from contextchef.store.paths import validate_entry_path

__all__ = ["MemoryCore", "Selector", "UpdateHook"]

logger = logging.getLogger("contextchef.memory")

Selector = Callable[[list[MemoryEntry]], Iterable[MemoryEntry]]

NS = MEMORY_NAMESPACE


class MemoryCore:
    """Configuration, the turn counter and every memory flow (see `Memory` for the options).

    Public flows start with `self.counter.load()`; the internal ones (`_get`, `_sweep`, …) use
    the count it read.
    """

    def __init__(
        self,
        store: StoreCore,
        *,
        default_ttl: TTL = None,
        allowed_keys: Iterable[str] | None = None,
        selector: Selector | None = None,
        on_memory_update: UpdateHook | None = None,
        on_memory_changed: Callable[[MemoryChange], object] | None = None,
        on_memory_expired: Callable[[MemoryEntry], object] | None = None,
        placement: MemoryPlacement = "after_system",
        clock: Callable[[], float] | None = None,
        turns: TurnMode = "user_messages",
        max_value_bytes: int | None = DEFAULT_MAX_VALUE_BYTES,
        max_block_bytes: int | None = DEFAULT_MAX_BLOCK_BYTES,
        order: MemoryOrder = "insertion",
    ) -> None:
        if isinstance(allowed_keys, str):
            raise ConfigError("allowed_keys must be a list of keys, not a single string")
        for name, hook in (
            ("selector", selector),
            ("on_memory_update", on_memory_update),
            ("on_memory_changed", on_memory_changed),
            ("on_memory_expired", on_memory_expired),
            ("clock", clock),
        ):
            if hook is not None and not callable(hook):
                raise ConfigError(f"{name} must be callable, got {hook!r}")
        if placement not in get_args(MemoryPlacement):
            raise ConfigError(
                f"memory placement must be 'after_system' or 'before_history_tail', "
                f"got {placement!r}"
            )
        parse_ttl(default_ttl)
        self.store = store
        # Memory's history is every version of its facts: ask the store to keep them, on every
        # backend that can (the others still serve memory; `history` then says they cannot).
        store.keep_versions(NS, required=False)
        self.default_ttl = default_ttl
        self.allowed: tuple[str, ...] | None = (
            None
            if allowed_keys is None
            else tuple(sorted({validate_entry_path(key) for key in allowed_keys}))
        )
        self.selector = selector
        self.on_update = on_memory_update
        self.on_changed = on_memory_changed
        self.on_expired = on_memory_expired
        self.placement: MemoryPlacement = placement
        self.order: MemoryOrder = check_order(order)
        self._sequencer = Sequencer()
        self.clock: Callable[[], float] = clock if clock is not None else store.clock
        self.counter = TurnCounter(store, turns)
        # Keys a compile found expired and announced; deleted with the store's next write.
        self.expiring: set[str] = set()
        self.max_value_bytes = size_limit(max_value_bytes, "max_value_bytes")
        self.max_block_bytes = size_limit(max_block_bytes, "max_block_bytes")
        self.events: Callable[[str], tuple[Callable[[Any], Any], ...]] | None = None
        """The handlers of a chef event by name (`memory:changed`, `memory:expired`): set by
        the chef that opens this memory (the last one, when several share it)."""

    @property
    def turn(self) -> int:
        """The turn count as last read from (or written to) the store."""
        return self.counter.turn

    def is_allowed(self, key: str) -> bool:
        return self.allowed is None or key in self.allowed

    def render(self, entries: Sequence[MemoryEntry], vocabulary: Vocabulary | str) -> str:
        return self.fit(entries, vocabulary)[1]

    def fit(
        self, entries: Sequence[MemoryEntry], vocabulary: Vocabulary | str
    ) -> tuple[tuple[MemoryEntry, ...], str]:
        """The entries the block shows within `max_block_bytes`, and the block."""
        return fit_memory_block(
            entries, as_vocabulary(vocabulary), self.allowed, self.max_block_bytes
        )

    def advance_turn(self) -> Flow[int]:
        """Count one turn, whatever the mode (a store write); the new count."""
        return (yield from self.counter.advance())

    # -- developer path ---------------------------------------------------------------------

    def get(self, key: str) -> Flow[MemoryEntry | None]:
        validate_entry_path(key)
        yield from self.counter.load()
        return (yield from self._get(key))

    def _get(self, key: str) -> Flow[MemoryEntry | None]:
        validate_entry_path(key)
        stored = yield from self.store.get(NS, key)
        if stored is None:
            return None
        entry = read_entry(key, stored)
        if entry.is_expired(self.clock(), self.turn):
            yield from expire_flow(self, entry)
            return None
        return entry

    def entries(self) -> Flow[tuple[MemoryEntry, ...]]:
        yield from self.counter.load()
        return (yield from sweep_flow(self))[0]

    def set(
        self,
        key: str,
        value: str,
        description: str | Unset | None,
        ttl: TTL | Unset,
        importance: float | Unset | None = UNSET,
    ) -> Flow[MemoryEntry]:
        validate_entry_path(key)
        old = yield from self.get(key)
        return (yield from self._write(key, value, old, description, ttl, importance))

    def delete(self, key: str) -> Flow[bool]:
        old = yield from self.get(key)
        if old is None:
            return False
        return (yield from self._remove(old, "host"))

    def history(self, key: str) -> Flow[tuple[MemoryEntry, ...]]:
        validate_entry_path(key)
        versions = yield from self.store.history(NS, key)
        return tuple(read_entry(key, stored) for stored in versions)

    # -- model path -------------------------------------------------------------------------

    def create(self, key: str, value: str, description: str | None) -> Flow[MemoryEntry]:
        self._check_allowed(key)
        if (yield from self.get(key)) is not None:  # (also expires a due entry, freeing its key)
            raise exists_error(key)
        self._check_size(key, value, None)
        yield from ask_veto(self.on_update, key, value, None)
        entry = self._build(key, value, None, description, UNSET)
        if not (yield from self.store.create(NS, key, value, entry_meta(entry))):
            raise exists_error(key)
        return (yield from self._written(entry, None, "model"))

    def update(self, key: str, value: str, description: str | Unset | None) -> Flow[MemoryEntry]:
        return (yield from self.edit(key, lambda _: value, description))

    def edit(
        self, key: str, change: Callable[[str], str], description: str | Unset | None
    ) -> Flow[MemoryEntry]:
        """Set `key` to `change(current value)` as one store transaction (see `memory.edits`)."""
        return (yield from edit_flow(self, key, change, description))

    def remove(self, key: str) -> Flow[None]:
        old = yield from self._existing(key)
        yield from ask_veto(self.on_update, key, None, old.value)
        yield from self._remove(old, "model")

    def rename(self, key: str, new_key: str) -> Flow[MemoryEntry]:
        """Move `key` to `new_key` in one store transaction (see `memory.edits`)."""
        return (yield from rename_flow(self, key, new_key))

    # -- compile path and snapshots ---------------------------------------------------------

    def compile_artifacts(
        self,
        vocabulary: Vocabulary | str,
        history: Sequence[Message] | None = None,
        *,
        frozen: bool = False,
    ) -> Flow[MemoryArtifacts]:
        """Count a host turn if `history` opens one (see `memory.turns`), then one pass over
        the store: expire what is due, select what to show, render the block. `frozen`: the
        history's messages are never mutated (the chef's copies), so it may be read
        incrementally. Writes nothing: the turn and the deletion of expired entries are
        written with the store's next write (`StoreCore.defer`), so a compile never waits
        for a writer."""
        vocabulary = as_vocabulary(vocabulary)
        if history is None:
            yield from self.counter.load()
        else:
            yield from self.counter.observe(history, frozen=frozen, defer=True)
        live, expired = yield from sweep_flow(self, defer=True)
        selected = yield from self._select(live)
        shown, block = self.fit(selected, vocabulary)
        kept = {id(entry) for entry in shown}
        omitted = tuple(entry.key for entry in selected if id(entry) not in kept)
        return MemoryArtifacts(shown, expired, block, omitted)

    def snapshot(self) -> Flow[dict[str, Any]]:
        return (yield from snapshot_flow(self.store, self.counter))

    def restore(self, data: Mapping[str, Any] | None) -> Flow[None]:
        return (yield from restore_flow(self.store, self.counter, data))

    # -- internals --------------------------------------------------------------------------

    def _select(self, live: tuple[MemoryEntry, ...]) -> Flow[tuple[MemoryEntry, ...]]:
        if self.selector is None:
            return live
        picked = yield Call.of(self.selector, list(live), what="memory selector")
        chosen = tuple(picked)
        for item in chosen:
            if not isinstance(item, MemoryEntry):
                raise ConfigError(
                    f"a memory selector must return MemoryEntry objects, got {item!r}"
                )
        return chosen

    def _write(
        self,
        key: str,
        value: str,
        old: MemoryEntry | None,
        description: str | Unset | None,
        ttl: TTL | Unset | Expiry,
        importance: float | Unset | None = UNSET,
    ) -> Flow[MemoryEntry]:
        """Write `key` unconditionally (the developer path's `set`)."""
        entry = self._build(key, value, old, description, ttl, importance=importance)
        yield from self.store.put(NS, key, value, entry_meta(entry))
        return (yield from self._written(entry, old, "host"))

    def _written(
        self, entry: MemoryEntry, old: MemoryEntry | None, by: MemoryActor
    ) -> Flow[MemoryEntry]:
        """Announce a write that landed."""
        change = MemoryChange("set", entry.key, entry.value, old.value if old else None, by)
        yield from self._notify(change)
        return entry

    def _build(
        self,
        key: str,
        value: str,
        old: MemoryEntry | None,
        description: str | Unset | None,
        ttl: TTL | Unset | Expiry,
        *,
        like: MemoryEntry | None = None,
        importance: float | Unset | None = UNSET,
    ) -> MemoryEntry:
        now = self.clock()
        return build_entry(
            key,
            value,
            old,
            description,
            ttl,
            like=like,
            default_ttl=self.default_ttl,
            now=now,
            turn=self.turn,
            importance=importance,
            sequence=None if old or like else self._sequencer.next(now),
        )

    def _remove(self, old: MemoryEntry, by: MemoryActor) -> Flow[bool]:
        removed = yield from self.store.delete(NS, old.key)
        if removed:
            yield from self._notify(MemoryChange("delete", old.key, None, old.value, by))
        return removed

    def _existing(self, key: str) -> Flow[MemoryEntry]:
        self._check_allowed(key)
        old = yield from self.get(key)
        if old is None:
            raise EntryNotFoundError(f"no memory entry {key!r}", namespace=NS, path=key)
        return old

    def _live(self, key: str) -> Flow[MemoryEntry]:
        """The live entry at `key` (a due one expires); `EntryNotFoundError` when none."""
        entry = yield from self._get(key)
        if entry is None:
            raise EntryNotFoundError(f"no memory entry {key!r}", namespace=NS, path=key)
        return entry

    def _check_allowed(self, key: str) -> None:
        validate_entry_path(key)
        if not self.is_allowed(key):
            raise MemoryKeyNotAllowedError(key, self.allowed or ())

    def _check_size(self, key: str, value: object, old: str | None) -> None:
        """Refuse a model write over `max_value_bytes`, unless it does not grow the value it
        replaces (so the model may still edit down an entry the host wrote long)."""
        limit = self.max_value_bytes
        if limit is None or not isinstance(value, str):
            return
        size = byte_size(value)
        if size > limit and (old is None or size > byte_size(old)):
            raise MemoryValueTooLargeError(key, size, limit)

    def _notify(self, change: MemoryChange) -> Flow[None]:
        yield from call_hook("on_memory_changed", self.on_changed, change)
        if self.events is None:
            return
        key, kind = change.key, change.type
        event: MemoryChanged | MemoryExpired
        if kind == "expire":
            name, event = "memory:expired", MemoryExpired(key, change.old_value or "")
        else:
            name = "memory:changed"
            event = MemoryChanged(key, kind, change.value, change.old_value, change.by)
        if handlers := self.events(name):
            yield Emit(handlers, event)
