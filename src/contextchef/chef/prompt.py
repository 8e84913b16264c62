"""`chef.prompt`: the layers around the history — the system prompt, the dynamic state, the
guardrails, the host's announcements — and the memory block's refresh.

Each setter validates first and then replaces one field of the chef's `StateCell`, so a bad call
leaves the chef as it was and the order of setter calls never matters (all apply at compile).
The facade's everyday setters (`set_system_prompt`, `set_dynamic_state`, `with_guardrails`)
delegate here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any, Self

from contextchef._jsonvalue import copy_json
from contextchef._memo import MessageIntake
from contextchef.chef.cell import StateCell
from contextchef.chef.options import as_messages
from contextchef.compiler.pipeline import CompileRuntime
from contextchef.errors import ConfigError
from contextchef.messages import Message
from contextchef.placement.announcements import Announcement, make_announcement
from contextchef.placement.guardrail import GuardrailPlacement, Guardrails, make_guardrails
from contextchef.placement.state import DynamicState, render_dynamic_state

__all__ = ["Prompt"]


class Prompt:
    """The prompt's layers other than the history (`chef.prompt`).

    Args:
        cell: the chef's compile state.
        runtime: the compile memo, whose memory generation `refresh_memory` bumps.
    """

    def __init__(self, cell: StateCell, runtime: CompileRuntime) -> None:
        self._cell = cell
        self._runtime = runtime
        self._system_intake = MessageIntake()

    def __repr__(self) -> str:
        state = self._cell.state
        return (
            f"<Prompt system={len(state.system_prompt)} announcements="
            f"{[a.id for a in state.announcements]}>"
        )

    # -- system prompt, dynamic state, guardrails --------------------------------------------

    def set_system_prompt(self, messages: str | Iterable[object]) -> Self:
        """The static top layer: system messages (or one string), never changed by compile."""
        taken = self._system_intake.take(as_messages(messages, "system prompt"))
        for index, message in enumerate(taken):
            if message["role"] != "system":
                raise ConfigError(
                    f"system prompt message {index} has role {message['role']!r}; "
                    "only system messages belong in the system prompt"
                )
        self._cell.state = replace(self._cell.state, system_prompt=tuple(taken))
        return self

    @property
    def system_prompt(self) -> list[Message]:
        """A copy of the system prompt."""
        return [copy_json(m) for m in self._cell.state.system_prompt]

    def set_dynamic_state(
        self, model_or_schema: Any, data: Any = None, *, placement: str = "last_user"
    ) -> Self:
        """See `ContextChef.set_dynamic_state`."""
        state = render_dynamic_state(model_or_schema, data, placement=placement)
        self._cell.state = replace(self._cell.state, state=state)
        return self

    def clear_dynamic_state(self) -> Self:
        """Drop the dynamic state: the next compile has none."""
        self._cell.state = replace(self._cell.state, state=None)
        return self

    @property
    def dynamic_state(self) -> DynamicState | None:
        """The rendered dynamic state, or None."""
        return self._cell.state.state

    def with_guardrails(
        self,
        options: Mapping[str, Any] | None = None,
        /,
        *,
        enforce_xml: Mapping[str, Any] | str | None = None,
        prefill: str | None = None,
        placement: GuardrailPlacement | None = None,
    ) -> Self:
        """See `ContextChef.with_guardrails`."""
        if options is not None:
            if enforce_xml is not None or prefill is not None or placement is not None:
                raise ConfigError("pass guardrails as a dict or as keywords, not both")
            unknown = set(options) - {"enforce_xml", "prefill", "placement"}
            if unknown:
                raise ConfigError(f"unknown guardrail option(s) {sorted(unknown)}")
            enforce_xml, prefill = options.get("enforce_xml"), options.get("prefill")
            placement = options.get("placement")
        guardrails: Guardrails | None = make_guardrails(enforce_xml, prefill, placement)
        if guardrails is not None and guardrails.instruction() is None and not guardrails.prefill:
            guardrails = None
        self._cell.state = replace(self._cell.state, guardrails=guardrails)
        return self

    # -- announcements -----------------------------------------------------------------------

    def announce(self, id: str, text: str, channel: str = "auto") -> Self:
        """Show `text` to the model on every compile until `retract_announcement(id)`.

        `channel="auto"` (the default) and `"tail"` put it at the end of the prompt, where it
        never changes the cached prefix; `"system"` in a system message after the system prompt
        and memory. Announcing an `id` again replaces its text and channel in place.
        """
        made = make_announcement(id, text, channel)
        current = self._cell.state.announcements
        if any(a.id == made.id for a in current):
            updated = tuple(made if a.id == made.id else a for a in current)
        else:
            updated = (*current, made)
        self._cell.state = replace(self._cell.state, announcements=updated)
        return self

    def retract_announcement(self, id: str) -> bool:
        """Stop showing announcement `id`; False when there was none."""
        current = self._cell.state.announcements
        kept = tuple(a for a in current if a.id != id)
        self._cell.state = replace(self._cell.state, announcements=kept)
        return len(kept) != len(current)

    @property
    def announcements(self) -> list[Announcement]:
        """The standing announcements, in the order they were made."""
        return list(self._cell.state.announcements)

    # -- memory block ------------------------------------------------------------------------

    def refresh_memory(self) -> Self:
        """Render the memory block into the prefix again at the next compile of every target.

        Memory changes reach the model every compile either way: until the prefix breaks (an
        overflow, a new window, this call), the block in the instructions stays as it was
        rendered, so a memory write does not cost the cached prefix, and what changed since is
        listed at the tail. Call it when those changes have grown long.
        """
        self._runtime.memory_generation += 1
        return self
