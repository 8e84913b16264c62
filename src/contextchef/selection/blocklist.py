"""The runtime blocklist: tools the model may see but not run.

Blocking never changes the compiled tools (so the provider's prompt cache survives); it is
enforced where the host runs a call: `check_call` says whether a call may run and, if not, the
tool result to send back instead. A namespace call is checked against the action it names.
"""

from __future__ import annotations

from dataclasses import dataclass

from contextchef.errors import ToolCallError
from contextchef.prompts.tool_selection import tool_blocked
from contextchef.selection.namespaces import parse_call_arguments
from contextchef.selection.pruner import PrunerState

__all__ = ["ToolCallCheck", "blocked_call", "check_call"]


@dataclass(frozen=True, slots=True)
class ToolCallCheck:
    """Whether a tool call may run; when it may not, `reason` is the tool result to send back
    to the model in its place."""

    allowed: bool
    reason: str | None = None

    def __bool__(self) -> bool:
        return self.allowed


ALLOWED = ToolCallCheck(True)


def blocked_call(
    state: PrunerState, name: str, arguments: object = None
) -> tuple[str, str | None] | None:
    """The blocked tool this call would run and the namespace it was called through (None for
    a direct call), or None when the blocklist allows the call."""
    blocked = state.blocked
    if not blocked:
        return None
    if name in blocked:
        return name, None
    namespace = state.namespace(name)
    if namespace is not None:
        try:
            action = parse_call_arguments(arguments, tool=name).get("action")
        except ToolCallError:
            return None  # nothing runs from a call that cannot be read; resolving says why
        if isinstance(action, str) and action in blocked and action in namespace.tools:
            return action, name
    return None


def check_call(state: PrunerState, name: str, arguments: object = None) -> ToolCallCheck:
    """Check one call against the blocklist (a namespace call by its action as well)."""
    found = blocked_call(state, name, arguments)
    return ALLOWED if found is None else ToolCallCheck(False, tool_blocked(found[0]))
