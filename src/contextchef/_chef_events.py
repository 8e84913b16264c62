"""Events, slots and observers of a chef: a mixin of `_ChefBase`.

Event handlers watch a compile and never fail it; slot handlers take part in building the
payload, so their errors do; an observer (`contextchef.telemetry`) wraps the chef's flows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, Self

from contextchef._effects import Flow
from contextchef.compiler.pipeline import CompileRuntime, CompileState, Payload
from contextchef.events import Handlers, Slots

__all__ = ["EventsAndSlots", "FlowObserver"]


class FlowObserver(Protocol):
    """Watches a chef's flows (`contextchef.telemetry`): each method gets a flow and returns the
    flow to drive instead — the same one when it has nothing to watch. Sync and async chefs
    share it, since both drive the same flows."""

    def compile(
        self, flow: Flow[Payload], target: str, state: CompileState, runtime: CompileRuntime
    ) -> Flow[Payload]: ...

    def tool(self, flow: Flow[str], name: str, arguments: object) -> Flow[str]: ...


class EventsAndSlots:
    """`on`/`off` for events, `use`/`unuse` for pipeline slots."""

    _handlers: Handlers
    _slots: Slots

    def on(self, event: str, handler: Callable[[Any], Any]) -> Callable[[], bool]:
        """Call `handler(event)` on `event`; returns a function that unsubscribes it."""
        self._handlers.add(event, handler)
        return lambda: self.off(event, handler)

    def off(self, event: str, handler: Callable[[Any], Any]) -> bool:
        return self._handlers.remove(event, handler)

    def use(self, slot: str, handler: Callable[..., Any]) -> Self:
        """Take part in every compile at `slot` (see `contextchef.events.Slots`): unlike an
        event handler, a slot handler that raises fails the compile."""
        self._slots.add(slot, handler)
        return self

    def unuse(self, slot: str, handler: Callable[..., Any]) -> bool:
        """Remove the first registration of `handler` at `slot`."""
        return self._slots.remove(slot, handler)
