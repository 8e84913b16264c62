"""One entry point for every tool the library owns: `owns(name)` and `handle(name, arguments)`.

The dispatcher owns `context`, `new_context` and the legacy `create_memory`, `modify_memory`
and `recall_context`, whatever vocabulary the chef compiles with: the vocabulary decides which
definitions the payload carries, not which calls are understood, so a model that still calls a
tool of the other vocabulary during a migration is served. `arguments` is the JSON string the
OpenAI and Anthropic SDKs hand over or an already parsed dict (Anthropic `input`, Gemini
`args`). Every model mistake comes back as `Error: …` text; only a tool name the dispatcher does
not own raises `UnknownToolError`, because that is a routing bug in the host's loop.

The legacy memory tools speak in keys, never `context://` URIs, and never mention the `context`
tool. `create_memory` on a key that already exists is refused (like `context` `create`) and the
error points at `modify_memory`: a create never silently overwrites a fact. Both respect the
context tool's access policy: without `memory` in `writable`, memory is read-only to the model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from contextchef import prompts
from contextchef._effects import Flow, drive_async, drive_sync
from contextchef.errors import (
    ConfigError,
    EntryExistsError,
    EntryNotFoundError,
    InvalidPathError,
    MemoryKeyNotAllowedError,
    MemoryValueTooLargeError,
    MemoryVetoedError,
    StoreError,
    UnknownToolError,
)
from contextchef.memory.core import MemoryCore
from contextchef.memory.entry import MEMORY_NAMESPACE, UNSET
from contextchef.memory.memory import AsyncMemory, Memory, memory_core
from contextchef.retrieval.arguments import (
    ToolInputError,
    optional_text,
    parse_arguments,
    required_text,
    text_argument,
)
from contextchef.retrieval.context_tool import ContextTool, store_refusal
from contextchef.retrieval.definitions import (
    CONTEXT_TOOL,
    CREATE_MEMORY_TOOL,
    MODIFY_MEMORY_TOOL,
    NEW_CONTEXT_TOOL,
    OWNED_TOOL_NAMES,
    RECALL_TOOL,
    get_legacy_memory_tool_definitions,
    get_new_context_tool_definition,
    get_recall_tool_definition,
)
from contextchef.selection.toolkits import LOAD_TOOLKIT
from contextchef.store.paths import validate_entry_path

__all__ = [
    "OWNED_TOOL_NAMES",
    "Dispatcher",
    "ToolkitRoute",
    "get_legacy_memory_tool_definitions",
    "get_new_context_tool_definition",
    "get_recall_tool_definition",
]


class ToolkitRoute(Protocol):
    """Serves `load_toolkit` calls: `offered()` says whether the payload defines the tool (the
    chef has toolkits), `load(name)` loads one and returns the result text for the model."""

    def offered(self) -> bool: ...

    def load(self, name: object) -> str: ...


class Dispatcher:
    """Routes library-owned tool calls.

    Args:
        context_tool: runs `context` and `recall_context` calls, and holds the access policy.
        memory: serves the legacy memory tools (default: the context tool's memory).
        on_new_context: called with no arguments when the model calls `new_context` (the chef
            forces a new window on its next compile); without it, `new_context` is refused.
        toolkits: serves `load_toolkit` calls while it offers toolkits (then the dispatcher
            owns that name too).
    """

    def __init__(
        self,
        context_tool: ContextTool,
        *,
        memory: Memory | AsyncMemory | MemoryCore | None = None,
        on_new_context: Callable[[], object] | None = None,
        toolkits: ToolkitRoute | None = None,
    ) -> None:
        if not isinstance(context_tool, ContextTool):
            raise ConfigError(f"context_tool must be a ContextTool, got {context_tool!r}")
        if on_new_context is not None and not callable(on_new_context):
            raise ConfigError("on_new_context must be callable")
        self._context = context_tool
        core = memory_core(memory)
        self._memory = core if core is not None else context_tool.memory
        self._on_new_context = on_new_context
        self._toolkits = toolkits
        self._handlers: dict[str, Callable[[dict[str, Any]], Flow[str]]] = {
            CREATE_MEMORY_TOOL: self._create_memory,
            MODIFY_MEMORY_TOOL: self._modify_memory,
            RECALL_TOOL: self._recall,
        }

    @property
    def owned(self) -> tuple[str, ...]:
        """Every tool name this dispatcher handles."""
        return OWNED_TOOL_NAMES

    def owns(self, name: object) -> bool:
        """Whether `name` is a library-owned tool (in either vocabulary), or `load_toolkit`
        while toolkits are offered."""
        if name == LOAD_TOOLKIT:
            return self._toolkits is not None and self._toolkits.offered()
        return isinstance(name, str) and name in OWNED_TOOL_NAMES

    def handle(self, name: str, arguments: object = None) -> str:
        """Run the call and return the tool result text; raises only `UnknownToolError`."""
        return drive_sync(self.flow(name, arguments))

    async def ahandle(self, name: str, arguments: object = None) -> str:
        """`handle`, awaited (an async-native store and async memory hooks are awaited)."""
        return await drive_async(self.flow(name, arguments))

    def flow(self, name: str, arguments: object = None) -> Flow[str]:
        """The call as a flow of effects; `UnknownToolError` is raised before it starts."""
        if not self.owns(name):
            raise UnknownToolError(name, OWNED_TOOL_NAMES)
        return self._flow(name, arguments)

    def _flow(self, name: str, arguments: object) -> Flow[str]:
        if name == CONTEXT_TOOL:
            return (yield from self._context.flow(arguments))
        if name == LOAD_TOOLKIT and self._toolkits is not None:
            try:
                return self._toolkits.load(parse_arguments(arguments).get("toolkit"))
            except ToolInputError as exc:
                return exc.text
        if name == NEW_CONTEXT_TOOL:
            if self._on_new_context is None:
                return prompts.NEW_CONTEXT_UNAVAILABLE
            self._on_new_context()
            return prompts.NEW_CONTEXT_STARTED
        try:
            self._context.check_arguments(arguments)
            return (yield from self._handlers[name](parse_arguments(arguments)))
        except ToolInputError as exc:
            return exc.text
        except StoreError as exc:
            return store_refusal(exc)

    # -- legacy tools -----------------------------------------------------------------------

    def _recall(self, args: dict[str, Any]) -> Flow[str]:
        uri = required_text(args, "uri")
        return (yield from self._context.flow({"command": "view", "path": uri, **_range(args)}))

    def _writable_memory(self) -> MemoryCore:
        if self._memory is None:
            raise ToolInputError(prompts.MEMORY_NOT_CONFIGURED)
        if not self._context.can_write(MEMORY_NAMESPACE):
            raise ToolInputError(prompts.MEMORY_READ_ONLY)
        return self._memory

    def _create_memory(self, args: dict[str, Any]) -> Flow[str]:
        memory = self._writable_memory()
        key = _key(args)
        value = text_argument(args, "value")
        description = optional_text(args, "description")
        try:
            yield from memory.create(key, value, description)
        except EntryExistsError:
            return prompts.memory_exists(key)
        except (MemoryKeyNotAllowedError, MemoryVetoedError, MemoryValueTooLargeError) as exc:
            return _refused(exc)
        return prompts.memory_saved(key)

    def _modify_memory(self, args: dict[str, Any]) -> Flow[str]:
        memory = self._writable_memory()
        action = required_text(args, "action")
        if action not in ("update", "delete"):
            return prompts.memory_action_invalid(action)
        key = _key(args)
        try:
            if action == "delete":
                yield from memory.remove(key)
                return prompts.memory_deleted(key)
            value = text_argument(args, "value")
            description = optional_text(args, "description")
            yield from memory.update(key, value, UNSET if description is None else description)
            return prompts.memory_updated(key)
        except EntryNotFoundError:
            return prompts.memory_missing(key)
        except (MemoryKeyNotAllowedError, MemoryVetoedError, MemoryValueTooLargeError) as exc:
            return _refused(exc)


def _range(args: dict[str, Any]) -> dict[str, Any]:
    return {"view_range": args["view_range"]} if args.get("view_range") is not None else {}


def _key(args: dict[str, Any]) -> str:
    key = required_text(args, "key")
    try:
        return validate_entry_path(key)
    except InvalidPathError as exc:
        raise ToolInputError(prompts.memory_key_invalid(key, str(exc))) from None


def _refused(exc: MemoryKeyNotAllowedError | MemoryVetoedError | MemoryValueTooLargeError) -> str:
    if isinstance(exc, MemoryKeyNotAllowedError):
        return prompts.memory_key_refused(exc.key, exc.allowed)
    if isinstance(exc, MemoryValueTooLargeError):
        return prompts.memory_too_large(exc.key, exc.size, exc.limit)
    return prompts.memory_vetoed(exc.key)
