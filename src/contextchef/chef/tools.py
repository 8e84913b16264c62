"""`chef.tools`: your tools — registration, narrowing, toolkits, the runtime blocklist, namespace
calls.

Every method reads or replaces the tools and the immutable `PrunerState` in the chef's
`StateCell`, so a snapshot holds them, and a bad call, which raises before anything is
replaced, leaves the chef as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, Self

from contextchef._jsonvalue import copy_json
from contextchef.adapters import ToolDefinition, normalize_tools
from contextchef.chef.cell import StateCell
from contextchef.chef.options import as_tools
from contextchef.errors import (
    ConfigError,
    ToolCallError,
    ToolDefinitionError,
    UnknownToolNameError,
)
from contextchef.events import ToolBlocked
from contextchef.prompts import Vocabulary
from contextchef.prompts.tool_selection import tool_blocked, tool_name_missing
from contextchef.selection.blocklist import ToolCallCheck, blocked_call
from contextchef.selection.namespaces import call_parts, parse_call_arguments, resolve_call
from contextchef.selection.pruner import PrunerState, Selection, names_argument, task_selection
from contextchef.selection.tool_plan import PruneResult, plan_tools, referenced_tools
from contextchef.selection.toolkits import LOAD_TOOLKIT, find_toolkit, load_reply

__all__ = ["ToolkitLoader", "Tools", "match_names", "open_pruner"]

logger = logging.getLogger("contextchef.chef.tools")


def open_pruner(pruner: PrunerState | Mapping[str, Any] | None) -> PrunerState:
    """The chef's `pruner=` option as a `PrunerState` (a dict in `PrunerState.to_dict` form)."""
    return PrunerState() if pruner is None else PrunerState.from_dict(pruner)


