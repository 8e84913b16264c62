"""What a chef is built from its options: the validated options themselves, its store, memory,
`context` tool and library tools, and the coercion of setter arguments. Functions, not state:
the facade calls them once in `__init__` and hands what they return to its parts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from contextchef._limits import DEFAULT_MAX_ARGUMENT_BYTES, DEFAULT_MAX_ENTRY_BYTES, size_limit
from contextchef._renamed import RENAMED_OPTIONS, warn_renamed
from contextchef.adapters import ToolDefinition, normalize_tools
from contextchef.errors import ConfigError, ToolDefinitionError
from contextchef.memory.core import MemoryCore
from contextchef.memory.entry import MEMORY_NAMESPACE
from contextchef.memory.memory import AsyncMemory, Memory
from contextchef.prompts import Offer, Vocabulary, vocabulary
from contextchef.retrieval.context_tool import DEFAULT_WRITABLE, ContextTool
from contextchef.retrieval.definitions import (
    get_context_tool_definition,
    get_legacy_memory_tool_definitions,
    get_new_context_tool_definition,
)
from contextchef.selection.offload import OffloadConfig
from contextchef.selection.overflow import OverflowRunner
from contextchef.selection.tool_results import TransformHook
from contextchef.store.backend import AsyncStorageBackend, StorageBackend
from contextchef.store.backends.inmemory import InMemoryBackend
from contextchef.store.core import StoreCore
from contextchef.store.store import StoreBase, core_of

__all__ = [
    "ChefOptions",
    "as_messages",
    "as_tools",
    "library_tools",
    "offered_vocabulary",
    "open_context_tool",
    "open_memory",
    "open_store",
    "renamed_options",
]

_Budget = TypeVar("_Budget")
_Offload = TypeVar("_Offload")


def renamed_options(
    given: Mapping[str, Any], *, owner: str, budget: _Budget, offload: _Offload
) -> tuple[_Budget, _Offload]:
    """`budget` and `offload` with the reference's old names (`janitor=`, `vfs=`) mapped on,
    each with a `DeprecationWarning`; any other keyword is the `TypeError` Python would raise."""
    values: dict[str, Any] = {"budget": budget, "offload": offload}
    for old, value in given.items():
        new = RENAMED_OPTIONS.get(old)
        if new is None:
            raise TypeError(f"{owner}() got an unexpected keyword argument {old!r}")
        if values[new] is not None:
            raise TypeError(f"{owner}() got both {old}= and {new}=; pass {new}= only")
        warn_renamed(f"{owner}({old}=...)", f"{new}=", stacklevel=3)
        values[new] = value
    return values["budget"], values["offload"]


@dataclass(frozen=True, slots=True)
class ChefOptions:
    """The chef's scalar options, validated once (the store and memory are built from theirs)."""

    vocabulary: Vocabulary
    writable: tuple[str, ...]
    max_entry_bytes: int | None
    max_argument_bytes: int | None
    offload: OffloadConfig
    transform_tool_result: TransformHook | None
    default_target: str

    @classmethod
    def of(
        cls,
        *,
        tools: str,
        context_tool: Mapping[str, Any] | None,
        offload: OffloadConfig | Mapping[str, Any] | None,
        transform_tool_result: object,
        default_target: object,
    ) -> ChefOptions:
        if transform_tool_result is not None and not callable(transform_tool_result):
            raise ConfigError("transform_tool_result must be callable(content, info) -> str")
        if default_target is not None and not isinstance(default_target, str):
            raise ConfigError("default_target must be a target name such as 'anthropic'")
        tool = _context_tool_options(context_tool)
        return cls(
            vocabulary=vocabulary(tools),
            writable=_writable(tool),
            max_entry_bytes=size_limit(
                tool.get("max_entry_bytes", DEFAULT_MAX_ENTRY_BYTES), "context_tool max_entry_bytes"
            ),
            max_argument_bytes=size_limit(
                tool.get("max_argument_bytes", DEFAULT_MAX_ARGUMENT_BYTES),
                "context_tool max_argument_bytes",
            ),
            offload=OffloadConfig.of(offload),
            transform_tool_result=transform_tool_result,
            default_target=default_target or "openai",
        )


_CONTEXT_TOOL_OPTIONS = ("max_argument_bytes", "max_entry_bytes", "writable")


