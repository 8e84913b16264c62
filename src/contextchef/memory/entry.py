"""A memory entry: its stored form and its TTL.

`Memory` (in `memory.memory`, through `memory.core`) keeps one store entry per key: the content
is the value, the meta holds `description`, `created_at`, `updated_at`, `update_count`, the
host's `importance`, the `sequence` that places the entry in insertion order (see
`memory.order`) and the expiry (`expires_at`, seconds since the epoch; `expires_at_turn`, a turn
count). This module converts between that form and `MemoryEntry` and parses TTLs;
`memory.block` renders the memory block.

Entries the TypeScript reference wrote use its camelCase keys: `updateCount`, `expiresAtTurn`,
`expiresAt` (milliseconds) and `createdAt`/`updatedAt` (milliseconds; the filesystem backend
already reports those two as `created_at`/`updated_at` in seconds, see
`store/backends/filesystem/layout.py`). `read_entry` reads either style; an entry read in the
reference's style is written back in it (`meta_style="typescript"`), and meta keys memory does
not own (a host's own keys) are kept across updates. `importance` has one name in both styles.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from enum import Enum
from typing import Any, Final, Literal, TypeAlias, TypeGuard

from contextchef.errors import ConfigError
from contextchef.store.backend import StoredEntry

__all__ = [
    "MEMORY_NAMESPACE",
    "TTL",
    "UNSET",
    "Expiry",
    "MemoryArtifacts",
    "MemoryChange",
    "MemoryEntry",
    "MemoryPlacement",
    "MetaStyle",
    "Unset",
    "check_importance",
    "entry_meta",
    "parse_ttl",
    "read_entry",
]

MEMORY_NAMESPACE: Final = "memory"
MemoryPlacement = Literal["after_system", "before_history_tail"]
MetaStyle = Literal["python", "typescript"]
TTL: TypeAlias = int | Mapping[str, float] | timedelta | None
"""Turns (`3`, `{"turns": 3}`), seconds (`{"seconds": 60.0}`, a `timedelta`), milliseconds
(`{"ms": 60000}`, the TypeScript reference's unit), or None: never."""


class Unset(Enum):
    """The type of `UNSET`: "leave this as it is", distinct from None ("clear it")."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One memory fact. Times are seconds since the epoch; an expiry is a time, a turn, or both.

    `importance` is the host's rating of the fact (any finite number, higher matters more;
    None: unrated): stored, shown to the model and handed to the selector. `sequence` places
    the entry in insertion order (see `memory.order`; None for an entry written without one).
    `extra_meta` holds the stored meta keys memory does not own (kept on update) and
    `meta_style` the key style the entry was stored in; these three take no part in
    comparisons.
    """

    key: str
    value: str
    description: str | None
    created_at: float
    updated_at: float
    update_count: int
    expires_at: float | None = None
    expires_at_turn: int | None = None
    importance: float | None = None
    sequence: int | None = field(default=None, compare=False)
    extra_meta: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    meta_style: MetaStyle = field(default="python", compare=False, repr=False)

    def is_expired(self, now: float, turn: int) -> bool:
        return (self.expires_at is not None and now >= self.expires_at) or (
            self.expires_at_turn is not None and turn >= self.expires_at_turn
        )


@dataclass(frozen=True, slots=True)
class MemoryChange:
    """What `on_memory_changed` receives: a `set`, a `delete` or an `expire` of `key`; `by`
    says who: the model's path (`create`, `update`, `remove`, `rename`, the model's tools) or
    the host's (`set`, `delete`; an expiry counts as the host's)."""

    type: Literal["set", "delete", "expire"]
    key: str
    value: str | None
    old_value: str | None
    by: Literal["model", "host"] = "host"


@dataclass(frozen=True, slots=True)
class MemoryArtifacts:
    """What one compile needs from memory: the entries shown (in order), the keys that expired
    in this pass, the rendered block (`""` when there is nothing to show) and the keys the
    block's byte cap left out."""

    entries: tuple[MemoryEntry, ...]
    expired: tuple[str, ...]
    block: str
    omitted: tuple[str, ...] = ()
    """The keys of live entries the block left out to stay under its byte cap."""

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(entry.key for entry in self.entries)


Expiry = tuple[float | None, int | None]


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def parse_ttl(ttl: object) -> tuple[Literal["turns", "seconds"], float] | None:
    """`("turns", n)`, `("seconds", s)` (`{"ms": n}` as `n / 1000` seconds) or None;
    `ConfigError` for anything else."""
    if ttl is None:
        return None
    if isinstance(ttl, timedelta):
        ttl = {"seconds": ttl.total_seconds()}
    if isinstance(ttl, int) and not isinstance(ttl, bool):
        ttl = {"turns": ttl}
    if isinstance(ttl, Mapping) and len(ttl) == 1:
        ((unit, amount),) = ttl.items()
        if unit == "turns" and isinstance(amount, int) and not isinstance(amount, bool):
            if amount >= 0:
                return "turns", amount
        elif unit in _PER_SECOND and _is_number(amount) and amount >= 0:
            return "seconds", float(amount) / _PER_SECOND[unit]
    raise ConfigError(
        f"a memory ttl must be None, a number of turns (an int >= 0, or {{'turns': n}}), "
        f"{{'seconds': s}} or {{'ms': n}} with s, n >= 0, or a timedelta; got {ttl!r}"
    )


_PER_SECOND: Final = {"seconds": 1, "ms": 1000}


def check_importance(importance: object) -> float | None:
    """`importance` as stored: None, or a finite number (an int stays an int); `ConfigError`
    for anything else."""
    if importance is None or _is_number(importance):
        return importance
    raise ConfigError(f"a memory importance must be a finite number or None, got {importance!r}")


# Memory's own meta keys, per style; "times" are the store's, which every backend reports in
# seconds under the Python names (a camelCase time only appears in a host's own meta).
_PY_KEYS = frozenset({"update_count", "expires_at", "expires_at_turn"})
_TS_KEYS = frozenset({"updateCount", "expiresAt", "expiresAtTurn"})
_OWNED = _PY_KEYS | _TS_KEYS | {"description", "createdAt", "updatedAt", "importance", "sequence"}
_STORE_KEYS = frozenset({"created_at", "updated_at", "accessed_at", "bytes"})


def _ms(seconds: float) -> float | int:
    """Seconds as the reference's milliseconds (whole values as int, like `Date.now()`)."""
    ms = round(seconds * 1000, 3)
    return int(ms) if ms.is_integer() else ms


def entry_meta(entry: MemoryEntry) -> dict[str, Any]:
    """The meta to store for `entry`, in its `meta_style`, with its `extra_meta` kept."""
    if entry.meta_style == "typescript":
        return _ts_meta(entry)
    meta: dict[str, Any] = {
        "created_at": entry.created_at,
        "update_count": entry.update_count,
        "updated_at": entry.updated_at,
    }
    if entry.description is not None:
        meta["description"] = entry.description
    if entry.expires_at is not None:
        meta["expires_at"] = entry.expires_at
    if entry.expires_at_turn is not None:
        meta["expires_at_turn"] = entry.expires_at_turn
    if entry.importance is not None:
        meta["importance"] = entry.importance
    if entry.sequence is not None:
        meta["sequence"] = entry.sequence
    meta.update(entry.extra_meta)
    return meta


def _ts_meta(entry: MemoryEntry) -> dict[str, Any]:
    """The reference's layout and key order: description, times, updateCount, importance, the
    keys memory does not own (and `sequence`, which the reference does not write), then the
    expiry. Times go out under the store's names (the filesystem backend writes them as
    `createdAt`/`updatedAt` in milliseconds)."""
    meta: dict[str, Any] = {}
    if entry.description is not None:
        meta["description"] = entry.description
    meta["created_at"] = entry.created_at
    meta["updated_at"] = entry.updated_at
    meta["updateCount"] = entry.update_count
    if entry.importance is not None:
        meta["importance"] = entry.importance
    meta.update(entry.extra_meta)
    if entry.sequence is not None:
        meta["sequence"] = entry.sequence
    if entry.expires_at is not None:
        meta["expiresAt"] = _ms(entry.expires_at)
    if entry.expires_at_turn is not None:
        meta["expiresAtTurn"] = entry.expires_at_turn
    return meta


def _first(meta: Mapping[str, Any], python: str, typescript: str) -> Any:
    value = meta.get(python)
    return meta.get(typescript) if value is None else value


def _seconds(meta: Mapping[str, Any], python: str, typescript: str) -> float | None:
    """A time in seconds from the Python key, else from the reference's (milliseconds)."""
    value = meta.get(python)
    if _is_number(value):
        return float(value)
    value = meta.get(typescript)
    return float(value) / 1000 if _is_number(value) else None


def read_entry(key: str, stored: StoredEntry) -> MemoryEntry:
    """Read an entry back in either key style, tolerating one the host wrote through the store
    without our meta."""
    meta = stored.meta
    created = _seconds(meta, "created_at", "createdAt") or 0.0
    count = _first(meta, "update_count", "updateCount")
    description = meta.get("description")
    expires_at_turn = _first(meta, "expires_at_turn", "expiresAtTurn")
    importance, sequence = meta.get("importance"), meta.get("sequence")
    typescript = not _PY_KEYS.intersection(meta) and bool(_TS_KEYS.intersection(meta))
    return MemoryEntry(
        key=key,
        value=stored.content,
        description=description if isinstance(description, str) else None,
        created_at=created,
        updated_at=_seconds(meta, "updated_at", "updatedAt") or created,
        update_count=count if _is_int(count) and count >= 1 else 1,
        expires_at=_seconds(meta, "expires_at", "expiresAt"),
        expires_at_turn=expires_at_turn if _is_int(expires_at_turn) else None,
        importance=importance if _is_number(importance) else None,
        sequence=sequence if _is_int(sequence) else None,
        extra_meta={k: v for k, v in meta.items() if k not in _OWNED and k not in _STORE_KEYS},
        meta_style="typescript" if typescript else "python",
    )


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
