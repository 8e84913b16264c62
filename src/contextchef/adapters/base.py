"""What every target adapter receives and returns, the registries, and the per-message cache.

An adapter turns an assembled sandwich (`AdapterInput`) into exactly the keyword arguments of its
provider's SDK call. Adapters build every dict with its keys already in sorted code-point order
(`sorted_keys` does it for foreign JSON such as tool schemas), so `json.dumps(payload)` is
byte-identical for the same logical state without a sorting pass over the whole payload.

Conversion is memoised per message through `ConversionCache`: the chef hands adapters its own
immutable copies of the history, so an unchanged message is converted once, not every compile.

What the wire format supports beyond that (cache breakpoints, allowed tools, server compaction,
the provider's cache options) each adapter declares in its `profile` (see `adapters.profile`);
the pipeline asks the profile, never the adapter's class or target name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, runtime_checkable

from contextchef._hosttext import find_surrogate, shown, surrogate_problem
from contextchef._jsonvalue import NotJson, sorted_keys, strict_json
from contextchef._memo import ConversionCache
from contextchef._sequences import Lineage
from contextchef.adapters.profile import AdapterProfile, profile_of
from contextchef.errors import ConfigError, ToolDefinitionError, UnknownTargetError
from contextchef.messages import Message, ToolDefinition

if TYPE_CHECKING:
    from contextchef.selection.server_compaction import ServerCompaction

__all__ = [
    "AdapterInput",
    "AdapterProfile",
    "AdapterRegistry",
    "ConversionCache",
    "ReadOnlyAdapterRegistry",
    "TargetAdapter",
    "ToolDefinition",
    "normalize_tool",
    "normalize_tools",
    "profile_of",
    "sorted_keys",
]


@dataclass(frozen=True, slots=True)
class AdapterInput:
    """The assembled sandwich an adapter compiles.

    `system` is the stable top layer (system prompt, then anything placed after it), in order.
    `messages` is the rolling history with the tail already stitched into it; it may still hold
    system messages (mid-conversation ones, or dynamic state placed as a system message), which
    each adapter places as its provider allows. `prefill` is text the reply must start with.
    `server_compaction` asks the provider to compact the context itself (the `server` strategy
    asks where the adapter's profile has `server_compaction`; an adapter without it ignores it).
    `allowed_tools` (given only to an adapter whose profile has `allowed_tools`) names the tools
    the model may call among `tools`. `max_breakpoints` caps the cache breakpoints an adapter
    whose provider takes them may place (None: its own limit; 0: none at all). `auto_marks`
    (given to an adapter whose profile has `cache_breakpoints`) are the positions in
    `(*system, *messages)` of the automatic breakpoints the chef chose, ascending: the adapter
    puts its marker there while it serialises, within what the host's own `_cache_breakpoint`
    marks leave of its budget (no message is copied to carry them). `lineage`, when the chef
    knows it, says how `messages` continues the messages of the previous request compiled with
    this `cache` (see `Lineage`): a memo that compares the two may start past its `shared`.
    """

    system: Sequence[Message]
    messages: Sequence[Message]
    tools: Sequence[ToolDefinition] = ()
    prefill: str | None = None
    cache: ConversionCache | None = None
    server_compaction: ServerCompaction | None = None
    allowed_tools: tuple[str, ...] | None = None
    max_breakpoints: int | None = None
    auto_marks: tuple[int, ...] = ()
    lineage: Lineage | None = None


@runtime_checkable
class TargetAdapter(Protocol):
    """Compiles an `AdapterInput` into the keyword arguments of one provider's SDK call.

    `profile` declares what the wire format supports beyond the conversion itself (see
    `AdapterProfile`); an adapter that wraps another forwards the inner one's profile.
    """

    name: str

    @property
    def profile(self) -> AdapterProfile: ...

    def compile(self, request: AdapterInput) -> dict[str, Any]: ...


_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$")


def normalize_tool(tool: Mapping[str, Any], index: int | None = None) -> ToolDefinition:
    """Accept a tool in our IR, OpenAI's `{"type": "function", "function": …}` or Anthropic's
    `input_schema` shape, check it, and return it in the IR.

    A schema must be strict JSON (`strict_json`: string keys, finite numbers, lists rather than
    sets, nothing nested beyond `MAX_DEPTH`): it is sent as is to every provider, and
    `json.dumps(allow_nan=False)` must accept the payload. Raises `ToolDefinitionError` naming
    the tool and what is wrong with it.
    """
    where = f"tool {index}" if index is not None else "tool"
    if not isinstance(tool, Mapping):
        raise ToolDefinitionError(f"{where}: a tool definition must be a dict")
    source = tool
    if tool.get("type") == "function" and isinstance(tool.get("function"), Mapping):
        source = tool["function"]
    name = source.get("name")
    if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
        raise ToolDefinitionError(
            f"{where}: name {shown(name)} is invalid; use 1-64 letters, digits, '_', '-' or '.', "
            "starting with a letter or '_'"
        )
    where = f"tool {name!r}"
    schema = source.get("parameters", source.get("input_schema"))
    if schema is None:
        schema = {"type": "object", "properties": {}}
    if not isinstance(schema, Mapping):
        raise ToolDefinitionError(f"{where}: parameters must be a JSON schema object (a dict)")
    if schema.get("type") != "object":
        raise ToolDefinitionError(
            f'{where}: the parameters schema must have "type": "object", '
            f"got {shown(schema.get('type'))}"
        )
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        raise ToolDefinitionError(f"{where}: schema 'properties' must be a dict")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ToolDefinitionError(f"{where}: schema 'required' must be a list of property names")
    missing = [r for r in required if r not in properties]
    if missing:
        raise ToolDefinitionError(f"{where}: required properties not in 'properties': {missing}")
    description = source.get("description", "")
    if not isinstance(description, str):
        raise ToolDefinitionError(f"{where}: description must be a string")
    problem = surrogate_problem(description)
    if problem is not None:
        raise ToolDefinitionError(f"{where}: the description {problem}")
    try:
        parameters = strict_json(schema)
    except NotJson as exc:
        raise ToolDefinitionError(
            f"{where}: {exc.describe('the parameters schema', 'the schema value')}"
        ) from None
    found = find_surrogate(parameters)
    if found is not None:
        problem = NotJson(found[1], found[0]).describe("the parameters schema", "the schema value")
        raise ToolDefinitionError(f"{where}: {problem}")
    result: ToolDefinition = {"description": description, "name": name, "parameters": parameters}
    strict = source.get("strict")
    if isinstance(strict, bool):
        result["strict"] = strict
    defer = source.get("defer_loading", tool.get("defer_loading"))
    if defer is not None:
        if not isinstance(defer, bool):
            raise ToolDefinitionError(f"{where}: defer_loading must be True or False")
        result["defer_loading"] = defer
    tags = source.get("tags", tool.get("tags"))
    if tags is not None:
        if isinstance(tags, str) or not isinstance(tags, list | tuple):
            raise ToolDefinitionError(f"{where}: tags must be a list of strings")
        if not all(isinstance(tag, str) and tag for tag in tags):
            raise ToolDefinitionError(f"{where}: every tag must be a non-empty string")
        for tag in tags:
            if (problem := surrogate_problem(tag)) is not None:
                raise ToolDefinitionError(f"{where}: the tag {shown(tag)} {problem}")
        result["tags"] = list(tags)
    return dict(sorted(result.items()))  # type: ignore[return-value]


def normalize_tools(tools: Iterable[Mapping[str, Any]]) -> list[ToolDefinition]:
    """Normalise a list of tools; names must be unique."""
    result = [normalize_tool(tool, index) for index, tool in enumerate(tools)]
    seen: set[str] = set()
    for tool in result:
        if tool["name"] in seen:
            raise ToolDefinitionError(f"tool {tool['name']!r} is registered twice")
        seen.add(tool["name"])
    return result


class AdapterRegistry:
    """Target name → adapter: the targets the chefs you hand it to compile for
    (`ContextChef(adapters=...)`).

    Start from the built-ins with `adapter_registry.with_adapters({"mine": adapter})` (or
    `adapter_registry.copy()`), or from nothing with `AdapterRegistry()`. What you register
    reaches only the chefs given this registry: the default `adapter_registry`, which every
    other chef reads, is a `ReadOnlyAdapterRegistry`.
    """

    __slots__ = ("_adapters",)

    def __init__(self, adapters: Mapping[str, TargetAdapter] | None = None) -> None:
        self._adapters: dict[str, TargetAdapter] = {}
        for name, adapter in (adapters or {}).items():
            AdapterRegistry.register(self, name, adapter)

    def register(self, name: str, adapter: TargetAdapter) -> None:
        """Register (or replace) the adapter for `name`.

        Raises `TypeError` without a `compile` method, `ConfigError` when its `profile` is not
        an `AdapterProfile` (an adapter without one supports nothing beyond its wire format).
        """
        if not callable(getattr(adapter, "compile", None)):
            raise TypeError("an adapter needs a compile(AdapterInput) -> dict method")
        profile_of(adapter)
        self._adapters[name] = adapter

    def unregister(self, name: str) -> bool:
        return self._adapters.pop(name, None) is not None

    def get(self, name: str) -> TargetAdapter:
        """The adapter for `name`; `UnknownTargetError` lists the registered names otherwise."""
        try:
            return self._adapters[name]
        except KeyError:
            raise UnknownTargetError(name, self.names()) from None

    def has(self, name: str) -> bool:
        return name in self._adapters

    def names(self) -> list[str]:
        return list(self._adapters)

    def copy(self) -> AdapterRegistry:
        """A registry of your own (always one you can register on) with the same targets."""
        return AdapterRegistry(self._adapters)

    def with_adapters(self, adapters: Mapping[str, TargetAdapter]) -> AdapterRegistry:
        """A registry of your own with these targets plus `adapters` (which replace any of the
        same name); this registry is left as it is."""
        registry = self.copy()
        for name, adapter in adapters.items():
            registry.register(name, adapter)
        return registry

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(self._adapters)})"


class ReadOnlyAdapterRegistry(AdapterRegistry):
    """A registry nobody can change: the default one (`contextchef.adapters.adapter_registry`),
    read by every chef not given a registry of its own. Registering there would change the
    targets of every chef in the process, whoever created it, so `register` and `unregister`
    raise `ConfigError`; `with_adapters` and `copy` give a registry of your own."""

    __slots__ = ()

    def register(self, name: str, adapter: TargetAdapter) -> NoReturn:
        raise ConfigError(_read_only(f"register {name!r}"))

    def unregister(self, name: str) -> NoReturn:
        raise ConfigError(_read_only(f"unregister {name!r}"))


def _read_only(what: str) -> str:
    return (
        f"cannot {what}: the default adapter registry is read-only (every chef without "
        "adapters= reads it); give your chef a registry of its own: "
        "ContextChef(adapters=adapter_registry.with_adapters({name: adapter}))"
    )
