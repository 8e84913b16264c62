"""Durable facts above the store: `Memory` keeps `key → value` entries in `memory/`.

- `core`: `MemoryCore`, every memory operation written once as a flow of effects.
- `memory`: `Memory` and `AsyncMemory`, the sync and async faces of the feature.
- `entry`: `MemoryEntry`, its stored form (either key style) and TTL parsing.
- `expiry`: the sweep that parts live entries from expired ones, and what expiring does.
- `block`: the memory block the model reads.
- `order`: the order of entries (insertion, or key) and the sequence that carries it.
- `snapshot`: `Memory.snapshot()` / `restore()` as JSON data.
- `turns`: what a turn is (a host turn) and the turn count kept in the store.
"""

from contextchef._lazy import lazy_exports

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy reads the name)
if TYPE_CHECKING:
    from contextchef.memory.entry import UNSET, MemoryArtifacts, MemoryChange, MemoryEntry
    from contextchef.memory.memory import AsyncMemory, Memory

__all__ = ["UNSET", "AsyncMemory", "Memory", "MemoryArtifacts", "MemoryChange", "MemoryEntry"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    {
        "contextchef.memory.entry": ("UNSET", "MemoryArtifacts", "MemoryChange", "MemoryEntry"),
        "contextchef.memory.memory": ("AsyncMemory", "Memory"),
    },
)
