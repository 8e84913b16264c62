"""The chef's tool selection: the pruner's methods, shared by both chefs through `_ChefBase`.

Narrowing the tools (`allow_only`, `prune_by_task`), loading toolkits, the runtime blocklist
(`set_blocked_tools`, `check_tool_call`) and resolving namespace calls all read or replace one
immutable `PrunerState` in the chef's compile state, so a snapshot holds it and a bad call,
which raises before anything is replaced, leaves the chef as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Self

from contextchef.compiler.pipeline import CompileState
from contextchef.errors import (
    ConfigError,
    SnapshotError,
    ToolDefinitionError,
    UnknownToolNameError,
)
from contextchef.selection.blocklist import ToolCallCheck, check_call
from contextchef.selection.namespaces import call_parts, parse_call_arguments, resolve_call
from contextchef.selection.pruner import PrunerState, Selection, names_argument, task_selection
from contextchef.selection.tool_plan import PruneResult, plan_tools, referenced_tools
from contextchef.selection.toolkits import LOAD_TOOLKIT, find_toolkit, load_reply

if TYPE_CHECKING:
    from contextchef.compiler.pipeline import CompileRuntime

__all__ = ["ToolSelection", "open_pruner"]


def open_pruner(pruner: PrunerState | Mapping[str, Any] | None) -> PrunerState:
    """The chef's `pruner=` option as a `PrunerState` (a dict in `PrunerState.to_dict` form)."""
    return PrunerState() if pruner is None else PrunerState.from_dict(pruner)


