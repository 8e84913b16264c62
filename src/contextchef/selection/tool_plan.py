"""What a compile defines: the registered tools after the pruner's selection, namespaces and
toolkits, with the reason for every tool kept or removed.

`plan_tools` is pure and deterministic: the same state, tools and window give the same tool
list in the same order (registration order; a namespace's tool stands where its first member
was; `load_toolkit` comes after the user's tools). One rule outranks every other: a tool that a
tool call in the window refers to is always defined, flat, under its own name, because
providers reject a history that calls a tool the request does not define.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from contextchef.selection.namespaces import Namespace, namespace_tool
from contextchef.selection.tool_match import match_tags, match_task, task_terms, tool_terms
from contextchef.selection.toolkits import Toolkit, load_toolkit_tool

if TYPE_CHECKING:
    from contextchef.messages import ToolDefinition

__all__ = [
    "PlanMemo",
    "PruneResult",
    "ToolDecision",
    "ToolPlan",
    "plan_tools",
    "referenced_tools",
]


class SelectionView(Hashable, Protocol):
    """What planning reads of a `pruner.Selection` (which is one): the pruner builds on this
    module, so it names the fields rather than import the class."""

    @property
    def names(self) -> tuple[str, ...] | None: ...
    @property
    def task(self) -> str | None: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def mode(self) -> str: ...


class PlanState(Protocol):
    """What planning reads of a `pruner.PrunerState` (which is one)."""

    @property
    def selection(self) -> SelectionView | None: ...
    @property
    def keep(self) -> tuple[str, ...]: ...
    @property
    def namespaces(self) -> tuple[Namespace, ...]: ...
    @property
    def toolkits(self) -> tuple[Toolkit, ...]: ...
    @property
    def loaded(self) -> tuple[str, ...]: ...
    @property
    def use_allowed_tools(self) -> bool: ...
    def namespace_of(self, tool: str) -> str | None: ...
    def namespace(self, name: str) -> Namespace | None: ...


REFERENCED = "called by a tool call in the window (a payload must define every tool it calls)"


class ToolDecision(NamedTuple):
    """One registered tool: kept or removed, and why."""

    name: str
    kept: bool
    reason: str


@dataclass(frozen=True, slots=True)
class PruneResult:
    """Which registered tools the payload keeps and removes, and why; `tools` are the names the
    payload defines, in order (namespace tools and `load_toolkit` included, contextchef's own
    tools not)."""

    decisions: tuple[ToolDecision, ...]
    tools: tuple[str, ...]
    unknown: tuple[str, ...] = ()
    """Names `allow_only` was given that matched no registered tool (nor namespace), even
    ignoring case: a typo shows here instead of raising."""

    @property
    def kept(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.decisions if d.kept)

    @property
    def removed(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.decisions if not d.kept)

    @property
    def total(self) -> int:
        return len(self.decisions)

    def reason(self, name: str) -> str:
        """Why `name` was kept or removed; `KeyError` for a name that is not registered."""
        for decision in self.decisions:
            if decision.name == name:
                return decision.reason
        raise KeyError(name)


@dataclass(frozen=True, slots=True)
class ToolPlan:
    """The tools of one compile.

    `tools` is what the payload defines. Under `use_allowed_tools`, a target that can restrict
    calls by name sends `full` (every definition, as without a selection) and `allowed` (the
    names the model may call) instead; both are None when the selection removes nothing.
    """

    tools: tuple[ToolDefinition, ...]
    result: PruneResult
    full: tuple[ToolDefinition, ...] | None = None
    allowed: tuple[str, ...] | None = None


def referenced_tools(history: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """The names of every tool the history's assistant messages call."""
    names: set[str] = set()
    add = names.add  # one pass, no generator per message: a long window is scanned each compile
    for message in history:
        calls = message.get("tool_calls")
        if calls:
            for call in calls:
                add(call["function"]["name"])
    return frozenset(names)


def _chosen(state: PlanState, names: Iterable[str]) -> dict[str, str]:
    """Tool name → why it is chosen, for names of tools or of namespaces (all their tools)."""
    out: dict[str, str] = {}
    for name in names:
        namespace = state.namespace(name)
        if namespace is None:
            out.setdefault(name, "named")
        else:
            for tool in namespace.tools:
                out.setdefault(tool, f"its namespace {name!r} is named")
    return out


class _Decider:
    """Decides each tool for one plan. What does not depend on the selection (a call in the
    window, a toolkit, the keep list) is worked out once into `fixed`, highest rule last."""

    def __init__(
        self,
        state: PlanState,
        referenced: frozenset[str],
        also_allowed: Iterable[str] | None,
    ) -> None:
        selection: SelectionView | None = state.selection
        self.selection = selection
        self.named = _chosen(state, selection.names) if selection and selection.names else {}
        self.extra = _chosen(state, also_allowed) if also_allowed is not None else None
        fixed: dict[str, ToolDecision] = {}
        for name in state.keep:
            fixed[name] = ToolDecision(name, True, "always kept (the pruner's keep list)")
        done = set(state.loaded)
        for loaded in (True, False):  # a loaded toolkit: no selection takes its tools away
            for toolkit in state.toolkits:
                if (toolkit.name in done) != loaded:
                    continue
                status = "loaded" if loaded else "not loaded"
                for member in toolkit.tools:
                    namespace = state.namespace(member)
                    for tool in namespace.tools if namespace is not None else (member,):
                        reason = f"in toolkit {toolkit.name!r}, {status}"
                        fixed[tool] = ToolDecision(tool, loaded, reason)
        for name in referenced:
            fixed[name] = ToolDecision(name, True, REFERENCED)
        self.fixed = fixed

    def decide(self, tool: ToolDefinition, *, selecting: bool = True) -> ToolDecision:
        name = tool["name"]
        fixed = self.fixed.get(name)
        if fixed is not None:
            return fixed
        selection = self.selection if selecting else None
        extra = self.extra if selecting else None
        if selection is None and extra is None:
            return ToolDecision(name, True, "no selection: every tool is kept")
        if extra is not None and name in extra:
            return ToolDecision(name, True, f"on the extra allow-list ({extra[name]})")
        if selection is None:
            return ToolDecision(name, False, "not on the extra allow-list")
        if selection.names is not None:
            why = self.named.get(name)
            if why is not None:
                return ToolDecision(name, True, f"allow_only: {why}")
            return ToolDecision(name, False, "allow_only: not named")
        key = (name, tool.get("description", ""), tuple(tool.get("tags", ())))
        return _task_decision(selection, key)