def match_names(
    names: Iterable[str], known: Iterable[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """`names` as the known names they match (exactly, else ignoring case: the first known name
    of that spelling), without repeats, and the names that match none, in the order given."""
    known = list(known)
    exact = set(known)
    folded: dict[str, str] = {}
    for name in known:
        folded.setdefault(name.casefold(), name)
    matched: list[str] = []
    unknown: list[str] = []
    for name in names:
        found = name if name in exact else folded.get(name.casefold())
        if found is None:
            unknown.append(name)
        elif found not in matched:
            matched.append(found)
    return tuple(matched), tuple(unknown)


def _set_pruner(cell: StateCell, pruner: PrunerState, library_names: tuple[str, ...]) -> None:
    """Replace the pruner after checking it against the registered tools."""
    pruner.check_structure()
    tools = cell.state.tools
    if tools:
        pruner.check_names([tool["name"] for tool in tools], list(library_names))
    cell.state = replace(cell.state, pruner=pruner)


class ToolkitLoader:
    """The dispatcher's `ToolkitRoute`: offers `load_toolkit` while the chef has toolkits and
    serves the model's calls of it."""

    def __init__(self, cell: StateCell, library_names: tuple[str, ...]) -> None:
        self._cell = cell
        self._library_names = library_names

    def offered(self) -> bool:
        return bool(self._cell.state.pruner.toolkits)

    def load(self, name: object) -> str:
        """Serve the model's `load_toolkit` call: the tool result text."""
        pruner = self._cell.state.pruner
        reply, toolkit = load_reply(pruner.toolkits, pruner.loaded, name)
        if toolkit is not None:
            loaded = replace(pruner, loaded=(*pruner.loaded, toolkit.name))
            _set_pruner(self._cell, loaded, self._library_names)
        return reply


class Tools:
    """Your tools as the chef compiles them (`chef.tools`).

    Args:
        cell: the chef's compile state.
        library_names: the names of contextchef's own tools in the payload (never pruned).
        owns: whether a name is one of contextchef's own tools (the dispatcher's `owns`).
        vocabulary: the vocabulary of contextchef's own tools (the `tools=` option), bound to
            what the chef offers the model.
        announce: `(event, payload)`: emits the chef's `pruner:tool-blocked` event.
    """

    def __init__(
        self,
        cell: StateCell,
        library_names: tuple[str, ...],
        owns: Callable[[str], bool],
        vocabulary: Vocabulary,
        announce: Callable[[str, object], None] | None = None,
    ) -> None:
        self._cell = cell
        self._library_names = library_names
        self._owns = owns
        self._vocabulary = vocabulary
        self._announce = announce

    def __repr__(self) -> str:
        return f"<Tools {[tool['name'] for tool in self._cell.state.tools]}>"

    # -- registering -------------------------------------------------------------------------

    def register(self, tools: Iterable[Mapping[str, Any]]) -> Self:
        """Replace the tool set; each tool is converted to every provider's own schema."""
        normalized = normalize_tools(as_tools(tools))
        names = [tool["name"] for tool in normalized]
        self._cell.state.pruner.check_names(names, list(self._library_names))
        clash = sorted(tool["name"] for tool in normalized if self._owns(tool["name"]))
        if clash:  # refused in every vocabulary: owns_tool() would route the calls to the library
            raise ToolDefinitionError(
                f"tool name(s) {clash} are reserved for contextchef's own tools (context, "
                "new_context, create_memory, modify_memory, recall_context): owns_tool() routes "
                "calls of those names to the library, whatever the vocabulary; rename yours"
            )
        self._cell.state = replace(self._cell.state, tools=tuple(normalized))
        return self

    @property
    def definitions(self) -> list[ToolDefinition]:
        """A copy of the registered tools, normalised (what `register` kept)."""
        return copy_json(list(self._cell.state.tools))  # type: ignore[no-any-return]

    @property
    def vocabulary(self) -> Vocabulary:
        """The vocabulary of contextchef's own tools and of every sentence the model reads about
        them (`tools="unified"` or `"legacy"`), bound to what this chef offers."""
        return self._vocabulary

    @property
    def mode(self) -> str:
        """The vocabulary's name: `"unified"` or `"legacy"` (the `tools=` option)."""
        return self._vocabulary.name

    def owns(self, name: str) -> bool:
        """Whether `name` is one of contextchef's own tools (see `ContextChef.owns_tool`)."""
        return self._owns(name)

    # -- reading -----------------------------------------------------------------------------

    @property
    def pruner_state(self) -> PrunerState:
        """The pruner's state as immutable plain data (`to_dict()` for JSON)."""
        return self._cell.state.pruner

    @property
    def blocked(self) -> tuple[str, ...]:
        """The tools `check_tool_call` refuses (see `set_blocked_tools`)."""
        return self._cell.state.pruner.blocked

    @property
    def loaded_toolkits(self) -> tuple[str, ...]:
        return self._cell.state.pruner.loaded

    def selection(self, *, also_allowed: Iterable[str] | None = None) -> PruneResult:
        """Which registered tools the next compile keeps and removes, and why (over the
        current history: a tool its calls refer to is always kept)."""
        state = self._cell.state
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

        Names match the tools registered now case-insensitively (an exact match first). A name
        that matches none is reported in the result's `unknown` (and logged), never raised; it
        stays in the selection as written, so a tool registered later under that exact name is
        selected. Returns what the next compile keeps and removes, and why.
        """
        chosen, unknown = match_names(names_argument(names, "allow_only"), self._known())
        if unknown:
            logger.warning("allow_only: no tool is named %s", ", ".join(map(repr, unknown)))
        return replace(self._select(Selection(names=(*chosen, *unknown))), unknown=unknown)

    def prune_by_task(
        self, task: str, *, tags: Iterable[str] | None = None, mode: str = "union"
    ) -> PruneResult:
        """Show the model only the tools the task mentions (a word of the name, a tag or a
        word of the description), and, with `tags`, the tools carrying one of them:
        `mode="union"` keeps a tool either matches, `"intersection"` one both match.
        Replaces an earlier selection; returns what is kept and removed, and why."""
        return self._select(task_selection(task, tags=tags, mode=mode))

    def clear_selection(self) -> Self:
        """Show every tool again (namespaces, toolkits and the blocklist stay)."""
        self._set(replace(self._cell.state.pruner, selection=None))
        return self

    def _select(self, selection: Selection) -> PruneResult:
        self._set(replace(self._cell.state.pruner, selection=selection))
        return self.selection()

    # -- toolkits ----------------------------------------------------------------------------

    def load_toolkit(self, name: str) -> Self:
        """Load a toolkit for the model (as its `load_toolkit` call does): its tools are in
        the payload from the next compile on."""
        pruner = self._cell.state.pruner
        toolkit = find_toolkit(pruner.toolkits, name)
        if toolkit is None:
            listing = ", ".join(t.name for t in pruner.toolkits) or "(none)"
            raise ConfigError(f"load_toolkit: unknown toolkit {name!r}; toolkits: {listing}")
        if toolkit.name not in pruner.loaded:
            self._set(replace(pruner, loaded=(*pruner.loaded, toolkit.name)))
        return self

    def unload_toolkit(self, name: str) -> Self:
        """Take a loaded toolkit's tools out of the payload again (from the next compile on)."""
        pruner = self._cell.state.pruner
        toolkit = find_toolkit(pruner.toolkits, name)
        if toolkit is None:
            listing = ", ".join(t.name for t in pruner.toolkits) or "(none)"
            raise ConfigError(f"unload_toolkit: unknown toolkit {name!r}; toolkits: {listing}")
        loaded = tuple(n for n in pruner.loaded if n != toolkit.name)
        self._set(replace(pruner, loaded=loaded))
        return self

    # -- the runtime blocklist ---------------------------------------------------------------

    def set_blocked_tools(self, names: Iterable[str]) -> Self:
        """Refuse calls of these tools at run time (`[]` clears the list).

        The compiled tools never change, so the provider's prompt cache survives; the host
        asks `check_tool_call` before running a call and sends the refusal back instead.
        """
        chosen = names_argument(names, "set_blocked_tools")
        self._require_known(chosen, "set_blocked_tools")
        self._set(replace(self._cell.state.pruner, blocked=chosen))
        return self

    def check_tool_call(self, name: object, arguments: object = None) -> ToolCallCheck:
        """Whether the host may run this call: `ToolCallCheck(allowed, reason)`, where `reason`
        is the tool result to send back when it may not (a namespace call is checked by its
        action). Takes a name and arguments, or a provider's tool call object.
        An empty or missing name is never allowed (there is nothing the host could run).
        """
        try:
            tool, raw = call_parts(name, arguments)
        except ToolCallError:
            tool, raw = "", arguments
        if not tool.strip():
            return ToolCallCheck(False, tool_name_missing())
        found = blocked_call(self._cell.state.pruner, tool, raw)
        if found is None:
            return ToolCallCheck(True)
        blocked, namespace = found
        reason = tool_blocked(blocked)
        if self._announce is not None:
            self._announce("pruner:tool-blocked", ToolBlocked(blocked, reason, namespace))
        return ToolCallCheck(False, reason)

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
        state = self._cell.state
        namespace = state.pruner.namespace(name)
        if namespace is None:
            return name, parse_call_arguments(raw, tool=name)
        registered = {tool["name"] for tool in state.tools}
        actions = [tool for tool in namespace.tools if tool in registered]
        return resolve_call(namespace, actions, raw)

    # -- checks ------------------------------------------------------------------------------

    def _set(self, pruner: PrunerState) -> None:
        _set_pruner(self._cell, pruner, self._library_names)

    def _known(self) -> list[str]:
        """Every name a selection or the blocklist may name, in registration order."""
        state = self._cell.state
        known = [tool["name"] for tool in state.tools]
        known += [namespace.name for namespace in state.pruner.namespaces]
        known += self._library_names
        if state.pruner.toolkits:
            known.append(LOAD_TOOLKIT)
        return known

    def _require_known(self, names: Iterable[str], where: str) -> None:
        known = self._known()
        unknown = [name for name in names if name not in known]
        if unknown:
            raise UnknownToolNameError(unknown, known, where=where)
