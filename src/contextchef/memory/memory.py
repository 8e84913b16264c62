"""`Memory`: durable `key → value` facts in the store's `memory/` namespace.

Each fact is one entry: the content is the value; the meta holds the description, the times,
the update count and the expiry. Three paths reach it:

- the developer's (`set`, `delete`, `get`, `entries`): no key list and no veto apply;
- the model's (`create`, `update`, `remove`, `rename`, used by the `context` tool and the
  legacy memory tools): the key must be in `allowed_keys` (when set), then the host's
  `on_memory_update(key, new_value, old_value)` hook may veto by returning False (a hook that
  raises vetoes too, and is logged);
- the compile's (`compile_artifacts`): one pass over the store that expires what is due, asks
  the `selector` what to show and renders the memory block.

A TTL is counted in turns (`3` or `{"turns": 3}`; the chef calls `advance_turn()` once per
compile) or in seconds (`{"seconds": 60.0}` or a `timedelta`); `None` means never. Passing
`ttl=None` to `set` on an existing entry clears its old expiry. An expired entry is invisible:
the first read that meets it deletes it and fires `on_memory_expired(entry)` and then
`on_memory_changed(MemoryChange("expire", …))`. Callbacks that raise are logged and never stop
the operation.

    memory = Memory(Store(InMemoryBackend()), allowed_keys=["user_name", "goal"])
    memory.set("goal", "ship v2", description="the user's current objective", ttl={"turns": 20})
    artifacts = memory.compile_artifacts("unified")   # .entries, .expired, .block
    memory.advance_turn()
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, get_args

from contextchef.errors import (
    ConfigError,
    EntryExistsError,
    EntryNotFoundError,
    MemoryKeyNotAllowedError,
    MemoryVetoedError,
)
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
    parse_snapshot,
    parse_ttl,
    read_entry,
    render_memory_block,
    snapshot_data,
)
from contextchef.prompts import DEFAULT_VOCABULARY, Vocabulary, as_vocabulary
from contextchef.store.backend import StorageBackend
from contextchef.store.paths import validate_entry_path
from contextchef.store.store import NamespaceView, Store

__all__ = ["Memory"]  # its value types live in `memory_entry` (and `contextchef.store`)

logger = logging.getLogger("contextchef.memory.memory")

Selector = Callable[[list[MemoryEntry]], Iterable[MemoryEntry]]
UpdateHook = Callable[[str, str | None, str | None], object]


class Memory:
    """Durable facts in `memory/`, with TTLs, a key allowlist, a veto hook and change events.

    Args:
        store: the `Store` (or a synchronous backend, wrapped in one) whose `memory/` namespace
            holds the entries.
        default_ttl: the TTL of entries created without one (`None`: they never expire).
        allowed_keys: the only keys the model may write; `None` allows any key.
        selector: `selector(entries) -> entries` chooses which live entries a compile shows.
        on_memory_update: `(key, new_value_or_None, old_value_or_None)`; returning False (or
            raising) vetoes a model-path write.
        on_memory_changed: receives a `MemoryChange` after every set, delete and expiry.
        on_memory_expired: receives each `MemoryEntry` as it expires, before it is deleted.
        placement: where the chef puts the block: `"after_system"` (stable prefix) or
            `"before_history_tail"` (keeps the cached prefix stable when memory changes often).
        clock: seconds since the epoch, for times and second-based TTLs.
    """

    def __init__(
        self,
        store: Store | StorageBackend,
        *,
        default_ttl: TTL = None,
        allowed_keys: Iterable[str] | None = None,
        selector: Selector | None = None,
        on_memory_update: UpdateHook | None = None,
        on_memory_changed: Callable[[MemoryChange], object] | None = None,
        on_memory_expired: Callable[[MemoryEntry], object] | None = None,
        placement: MemoryPlacement = "after_system",
        clock: Callable[[], float] = time.time,
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
        self._view: NamespaceView = Store.of(store).namespace(MEMORY_NAMESPACE)
        self._default_ttl = default_ttl
        self._allowed = (
            None
            if allowed_keys is None
            else tuple(sorted({validate_entry_path(key) for key in allowed_keys}))
        )
        self._selector = selector
        self._on_update = on_memory_update
        self._on_changed = on_memory_changed
        self._on_expired = on_memory_expired
        self._placement: MemoryPlacement = placement
        self._clock = clock
        self._turn = 0

    def __repr__(self) -> str:
        return f"<Memory turn={self._turn} placement={self._placement!r}>"

    # -- configuration ----------------------------------------------------------------------

    @property
    def view(self) -> NamespaceView:
        """The store's `memory/` namespace this module reads and writes."""
        return self._view

    @property
    def allowed_keys(self) -> tuple[str, ...] | None:
        """The keys the model may write, sorted; None when any key is allowed."""
        return self._allowed

    @property
    def placement(self) -> MemoryPlacement:
        return self._placement

    @property
    def turn(self) -> int:
        """The turn counter that turn-based TTLs count against."""
        return self._turn

    def is_allowed(self, key: str) -> bool:
        """Whether the model may write `key`."""
        return self._allowed is None or key in self._allowed

    # -- developer path ---------------------------------------------------------------------

    def get(self, key: str) -> MemoryEntry | None:
        """The live entry at `key`, or None (an expired one is expired now)."""
        validate_entry_path(key)
        stored = self._view.get(key)
        if stored is None:
            return None
        entry = read_entry(key, stored)
        if entry.is_expired(self._clock(), self._turn):
            self._expire(entry)
            return None
        return entry

    def entries(self) -> tuple[MemoryEntry, ...]:
        """Every live entry, sorted by key (expired ones are expired on the way)."""
        return self._sweep()[0]

    def set(
        self,
        key: str,
        value: str,
        *,
        description: str | Unset | None = UNSET,
        ttl: TTL | Unset = UNSET,
    ) -> MemoryEntry:
        """Create or overwrite `key`, bypassing `allowed_keys` and the veto.

        An update keeps `created_at` and bumps `update_count`. `description` and `ttl` left
        UNSET keep the entry's current ones (a new entry gets no description and `default_ttl`);
        None clears them.
        """
        validate_entry_path(key)
        return self._write(key, value, self.get(key), description, ttl)

    def delete(self, key: str) -> bool:
        """Remove `key`, bypassing the checks; False when there was nothing to remove."""
        old = self.get(key)
        if old is None:
            return False
        return self._remove(old)

    # -- model path -------------------------------------------------------------------------

    def create(self, key: str, value: str, *, description: str | None = None) -> MemoryEntry:
        """Create `key` for the model: allowed key, then not existing (`EntryExistsError`),
        then the veto."""
        self._check_allowed(key)
        if self.get(key) is not None:
            raise EntryExistsError(
                f"memory key {key!r} already exists", namespace=MEMORY_NAMESPACE, path=key
            )
        self._check_veto(key, value, None)
        return self._write(key, value, None, description, UNSET)

    def update(
        self, key: str, value: str, *, description: str | Unset | None = UNSET
    ) -> MemoryEntry:
        """Change an existing `key` for the model (its expiry is kept)."""
        old = self._existing(key)
        self._check_veto(key, value, old.value)
        return self._write(key, value, old, description, UNSET)

    def remove(self, key: str) -> None:
        """Delete an existing `key` for the model (the veto sees `new_value=None`)."""
        old = self._existing(key)
        self._check_veto(key, None, old.value)
        self._remove(old)

    def rename(self, key: str, new_key: str) -> MemoryEntry:
        """Move `key` to `new_key` for the model: both keys are checked and both writes (the
        create and the delete) must pass the veto before anything changes. The entry keeps its
        value, description and expiry."""
        self._check_allowed(new_key)
        old = self._existing(key)
        if self.get(new_key) is not None:
            raise EntryExistsError(
                f"memory key {new_key!r} already exists", namespace=MEMORY_NAMESPACE, path=new_key
            )
        self._check_veto(new_key, old.value, None)
        self._check_veto(key, None, old.value)
        moved = self._write(
            new_key, old.value, None, old.description, (old.expires_at, old.expires_at_turn)
        )
        self._remove(old)
        return moved

    # -- compile path -----------------------------------------------------------------------

    def compile_artifacts(
        self, vocabulary: Vocabulary | str = DEFAULT_VOCABULARY
    ) -> MemoryArtifacts:
        """One store pass: expire what is due, select what to show, render the block."""
        vocabulary = as_vocabulary(vocabulary)
        live, expired = self._sweep()
        shown = self._select(live)
        return MemoryArtifacts(shown, expired, self.render(shown, vocabulary))

    def render(
        self, entries: Sequence[MemoryEntry], vocabulary: Vocabulary | str = DEFAULT_VOCABULARY
    ) -> str:
        """The memory block in `vocabulary` for `entries` (see `render_memory_block`)."""
        return render_memory_block(entries, as_vocabulary(vocabulary), self._allowed)

    def advance_turn(self) -> int:
        """Count one turn (call once per compile, after `compile_artifacts`); the new count."""
        self._turn += 1
        return self._turn

    # -- snapshot ---------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The turn counter and every stored entry (expired ones included), as JSON data."""
        return snapshot_data(self._view.entries(), self._turn)

    def restore(self, data: Mapping[str, Any] | None) -> None:
        """Make memory hold exactly what `snapshot()` returned (None: empty, turn 0). No events
        fire: this is a restore, not a change."""
        entries, turn = parse_snapshot(data)
        if self._view.supports("restore"):
            self._view.restore(entries)
        else:
            for listed in self._view.list():
                self._view.delete(listed.path)
            for key, entry in entries.items():
                self._view.put(key, entry.content, entry.meta)
        self._turn = turn

    # -- internals --------------------------------------------------------------------------

    def _sweep(self) -> tuple[tuple[MemoryEntry, ...], tuple[str, ...]]:
        now, turn = self._clock(), self._turn
        live: list[MemoryEntry] = []
        expired: list[str] = []
        for key, stored in self._view.entries().items():
            entry = read_entry(key, stored)
            if entry.is_expired(now, turn):
                self._expire(entry)
                expired.append(key)
            else:
                live.append(entry)
        return tuple(live), tuple(expired)

    def _select(self, live: tuple[MemoryEntry, ...]) -> tuple[MemoryEntry, ...]:
        if self._selector is None:
            return live
        chosen = tuple(self._selector(list(live)))
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
    ) -> MemoryEntry:
        if not isinstance(value, str):
            raise ConfigError(f"a memory value must be a str, not {type(value).__name__}")
        if not isinstance(description, str | Unset | None):
            raise ConfigError("a memory description must be a str or None")
        now = self._clock()
        if isinstance(ttl, tuple):
            expiry: Expiry = ttl
        elif ttl is UNSET and old is not None:
            expiry = (old.expires_at, old.expires_at_turn)
        else:
            expiry = self._expiry(self._default_ttl if ttl is UNSET else ttl, now)
        entry = MemoryEntry(
            key=key,
            value=value,
            description=(old.description if old else None) if description is UNSET else description,
            created_at=old.created_at if old else now,
            updated_at=now,
            update_count=old.update_count + 1 if old else 1,
            expires_at=expiry[0],
            expires_at_turn=expiry[1],
        )
        self._view.put(key, value, entry_meta(entry))
        self._notify(MemoryChange("set", key, value, old.value if old else None))
        return entry

    def _expiry(self, ttl: object, now: float) -> Expiry:
        parsed = parse_ttl(ttl)
        if parsed is None:
            return None, None
        unit, amount = parsed
        if unit == "turns":
            return None, self._turn + int(amount)
        return now + amount, None

    def _remove(self, old: MemoryEntry) -> bool:
        removed = self._view.delete(old.key)
        if removed:
            self._notify(MemoryChange("delete", old.key, None, old.value))
        return removed

    def _expire(self, entry: MemoryEntry) -> None:
        self._call("on_memory_expired", self._on_expired, entry)
        self._view.delete(entry.key)
        self._notify(MemoryChange("expire", entry.key, None, entry.value))

    def _existing(self, key: str) -> MemoryEntry:
        self._check_allowed(key)
        old = self.get(key)
        if old is None:
            raise EntryNotFoundError(
                f"no memory entry {key!r}", namespace=MEMORY_NAMESPACE, path=key
            )
        return old

    def _check_allowed(self, key: str) -> None:
        validate_entry_path(key)
        if not self.is_allowed(key):
            raise MemoryKeyNotAllowedError(key, self._allowed or ())

    def _check_veto(self, key: str, value: str | None, old: str | None) -> None:
        if self._on_update is None:
            return
        try:
            verdict = self._on_update(key, value, old)
        except Exception:
            logger.warning(
                "on_memory_update raised for key %r; the write is vetoed", key, exc_info=True
            )
            raise MemoryVetoedError(key) from None
        if inspect.isawaitable(verdict):  # Memory is synchronous: an async hook cannot decide
            getattr(verdict, "close", lambda: None)()
            logger.warning("on_memory_update returned an awaitable for %r; vetoed", key)
            raise MemoryVetoedError(key)
        if verdict is False:
            raise MemoryVetoedError(key)

    def _notify(self, change: MemoryChange) -> None:
        self._call("on_memory_changed", self._on_changed, change)

    @staticmethod
    def _call(name: str, callback: Callable[[Any], object] | None, argument: object) -> None:
        if callback is None:
            return
        try:
            callback(argument)
        except Exception:
            logger.warning("%s raised; the memory operation went ahead", name, exc_info=True)
