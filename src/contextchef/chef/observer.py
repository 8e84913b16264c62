"""`FlowObserver`: what `contextchef.telemetry` puts on a chef to watch its flows."""

from __future__ import annotations

from typing import Protocol

from contextchef._effects import Flow
from contextchef.compiler.pipeline import CompileRuntime, CompileState, Payload

__all__ = ["FlowObserver"]


class FlowObserver(Protocol):
    """Watches a chef's flows (`contextchef.telemetry`): each method gets a flow and returns the
    flow to drive instead — the same one when it has nothing to watch. Sync and async chefs
    share it, since both drive the same flows."""

    def compile(
        self, flow: Flow[Payload], target: str, state: CompileState, runtime: CompileRuntime
    ) -> Flow[Payload]: ...

    def tool(self, flow: Flow[str], name: str, arguments: object) -> Flow[str]: ...
