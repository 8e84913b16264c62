"""`compile()` written once, as a generator of I/O requests, with a sync and an async driver.

The flow never performs I/O itself: wherever it needs the outside world (event handlers today;
the summarizer and the store in the overflow phase) it *yields* an effect and receives the
result. `run_sync` performs effects with plain calls, `run_async` awaits them, so
`ContextChef.compile` and `AsyncContextChef.compile` share every line of behaviour.

Phases, in order: start (event, abort check) → repair the history → assemble the sandwich →
adapt to the target → count tokens → done (event).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from contextchef.adapters.base import AdapterInput, AdapterRegistry, ToolDefinition
from contextchef.errors import CompileAbortedError
from contextchef.events import CompileDone, CompileStart
from contextchef.messages import ConversionCache, HistoryFix, Message, ensure_valid_history
from contextchef.placement.assembler import assemble
from contextchef.placement.guardrail import Guardrails
from contextchef.placement.state import DynamicState
from contextchef.tokens import MessageCounter, count_tools

__all__ = [
    "CompileMeta",
    "CompileRuntime",
    "CompileState",
    "Emit",
    "LayerTokens",
    "Payload",
    "Signal",
    "compile_flow",
    "run_async",
    "run_sync",
]

logger = logging.getLogger("contextchef.pipeline")


class Signal(Protocol):
    """Anything with `is_set()`: a `threading.Event`, an `asyncio.Event`, or your own."""

    def is_set(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class LayerTokens:
    """Estimated tokens per sandwich layer (with the chef's tokenizer)."""

    system: int
    history: int
    tail: int
    tools: int

    @property
    def total(self) -> int:
        return self.system + self.history + self.tail + self.tools


@dataclass(frozen=True, slots=True)
class CompileMeta:
    """What a compile did, beside the payload: target, token figures, repairs made."""

    target: str
    tokens: LayerTokens
    repairs: tuple[HistoryFix, ...] = ()
    tail_index: int | None = None


class Payload(dict[str, Any]):
    """Exactly the keyword arguments of the provider SDK call, plus `.meta`.

    `client.chat.completions.create(model=..., **payload)`. The payload shares unchanged message
    dicts with the chef's conversion cache between compiles: copy it before mutating it in place.
    """

    meta: CompileMeta

    def __init__(self, data: dict[str, Any], meta: CompileMeta) -> None:
        super().__init__(data)
        self.meta = meta


@dataclass(frozen=True, slots=True)
class CompileState:
    """The chef's layers, as read at the start of one compile."""

    system_prompt: tuple[Message, ...]
    history: tuple[Message, ...]
    state: DynamicState | None
    guardrails: Guardrails | None
    tools: tuple[ToolDefinition, ...]


@dataclass
class CompileRuntime:
    """Per-chef memo shared by compiles: a conversion cache per target, the token counter."""

    registry: AdapterRegistry
    counter: MessageCounter = field(default_factory=MessageCounter)
    caches: dict[str, ConversionCache] = field(default_factory=dict)

    def cache_for(self, target: str) -> ConversionCache:
        cache = self.caches.get(target)
        if cache is None:
            cache = self.caches[target] = ConversionCache()
        return cache


@dataclass(frozen=True, slots=True)
class Emit:
    """Effect: call each handler with `event`, isolating their failures."""

    handlers: tuple[Callable[[Any], Any], ...]
    event: object


Effect = Emit
Flow = Generator[Effect, Any, Payload]


def _check(signal: Signal | None) -> None:
    if signal is not None and signal.is_set():
        raise CompileAbortedError("compile() was aborted by its signal")


def compile_flow(
    state: CompileState,
    runtime: CompileRuntime,
    target: str,
    *,
    signal: Signal | None = None,
    on_start: Sequence[Callable[[Any], Any]] = (),
    on_done: Sequence[Callable[[Any], Any]] = (),
) -> Flow:
    """The compile pipeline; drive it with `run_sync` or `run_async`."""
    adapter = runtime.registry.get(target)
    if on_start:
        yield Emit(tuple(on_start), CompileStart(target, state.system_prompt, state.history))
    _check(signal)

    history, fixes = ensure_valid_history(state.history)
    _check(signal)

    sandwich = assemble(
        state.system_prompt, history, state=state.state, guardrails=state.guardrails
    )
    _check(signal)

    cache = runtime.cache_for(target)
    data = adapter.compile(
        AdapterInput(
            system=sandwich.system,
            messages=sandwich.messages,
            tools=state.tools,
            prefill=sandwich.prefill,
            cache=cache,
        )
    )
    cache.sweep()

    counter = runtime.counter
    tail_message = (
        sandwich.messages[sandwich.tail_index] if sandwich.tail_index is not None else None
    )
    history_tokens = counter.count_all(
        [m for m in sandwich.messages if m is not tail_message]
        if tail_message is not None
        else sandwich.messages
    )
    tail_tokens = counter.count(tail_message) if tail_message is not None else 0
    counter.sweep()
    tokens = LayerTokens(
        system=counter.count_all(sandwich.system),
        history=history_tokens,
        tail=tail_tokens,
        tools=count_tools(state.tools, counter.tokenizer),
    )
    payload = Payload(data, CompileMeta(target, tokens, tuple(fixes), sandwich.tail_index))
    if on_done:
        yield Emit(tuple(on_done), CompileDone(target, payload))
    return payload


def _report(handler: Callable[[Any], Any], exc: BaseException) -> None:
    logger.warning("event handler %r raised %r; the compile goes on", handler, exc)


def run_sync(flow: Flow) -> Payload:
    """Drive `flow` with plain calls. A coroutine handler is refused (use AsyncContextChef)."""
    result: Any = None
    while True:
        try:
            effect = flow.send(result)
        except StopIteration as stop:
            payload: Payload = stop.value
            return payload
        result = None
        for handler in effect.handlers:
            try:
                outcome = handler(effect.event)
                if inspect.isawaitable(outcome):
                    if inspect.iscoroutine(outcome):
                        outcome.close()
                    raise TypeError("a coroutine handler needs AsyncContextChef")
            except Exception as exc:
                _report(handler, exc)


async def run_async(flow: Flow) -> Payload:
    """Drive `flow`, awaiting whatever effects return awaitables."""
    result: Any = None
    while True:
        try:
            effect = flow.send(result)
        except StopIteration as stop:
            payload: Payload = stop.value
            return payload
        result = None
        for handler in effect.handlers:
            try:
                outcome = handler(effect.event)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as exc:
                _report(handler, exc)
