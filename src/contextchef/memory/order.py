"""The order of the memory block: the order the facts were learned, or their keys' order.

Seed 000 makes the order of memory entries meaningful to the model: the block lists facts in
the order they were learned. No backend's own order can carry that everywhere (a directory
has none, SQL tables order by key), so each entry carries it in its meta: `sequence`, the
microseconds since the epoch when the entry was first written, made strictly increasing by
the `Sequencer` of the memory that writes it. An update keeps it (the fact keeps its place), a
rename keeps it, a delete and a new write of the same key puts the fact last. An entry written
without one (by the TypeScript reference, or through the store directly) takes its place from
its `created_at`, counted in whole microseconds as the filesystem stores it, so the order is
the same on every backend. Ties (two writers in the same microsecond) are broken by key.

`order="key"` sorts by key instead, the order before insertion order was the default.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, get_args

from contextchef.errors import ConfigError
from contextchef.memory.entry import MemoryEntry

__all__ = ["MemoryOrder", "Sequencer", "check_order", "ordered", "sequence_of"]

MemoryOrder = Literal["insertion", "key"]


def check_order(order: object) -> MemoryOrder:
    if order not in get_args(MemoryOrder):
        raise ConfigError(f"memory order must be 'insertion' or 'key', got {order!r}")
    return order  # type: ignore[return-value]


class Sequencer:
    """Hands out the `sequence` of new entries: the clock in microseconds, never less than one
    more than the last one handed out, so entries one memory writes in a row keep their order
    however coarse (or frozen) its clock."""

    def __init__(self) -> None:
        self._last = 0

    def next(self, now: float) -> int:
        self._last = max(round(now * 1_000_000), self._last + 1)
        return self._last


def sequence_of(entry: MemoryEntry) -> int:
    """Where `entry` stands in insertion order: its `sequence`, else its `created_at` in
    microseconds."""
    if entry.sequence is not None:
        return entry.sequence
    return round(entry.created_at * 1_000_000)


def _place(entry: MemoryEntry) -> tuple[int, str]:
    return sequence_of(entry), entry.key


def ordered(entries: Iterable[MemoryEntry], order: MemoryOrder) -> tuple[MemoryEntry, ...]:
    """`entries` in `order`."""
    if order == "key":
        return tuple(sorted(entries, key=lambda entry: entry.key))
    return tuple(sorted(entries, key=_place))
