"""The pruner's state: which tools the model sees, as plain data.

`PrunerState` holds the selection (`allow_only` names, or a task to match), the tools always
kept, the namespaces and toolkits, which toolkits are loaded, and the runtime blocklist. It is
immutable and round-trips through `to_dict()` / `from_dict()` (plain JSON), which is also the
shape of the chef's `pruner={...}` option. What it does to a payload is `tool_plan.plan_tools`.

Bad input raises a typed error naming what is wrong and where: `ConfigError` for a malformed
option, `ToolCollisionError` when two groups claim one name, `UnknownToolNameError` for a name
no registered tool has (checked against the tools by `check_names`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Self

from contextchef.errors import ConfigError, ToolCollisionError, UnknownToolNameError
from contextchef.selection.namespaces import Namespace
from contextchef.selection.tool_plan import ToolPlan, plan_tools
from contextchef.selection.toolkits import LOAD_TOOLKIT, Toolkit

if TYPE_CHECKING:
    from contextchef.messages import ToolDefinition

__all__ = ["MODES", "PrunerState", "Selection", "names_argument"]

MODES = ("union", "intersection")
"""How `prune_by_task` combines the task match with the tag match."""

_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$")  # as `normalize_tool` checks
_KEYS = ("blocked", "keep", "loaded", "namespaces", "selection", "toolkits", "use_allowed_tools")


def names_argument(names: object, what: str) -> tuple[str, ...]:
    """A list of tool names, de-duplicated in order; a `ConfigError` for anything else."""
    if isinstance(names, str) or not isinstance(names, Iterable) or isinstance(names, Mapping):
        raise ConfigError(f"{what} must be a list of tool names, got {type(names).__name__}")
    out: list[str] = []
    for name in names:
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{what} must hold tool names (strings), got {name!r}")
        if name not in out:
            out.append(name)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Selection:
    """What the model should see: the tools named (`names`), or those a `task` (and `tags`)
    match, combined by `mode`."""

    names: tuple[str, ...] | None = None
    task: str | None = None
    tags: tuple[str, ...] = ()
    mode: str = "union"

    def to_dict(self) -> dict[str, Any]:
        if self.names is not None:
            return {"allow_only": list(self.names)}
        return {"mode": self.mode, "tags": list(self.tags), "task": self.task}

    @classmethod
    def from_dict(cls, data: object) -> Selection:
        if not isinstance(data, Mapping):
            raise ConfigError("pruner selection must be a dict such as {'allow_only': [...]}")
        if "allow_only" in data:
            extra = set(data) - {"allow_only"}
            if extra:
                raise ConfigError(f"pruner selection: unexpected key(s) {sorted(extra)}")
            return cls(names=names_argument(data["allow_only"], "pruner selection allow_only"))
        extra = set(data) - {"mode", "tags", "task"}
        if extra or "task" not in data:
            raise ConfigError(
                "pruner selection must be {'allow_only': [...]} or {'task': ..., 'tags': [...], "
                f"'mode': 'union'}}, got keys {sorted(data)}"
            )
        return task_selection(data["task"], tags=data.get("tags"), mode=data.get("mode", "union"))


def task_selection(task: object, *, tags: object = None, mode: object = "union") -> Selection:
    """A checked task selection (`prune_by_task`'s arguments)."""
    if not isinstance(task, str):
        raise ConfigError(f"prune_by_task: the task must be a string, got {type(task).__name__}")
    if mode not in MODES:
        raise ConfigError(f"prune_by_task: mode must be 'union' or 'intersection', got {mode!r}")
    chosen = names_argument(tags, "prune_by_task tags") if tags is not None else ()
    return Selection(task=task, tags=chosen, mode=str(mode))


def _groups(data: object, kind: type[Namespace] | type[Toolkit], what: str) -> tuple[Any, ...]:
    """Namespaces or toolkits from `{name: {"tools": [...], "description": "..."}}`."""
    if data is None:
        return ()
    if not isinstance(data, Mapping):
        raise ConfigError(f"pruner {what} must be a dict of name -> {{'tools': [...]}}")
    out = []
    for name, spec in data.items():
        where = f"pruner {what} {name!r}"
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise ConfigError(
                f"{where}: the name must be 1-64 letters, digits, '_', '-' or '.', starting with "
                "a letter or '_'"
            )
        if not isinstance(spec, Mapping) or "tools" not in spec:
            raise ConfigError(f"{where} must be a dict with 'tools' (and 'description')")
        extra = set(spec) - {"tools", "description"}
        if extra:
            raise ConfigError(f"{where}: unknown key(s) {sorted(extra)}")
        tools = names_argument(spec["tools"], f"{where} tools")
        if not tools:
            raise ConfigError(f"{where} has no tools")
        description = spec.get("description", "")
        if not isinstance(description, str):
            raise ConfigError(f"{where}: the description must be a string")
        out.append(kind(name, tools, description))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class PrunerState:
    """Everything that decides which tools a compile defines, and which calls are blocked.

    `keep` names tools no selection ever removes; `use_allowed_tools` makes the OpenAI targets
    keep every definition and restrict the model with `tool_choice` "allowed_tools" instead
    (the cached tools prefix then survives a change of selection). Build it from the chef's
    `pruner={...}` option or `from_dict`; change it through the chef's methods.
    """

    selection: Selection | None = None
    keep: tuple[str, ...] = ()
    namespaces: tuple[Namespace, ...] = ()
    toolkits: tuple[Toolkit, ...] = ()
    loaded: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()
    use_allowed_tools: bool = False
    _homes: dict[str, str] = field(default_factory=dict, init=False, compare=False, repr=False)
    _groups: dict[str, Namespace] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        for namespace in self.namespaces:
            self._groups.setdefault(namespace.name, namespace)
            for tool in namespace.tools:
                self._homes.setdefault(tool, namespace.name)

    @property
    def shapes_tools(self) -> bool:
        """Whether compiles change the tool list at all (a selection, namespaces or toolkits)."""
        return self.selection is not None or bool(self.namespaces) or bool(self.toolkits)

    def namespace_of(self, tool: str) -> str | None:
        """The namespace holding `tool`, or None."""
        return self._homes.get(tool)

    def namespace(self, name: str) -> Namespace | None:
        """The namespace called `name`, or None."""
        return self._groups.get(name)

    def with_(self, **changes: Any) -> PrunerState:
        """A copy with `changes` (validated like a new state)."""
        state = replace(self, **changes)
        state.check_structure()
        return state

    def apply(
        self,
        tools: Sequence[ToolDefinition],
        *,
        referenced: Iterable[str] = (),
        also_allowed: Iterable[str] | None = None,
    ) -> ToolPlan:
        """The tools a compile defines for `tools` under this state (see
        `tool_plan.plan_tools`): `referenced` are never pruned, `also_allowed` (an active
        skill's allowed tools, say) is kept in addition to the selection."""
        return plan_tools(self, tools, referenced=referenced, also_allowed=also_allowed)

    # -- plain data ------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON (sorted keys) that `from_dict` turns back into an equal state."""
        return {
            "blocked": list(self.blocked),
            "keep": list(self.keep),
            "loaded": list(self.loaded),
            "namespaces": {n.name: n.to_dict() for n in self.namespaces},
            "selection": self.selection.to_dict() if self.selection is not None else None,
            "toolkits": {t.name: t.to_dict() for t in self.toolkits},
            "use_allowed_tools": self.use_allowed_tools,
        }

    @classmethod
    def from_dict(cls, data: object) -> Self:
        """A state from `to_dict()` output or the chef's `pruner={...}` option (every key
        optional); `ConfigError` or `ToolCollisionError` naming the fault otherwise."""
        if isinstance(data, cls):
            return data
        if not isinstance(data, Mapping):
            raise ConfigError(
                "pruner must be a dict such as {'namespaces': {...}, 'toolkits': {...}} or a "
                f"PrunerState, got {type(data).__name__}"
            )
        unknown = set(data) - set(_KEYS)
        if unknown:
            raise ConfigError(f"unknown pruner option(s) {sorted(unknown)}; known: {list(_KEYS)}")
        use_allowed = data.get("use_allowed_tools", False)
        if not isinstance(use_allowed, bool):
            raise ConfigError("pruner use_allowed_tools must be True or False")
        selection = data.get("selection")
        state = cls(
            selection=Selection.from_dict(selection) if selection is not None else None,
            keep=names_argument(data.get("keep", ()), "pruner keep"),
            namespaces=_groups(data.get("namespaces"), Namespace, "namespace"),
            toolkits=_groups(data.get("toolkits"), Toolkit, "toolkit"),
            loaded=names_argument(data.get("loaded", ()), "pruner loaded"),
            blocked=names_argument(data.get("blocked", ()), "pruner blocked"),
            use_allowed_tools=use_allowed,
        )
        state.check_structure()
        return state

    # -- checks ------------------------------------------------------------------------------

    def check_structure(self) -> None:
        """The checks that need no registered tools: one group per tool, distinct names."""
        owner: dict[str, str] = {}
        names = [n.name for n in self.namespaces]
        for namespace in self.namespaces:
            for tool in namespace.tools:
                if tool in owner:
                    raise ToolCollisionError(
                        f"tool {tool!r} is in namespace {owner[tool]!r} and in namespace "
                        f"{namespace.name!r}; a tool belongs to one namespace at most"
                    )
                owner[tool] = namespace.name
        for name in names:
            if names.count(name) > 1:
                raise ToolCollisionError(f"namespace {name!r} is defined twice")
            if name in owner or name == LOAD_TOOLKIT:
                what = f"a tool of namespace {owner[name]!r}" if name in owner else "load_toolkit"
                raise ToolCollisionError(
                    f"namespace {name!r} has the name of {what}: the payload would define two "
                    "tools of that name"
                )
        kit_owner: dict[str, str] = {}
        for toolkit in self.toolkits:
            for member in toolkit.tools:
                if member in kit_owner:
                    raise ToolCollisionError(
                        f"{member!r} is in toolkit {kit_owner[member]!r} and in toolkit "
                        f"{toolkit.name!r}; it belongs to one toolkit at most"
                    )
                if member in owner:
                    raise ToolCollisionError(
                        f"toolkit {toolkit.name!r} lists {member!r}, a tool of namespace "
                        f"{owner[member]!r}: list the namespace itself instead"
                    )
                kit_owner[member] = toolkit.name
        kits = [t.name for t in self.toolkits]
        for name in kits:
            if kits.count(name) > 1:
                raise ToolCollisionError(f"toolkit {name!r} is defined twice")
        stray = [name for name in self.loaded if name not in kits]
        if stray:
            raise ConfigError(f"pruner loaded names toolkit(s) {stray} that are not defined")

    def check_names(self, tools: Sequence[str], library: Sequence[str]) -> None:
        """Check the namespaces and toolkits against the registered tools (`tools`) and the
        library's own (`library`): every member exists, no namespace takes a tool's name."""
        known = set(tools)
        reserved = set(library) | {LOAD_TOOLKIT}
        for namespace in self.namespaces:
            if namespace.name in known or namespace.name in reserved:
                raise ToolCollisionError(
                    f"namespace {namespace.name!r} has the name of a registered or library "
                    "tool; rename the namespace"
                )
            missing = [tool for tool in namespace.tools if tool not in known]
            if missing:
                raise UnknownToolNameError(
                    missing, sorted(known), where=f"namespace {namespace.name!r}"
                )
        if self.toolkits and LOAD_TOOLKIT in known:
            raise ToolCollisionError(
                "a registered tool is called load_toolkit, the name of the tool that loads "
                "toolkits; rename it or define no toolkits"
            )
        groups = known | {n.name for n in self.namespaces}
        for toolkit in self.toolkits:
            missing = [member for member in toolkit.tools if member not in groups]
            if missing:
                raise UnknownToolNameError(
                    missing, sorted(groups), where=f"toolkit {toolkit.name!r}"
                )