@lru_cache(maxsize=8192)
def _task_decision(selection: SelectionView, key: tuple[str, str, tuple[str, ...]]) -> ToolDecision:
    """A task selection's verdict on one tool (`key`: its name, description and tags),
    memoised: an agent loop plans the same tools under the same selection turn after turn."""
    name = key[0]
    terms = tool_terms(*key)
    task = selection.task or ""
    by_task = match_task(task, task_terms(task), terms)
    if not selection.tags:
        if by_task:
            return ToolDecision(name, True, by_task)
        return ToolDecision(name, False, "the task mentions no word of its name, tags or text")
    by_tag = match_tags(selection.tags, terms)
    if selection.mode == "union" and (by_task or by_tag):
        return ToolDecision(name, True, by_task or by_tag or "")
    if selection.mode == "intersection" and by_task and by_tag:
        return ToolDecision(name, True, f"{by_task}, and {by_tag}")
    if selection.mode == "union":
        return ToolDecision(name, False, "neither the task nor the tags match it")
    missing = "no tag asked for" if by_task else "the task does not mention it"
    return ToolDecision(name, False, f"intersection: {missing}")


def _emit(
    state: PlanState,
    tools: Sequence[ToolDefinition],
    decisions: list[ToolDecision],
    referenced: frozenset[str],
) -> list[ToolDefinition]:
    """The definitions for the kept tools, namespaces folded, in registration order."""
    called = [n for n in state.namespaces if n.name in referenced]
    registered = {tool["name"] for tool in tools} if called else set()
    for namespace in called:  # a namespace the window calls stays defined
        present = [t for t in namespace.tools if t in registered]
        if present:
            kept = {d.name for d in decisions if d.kept}
            if not kept.intersection(present):
                reason = f"its namespace {namespace.name!r} is called in the window"
                decisions[:] = [
                    ToolDecision(d.name, True, reason) if d.name in present else d
                    for d in decisions
                ]
    out: list[Any] = []
    members_of: dict[str, list[ToolDefinition]] = {}
    slots: dict[str, int] = {}
    for tool, decision in zip(tools, decisions, strict=True):
        if not decision.kept:
            continue
        name = tool["name"]
        home = state.namespace_of(name)
        if home is None:
            out.append(tool)
            continue
        if home not in members_of:
            members_of[home], slots[home] = [], len(out)
            out.append(None)
        members_of[home].append(tool)
        if name in referenced:  # the window calls it by its own name
            out.append(tool)
    for home, members in members_of.items():
        group = state.namespace(home)
        assert group is not None
        out[slots[home]] = namespace_tool(group, members)
    if state.toolkits:
        out.append(load_toolkit_tool(state.toolkits))
    return out


def plan_tools(
    state: PlanState,
    tools: Sequence[ToolDefinition],
    *,
    referenced: Iterable[str] = (),
    also_allowed: Iterable[str] | None = None,
) -> ToolPlan:
    """The tools a compile defines for `tools` (the registered ones, in order).

    `referenced` are the names the window's tool calls use (never pruned). `also_allowed` is an
    extra allow-list (an active skill's allowed tools, say): its tools are kept in addition to
    the selection's, and with no selection it is the selection.
    """
    called = frozenset(referenced)
    decider = _Decider(state, called, also_allowed)
    decisions = [decider.decide(tool) for tool in tools]
    defined = _emit(state, tools, decisions, called)
    result = PruneResult(tuple(decisions), tuple(tool["name"] for tool in defined))
    full = allowed = None
    if state.use_allowed_tools and result.removed:
        unselected = [decider.decide(tool, selecting=False) for tool in tools]
        everything = _emit(state, tools, unselected, called)
        if [tool["name"] for tool in everything] != list(result.tools):
            full, allowed = tuple(everything), result.tools
    return ToolPlan(tuple(defined), result, full, allowed)


class PlanMemo:
    """The last plan of one chef, reused while its inputs are the very same objects (the
    pruner state and tool tuple are immutable) and the window calls the same tools: a steady
    agent loop plans once, not on every compile."""

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._plan: ToolPlan | None = None

    def plan(
        self,
        state: PlanState,
        tools: Sequence[ToolDefinition],
        referenced: frozenset[str],
        also_allowed: tuple[str, ...] | None = None,
    ) -> ToolPlan:
        """`plan_tools(state, tools, referenced=..., also_allowed=...)`, reused when called
        again with the same objects and names."""
        key = self._key
        if (
            key is not None
            and self._plan is not None
            and key[0] is state
            and key[1] is tools
            and key[2:] == (referenced, also_allowed)
        ):
            return self._plan
        self._plan = plan_tools(state, tools, referenced=referenced, also_allowed=also_allowed)
        self._key = (state, tools, referenced, also_allowed)
        return self._plan
