"""`Memory` and `AsyncMemory`: durable `key → value` facts in the store's `memory/` namespace.

Each fact is one entry: the content is the value; the meta holds the description, the times,
the update count, the host's importance, the entry's place in insertion order and the expiry.
Three paths reach it:

- the developer's (`set`, `delete`, `get`, `entries`): no key list and no veto apply;
- the model's (`create`, `update`, `remove`, `rename`, used by the `context` tool and the
  legacy memory tools): the key must be in `allowed_keys` (when set), then the host's
  `on_memory_update(key, new_value, old_value)` hook may veto by returning False (a hook that
  raises vetoes too, and is logged);
- the compile's (`compile_artifacts`): one pass over the store that expires what is due, asks
  the `selector` what to show and renders the memory block.

Entries come in the order they were learned (`order="insertion"`, the default: an update keeps
an entry's place, a new key goes last; see `contextchef.memory.order`) or sorted by key
(`order="key"`); every backend gives the same order. The host may rate an entry with
`importance` (any finite number, higher matters more): the block shows it to the model, and a
`selector` may rank or cut by it.

A TTL is counted in turns (`3` or `{"turns": 3}`), in seconds (`{"seconds": 60.0}` or a
`timedelta`) or in milliseconds (`{"ms": 60000}`, as the TypeScript reference writes it); `None`
means never. Passing `ttl=None` to `set` on an existing entry clears its old
expiry. An entry written at turn `t` with a TTL of `n` turns is shown in turns `t` … `t+n-1`.

A turn is a *host* turn, never a compile (see `contextchef.memory.turns`). With
`turns="user_messages"` (the default) a compile advances the count when its history holds a
user message the last counted turn did not; compiling the same history again, for another
target or as a retry, does not. The first user message opens turn 0. With `turns="explicit"`
only `advance_turn()` (`chef.memory.advance_turn()`) advances it, for hosts whose turns are not user
messages. The count is stored beside the memory (`memory_state/turn` in the same store), so a
new `Memory` or chef over a persistent store carries on counting, and `snapshot()`/`restore()`
carry it too. An expired entry is invisible:
the first read that meets it deletes it and fires `on_memory_expired(entry)` and then
`on_memory_changed(MemoryChange("expire", …))`. Callbacks that raise are logged and never stop
the operation.

`Memory` runs every operation with plain calls; `AsyncMemory` has the same methods as coroutines
(an async-native backend is awaited, a synchronous one runs in a worker thread, and hooks may be
coroutine functions). Both drive the flows of `MemoryCore`, so they share every rule.

    memory = Memory(Store(InMemoryBackend()), allowed_keys=["user_name", "goal"])
    memory.set("goal", "ship v2", description="the user's current objective", ttl={"turns": 20},
               importance=5)
    artifacts = memory.compile_artifacts(history=messages)   # .entries, .expired, .block
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Self

from contextchef._effects import drive_async, drive_sync
from contextchef._limits import DEFAULT_MAX_BLOCK_BYTES, DEFAULT_MAX_VALUE_BYTES
from contextchef.memory.core import MemoryCore, Selector
from contextchef.memory.entry import (
    MEMORY_NAMESPACE,
    TTL,
    UNSET,
    MemoryArtifacts,
    MemoryChange,
    MemoryEntry,
    MemoryPlacement,
    Unset,
)
from contextchef.memory.hooks import UpdateHook
from contextchef.memory.order import MemoryOrder
from contextchef.memory.turns import TurnMode
from contextchef.messages import Message
from contextchef.prompts import DEFAULT_VOCABULARY, Vocabulary
from contextchef.store.aio import AsyncNamespaceView, AsyncStore
from contextchef.store.backend import AsyncStorageBackend, StorageBackend
from contextchef.store.store import NamespaceView, Store, StoreBase

__all__ = ["AsyncMemory", "Memory", "memory_core"]


class _MemoryBase:
    """Construction and configuration shared by `Memory` and `AsyncMemory`."""

    _core: MemoryCore

    _store_type: type[StoreBase[Any]] = StoreBase

    def __init__(
        self,
        store: Store | AsyncStore | StorageBackend | AsyncStorageBackend,
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
        """Memory over the `memory/` namespace of `store`.

        Args:
            store: the store (or a backend, wrapped in one) whose `memory/` namespace holds the
                entries; `AsyncMemory` also takes an async-native backend.
            default_ttl: the TTL of entries created without one (`None`: they never expire):
                turns (`3`, `{"turns": 3}`), `{"seconds": s}`, `{"ms": n}` or a `timedelta`.
            allowed_keys: the only keys the model may write; `None` allows any key.
            selector: `selector(entries) -> entries` chooses which live entries a compile shows,
                and in what order; it receives them in `order`, each with its `importance`.
            on_memory_update: `(key, new_value_or_None, old_value_or_None)`; returning False (or
                raising) vetoes a model-path write.
            on_memory_changed: receives a `MemoryChange` after every set, delete and expiry.
            on_memory_expired: receives each `MemoryEntry` as it expires, before it is deleted.
            placement: where the chef puts the block: `"after_system"` (stable prefix) or
                `"before_history_tail"` (keeps the cached prefix stable when memory changes
                often).
            clock: seconds since the epoch, for times and second-based TTLs (default: the
                store's clock).
            turns: what advances the turn count of turn-based TTLs: `"user_messages"` (a
                compile whose history holds a new user message) or `"explicit"` (only
                `advance_turn()` / `chef.memory.advance_turn()`).
            max_value_bytes: the most UTF-8 bytes one value may have when the *model* writes
                it (`create`, `update`, the `context` tool, the legacy memory tools): a larger
                write is refused (`MemoryValueTooLargeError`, an `Error:` result for the model)
                unless it does not grow the value it replaces. The host's `set` is not capped.
                None: no cap.
            max_block_bytes: the most UTF-8 bytes of the memory block one compile shows,
                whoever wrote the entries (`set` included): entries that do not fit are left
                out, in order, with one line saying how many and how to read them. None: no
                cap.
            order: the order of `entries()` and of the block: `"insertion"` (the order the
                facts were learned; an update keeps an entry's place) or `"key"` (sorted by
                key). The same on every backend.
        """
        self._core = MemoryCore(
            self._store_type.of(store).core,
            default_ttl=default_ttl,
            allowed_keys=allowed_keys,
            selector=selector,
            on_memory_update=on_memory_update,
            on_memory_changed=on_memory_changed,
            on_memory_expired=on_memory_expired,
            placement=placement,
            clock=clock,
            turns=turns,
            max_value_bytes=max_value_bytes,
            max_block_bytes=max_block_bytes,
            order=order,
        )

    @classmethod
    def over(cls, core: MemoryCore) -> Self:
        """A memory that shares `core` (its configuration, hooks and turn counter)."""
        memory = cls.__new__(cls)
        memory._core = core
        return memory

    def __repr__(self) -> str:
        return f"<{type(self).__name__} turn={self._core.turn} placement={self.placement!r}>"

    @property
    def core(self) -> MemoryCore:
        """The flows behind this memory (what the chef drives at compile time)."""
        return self._core

    @property
    def allowed_keys(self) -> tuple[str, ...] | None:
        """The keys the model may write, sorted; None when any key is allowed."""
        return self._core.allowed

    @property
    def placement(self) -> MemoryPlacement:
        """Where the chef puts the memory block (see the class docstring)."""
        return self._core.placement

    @property
    def order(self) -> MemoryOrder:
        """The order of `entries()` and of the block: `"insertion"` or `"key"`."""
        return self._core.order

    @property
    def turn(self) -> int:
        """The turn count that turn-based TTLs count against, as of this memory's last
        operation (the count itself is kept in the store)."""
        return self._core.turn

    @property
    def turns(self) -> TurnMode:
        """What advances the turn count: `"user_messages"` or `"explicit"`."""
        return self._core.counter.mode

    def supports_history(self) -> bool:
        """Whether the backend keeps every version of a memory (see `history`): every built-in
        backend does; one without the `keep_versions` capability does not."""
        return self._core.store.supports("history", MEMORY_NAMESPACE)

    def is_allowed(self, key: str) -> bool:
        """Whether the model may write `key`."""
        return self._core.is_allowed(key)

    def render(
        self, entries: Sequence[MemoryEntry], vocabulary: Vocabulary | str = DEFAULT_VOCABULARY
    ) -> str:
        """The memory block in `vocabulary` for `entries` (see `render_memory_block`)."""
        return self._core.render(entries, vocabulary)


class Memory(_MemoryBase):
    """Durable facts in `memory/`, with TTLs, a key allowlist, a veto hook and change events
    (the options are described in `__init__`)."""

    _store_type = Store

    @property
    def view(self) -> NamespaceView:
        """The store's `memory/` namespace this memory reads and writes."""
        return Store.over(self._core.store).namespace(MEMORY_NAMESPACE)

    # -- developer path ---------------------------------------------------------------------

    def get(self, key: str) -> MemoryEntry | None:
        """The live entry at `key`, or None (an expired one is expired now)."""
        return drive_sync(self._core.get(key))

    def entries(self) -> tuple[MemoryEntry, ...]:
        """Every live entry, in the memory's `order` (expired ones are expired on the way)."""
        return drive_sync(self._core.entries())

    def set(
        self,
        key: str,
        value: str,
        *,
        description: str | Unset | None = UNSET,
        ttl: TTL | Unset = UNSET,
        importance: float | Unset | None = UNSET,
    ) -> MemoryEntry:
        """Create or overwrite `key`, bypassing `allowed_keys`, the veto and `max_value_bytes`
        (the block cap still limits what a compile shows).

        An update keeps `created_at`, the entry's place in insertion order, and bumps
        `update_count`. `description`, `ttl` and `importance` left UNSET keep the entry's
        current ones (a new entry gets no description, `default_ttl` and no importance); None
        clears them. `importance` is any finite number, higher mattering more.
        """
        return drive_sync(self._core.set(key, value, description, ttl, importance))

    def delete(self, key: str) -> bool:
        """Remove `key`, bypassing the checks; False when there was nothing to remove."""
        return drive_sync(self._core.delete(key))

    def history(self, key: str) -> tuple[MemoryEntry, ...]:
        """Every version `key` has had, oldest first; deleted and expired versions are
        included. Memory declares its namespace versioned, which every built-in backend honours;
        a backend that keeps no versions raises `StoreCapabilityError` (`supports_history()`)."""
        return drive_sync(self._core.history(key))

    # -- model path -------------------------------------------------------------------------

    def create(self, key: str, value: str, *, description: str | None = None) -> MemoryEntry:
        """Create `key` for the model: allowed key, then not existing (`EntryExistsError`),
        then the veto."""
        return drive_sync(self._core.create(key, value, description))

    def update(
        self, key: str, value: str, *, description: str | Unset | None = UNSET
    ) -> MemoryEntry:
        """Change an existing `key` for the model (its expiry is kept)."""
        return drive_sync(self._core.update(key, value, description))

    def remove(self, key: str) -> None:
        """Delete an existing `key` for the model (the veto sees `new_value=None`)."""
        drive_sync(self._core.remove(key))

    def rename(self, key: str, new_key: str) -> MemoryEntry:
        """Move `key` to `new_key` for the model: both keys are checked and both writes (the
        create and the delete) must pass the veto before anything changes. The entry keeps its
        value, description and expiry."""
        return drive_sync(self._core.rename(key, new_key))

    # -- compile path and snapshots ---------------------------------------------------------

    def compile_artifacts(
        self,
        vocabulary: Vocabulary | str = DEFAULT_VOCABULARY,
        history: Sequence[Message] | None = None,
    ) -> MemoryArtifacts:
        """One store pass: expire what is due, select what to show, render the block. With
        `history` (what the chef passes), a new user message counts a turn first."""
        return drive_sync(self._core.compile_artifacts(vocabulary, history))

    def advance_turn(self) -> int:
        """Count one turn, in either mode (a store write); the new count."""
        return drive_sync(self._core.advance_turn())

    def snapshot(self) -> dict[str, Any]:
        """The turn count (and the marker of its last user message) and every stored entry
        (expired ones included), as JSON data."""
        return drive_sync(self._core.snapshot())

    def restore(self, data: Mapping[str, Any] | None) -> None:
        """Make memory hold exactly what `snapshot()` returned, turn count included (None:
        empty, turn 0). No events fire: this is a restore, not a change."""
        drive_sync(self._core.restore(data))


class AsyncMemory(_MemoryBase):
    """`Memory` for async code: the same options (`store` may also be an `AsyncStore` or an
    `AsyncStorageBackend`), the same methods as coroutines, and hooks that may be coroutine
    functions."""

    _store_type = AsyncStore

    @property
    def view(self) -> AsyncNamespaceView:
        """The store's `memory/` namespace this memory reads and writes."""
        return AsyncStore.over(self._core.store).namespace(MEMORY_NAMESPACE)

    async def get(self, key: str) -> MemoryEntry | None:
        """See `Memory.get`."""
        return await drive_async(self._core.get(key))

    async def entries(self) -> tuple[MemoryEntry, ...]:
        """See `Memory.entries`."""
        return await drive_async(self._core.entries())

    async def set(
        self,
        key: str,
        value: str,
        *,
        description: str | Unset | None = UNSET,
        ttl: TTL | Unset = UNSET,
        importance: float | Unset | None = UNSET,
    ) -> MemoryEntry:
        """See `Memory.set`."""
        return await drive_async(self._core.set(key, value, description, ttl, importance))

    async def delete(self, key: str) -> bool:
        """See `Memory.delete`."""
        return await drive_async(self._core.delete(key))

    async def history(self, key: str) -> tuple[MemoryEntry, ...]:
        """See `Memory.history`."""
        return await drive_async(self._core.history(key))

    async def create(self, key: str, value: str, *, description: str | None = None) -> MemoryEntry:
        """See `Memory.create`."""
        return await drive_async(self._core.create(key, value, description))

    async def update(
        self, key: str, value: str, *, description: str | Unset | None = UNSET
    ) -> MemoryEntry:
        """See `Memory.update`."""
        return await drive_async(self._core.update(key, value, description))

    async def remove(self, key: str) -> None:
        """See `Memory.remove`."""
        await drive_async(self._core.remove(key))

    async def rename(self, key: str, new_key: str) -> MemoryEntry:
        """See `Memory.rename`."""
        return await drive_async(self._core.rename(key, new_key))

    async def compile_artifacts(
        self,
        vocabulary: Vocabulary | str = DEFAULT_VOCABULARY,
        history: Sequence[Message] | None = None,
    ) -> MemoryArtifacts:
        """See `Memory.compile_artifacts`."""
        return await drive_async(self._core.compile_artifacts(vocabulary, history))

    async def advance_turn(self) -> int:
        """See `Memory.advance_turn`."""
        return await drive_async(self._core.advance_turn())

    async def snapshot(self) -> dict[str, Any]:
        """See `Memory.snapshot`."""
        return await drive_async(self._core.snapshot())

    async def restore(self, data: Mapping[str, Any] | None) -> None:
        """See `Memory.restore`."""
        await drive_async(self._core.restore(data))


def memory_core(memory: Memory | AsyncMemory | MemoryCore | None) -> MemoryCore | None:
    """The flows behind `memory` (either face, or the flows themselves); None stays None."""
    if isinstance(memory, Memory | AsyncMemory):
        return memory.core
    return memory
