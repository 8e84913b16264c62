"""A memory entry: its stored form, its TTL and its XML.

`Memory` (in `memory.memory`, through `memory.core`) keeps one store entry per key: the content
is the value, the meta holds `description`, `created_at`, `updated_at`, `update_count` and the
expiry (`expires_at`, seconds since the epoch; `expires_at_turn`, a turn count). This module
converts between that form and `MemoryEntry`, parses TTLs and renders the memory block,
deterministically and XML-escaped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from enum import Enum
from typing import Any, Final, Literal, TypeAlias, TypeGuard

from contextchef.errors import ConfigError
from contextchef.placement.xml import escape_xml
from contextchef.prompts import Vocabulary
from contextchef.store.backend import StoredEntry
from contextchef.store.paths import validate_entry_path

__all__ = [
    "MEMORY_NAMESPACE",
    "TTL",
    "UNSET",
    "Expiry",
    "MemoryArtifacts",
    "MemoryChange",
    "MemoryEntry",
    "MemoryPlacement",
    "Unset",
    "entry_meta",
    "parse_snapshot",
    "parse_ttl",
    "read_entry",
    "render_memory_block",
    "snapshot_data",
]

MEMORY_NAMESPACE: Final = "memory"
MemoryPlacement = Literal["after_system", "before_history_tail"]
TTL: TypeAlias = int | Mapping[str, float] | timedelta | None
"""Turns (`3`, `{"turns": 3}`), seconds (`{"seconds": 60.0}`, a `timedelta`), or None: never."""


class Unset(Enum):
    """The type of `UNSET`: "leave this as it is", distinct from None ("clear it")."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One memory fact. Times are seconds since the epoch; an expiry is a time, a turn, or both."""

    key: str
    value: str
    description: str | None
    created_at: float
    updated_at: float
    update_count: int
    expires_at: float | None = None
    expires_at_turn: int | None = None

    def is_expired(self, now: float, turn: int) -> bool:
        return (self.expires_at is not None and now >= self.expires_at) or (
            self.expires_at_turn is not None and turn >= self.expires_at_turn
        )


@dataclass(frozen=True, slots=True)
class MemoryChange:
    """What `on_memory_changed` receives: a `set`, a `delete` or an `expire` of `key`."""

    type: Literal["set", "delete", "expire"]
    key: str
    value: str | None
    old_value: str | None


@dataclass(frozen=True, slots=True)
class MemoryArtifacts:
    """What one compile needs from memory: the entries shown (in order), the keys that expired
    in this pass, and the rendered block (`""` when there is nothing to show)."""

    entries: tuple[MemoryEntry, ...]
    expired: tuple[str, ...]
    block: str

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(entry.key for entry in self.entries)


Expiry = tuple[float | None, int | None]


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def parse_ttl(ttl: object) -> tuple[Literal["turns", "seconds"], float] | None:
    """`("turns", n)`, `("seconds", s)` or None; `ConfigError` for anything else."""
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
        elif unit == "seconds" and _is_number(amount) and amount >= 0:
            return "seconds", float(amount)
    raise ConfigError(
        f"a memory ttl must be None, a number of turns (an int >= 0, or {{'turns': n}}), "
        f"{{'seconds': s}} with s >= 0, or a timedelta; got {ttl!r}"
    )


def entry_meta(entry: MemoryEntry) -> dict[str, Any]:
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
    return meta


def read_entry(key: str, stored: StoredEntry) -> MemoryEntry:
    """Read an entry back, tolerating one the host wrote through the store without our meta."""
    meta = stored.meta
    created = stored.created_at or 0.0
    count = meta.get("update_count")
    description = meta.get("description")
    expires_at = meta.get("expires_at")
    expires_at_turn = meta.get("expires_at_turn")
    return MemoryEntry(
        key=key,
        value=stored.content,
        description=description if isinstance(description, str) else None,
        created_at=created,
        updated_at=stored.updated_at or created,
        update_count=count if isinstance(count, int) and count >= 1 else 1,
        expires_at=float(expires_at) if _is_number(expires_at) else None,
        expires_at_turn=expires_at_turn if isinstance(expires_at_turn, int) else None,
    )


def render_entry(entry: MemoryEntry) -> str:
    """One `<entry>` element; keys, values and descriptions XML-escaped. No clock time enters it
    (the timestamps stay in the entry's metadata): the same memory renders to the same bytes
    whenever it was written."""
    lines = [f'<entry key="{escape_xml(entry.key)}">']
    if entry.description:
        lines.append(f"<description>{escape_xml(entry.description)}</description>")
    lines.append(f"<update_count>{entry.update_count}</update_count>")
    lines.append(f"<value>{escape_xml(entry.value)}</value>")
    lines.append("</entry>")
    return "\n".join(lines)


def render_memory_block(
    entries: Sequence[MemoryEntry], vocabulary: Vocabulary, allowed_keys: Sequence[str] | None
) -> str:
    """The memory block in `vocabulary`: the header, `<memory>` with one `<entry>` per entry,
    and the line naming the allowed keys (or, without a key list or when the vocabulary's offer
    makes memory read-only, the keys shown). Without entries it is only that line when keys
    are limited, else `""`."""
    limited = allowed_keys if vocabulary.offer.memory_writable else None
    names = limited if limited is not None else [entry.key for entry in entries]
    keys_line = vocabulary.memory_keys_line(names, allowed=limited is not None)
    if not entries:
        return keys_line if limited is not None else ""
    header = vocabulary.memory_block_header
    body = "\n".join(render_entry(entry) for entry in entries)
    return f"{header}\n<memory>\n{body}\n</memory>\n\n{keys_line}"


def snapshot_data(stored: Mapping[str, StoredEntry], turn: int) -> dict[str, Any]:
    """`Memory.snapshot()`'s JSON form of the stored entries and the turn counter."""
    return {
        "entries": {
            key: {"content": entry.content, "meta": json.loads(json.dumps(dict(entry.meta)))}
            for key, entry in stored.items()
        },
        "turn": turn,
        "version": 1,
    }


def parse_snapshot(data: Mapping[str, Any] | None) -> tuple[dict[str, StoredEntry], int]:
    """The entries and turn counter of `snapshot_data`'s output (None: empty, turn 0)."""
    if data is None:
        return {}, 0
    raw = data.get("entries") if isinstance(data, Mapping) else None
    turn = data.get("turn", 0) if isinstance(data, Mapping) else None
    if not isinstance(raw, Mapping) or not isinstance(turn, int) or isinstance(turn, bool):
        raise ConfigError("Memory.restore() takes what Memory.snapshot() returned")
    entries: dict[str, StoredEntry] = {}
    for key, item in raw.items():
        if not isinstance(item, Mapping) or not isinstance(item.get("content"), str):
            raise ConfigError(f"memory snapshot entry {key!r} has no string 'content'")
        entries[validate_entry_path(key)] = StoredEntry(item["content"], item.get("meta", {}))
    return entries, turn
