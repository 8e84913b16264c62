"""Size caps on what the model writes and on what every compile shows, with their defaults.

A model that writes 100 MB into `memory/` makes every later compile 100 MB, and one that sends
a gigantic tool call makes the host parse it: each cap bounds one of those. The model-write caps
(`max_entry_bytes`, `max_argument_bytes`) live on the chef's `context_tool={...}` option and
on `ContextTool`; the memory caps (`max_value_bytes`, `max_block_bytes`) on `memory={...}` and
`Memory`. A write over a cap is refused with an `Error: …` tool result that names the limit; the
host's own Python API (`Memory.set`, the store) is never capped by them, but what it writes is
still held to the block cap when a compile shows memory. Sizes are UTF-8 bytes; None disables a
cap.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from contextchef.errors import ConfigError

__all__ = [
    "DEFAULT_MAX_ARGUMENT_BYTES",
    "DEFAULT_MAX_BLOCK_BYTES",
    "DEFAULT_MAX_ENTRY_BYTES",
    "DEFAULT_MAX_VALUE_BYTES",
    "argument_bytes",
    "byte_size",
    "size_limit",
]

DEFAULT_MAX_VALUE_BYTES: Final = 8 * 1024
"""One memory entry's value, as the model writes it (a fact, not a document)."""
DEFAULT_MAX_BLOCK_BYTES: Final = 32 * 1024
"""The whole memory block one compile shows; entries beyond it are left out with a note."""
DEFAULT_MAX_ENTRY_BYTES: Final = 256 * 1024
"""One entry (a note, any namespace) the model writes through the `context` tool."""
DEFAULT_MAX_ARGUMENT_BYTES: Final = 1024 * 1024
"""One tool call's arguments, as received (the JSON string, or the dict re-encoded)."""


def byte_size(text: str) -> int:
    """`text`'s size in UTF-8 bytes (a lone surrogate counts as its three bytes)."""
    return len(text.encode("utf-8", "surrogatepass"))


def argument_bytes(arguments: object) -> int:
    """The size of a tool call's arguments: the string's or bytes' own size, a mapping's as
    compact JSON; 0 for anything else (the argument parser refuses it anyway)."""
    if isinstance(arguments, str):
        return byte_size(arguments)
    if isinstance(arguments, bytes | bytearray):
        return len(arguments)
    if isinstance(arguments, Mapping):
        try:
            encoded = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"), default=str)
        except (TypeError, ValueError, RecursionError):
            return 0
        return byte_size(encoded)
    return 0


def size_limit(value: object, name: str) -> int | None:
    """`value` checked as a cap: a positive int, or None (no cap); `ConfigError` otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{name} must be a positive number of bytes or None, got {value!r}")
    return value
