"""`PayloadBuilder`: the payload of one compile built (and measured) for a candidate history.

Overflow asks it to measure candidate histories; the final assembly asks it for the payload of
the history that landed, and gets the last build back when nothing changed. It places the host's
layers around the memory layers — the active skill, the announcements, the toolkit directory —
marks the stable prefix for automatic breakpoints, and adapts the result to the target. What
the target's wire format supports it learns from the adapter's profile (`AdapterProfile`), never
from the adapter's class or target name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contextchef._sequences import Lineage
from contextchef.adapters.base import AdapterInput, ToolDefinition, profile_of
from contextchef.cache.planning import (
    MemoryLayers,
    TargetCache,
    instruction_message,
    with_provider_options,
)
from contextchef.messages import Message
from contextchef.placement.announcements import announcement_blocks
from contextchef.placement.assembler import Sandwich, assemble
from contextchef.placement.breakpoints import mark_stable_prefix
from contextchef.selection.pruner import PrunerState
from contextchef.selection.server_compaction import ServerCompaction
from contextchef.selection.skill_tools import skill_allowed_names
from contextchef.selection.tool_plan import referenced_tools
from contextchef.selection.toolkits import directory_text

if TYPE_CHECKING:
    from contextchef.compiler.state import CompileRuntime, CompileState

__all__ = ["PayloadBuilder"]


class PayloadBuilder:
    """Builds (and measures) the payload of one compile for a candidate history.

    The last build is remembered: when the final assembly asks for the history and notices the
    overflow phase already measured, that payload is reused rather than adapted again.
    """

    def __init__(
        self,
        state: CompileState,
        runtime: CompileRuntime,
        adapter: Any,
        target: str,
        layers: MemoryLayers,
        original: tuple[Message, ...],
        remembered: TargetCache,
        lineage: Lineage | None = None,
    ) -> None:
        self.state, self.runtime, self.adapter = state, runtime, adapter
        self.profile = profile_of(adapter)
        self.layers, self.original, self.remembered = layers, original, remembered
        self.lineage = lineage if lineage is not None and lineage.sequence is original else None
        self.cache = runtime.cache_for(target)
        self.counter = runtime.payload_counter(target)
        self.tools = (*state.tools, *runtime.library_tools)
        skill = state.skill
        self.skill_allowed = (
            skill_allowed_names(state.tools, skill.skill.allowed_tools)
            if skill is not None and skill.skill.allowed_tools is not None
            else None
        )
        self.shaped = state.pruner.shapes_tools or self.skill_allowed is not None
        self.server: ServerCompaction | None = None
        self.auto = runtime.cache.mode == "auto" and self.profile.cache_breakpoints > 0
        self.previous_end = remembered.stable_end if remembered.window == runtime.window() else None
        self._ends: dict[int, int | None] = {}  # stable end per built history (one compile)
        self._last: tuple[tuple[Message, ...], tuple[str, ...], Sandwich, dict[str, Any]] | None
        self._last = None

    def view(self, history: tuple[Message, ...]) -> Any:
        """The memory view the payload for `history` shows (None without memory)."""
        return self.layers.kept[2] if history is self.original else self.layers.folded[2]

    def stable_end(self, history: tuple[Message, ...]) -> int | None:
        """Where the stable prefix of the payload for `history` ended (automatic marks)."""
        return self._ends.get(id(history))

    def ask_server(self, server: ServerCompaction) -> None:
        """Ask the target to compact server-side: later builds carry the request."""
        self.server, self._last = server, None

    def __call__(
        self, history: tuple[Message, ...], notices: tuple[str, ...] = ()
    ) -> tuple[Sandwich, dict[str, Any]]:
        last = self._last
        if last is not None and last[0] is history and last[1] == notices:
            return last[2], last[3]
        top, memory_blocks, _ = self.layers.kept if history is self.original else self.layers.folded
        directory = _toolkit_directory(self.state.pruner)
        system, blocks = _host_layers(
            self.state,
            self.runtime,
            (*self.state.system_prompt, *directory, *top),
            list(memory_blocks),
        )
        sandwich = assemble(
            system,
            history,
            state=self.state.state,
            guardrails=self.state.guardrails,
            context_blocks=blocks,
            notices=list(notices),
        )
        if self.auto:
            previous = self.previous_end if history is self.original else None
            sandwich, end = mark_stable_prefix(sandwich, previous_end=previous)
            self._ends[id(history)] = end
        data = self.adapt(sandwich, self._messages_lineage(history, sandwich))
        self._last = (history, notices, sandwich, data)
        return sandwich, data

    def _messages_lineage(self, history: tuple[Message, ...], sandwich: Sandwich) -> Lineage | None:
        """How `sandwich.messages` continues the messages of this target's previous build
        (kept in its conversion cache's state), when `history` is the compile's own and the
        history's lineage goes back to that build's: every message before the tail's (or
        before the messages placed after the history) is the history's own, at its place."""
        state = self.cache.state
        before: _Build | None = state.get(_Build)
        end = sandwich.tail_index if sandwich.tail_index is not None else len(history)
        lineage = self.lineage
        state[_Build] = _Build(history, sandwich.messages, end)
        if before is None or lineage is None or history is not lineage.sequence:
            return None
        if before.history is not lineage.base:
            return None
        shared = min(lineage.shared, before.end, end)
        return Lineage(before.messages, sandwich.messages, shared)

    def adapt(self, sandwich: Sandwich, lineage: Lineage | None = None) -> dict[str, Any]:
        tools, allowed = self.tools_for(sandwich.messages) if self.shaped else (self.tools, None)
        data: dict[str, Any] = self.adapter.compile(
            AdapterInput(
                system=sandwich.system,
                messages=sandwich.messages,
                tools=tools,
                prefill=sandwich.prefill,
                cache=self.cache,
                server_compaction=self.server,
                allowed_tools=allowed,
                max_breakpoints=0 if self.runtime.cache.mode == "off" else None,
                auto_marks=sandwich.auto_marks,
                lineage=lineage,
            )
        )
        with_provider_options(data, self.profile, self.runtime.cache)
        return data

    def tools_for(
        self, messages: Sequence[Message]
    ) -> tuple[tuple[ToolDefinition, ...], tuple[str, ...] | None]:
        """The tools the payload defines (the pruner's plan for the tools `messages` call,
        then the library's own), and the names the model may call where the target restricts
        calls by name instead of dropping definitions (`use_allowed_tools` on an adapter whose
        profile has `allowed_tools`)."""
        referenced = referenced_tools(messages)
        plan = self.runtime.tool_plans.plan(
            self.state.pruner, self.state.tools, referenced, self.skill_allowed
        )
        library = self.runtime.library_tools
        if plan.full is not None and self.profile.allowed_tools:
            assert plan.allowed is not None
            names = (*plan.allowed, *(tool["name"] for tool in library))
            return (*plan.full, *library), names
        return (*plan.tools, *library), None

    def measure(self, history: tuple[Message, ...]) -> int:
        """Every token of the payload the target would receive with `history`."""
        _, data = self(history)
        return self.counter.count(data).total

    def done(self) -> None:
        self.cache.sweep()


