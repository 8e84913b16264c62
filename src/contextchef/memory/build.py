"""The entry a memory write stores: its times, update count and expiry, computed, never read.

A pure function of the write (key, value, the entry it replaces, description, TTL) and of the
moment (`now`, the turn): the clock and the turn counter enter as arguments, so tests can drive
them. The meta of an entry the TypeScript reference wrote keeps its style and unknown keys.
"""

from __future__ import annotations

from contextchef.errors import ConfigError
from contextchef.memory.entry import (
    TTL,
    UNSET,
    Expiry,
    MemoryEntry,
    Unset,
    check_importance,
    parse_ttl,
)
from contextchef.memory.order import sequence_of

__all__ = ["build_entry", "expiry_of"]


def expiry_of(ttl: object, now: float, turn: int) -> Expiry:
    """`(expires_at, expires_at_turn)` of a TTL given at `now`, during `turn`."""
    parsed = parse_ttl(ttl)
    if parsed is None:
        return None, None
    unit, amount = parsed
    if unit == "turns":
        return None, turn + int(amount)
    return now + amount, None


def build_entry(
    key: str,
    value: str,
    old: MemoryEntry | None,
    description: str | Unset | None,
    ttl: TTL | Unset | Expiry,
    *,
    like: MemoryEntry | None,
    default_ttl: TTL,
    now: float,
    turn: int,
    importance: float | Unset | None = UNSET,
    sequence: int | None = None,
) -> MemoryEntry:
    """The entry to write at `key`. UNSET keeps the old description, importance and expiry (a
    new entry gets none and `default_ttl`); an `Expiry` tuple is taken as it is (a rename).
    The entry keeps the old one's place in insertion order, a renamed one (`like`) the place
    of the entry it moves; a new one takes `sequence` (see `memory.order`)."""
    if not isinstance(value, str):
        raise ConfigError(f"a memory value must be a str, not {type(value).__name__}")
    if not isinstance(description, str | Unset | None):
        raise ConfigError("a memory description must be a str or None")
    template = old if old is not None else like
    if importance is UNSET:
        importance = template.importance if template else None
    else:
        importance = check_importance(importance)
    if old is not None:
        sequence = old.sequence
    elif like is not None:
        sequence = sequence_of(like)
    if isinstance(ttl, tuple):
        expiry: Expiry = ttl
    elif ttl is UNSET and old is not None:
        expiry = (old.expires_at, old.expires_at_turn)
    else:
        expiry = expiry_of(default_ttl if ttl is UNSET else ttl, now, turn)
    return MemoryEntry(
        key=key,
        value=value,
        description=(old.description if old else None) if description is UNSET else description,
        created_at=old.created_at if old else now,
        updated_at=now,
        update_count=old.update_count + 1 if old else 1,
        expires_at=expiry[0],
        expires_at_turn=expiry[1],
        importance=importance,
        sequence=sequence,
        extra_meta=dict(template.extra_meta) if template else {},
        meta_style=template.meta_style if template else "python",
    )
