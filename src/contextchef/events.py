"""Typed events the chef emits and the registry of their handlers; the pipeline slots.

Handlers run in registration order, one after the other; a handler that raises is logged and
never fails the operation that emitted the event. Registering the same handler twice for one
event has no effect. On `AsyncContextChef` a handler may be a coroutine function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from contextchef.errors import ConfigError
from contextchef.messages import Message

__all__ = [
    "EVENT_NAMES",
    "SLOT_NAMES",
    "AssembleContext",
    "CacheFinding",
    "CompileStart",
    "Compressed",
    "EventName",
    "Handlers",
    "MemoryChanged",
    "MemoryExpired",
    "OffloadCreated",
    "PipelineInvariant",
    "SlotName",
    "Slots",
    "ToolBlocked",
    "WindowExceeded",
]

EventName = Literal[
    "compile:start",
    "compile:done",
    "compress:start",
    "compress:end",
    "window:exceeded",
    "cache:finding",
    "pipeline:invariant",
    "offload:created",
    "compress",
    "memory:changed",
    "memory:expired",
    "pruner:tool-blocked",
]
EVENT_NAMES: tuple[str, ...] = get_args(EventName)

Handler = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class CompileStart:
    """A compile began for `target` over this system prompt and history."""

    target: str
    system_prompt: tuple[Message, ...]
    history: tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class WindowExceeded:
    """A compiled payload holds more tokens than the window: what cannot leave it (the system
    prompt, tools, pinned turns, the last turn, or what a slot added) is larger than the window.
    Overflow drops everything else first, so this fires only when nothing more could go."""

    target: str
    tokens: int
    limit: float


FindingKind = Literal[
    "breakpoint_after_volatile", "changed_prefix", "timestamp_in_prefix", "state_in_system"
]


@dataclass(frozen=True, slots=True)
class CacheFinding:
    """One problem `cache_audit=True` found in the layout of a compile, for a human to fix.

    `kind` is what: a breakpoint whose cached prefix holds content that changes
    (`breakpoint_after_volatile`), a byte of the expected stable prefix that changed since the
    previous compile (`changed_prefix`), a timestamp-looking string in the tools or system part
    (`timestamp_in_prefix`), or the dynamic state placed in the system part (`state_in_system`).
    `section` and `index` locate the part (see `contextchef.cache.economics`); `message` says it
    in a sentence. A finding never fails a compile.
    """

    target: str
    kind: FindingKind
    message: str
    section: str | None = None
    index: int | None = None


@dataclass(frozen=True, slots=True)
class PipelineInvariant:
    """A violation `pipeline_checks=True` found after assembly: `check` is which invariant
    (`pinned`, `tool_pairs` or `prefix_bytes`), `index` the message it concerns (in the history,
    or in the assembled messages for `prefix_bytes`). It never fails a compile."""

    target: str
    check: Literal["pinned", "tool_pairs", "prefix_bytes"]
    message: str
    index: int | None = None


@dataclass(frozen=True, slots=True)
class OffloadCreated:
    """Content went to the store whole and a marker (a preview naming its URI) stands in for it.

    `source` is `"tool_result"` (a tool result over the `offload=` threshold, at compile: `name` is
    the tool, `tool_call_id` the call it answered) or `"manual"` (`chef.store.offload`: `name`
    is the host's). `uri` (`namespace`, `path`) is where the content is; `chars` its length.
    The store is content-addressed: offloading the same content again stores nothing new.
    """

    uri: str
    namespace: str
    path: str
    chars: int
    source: Literal["tool_result", "manual"]
    name: str | None = None
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class Compressed:
    """Overflow compacted the history for `target`: `messages` messages left the window
    (`strategy` replaced them, with a summary when `summarized`), archived at `archive_uri`
    (None when the chef archives nothing or archiving failed); `window_id` is the new window."""

    target: str
    strategy: str
    messages: int
    archive_uri: str | None
    summarized: bool
    forced: bool
    window_id: str


MemoryActor = Literal["model", "host"]


@dataclass(frozen=True, slots=True)
class MemoryChanged:
    """A memory entry was written (`kind="set"`: `value` is new, `old_value` what it replaced
    or None) or deleted (`kind="delete"`: `value` is None), by the model through its tools
    (`by="model"`) or by your code through `chef.memory` (`by="host"`)."""

    key: str
    kind: Literal["set", "delete"]
    value: str | None
    old_value: str | None
    by: MemoryActor


@dataclass(frozen=True, slots=True)
class MemoryExpired:
    """The memory entry `key` reached its TTL and was removed; `value` is what it held."""

    key: str
    value: str


@dataclass(frozen=True, slots=True)
class ToolBlocked:
    """`tools.check_tool_call` refused a call of `tool`, on the runtime blocklist; `reason` is
    the tool result to send back in its place. `namespace` is the namespace tool the model
    called, when `tool` is one of its actions."""

    tool: str
    reason: str
    namespace: str | None = None


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


SlotName = Literal[
    "before_overflow",
    "after_overflow",
    "before_assemble",
    "after_assemble",
    "before_adapt",
    "after_adapt",
]
SLOT_NAMES: tuple[str, ...] = get_args(SlotName)


class AssembleContext:
    """What a `before_assemble` handler sees, and `inject(text)` to add a block to the tail."""

    __slots__ = ("blocks", "dynamic_state", "history", "system_prompt")

    def __init__(
        self,
        system_prompt: tuple[Message, ...],
        history: tuple[Message, ...],
        dynamic_state: Any,
    ) -> None:
        self.system_prompt = system_prompt
        self.history = history
        self.dynamic_state = dynamic_state
        self.blocks: list[str] = []

    def inject(self, text: str) -> None:
        """Add `text` to this compile's tail, after the dynamic state (blank text is ignored)."""
        if not isinstance(text, str):
            raise ConfigError("inject() takes a string")
        if text.strip():
            self.blocks.append(text)


class Slots:
    """Pipeline slots: handlers that take part in a compile, in registration order.

    Unlike event handlers they are not isolated: a slot handler that raises fails the compile,
    because it is part of how the payload is built. A handler registered twice runs twice;
    `remove` takes out its first registration.

    - `before_overflow(history)`: return `False` to skip overflow for this compile;
    - `after_overflow(history, report)`: observe what overflow did;
    - `before_assemble(ctx)`: `ctx.inject(text)` adds a block to the tail;
    - `after_assemble(messages)`: return a new message list to replace the assembled one;
    - `before_adapt(messages)`: observe the messages the adapter is given;
    - `after_adapt(payload)`: return a dict to replace the payload (or change it in place).
    """

    __slots__ = ("_handlers",)

    def __init__(self) -> None:
        self._handlers: dict[str, list[Handler]] = {name: [] for name in SLOT_NAMES}

    def add(self, slot: str, handler: Handler) -> None:
        if slot not in self._handlers:
            raise ConfigError(f"unknown pipeline slot {slot!r}; slots: {', '.join(SLOT_NAMES)}")
        if not callable(handler):
            raise ConfigError("a slot handler must be callable")
        self._handlers[slot].append(handler)

    def remove(self, slot: str, handler: Handler) -> bool:
        handlers = self._handlers.get(slot, [])
        if handler in handlers:
            handlers.remove(handler)
            return True
        return False

    def for_slot(self, slot: str) -> tuple[Handler, ...]:
        return tuple(self._handlers[slot])