@dataclass(frozen=True, slots=True)
class _Build:
    """A build's history, the messages it gave the adapter, and where they stop being the
    history's own (the tail's message, else the history's end)."""

    history: tuple[Message, ...]
    messages: Sequence[Message]
    end: int


def _host_layers(
    state: CompileState,
    runtime: CompileRuntime,
    system: tuple[Message, ...],
    context_blocks: list[str],
) -> tuple[tuple[Message, ...], list[str]]:
    """The system layer and tail blocks with the active skill and the announcements placed.

    The skill goes right after the system prompt (`skill_placement="after_system"`) or first in
    the tail (`"tail"`); system-channel announcements close the system layer, the others follow
    the tail's context blocks (see `placement.announcements`).
    """
    skill = state.skill
    head = len(state.system_prompt)
    if skill is not None and runtime.skill_placement == "after_system":
        system = (*system[:head], skill.message, *system[head:])
    elif skill is not None:
        context_blocks = [skill.block, *context_blocks]
    on_system, on_tail = announcement_blocks(state.announcements)
    if on_system is not None:
        system = (*system, instruction_message(on_system))
    if on_tail is not None:
        context_blocks = [*context_blocks, on_tail]
    return system, context_blocks


def _toolkit_directory(pruner: PrunerState) -> tuple[Message, ...]:
    """The system message listing the toolkits (after the system prompt), when there are any."""
    if not pruner.toolkits:
        return ()
    return (instruction_message(directory_text(pruner.toolkits, pruner.loaded)),)