class ToolSelection:
    """The pruner methods of `_ChefBase` (a mixin: it reads the chef's state and runtime)."""

    _state: CompileState
    _runtime: CompileRuntime

    # -- reading ---------------------------------------------------------------------------

    @property
    def pruner_state(self) -> PrunerState:
        """The pruner's state as immutable plain data (`to_dict()` for JSON)."""
        return self._state.pruner

    @property
    def blocked_tools(self) -> tuple[str, ...]:
        """The tools `check_tool_call` refuses (see `set_blocked_tools`)."""
        return self._state.pruner.blocked

    @property
    def loaded_toolkits(self) -> tuple[str, ...]:
        return self._state.pruner.loaded

    def tool_selection(self, *, also_allowed: Iterable[str] | None = None) -> PruneResult:
        """Which registered tools the next compile keeps and removes, and why (over the
        current history: a tool its calls refer to is always kept)."""
        state = self._state
        return plan_tools(
            state.pruner,
            state.tools,
            referenced=referenced_tools(state.history),
            also_allowed=also_allowed,
        ).result

    # -- narrowing ---------------------------------------------------------------------------

    def allow_only(self, names: Iterable[str]) -> PruneResult:
        """Show the model only the tools named (tool or namespace names; contextchef's own
        tools are always there), from the next compile on. Replaces an earlier selection.

        An unknown name raises `UnknownToolNameError` naming it, and nothing changes. Returns
        what the next compile keeps and removes, and why.
        """
        chosen = names_argument(names, "allow_only")
        self._require_known(chosen, "allow_only")
        return self._select(Selection(names=chosen))

    def prune_by_task(
        self, task: str, *, tags: Iterable[str] | None = None, mode: str = "union"
    ) -> PruneResult:
        """Show the model only the tools the task mentions (a word of the name, a tag or a
        word of the description), and, with `tags`, the tools carrying one of them:
        `mode="union"` keeps a tool either matches, `"intersection"` one both match.
        Replaces an earlier selection; returns what is kept and removed, and why."""
        return self._select(task_selection(task, tags=tags, mode=mode))

    def clear_tool_selection(self) -> Self:
        """Show every tool again (namespaces, toolkits and the blocklist stay)."""
        self._set_pruner(replace(self._state.pruner, selection=None))
        return self

    def _select(self, selection: Selection) -> PruneResult:
        self._set_pruner(replace(self._state.pruner, selection=selection))
        return self.tool_selection()

    # -- toolkits ----------------------------------------------------------------------------

    def load_toolkit(self, name: str) -> Self:
        """Load a toolkit for the model (as its `load_toolkit` call does): its tools are in
        the payload from the next compile on."""
        pruner = self._state.pruner
        toolkit = find_toolkit(pruner.toolkits, name)
        if toolkit is None:
            listing = ", ".join(t.name for t in pruner.toolkits) or "(none)"
            raise ConfigError(f"load_toolkit: unknown toolkit {name!r}; toolkits: {listing}")
        if toolkit.name not in pruner.loaded:
            self._set_pruner(replace(pruner, loaded=(*pruner.loaded, toolkit.name)))
        return self

    def unload_toolkit(self, name: str) -> Self:
        """Take a loaded toolkit's tools out of the payload again (from the next compile on)."""
        pruner = self._state.pruner
        toolkit = find_toolkit(pruner.toolkits, name)
        if toolkit is None:
            listing = ", ".join(t.name for t in pruner.toolkits) or "(none)"
            raise ConfigError(f"unload_toolkit: unknown toolkit {name!r}; toolkits: {listing}")
        loaded = tuple(n for n in pruner.loaded if n != toolkit.name)
        self._set_pruner(replace(pruner, loaded=loaded))
        return self

    def _toolkit_route(self) -> _Route:
        """What the dispatcher calls for `load_toolkit`."""
        return _Route(self)

    def _load_for_model(self, name: object) -> str:
        """Serve the model's `load_toolkit` call: the tool result text."""
        pruner = self._state.pruner
        reply, toolkit = load_reply(pruner.toolkits, pruner.loaded, name)
        if toolkit is not None:
            self._set_pruner(replace(pruner, loaded=(*pruner.loaded, toolkit.name)))
        return reply

    # -- the runtime blocklist ---------------------------------------------------------------

    def set_blocked_tools(self, names: Iterable[str]) -> Self:
        """Refuse calls of these tools at run time (`[]` clears the list).

        The compiled tools never change, so the provider's prompt cache survives; the host
        asks `check_tool_call` before running a call and sends the refusal back instead.
        """
        chosen = names_argument(names, "set_blocked_tools")
        self._require_known(chosen, "set_blocked_tools")
        self._set_pruner(replace(self._state.pruner, blocked=chosen))
        return self

    def check_tool_call(self, name: object, arguments: object = None) -> ToolCallCheck:
        """Whether the host may run this call: `ToolCallCheck(allowed, reason)`, where `reason`
        is the tool result to send back when it may not (a namespace call is checked by its
        action). Takes a name and arguments, or a provider's tool call object."""
        tool, raw = call_parts(name, arguments)
        return check_call(self._state.pruner, tool, raw)

    def resolve_namespace(
        self, call: object, arguments: object = None
    ) -> tuple[str, dict[str, Any]]:
        """The tool to run for a model's call and its arguments as a dict.

        A call of a namespace tool (`{"action": ..., "args": {...}}`) becomes the call of the
        sub-tool it names; any other call comes back as it is, its arguments parsed. Takes a
        name and arguments, or a provider's tool call (OpenAI, Responses, Anthropic, Gemini,
        dict or SDK object). A call the model got wrong raises `ToolCallError`, whose `.reply`
        is the text to send back as the tool result.
        """
        name, raw = call_parts(call, arguments)
        pruner = self._state.pruner
        namespace = pruner.namespace(name)
        if namespace is None:
            return name, parse_call_arguments(raw, tool=name)
        registered = {tool["name"] for tool in self._state.tools}
        actions = [tool for tool in namespace.tools if tool in registered]
        return resolve_call(namespace, actions, raw)

    # -- state -------------------------------------------------------------------------------

    # -- snapshots (the hooks of `SnapshotsMixin`) -------------------------------------------

    def _pruner_state(self) -> dict[str, Any]:
        """The pruner's section of a portable snapshot."""
        return self._state.pruner.to_dict()

    def _check_pruner_state(self, data: Mapping[str, Any]) -> None:
        """Refuse a pruner section that does not load, before anything changes."""
        try:
            PrunerState.from_dict(dict(data))
        except (ConfigError, ToolDefinitionError) as exc:
            raise SnapshotError(str(exc), field="pruner") from exc

    def _restore_pruner_state(self, data: Mapping[str, Any]) -> None:
        self._state = replace(self._state, pruner=PrunerState.from_dict(dict(data)))

    def _set_pruner(self, pruner: PrunerState) -> None:
        pruner.check_structure()
        if self._state.tools:
            pruner.check_names([tool["name"] for tool in self._state.tools], self._library_names())
        self._state = replace(self._state, pruner=pruner)

    def _library_names(self) -> list[str]:
        return [tool["name"] for tool in self._runtime.library_tools]

    def _require_known(self, names: Iterable[str], where: str) -> None:
        pruner = self._state.pruner
        known = [tool["name"] for tool in self._state.tools]
        known += [namespace.name for namespace in pruner.namespaces]
        known += self._library_names()
        if pruner.toolkits:
            known.append(LOAD_TOOLKIT)
        unknown = [name for name in names if name not in known]
        if unknown:
            raise UnknownToolNameError(unknown, known, where=where)


class _Route:
    """The chef's `ToolkitRoute`: offers `load_toolkit` while the chef has toolkits."""

    def __init__(self, chef: ToolSelection) -> None:
        self._chef = chef

    def offered(self) -> bool:
        return bool(self._chef.pruner_state.toolkits)

    def load(self, name: object) -> str:
        return self._chef._load_for_model(name)
