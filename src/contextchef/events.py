"""Typed events the chef emits, and the registry of their handlers.

Handlers run in registration order, one after the other; a handler that raises is logged and
never fails the operation that emitted the event. Registering the same handler twice for one
event has no effect. On `AsyncContextChef` a handler may be a coroutine function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from contextchef.errors import ConfigError
from contextchef.messages import Message

if TYPE_CHECKING:
    from contextchef.pipeline import Payload

__all__ = ["EVENT_NAMES", "CompileDone", "CompileStart", "EventName", "Handlers"]

EventName = Literal["compile:start", "compile:done", "compress:start", "compress:end"]
EVENT_NAMES: tuple[str, ...] = get_args(EventName)

Handler = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class CompileStart:
    """A compile began for `target` over this system prompt and history."""

    target: str
    system_prompt: tuple[Message, ...]
    history: tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class CompileDone:
    """A compile finished; `payload` is what `compile()` returns."""

    target: str
    payload: Payload


class Handlers:
    """Event name → handlers, in registration order."""

    __slots__ = ("_handlers",)

    def __init__(self) -> None:
        self._handlers: dict[str, list[Handler]] = {name: [] for name in EVENT_NAMES}

    def add(self, event: str, handler: Handler) -> None:
        if event not in self._handlers:
            raise ConfigError(f"unknown event {event!r}; events: {', '.join(EVENT_NAMES)}")
        if not callable(handler):
            raise ConfigError("an event handler must be callable")
        if handler not in self._handlers[event]:
            self._handlers[event].append(handler)

    def remove(self, event: str, handler: Handler) -> bool:
        handlers = self._handlers.get(event, [])
        if handler in handlers:
            handlers.remove(handler)
            return True
        return False

    def for_event(self, event: str) -> tuple[Handler, ...]:
        return tuple(self._handlers[event])
