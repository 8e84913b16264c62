"""The parts a chef is built from its options: the validated options themselves, its store,
memory and library tools, and the record of compactions that `set_history` re-applies to a
host's ever-growing history."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from contextchef.adapters import ToolDefinition, normalize_tools
from contextchef.errors import ConfigError
from contextchef.memory.core import MemoryCore
from contextchef.memory.entry import MEMORY_NAMESPACE
from contextchef.memory.memory import AsyncMemory, Memory
from contextchef.messages import Message
from contextchef.prompts import Offer, Vocabulary, vocabulary
from contextchef.retrieval.context_tool import DEFAULT_WRITABLE
from contextchef.retrieval.definitions import (
    get_context_tool_definition,
    get_legacy_memory_tool_definitions,
    get_new_context_tool_definition,
)
from contextchef.selection.janitor import Janitor
from contextchef.selection.offload import OffloadConfig
from contextchef.selection.tool_results import TransformHook
from contextchef.store.backend import AsyncStorageBackend, StorageBackend
from contextchef.store.backends.inmemory import InMemoryBackend
from contextchef.store.core import StoreCore
from contextchef.store.store import StoreBase

__all__ = [
    "ChefOptions",
    "Compaction",
    "landed",
    "library_tools",
    "offered_vocabulary",
    "open_memory",
    "open_store",
    "record",
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

    def then(self, later: Compaction) -> Compaction | None:
        """This compaction followed by `later`, as one, when `later` was made on this one's
        result (its prefix starts with this replacement); None when they are unrelated."""
        count = len(self.replacement)
        if len(later.prefix) < count or any(
            a is not b for a, b in zip(later.prefix[:count], self.replacement, strict=True)
        ):
            return None
        return Compaction((*self.prefix, *later.prefix[count:]), later.replacement)


def record(compactions: list[Compaction], new: Compaction) -> list[Compaction]:
    """`compactions` with `new` added; a compaction made on the previous one's result is
    folded into it, so an ever-growing history keeps one record, not one per overflow."""
    if compactions:
        folded = compactions[-1].then(new)
        if folded is not None:
            return [*compactions[:-1], folded]
    return [*compactions, new]


def landed(before: tuple[Message, ...], after: tuple[Message, ...]) -> Compaction:
    kept = 0
    while kept < min(len(before), len(after)) and before[-1 - kept] is after[-1 - kept]:
        kept += 1
    return Compaction(before[: len(before) - kept], after[: len(after) - kept])


@dataclass(frozen=True, slots=True)
class ChefOptions:
    """The chef's scalar options, validated once (the store and memory are built from theirs)."""

    vocabulary: Vocabulary
    writable: tuple[str, ...]
    vfs: OffloadConfig
    transform_tool_result: TransformHook | None
    default_target: str

    @classmethod
    def of(
        cls,
        *,
        tools: str,
        context_tool: Mapping[str, Any] | None,
        vfs: OffloadConfig | Mapping[str, Any] | None,
        transform_tool_result: object,
        default_target: object,
    ) -> ChefOptions:
        if transform_tool_result is not None and not callable(transform_tool_result):
            raise ConfigError("transform_tool_result must be callable(content, info) -> str")
        if default_target is not None and not isinstance(default_target, str):
            raise ConfigError("default_target must be a target name such as 'anthropic'")
        return cls(
            vocabulary=vocabulary(tools),
            writable=_writable(context_tool),
            vfs=OffloadConfig.of(vfs),
            transform_tool_result=transform_tool_result,
            default_target=default_target or "openai",
        )


def _writable(options: Mapping[str, Any] | None) -> tuple[str, ...]:
    if options is None:
        return DEFAULT_WRITABLE
    if not isinstance(options, Mapping):
        raise ConfigError("context_tool must be a dict such as {'writable': ['notes']}")
    unknown = set(options) - {"writable"}
    if unknown:
        raise ConfigError(f"unknown context_tool option(s) {sorted(unknown)}; known: ['writable']")
    writable = options.get("writable", DEFAULT_WRITABLE)
    if isinstance(writable, str) or not all(isinstance(ns, str) for ns in writable):
        raise ConfigError("context_tool writable must be a list of namespace names")
    return tuple(writable)


def open_memory(
    memory: Memory | AsyncMemory | Mapping[str, Any] | None,
    store: StoreCore,
    *,
    asynchronous: bool,
) -> MemoryCore | None:
    """The chef's memory flows from its `memory=` option. An `AsyncMemory` over an
    async-native backend needs the async chef (like such a backend as `store=`)."""
    if memory is None:
        return None
    if isinstance(memory, Memory | AsyncMemory):
        if memory.core.store.native_async and not asynchronous:
            raise ConfigError(
                f"the memory's {type(memory.core.store.backend).__name__} is an async-native "
                "backend; use AsyncContextChef"
            )
        return memory.core
    if not isinstance(memory, Mapping):
        raise ConfigError("memory must be a dict of Memory options or a Memory")
    return MemoryCore(store, **memory)


class _Definitions:
    """The library's tool definitions as the `ToolCatalog` a vocabulary picks from."""

    def context_tool(self) -> ToolDefinition:
        return get_context_tool_definition()

    def new_context_tool(self) -> ToolDefinition:
        return get_new_context_tool_definition()

    def memory_tools(self, allowed_keys: Sequence[str] | None) -> Sequence[ToolDefinition]:
        return get_legacy_memory_tool_definitions(allowed_keys)


def offered_vocabulary(
    options: ChefOptions, memory: MemoryCore | None, runner: Janitor | None
) -> Vocabulary:
    """The chef's vocabulary bound to what its options offer the model: memory (and whether
    the access policy lets the model write it), the scratchpad and `new_context` (a handoff is
    configured)."""
    writable = options.writable
    overflow = runner.overflow if runner is not None else None
    offer = Offer(
        memory=memory is not None,
        memory_writable=memory is not None
        and MEMORY_NAMESPACE in writable
        and memory.allowed != (),
        notes_writable="notes" in writable,
        allowed_keys=memory.allowed if memory is not None else None,
        handoff=overflow is not None and overflow.handoff is not None,
    )
    return options.vocabulary.offering(offer)


def library_tools(vocabulary: Vocabulary) -> tuple[ToolDefinition, ...]:
    """The tools contextchef adds to the payload: those the (bound) vocabulary offers, and
    nothing else."""
    return tuple(normalize_tools(vocabulary.tool_definitions(_Definitions())))


def open_store(
    store: StoreBase[Any] | StorageBackend | AsyncStorageBackend | str | None,
    *,
    asynchronous: bool,
) -> StoreCore:
    """The chef's store from its `store=` option: a Store or AsyncStore (shared), a backend,
    `"memory"` (the default: nothing touches the disk) or `"sqlite"` (the machine's database).
    An async-native backend needs the async chef."""
    if store is None or store == "memory":
        return StoreCore(InMemoryBackend())
    if store == "sqlite":
        from contextchef.store.backends.sqlite import SQLiteBackend

        return StoreCore(SQLiteBackend())
    if isinstance(store, str):
        raise ConfigError(f"store must be a backend, a Store, 'memory' or 'sqlite', got {store!r}")
    core = store.core if isinstance(store, StoreBase) else StoreCore(store)
    if core.native_async and not asynchronous:
        raise ConfigError(
            f"{type(core.backend).__name__} is an async-native backend; use AsyncContextChef"
        )
    return core
