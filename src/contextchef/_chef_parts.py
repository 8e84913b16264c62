"""The parts a chef is built from its options: its store, memory and library tools, and the
record of compactions that `set_history` re-applies to a host's ever-growing history."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextchef.adapters import ToolDefinition, normalize_tools
from contextchef.errors import ConfigError
from contextchef.memory.memory import Memory
from contextchef.messages import Message
from contextchef.prompts import Vocabulary
from contextchef.retrieval.definitions import (
    get_context_tool_definition,
    get_legacy_memory_tool_definitions,
    get_new_context_tool_definition,
)
from contextchef.selection.janitor import Janitor
from contextchef.store.aio import AsyncStore
from contextchef.store.backend import AsyncStorageBackend, StorageBackend
from contextchef.store.backends.inmemory import InMemoryBackend
from contextchef.store.store import Store

__all__ = [
    "Compaction",
    "context_tool_options",
    "landed",
    "library_tools",
    "open_memory",
    "open_store",
]


@dataclass(frozen=True, slots=True)
class Compaction:
    """An overflow result that landed: `prefix` of the history became `replacement`."""

    prefix: tuple[Message, ...]
    replacement: tuple[Message, ...]

    def apply(self, history: list[Message]) -> list[Message]:
        count = len(self.prefix)
        if len(history) < count or any(
            a is not b for a, b in zip(history[:count], self.prefix, strict=True)
        ):
            return history
        return [*self.replacement, *history[count:]]


def landed(before: tuple[Message, ...], after: tuple[Message, ...]) -> Compaction:
    kept = 0
    while kept < min(len(before), len(after)) and before[-1 - kept] is after[-1 - kept]:
        kept += 1
    return Compaction(before[: len(before) - kept], after[: len(after) - kept])


def open_memory(memory: Memory | Mapping[str, Any] | None, store: Store) -> Memory | None:
    if memory is None or isinstance(memory, Memory):
        return memory
    if not isinstance(memory, Mapping):
        raise ConfigError("memory must be a dict of Memory options or a Memory")
    return Memory(store, **memory)


def context_tool_options(options: Mapping[str, Any] | None) -> dict[str, Any]:
    if options is None:
        return {}
    unknown = set(options) - {"writable"}
    if unknown:
        raise ConfigError(f"unknown context_tool option(s) {sorted(unknown)}; known: ['writable']")
    writable = options.get("writable", ("memory", "notes"))
    if isinstance(writable, str) or not all(isinstance(ns, str) for ns in writable):
        raise ConfigError("context_tool writable must be a list of namespace names")
    return {"writable": tuple(writable)}


class _Definitions:
    """The library's tool definitions as the `ToolCatalog` a vocabulary picks from."""

    def context_tool(self) -> ToolDefinition:
        return get_context_tool_definition()

    def new_context_tool(self) -> ToolDefinition:
        return get_new_context_tool_definition()

    def memory_tools(self, allowed_keys: Sequence[str] | None) -> Sequence[ToolDefinition]:
        return get_legacy_memory_tool_definitions(allowed_keys)


def library_tools(
    vocabulary: Vocabulary, memory: Memory | None, runner: Janitor | None
) -> tuple[ToolDefinition, ...]:
    """The tools contextchef adds to the payload: the vocabulary's, and nothing else."""
    tools = vocabulary.tool_definitions(
        _Definitions(),
        memory=memory is not None,
        allowed_keys=memory.allowed_keys if memory is not None else None,
        handoff=runner is not None and runner.overflow.handoff is not None,
    )
    return tuple(normalize_tools(tools))


def open_store(
    store: Store | AsyncStore | StorageBackend | AsyncStorageBackend | str | None,
) -> Store:
    """The chef's store from its `store=` option: a Store (or AsyncStore, shared), a backend,
    `"memory"` (the default: nothing touches the disk) or `"sqlite"` (the machine's database)."""
    if store is None or store == "memory":
        return Store(InMemoryBackend())
    if store == "sqlite":
        from contextchef.store.backends.sqlite import SQLiteBackend

        return Store(SQLiteBackend())
    if isinstance(store, str):
        raise ConfigError(f"store must be a backend, a Store, 'memory' or 'sqlite', got {store!r}")
    return Store.of(store)
