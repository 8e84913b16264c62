"""`StateCell`: the one compile state of a chef, handed to every part that changes it.

The chef's inputs to a compile are one immutable `CompileState` (system prompt, history,
dynamic state, guardrails, tools, pruner, skill, announcements) and a pending `new_context`
request. Each part (tools, skills, prompt, history) is given the cell explicitly and replaces
the fields it owns; no part reaches into another. A setter validates before it replaces
anything, so a bad call leaves the state as it was, and a snapshot copies one value.
"""

from __future__ import annotations

from contextchef.compiler.pipeline import CompileState
from contextchef.selection.pruner import PrunerState

__all__ = ["StateCell"]


class StateCell:
    """The current `CompileState` and whether the next compile must run the overflow strategy
    (`request_new_context`, the model's `new_context` call, a restored snapshot)."""

    __slots__ = ("pending_new_context", "state")

    def __init__(self, pruner: PrunerState) -> None:
        self.state = CompileState(
            system_prompt=(),
            history=(),
            repairs=(),
            state=None,
            guardrails=None,
            tools=(),
            pruner=pruner,
        )
        self.pending_new_context = False

    def request_new_context(self) -> None:
        """Make the next compile run the overflow strategy (the dispatcher's `new_context`)."""
        self.pending_new_context = True

    def take_new_context(self) -> bool:
        """Whether a new context was requested, clearing the request (once per compile)."""
        pending, self.pending_new_context = self.pending_new_context, False
        return pending
