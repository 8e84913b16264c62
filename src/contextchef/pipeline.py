"""`compile()` written once, as a generator of I/O requests, with a sync and an async driver.

The flow never performs I/O itself: wherever it needs the outside world (event handlers today;
the summarizer and the store in the overflow phase) it *yields* an effect and receives the
result. `run_sync` performs effects with plain calls, `run_async` awaits them, so
`ContextChef.compile` and `AsyncContextChef.compile` share every line of behaviour.

Phases, in order: start (event, abort check) → assemble the sandwich → adapt to the target →
done (event). The history was already validated and repaired when it was set. Token figures in
`payload.meta.tokens` are counted on first access (through the per-message memo), so a compile
whose figures nobody reads does not pay for counting.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from contextchef import prompts
from contextchef.adapters.base import AdapterInput, AdapterRegistry, ToolDefinition
from contextchef.effects import Dual, Emit, drive_async, drive_sync
from contextchef.effects import Flow as EffectFlow
from contextchef.errors import CompileAbortedError
from contextchef.events import CompileDone, CompileStart, Handlers
from contextchef.memo import ConversionCache
from contextchef.messages import HistoryFix, Message
from contextchef.placement.assembler import Sandwich, assemble
from contextchef.placement.guardrail import Guardrails
from contextchef.placement.state import DynamicState
from contextchef.prompts import ToolsMode
from contextchef.retrieval.tool_results import ToolResultMemo, TransformHook, prepare_tool_results
from contextchef.selection.janitor import Janitor, OverflowReport
from contextchef.store.aio import AsyncStore
from contextchef.store.memory_entry import MemoryArtifacts
from contextchef.store.memory_module import Memory
from contextchef.store.offloader import OffloadConfig
from contextchef.store.store import Store
from contextchef.tokens import MessageCounter, count_tools

__all__ = [
    "CompileMeta",
    "CompileRuntime",
    "CompileState",
    "LayerTokens",
    "Payload",
    "Signal",
    "compile_flow",
    "count_layers",
    "run_async",
    "run_sync",
]

logger = logging.getLogger("contextchef.pipeline")

T = TypeVar("T")


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


class CompileMeta:
    """What a compile did, beside the payload: target, token figures, repairs made.

    `repairs` lists what `ensure_valid_history` changed in the history the chef holds;
    `tail_index` is where the tail landed among the sandwich's messages; `memory_keys` and
    `expired_memory_keys` name the memory entries shown and those that expired; `overflow`
    reports the budget and what overflow did (with a janitor configured); `tokens` is counted
    with the chef's tokenizer the first time it is read.
    """

    __slots__ = (
        "_count",
        "_tokens",
        "expired_memory_keys",
        "memory_keys",
        "overflow",
        "repairs",
        "tail_index",
        "target",
    )

    def __init__(
        self,
        target: str,
        count: Callable[[], LayerTokens],
        repairs: tuple[HistoryFix, ...] = (),
        tail_index: int | None = None,
        overflow: OverflowReport | None = None,
        memory: MemoryArtifacts | None = None,
    ) -> None:
        self.target = target
        self.repairs = repairs
        self.tail_index = tail_index
        self.overflow = overflow
        self.memory_keys = memory.keys if memory is not None else ()
        self.expired_memory_keys = memory.expired if memory is not None else ()
        self._count: Callable[[], LayerTokens] | None = count
        self._tokens: LayerTokens | None = None

    @property
    def window_id(self) -> str | None:
        """The context window this payload belongs to (with overflow configured)."""
        return self.overflow.window_id if self.overflow is not None else None

    @property
    def tokens(self) -> LayerTokens:
        if self._tokens is None:
            assert self._count is not None
            self._tokens, self._count = self._count(), None
        return self._tokens

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CompileMeta):
            return NotImplemented
        mine = (self.target, self.repairs, self.tail_index, self.overflow, self.memory_keys)
        theirs = (other.target, other.repairs, other.tail_index, other.overflow, other.memory_keys)
        return mine == theirs and self.tokens == other.tokens

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"CompileMeta(target={self.target!r}, tokens={self.tokens!r}, "
            f"repairs={self.repairs!r}, tail_index={self.tail_index!r})"
        )


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
    repairs: tuple[HistoryFix, ...]
    state: DynamicState | None
    guardrails: Guardrails | None
    tools: tuple[ToolDefinition, ...]


@dataclass
class CompileRuntime:
    """Per-chef memo shared by compiles: a conversion cache per target, the token counter."""

    registry: AdapterRegistry
    counter: MessageCounter = field(default_factory=MessageCounter)
    janitor: Janitor | None = None
    stores: tuple[Store, AsyncStore] | None = None
    mode: ToolsMode = "legacy"
    offload: OffloadConfig = field(default_factory=OffloadConfig)
    transform: TransformHook | None = None
    memory: Memory | None = None
    library_tools: tuple[ToolDefinition, ...] = ()
    tool_results: ToolResultMemo = field(default_factory=ToolResultMemo)
    caches: dict[str, ConversionCache] = field(default_factory=dict)

    def cache_for(self, target: str) -> ConversionCache:
        cache = self.caches.get(target)
        if cache is None:
            cache = self.caches[target] = ConversionCache()
        return cache


Flow = EffectFlow[Payload]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector around a conversion, if it is running.

    Converting a long history allocates tens of thousands of small dicts; with a large heap
    that triggers full collections which cost more than the conversion itself (2x at 10k
    messages, measured in benchmarks/compile.py). The conversion creates no reference cycles,
    so nothing is left for the collector to find, and the pause lasts one synchronous step:
    never across an `await`.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _check(signal: Signal | None) -> None:
    if signal is not None and signal.is_set():
        raise CompileAbortedError("compile() was aborted by its signal")


def compile_flow(
    state: CompileState,
    runtime: CompileRuntime,
    target: str,
    *,
    signal: Signal | None = None,
    handlers: Handlers | None = None,
    forced: bool = False,
) -> Flow:
    """The compile pipeline; drive it with `run_sync` or `run_async`."""
    adapter = runtime.registry.get(target)
    events = handlers or Handlers()
    if on_start := events.for_event("compile:start"):
        yield Emit(on_start, CompileStart(target, state.system_prompt, state.history))
    _check(signal)

    history = state.history
    if runtime.stores is not None:
        history = yield from prepare_tool_results(
            history,
            runtime.tool_results,
            transform=runtime.transform,
            config=runtime.offload,
            stores=runtime.stores,
            mode=runtime.mode,
        )
    report: OverflowReport | None = None
    if runtime.janitor is not None:
        report = yield from runtime.janitor.flow(
            history,
            system=state.system_prompt,
            tools_tokens=count_tools(state.tools, runtime.counter.tokenizer),
            counter=runtime.counter,
            target=target,
            forced=forced,
            stores=runtime.stores,
            mode=runtime.mode,
            on_start=events.for_event("compress:start"),
            on_end=events.for_event("compress:end"),
        )
        history = report.history
        _check(signal)

    memory = runtime.memory
    artifacts: MemoryArtifacts | None = None
    if memory is not None:
        artifacts = yield Dual(
            memory.compile_artifacts, _in_thread(memory.compile_artifacts), (runtime.mode,)
        )
        memory.advance_turn()
        _check(signal)
    top, context_blocks = _memory_layers(runtime, artifacts)

    notices = [report.notice] if report is not None and report.notice else []
    sandwich = assemble(
        (*state.system_prompt, *top),
        history,
        state=state.state,
        guardrails=state.guardrails,
        context_blocks=context_blocks,
        notices=notices,
    )
    _check(signal)

    cache = runtime.cache_for(target)
    with gc_paused():
        data = adapter.compile(
            AdapterInput(
                system=sandwich.system,
                messages=sandwich.messages,
                tools=(*state.tools, *runtime.library_tools),
                prefill=sandwich.prefill,
                cache=cache,
            )
        )
    cache.sweep()
    if report is not None and report.server:
        merged = {**data, **report.server}
        data = {key: merged[key] for key in sorted(merged)}

    def count() -> LayerTokens:
        return count_layers(sandwich, (*state.tools, *runtime.library_tools), runtime.counter)

    meta = CompileMeta(target, count, state.repairs, sandwich.tail_index, report, artifacts)
    payload = Payload(data, meta)
    if on_done := events.for_event("compile:done"):
        yield Emit(on_done, CompileDone(target, payload))
    return payload


def _in_thread(fn: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """`fn` run in a worker thread, for the async driver (the store behind it is sync)."""

    def run(*args: Any) -> Awaitable[T]:
        return asyncio.to_thread(fn, *args)

    return run


def _memory_layers(
    runtime: CompileRuntime, artifacts: MemoryArtifacts | None
) -> tuple[list[Message], list[str]]:
    """The system message that follows the system prompt (instruction, and the memory block
    when it is placed there), and the tail blocks (the memory block when placed at the tail)."""
    if artifacts is None:
        if runtime.mode == "unified":
            return [{"content": prompts.CONTEXT_STORE_INSTRUCTION, "role": "system"}], []
        return [], []
    instruction = (
        prompts.CONTEXT_STORE_INSTRUCTION
        if runtime.mode == "unified"
        else prompts.MEMORY_INSTRUCTION
    )
    assert runtime.memory is not None
    if runtime.memory.placement == "before_history_tail":
        tail = [artifacts.block] if artifacts.block else []
        return [{"content": instruction, "role": "system"}], tail
    content = f"{instruction}\n\n{artifacts.block}" if artifacts.block else instruction
    return [{"content": content, "role": "system"}], []


def count_layers(
    sandwich: Sandwich, tools: Sequence[ToolDefinition], counter: MessageCounter
) -> LayerTokens:
    """Token figures per layer; the message holding the tail counts as tail, not history."""
    tail = sandwich.messages[sandwich.tail_index] if sandwich.tail_index is not None else None
    history = [m for m in sandwich.messages if m is not tail] if tail else sandwich.messages
    tokens = LayerTokens(
        system=counter.count_all(sandwich.system),
        history=counter.count_all(history),
        tail=counter.count(tail) if tail is not None else 0,
        tools=count_tools(tools, counter.tokenizer),
    )
    counter.sweep()
    return tokens


def run_sync(flow: Flow) -> Payload:
    """Drive the compile flow with plain calls."""
    return drive_sync(flow)


async def run_async(flow: Flow) -> Payload:
    """Drive the compile flow, awaiting what needs awaiting."""
    return await drive_async(flow)
