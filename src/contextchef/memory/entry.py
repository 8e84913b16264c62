"""A memory entry: its stored form, its TTL and its XML.

`Memory` (in `memory.memory`, through `memory.core`) keeps one store entry per key: the content
is the value, the meta holds `description`, `created_at`, `updated_at`, `update_count` and the
expiry (`expires_at`, seconds since the epoch; `expires_at_turn`, a turn count). This module
converts between that form and `MemoryEntry`, parses TTLs and renders the memory block,
deterministically and XML-escaped.

Entries the TypeScript reference wrote use its camelCase keys: `updateCount`, `expiresAtTurn`,
`expiresAt` (milliseconds) and `createdAt`/`updatedAt` (milliseconds; the filesystem backend
already reports those two as `created_at`/`updated_at` in seconds, see
`store/backends/filesystem/layout.py`). `read_entry` reads either style; an entry read in the
reference's style is written back in it (`meta_style="typescript"`), and meta keys memory does
not own (the reference's `importance`, a host's own keys) are kept across updates.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
    "MetaStyle",
    "Unset",
    "entry_meta",
    "fit_memory_block",
    "parse_snapshot",
    "parse_ttl",
    "read_entry",
    "render_memory_block",
    "snapshot_data",
]

MEMORY_NAMESPACE: Final = "memory"
MemoryPlacement = Literal["after_system", "before_history_tail"]
MetaStyle = Literal["python", "typescript"]
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
    """One memory fact. Times are seconds since the epoch; an expiry is a time, a turn, or both.

    `extra_meta` holds the stored meta keys memory does not own (kept on update) and
    `meta_style` the key style the entry was stored in; neither takes part in comparisons.
    """

    key: str
    value: str
    description: str | None
    created_at: float
    updated_at: float
    update_count: int
    expires_at: float | None = None
    expires_at_turn: int | None = None
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


# Memory's own meta keys, per style; "times" are the store's, which every backend reports in
# seconds under the Python names (a camelCase time only appears in a host's own meta).
_PY_KEYS = frozenset({"update_count", "expires_at", "expires_at_turn"})
_TS_KEYS = frozenset({"updateCount", "expiresAt", "expiresAtTurn"})
_OWNED = _PY_KEYS | _TS_KEYS | {"description", "createdAt", "updatedAt"}
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
    meta.update(entry.extra_meta)
    return meta


def _ts_meta(entry: MemoryEntry) -> dict[str, Any]:
    """The reference's layout and key order: description, times, updateCount, its own keys,
    then the expiry. Times go out under the store's names (the filesystem backend writes them
    as `createdAt`/`updatedAt` in milliseconds)."""
    meta: dict[str, Any] = {}
    if entry.description is not None:
        meta["description"] = entry.description
    meta["created_at"] = entry.created_at
    meta["updated_at"] = entry.updated_at
    meta["updateCount"] = entry.update_count
    meta.update(entry.extra_meta)
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
        extra_meta={k: v for k, v in meta.items() if k not in _OWNED and k not in _STORE_KEYS},
        meta_style="typescript" if typescript else "python",
    )


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


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
    entries: Sequence[MemoryEntry],
    vocabulary: Vocabulary,
    allowed_keys: Sequence[str] | None,
    max_bytes: int | None = None,
) -> str:
    """The memory block in `vocabulary`: the header, `<memory>` with one `<entry>` per entry,
    and the line naming the allowed keys (or, without a key list or when the vocabulary's offer
    makes memory read-only, the keys shown). Without entries it is only that line when keys
    are limited, else `""`. With `max_bytes`, see `fit_memory_block`."""
    return fit_memory_block(entries, vocabulary, allowed_keys, max_bytes)[1]


def fit_memory_block(
    entries: Sequence[MemoryEntry],
    vocabulary: Vocabulary,
    allowed_keys: Sequence[str] | None,
    max_bytes: int | None,
) -> tuple[tuple[MemoryEntry, ...], str]:
    """The entries the block shows and the block, at most `max_bytes` UTF-8 bytes (None: no
    cap). Over the cap, entries are taken in order, each one that still fits; those left out
    are counted in one line under `</memory>` that says how to read them. Only a block whose
    fixed lines alone (header, key list, that note) pass the cap can be longer."""
    limited = allowed_keys if vocabulary.offer.memory_writable else None
    rendered = [render_entry(entry) for entry in entries]
    sizes = [_byte_size(text) for text in rendered]
    if max_bytes is None or sum(sizes) <= max_bytes:
        block = _assemble(vocabulary, entries, rendered, limited, 0, max_bytes)
        if max_bytes is None or _byte_size(block) <= max_bytes:
            return tuple(entries), block
    assert max_bytes is not None
    keys_line = vocabulary.memory_keys_line(limited or [], allowed=limited is not None)
    budget = max_bytes - (
        _byte_size(vocabulary.memory_block_header)
        + len("\n<memory>\n\n</memory>\n\n\n")
        + _byte_size(keys_line)
        + _byte_size(vocabulary.memory_omitted_line(len(entries), max_bytes))
    )
    # each entry costs its element and a newline, and (keys not limited) its name in the keys
    # line with what the line adds around each name (measured on a probe key)
    per_key = 0
    if limited is None:
        line = vocabulary.memory_keys_line
        per_key = _byte_size(line(["x", "x"], allowed=False)) - _byte_size(
            line(["x"], allowed=False)
        )
    shown: list[int] = []
    for index, size in enumerate(sizes):
        cost = size + 1 + (0 if limited is not None else per_key + _byte_size(entries[index].key))
        if cost <= budget:
            shown.append(index)
            budget -= cost
    kept = tuple(entries[index] for index in shown)
    omitted = len(entries) - len(kept)
    return kept, _assemble(
        vocabulary, kept, [rendered[index] for index in shown], limited, omitted, max_bytes
    )


def _assemble(
    vocabulary: Vocabulary,
    kept: Sequence[MemoryEntry],
    rendered: Sequence[str],
    limited: Sequence[str] | None,
    omitted: int,
    max_bytes: int | None,
) -> str:
    """The block of the `kept` entries (`rendered`), with the note on `omitted` ones."""
    names = limited if limited is not None else [entry.key for entry in kept]
    keys_line = vocabulary.memory_keys_line(names, allowed=limited is not None)
    if not kept and not omitted:
        return keys_line if limited is not None else ""
    parts = [vocabulary.memory_block_header]
    if kept:
        body = "\n".join(rendered)
        parts.append(f"<memory>\n{body}\n</memory>")
    if omitted:
        parts.append(vocabulary.memory_omitted_line(omitted, max_bytes or 0))
    block = "\n".join(parts)
    return f"{block}\n\n{keys_line}" if kept or limited is not None else block


def _byte_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


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
