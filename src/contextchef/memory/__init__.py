"""Durable facts above the store: `Memory` keeps `key → value` entries in `memory/`.

- `memory`: `Memory`, the feature (TTLs, allowed keys, the veto hook, change events).
- `entry`: `MemoryEntry`, its stored form, TTL parsing and the memory block.
"""

from contextchef.memory.entry import UNSET, MemoryArtifacts, MemoryChange, MemoryEntry
from contextchef.memory.memory import Memory

__all__ = ["UNSET", "Memory", "MemoryArtifacts", "MemoryChange", "MemoryEntry"]