def _context_tool_options(options: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """The `context_tool={...}` option, checked for its known keys: `writable` (the namespaces
    the model may write), `max_entry_bytes` (one entry the model writes) and
    `max_argument_bytes` (one tool call's arguments); see `contextchef._limits`."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ConfigError("context_tool must be a dict such as {'writable': ['notes']}")
    unknown = set(options) - set(_CONTEXT_TOOL_OPTIONS)
    if unknown:
        known = list(_CONTEXT_TOOL_OPTIONS)
        raise ConfigError(f"unknown context_tool option(s) {sorted(unknown)}; known: {known}")
    return options


def _writable(options: Mapping[str, Any]) -> tuple[str, ...]:
    writable = options.get("writable", DEFAULT_WRITABLE)
    if isinstance(writable, str) or not all(isinstance(ns, str) for ns in writable):
        raise ConfigError("context_tool writable must be a list of namespace names")
    return tuple(writable)


def open_context_tool(
    options: ChefOptions, store: StoreCore, memory: MemoryCore | None
) -> ContextTool:
    """The chef's `context` tool: its access policy and its caps on model writes."""
    return ContextTool(
        store,
        memory=memory,
        writable=options.writable,
        max_entry_bytes=options.max_entry_bytes,
        max_argument_bytes=options.max_argument_bytes,
    )


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
    """The library's tool definitions as the `ToolCatalog` a vocabulary picks from
    (`by_meaning`: the store has a semantic index)."""

    def __init__(self, by_meaning: bool = False) -> None:
        self._by_meaning = by_meaning

    def context_tool(self) -> ToolDefinition:
        return get_context_tool_definition(by_meaning=self._by_meaning)

    def new_context_tool(self) -> ToolDefinition:
        return get_new_context_tool_definition()

    def memory_tools(self, allowed_keys: Sequence[str] | None) -> Sequence[ToolDefinition]:
        return get_legacy_memory_tool_definitions(allowed_keys)


def offered_vocabulary(
    options: ChefOptions, memory: MemoryCore | None, runner: OverflowRunner | None
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


def library_tools(
    vocabulary: Vocabulary, *, by_meaning: bool = False
) -> tuple[ToolDefinition, ...]:
    """The tools contextchef adds to the payload: those the (bound) vocabulary offers, and
    nothing else (`by_meaning`: the store has a semantic index, and the `context` tool says
    its search finds entries by meaning too)."""
    return tuple(normalize_tools(vocabulary.tool_definitions(_Definitions(by_meaning))))


def open_store(
    store: StoreBase[Any] | StorageBackend | AsyncStorageBackend | str | None,
    *,
    asynchronous: bool,
) -> StoreCore:
    """The chef's store from its `store=` option: a Store or AsyncStore (shared), a backend,
    `"memory"` (the default: nothing touches the disk), `"sqlite"` (the machine's database) or a
    `postgresql://` DSN (the PostgreSQL backend; the async one for the async chef).
    An async-native backend needs the async chef."""
    if store is None or store == "memory":
        return StoreCore(InMemoryBackend())
    if store == "sqlite":
        from contextchef.store.backends.sqlite import SQLiteBackend

        return StoreCore(SQLiteBackend())
    if isinstance(store, str) and store.startswith(("postgresql://", "postgres://")):
        from contextchef.store.backends.postgres import AsyncPostgresBackend, PostgresBackend

        backend = AsyncPostgresBackend(store) if asynchronous else PostgresBackend(store)
        return StoreCore(backend)
    if isinstance(store, str):
        from contextchef.store.backends.postgres._common import redact

        raise ConfigError(
            "store must be a backend, a Store, a postgresql:// DSN, 'memory' or 'sqlite', "
            f"got {redact(store)!r}"
        )
    core = core_of(store)
    if core.native_async and not asynchronous:
        raise ConfigError(
            f"{type(core.backend).__name__} is an async-native backend; use AsyncContextChef"
        )
    return core


def as_messages(messages: str | Iterable[object], what: str) -> list[object]:
    """The messages a setter was given, as a list to read at once (the caller's own list when
    it is one: a long history is not copied); a bad argument is a `ConfigError`."""
    if isinstance(messages, str):
        return [{"role": "system", "content": messages}] if what == "system prompt" else [messages]
    if isinstance(messages, Mapping):
        raise ConfigError(f"the {what} must be a list of messages, not a single dict")
    if not isinstance(messages, Iterable) or isinstance(messages, bytes | bytearray):
        raise ConfigError(f"the {what} must be a list of messages, got {type(messages).__name__}")
    return messages if type(messages) is list else list(messages)


def as_tools(tools: object) -> list[Any]:
    """The tools `Tools.register` was given, as a list; else a `ToolDefinitionError`."""
    if isinstance(tools, Mapping):
        raise ToolDefinitionError("tools.register takes a list of tool definitions, not one dict")
    if not isinstance(tools, Iterable) or isinstance(tools, str | bytes):
        raise ToolDefinitionError(
            f"tools.register takes a list of tool definitions, got {type(tools).__name__}"
        )
    return list(tools)
