"""The library's tool definitions: built once, deep-frozen, the same object on every call.

A definition that never changes can sit in the provider's cached prefix. So each getter returns
one `FrozenDict` built at import (or, for the legacy memory tools, once per distinct
`allowed_keys`), in the IR shape `{"name", "description", "parameters"}`; the only enums are
the `context` command list, the `modify_memory` actions and, when the host limits them, the
allowed memory keys — never the keys that happen to exist. Every description comes from
`contextchef.prompts`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final, cast

from contextchef import prompts
from contextchef.retrieval.frozen import deep_freeze

if TYPE_CHECKING:
    from contextchef.adapters.base import ToolDefinition

__all__ = [
    "COMMANDS",
    "CONTEXT_TOOL",
    "CREATE_MEMORY_TOOL",
    "LEGACY_TOOL_NAMES",
    "MODIFY_MEMORY_TOOL",
    "NEW_CONTEXT_TOOL",
    "OWNED_TOOL_NAMES",
    "RECALL_TOOL",
    "get_context_tool_definition",
    "get_legacy_memory_tool_definitions",
    "get_new_context_tool_definition",
    "get_recall_tool_definition",
]

CONTEXT_TOOL: Final = "context"
NEW_CONTEXT_TOOL: Final = "new_context"
CREATE_MEMORY_TOOL: Final = "create_memory"
MODIFY_MEMORY_TOOL: Final = "modify_memory"
RECALL_TOOL: Final = "recall_context"
LEGACY_TOOL_NAMES: Final = (CREATE_MEMORY_TOOL, MODIFY_MEMORY_TOOL, RECALL_TOOL)
OWNED_TOOL_NAMES: Final = (CONTEXT_TOOL, NEW_CONTEXT_TOOL, *LEGACY_TOOL_NAMES)
"""Every tool the dispatcher owns, whatever the vocabulary."""

COMMANDS: Final = ("view", "create", "str_replace", "insert", "delete", "rename", "search")
"""The `context` tool's commands, in the order its description lists them."""

_TYPES: Mapping[str, Any] = {
    "insert_line": {"type": "integer"},
    "view_range": {"items": {"type": "integer"}, "type": "array"},
}


def _schema(
    descriptions: Mapping[str, str],
    required: Iterable[str],
    enums: Mapping[str, Iterable[str]] | None = None,
) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for name in sorted(descriptions):
        spec = dict(_TYPES.get(name, {"type": "string"}))
        spec["description"] = descriptions[name]
        if enums and name in enums:
            spec["enum"] = list(enums[name])
        properties[name] = dict(sorted(spec.items()))
    return {"properties": properties, "required": list(required), "type": "object"}


def _tool(name: str, description: str, parameters: dict[str, Any]) -> ToolDefinition:
    tool = {"description": description, "name": name, "parameters": parameters}
    return cast("ToolDefinition", deep_freeze(tool))


_CONTEXT_DEFINITION = _tool(
    CONTEXT_TOOL,
    prompts.CONTEXT_TOOL_DESCRIPTION,
    _schema(prompts.CONTEXT_TOOL_PARAMETERS, ["command", "path"], {"command": COMMANDS}),
)
_CONTEXT_DEFINITION_BY_MEANING = _tool(
    CONTEXT_TOOL,
    prompts.CONTEXT_TOOL_DESCRIPTION_BY_MEANING,
    _schema(prompts.CONTEXT_TOOL_PARAMETERS, ["command", "path"], {"command": COMMANDS}),
)
_NEW_CONTEXT_DEFINITION = _tool(
    NEW_CONTEXT_TOOL,
    prompts.NEW_CONTEXT_TOOL_DESCRIPTION,
    {"properties": {}, "required": [], "type": "object"},
)
_RECALL_DEFINITION = _tool(
    RECALL_TOOL, prompts.RECALL_TOOL_DESCRIPTION, _schema(prompts.RECALL_TOOL_PARAMETERS, ["uri"])
)


def get_context_tool_definition(*, by_meaning: bool = False) -> ToolDefinition:
    """The `context` tool: seven commands over every namespace of the store; `by_meaning`
    when the store has a semantic index (its search also lists entries close in meaning)."""
    return _CONTEXT_DEFINITION_BY_MEANING if by_meaning else _CONTEXT_DEFINITION


def get_new_context_tool_definition() -> ToolDefinition:
    """`new_context`: the model asks for a fresh context window (no arguments)."""
    return _NEW_CONTEXT_DEFINITION


def get_recall_tool_definition() -> ToolDefinition:
    """`recall_context{uri}`: the legacy way to read a `context://` URI back."""
    return _RECALL_DEFINITION


def get_legacy_memory_tool_definitions(
    allowed_keys: Iterable[str] | None = None,
) -> tuple[ToolDefinition, ToolDefinition]:
    """`create_memory` and `modify_memory`. With `allowed_keys`, `key` is an enum of them
    (static for a configuration: the same objects for the same keys)."""
    keys = None if allowed_keys is None else tuple(sorted(set(allowed_keys)))
    return _legacy_definitions(keys)


@lru_cache(maxsize=32)
def _legacy_definitions(keys: tuple[str, ...] | None) -> tuple[ToolDefinition, ToolDefinition]:
    texts = prompts.MEMORY_TOOL_PARAMETERS
    key_enum = {"key": keys} if keys else {}  # an empty enum would make the schema unusable
    create = _tool(
        CREATE_MEMORY_TOOL,
        prompts.CREATE_MEMORY_TOOL_DESCRIPTION,
        _schema(
            {name: texts[name] for name in ("description", "key", "value")},
            ["key", "value"],
            key_enum,
        ),
    )
    modify = _tool(
        MODIFY_MEMORY_TOOL,
        prompts.MODIFY_MEMORY_TOOL_DESCRIPTION,
        _schema(texts, ["action", "key"], {"action": ("update", "delete"), **key_enum}),
    )
    return create, modify
