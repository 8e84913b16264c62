"""`Snapshot`: a deep copy of a chef's state, which `restore()` returns the chef to."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contextchef._jsonvalue import copy_json
from contextchef.pipeline import CompileState

__all__ = ["Snapshot", "copy_state"]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A deep copy of a chef's state; restoring it makes the next compile identical."""

    state: CompileState
    label: str | None = None
    runner: Mapping[str, Any] | None = None
    memory: Mapping[str, Any] | None = None


def copy_state(state: CompileState) -> CompileState:
    return CompileState(
        system_prompt=tuple(copy_json(m) for m in state.system_prompt),
        history=tuple(copy_json(m) for m in state.history),
        repairs=state.repairs,
        state=state.state,  # frozen, and its data is plain JSON rendered once
        guardrails=state.guardrails,
        tools=tuple(copy_json(t) for t in state.tools),
        pruner=state.pruner,  # immutable plain data
    )
