"""`compile()` written once, as a flow of effects over one `StoreCore`.

The flow never performs I/O itself: wherever it needs the outside world (event handlers, slot
handlers, the summarizer, memory hooks, the store) it *yields* an effect and receives the
result (see `contextchef._effects`). `ContextChef.compile` drives it with `drive_sync`,
`AsyncContextChef.compile` with `drive_async`, so both share every line of behaviour.

Phases, in order: start (event, abort check) → tool results (transform, offload) → memory →
overflow (with a janitor) → assemble the sandwich → adapt to the target → done (event). The
history was already validated and repaired when it was set; a last turn whose tool calls still
wait for their results (answered by placeholders meanwhile) is kept out of overflow's reach.

The budget counts what is sent: overflow measures a candidate history by building the payload
the target would receive with it (the adapters' conversion caches make that cheap) and counting
it with a `PayloadCounter`, so the library's tools, the memory block, the store instruction, the
tail and the guardrails all count. When the history did not change and no slot takes part, the
measured build *is* the payload, built once. Without a janitor, `payload.meta.tokens` is counted
on first access, so a compile whose figures nobody reads does not pay for counting.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

from contextchef._effects import Call, Emit
from contextchef._effects import Flow as EffectFlow
from contextchef._memo import ConversionCache, intake_message
from contextchef._payload_builder import PayloadBuilder
from contextchef._repair import waiting_turn
from contextchef.adapters.base import AdapterRegistry, ToolDefinition
from contextchef.cache_ledger import CacheLedger
from contextchef.errors import CompileAbortedError, ConfigError
from contextchef.events import (
    AssembleContext,
    CompileDone,
    CompileStart,
    Handlers,
    Slots,
    WindowExceeded,
)
from contextchef.memory.core import MemoryCore
from contextchef.memory.entry import MemoryArtifacts
from contextchef.messages import HistoryFix, Message
from contextchef.payload import CompileMeta, LayerTokens, Payload, PayloadCounter
from contextchef.pipeline_checks import check_assembly
from contextchef.placement.announcements import Announcement
from contextchef.placement.assembler import Sandwich
from contextchef.placement.guardrail import Guardrails
from contextchef.placement.state import DynamicState
from contextchef.prompt_cache import (
    CacheOptions,
    TargetCache,
    measure_cache,
    memory_layers,
    report_violations,
)
from contextchef.prompts import UnifiedVocabulary, Vocabulary
from contextchef.selection.janitor import Janitor, OverflowReport
from contextchef.selection.offload import OffloadConfig
from contextchef.selection.pruner import PrunerState
from contextchef.selection.tool_plan import PlanMemo
from contextchef.selection.tool_results import ToolResultMemo, TransformHook, prepare_tool_results
from contextchef.skills.active import ActiveSkill
from contextchef.store.core import StoreCore
from contextchef.tokens import MessageCounter

__all__ = [
    "CompileMeta",
    "CompileRuntime",
    "CompileState",
    "LayerTokens",
    "Payload",
    "Signal",
    "compile_flow",
]

logger = logging.getLogger("contextchef.pipeline")


class Signal(Protocol):
    """Anything with `is_set()`: a `threading.Event`, an `asyncio.Event`, or your own."""

    def is_set(self) -> bool: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class CompileState:
    """The chef's layers, as read at the start of one compile."""

    system_prompt: tuple[Message, ...]
    history: tuple[Message, ...]
    repairs: tuple[HistoryFix, ...]
    state: DynamicState | None
    guardrails: Guardrails | None
    tools: tuple[ToolDefinition, ...]
    skill: ActiveSkill | None = None
    announcements: tuple[Announcement, ...] = ()
    pruner: PrunerState = field(default_factory=PrunerState)


@dataclass(kw_only=True)
class CompileRuntime:
    """Per-chef memo shared by compiles: a conversion cache per target, the token counter."""

    registry: AdapterRegistry
    counter: MessageCounter = field(default_factory=MessageCounter)
    janitor: Janitor | None = None
    store: StoreCore | None = None
    vocabulary: Vocabulary = field(default_factory=UnifiedVocabulary)
    offload: OffloadConfig = field(default_factory=OffloadConfig)
    transform: TransformHook | None = None
    memory: MemoryCore | None = None
    library_tools: tuple[ToolDefinition, ...] = ()
    skill_placement: str = "after_system"
    tool_plans: PlanMemo = field(default_factory=PlanMemo)
    tool_results: ToolResultMemo = field(default_factory=ToolResultMemo)
    caches: dict[str, ConversionCache] = field(default_factory=dict)
    payload_counters: dict[str, PayloadCounter] = field(default_factory=dict)
    cache: CacheOptions = field(default_factory=CacheOptions)
    targets: dict[str, TargetCache] = field(default_factory=dict)
    memory_generation: int = 0
    """Bumped by `refresh_memory()`, `clear_history()` and `restore()`: memory is rendered
    into the prefix again at the next compile of every target."""
    logged: set[tuple[str, str, str]] = field(default_factory=set)

    def cache_for(self, target: str) -> ConversionCache:
        cache = self.caches.get(target)
        if cache is None:
            cache = self.caches[target] = ConversionCache()
        return cache

    def payload_counter(self, target: str) -> PayloadCounter:
        counter = self.payload_counters.get(target)
        if counter is None:
            counter = self.payload_counters[target] = PayloadCounter(self.counter.tokenizer)
        return counter

    def target_cache(self, target: str) -> TargetCache:
        """What the chef remembers of its previous compile for `target` (the ledger shares the
        part facts of the target's payload counter)."""
        remembered = self.targets.get(target)
        if remembered is None:
            facts = self.payload_counter(target).facts
            remembered = self.targets[target] = TargetCache(target, CacheLedger(facts))
        return remembered

    def window(self) -> str | None:
        return self.janitor.lineage.current if self.janitor is not None else None


Flow = EffectFlow[Payload]


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
    slots: Slots | None = None,
    forced: bool = False,
) -> Flow:
    """The compile pipeline; drive it with `drive_sync` or `drive_async`."""
    adapter = runtime.registry.get(target)
    events = handlers or Handlers()
    slots = slots or Slots()
    if on_start := events.for_event("compile:start"):
        yield Emit(on_start, CompileStart(target, state.system_prompt, state.history))
    _check(signal)

    history = state.history
    if runtime.store is not None:
        history = yield from prepare_tool_results(
            history,
            runtime.tool_results,
            transform=runtime.transform,
            config=runtime.offload,
            store=runtime.store,
            vocabulary=runtime.vocabulary,
        )

    memory = runtime.memory
    artifacts: MemoryArtifacts | None = None
    if memory is not None:
        artifacts = yield from memory.compile_artifacts(
            runtime.vocabulary, state.history, frozen=True
        )
        _check(signal)
    remembered = runtime.target_cache(target)
    window = runtime.window()
    layers = memory_layers(
        runtime.vocabulary, artifacts, memory, remembered, runtime.memory_generation, window
    )
    build = PayloadBuilder(state, runtime, adapter, target, layers, history, remembered)

    report: OverflowReport | None = None
    verdicts = yield from _run_slot(slots, "before_overflow", list(history))
    if runtime.janitor is not None and False in verdicts:
        if forced:
            logger.warning("a before_overflow handler skipped a forced overflow")
    elif runtime.janitor is not None:
        keep = waiting_turn(state.history, state.repairs)
        report = yield from _overflow(
            runtime.janitor,
            history,
            keep if keep is not None and len(history) == len(state.history) else None,
            build,
            counter=runtime.counter,
            target=target,
            profile=build.profile,
            forced=forced,
            store=runtime.store,
            vocabulary=runtime.vocabulary,
            on_start=events.for_event("compress:start"),
            on_end=events.for_event("compress:end"),
        )
        history = report.history
        if report.server is not None:
            build.ask_server(report.server)
        _check(signal)
    yield from _run_slot(slots, "after_overflow", list(history), report)

    context = AssembleContext(state.system_prompt, history, state.state)
    yield from _run_slot(slots, "before_assemble", context)
    notices = [report.notice] if report is not None and report.notice else []
    notices.extend(context.blocks)
    sandwich, data = build(history, tuple(notices))
    _check(signal)

    replaced = False
    for messages in (yield from _run_slot(slots, "after_assemble", list(sandwich.messages))):
        if messages is not None:
            sandwich, replaced = replace_messages(sandwich, messages), True
    yield from _run_slot(slots, "before_adapt", tuple(sandwich.messages))
    if replaced:
        data = build.adapt(sandwich)
    build.done()
    if runtime.cache.checks:
        yield from report_violations(
            check_assembly(target, build.original, history, sandwich.messages, sandwich.tail_index),
            logged=runtime.logged,
            handlers=events.for_event("pipeline:invariant"),
        )

    for rewritten in (yield from _run_slot(slots, "after_adapt", data)):
        if rewritten is not None:
            if not isinstance(rewritten, dict):
                raise ConfigError("an after_adapt handler must return a dict or None")
            data = rewritten

    counter = runtime.payload_counter(target)
    tail = sandwich.messages[sandwich.tail_index] if sandwich.tail_index is not None else None

    def count() -> LayerTokens:
        tail_tokens = runtime.counter.count(tail) if tail is not None else 0
        tokens = counter.count(data, tail_tokens)
        counter.sweep()
        runtime.counter.sweep()
        return tokens

    view = build.view(history)
    cache = yield from measure_cache(
        remembered,
        data,
        options=runtime.cache,
        deliberate=(report is not None and report.changed)
        or (view is not None and view.folded)
        or remembered.window != window,
        layout=(sandwich.tail, state.state, build.stable_end(history), runtime.window()),
        baseline=view.baseline if view is not None else remembered.baseline,
        handlers=events.for_event("cache:finding"),
    )
    meta = CompileMeta(target, count, state.repairs, sandwich.tail_index, report, artifacts, cache)
    if runtime.janitor is not None:
        total = meta.tokens.total
        runtime.janitor.compiled(target, total)
        limit = runtime.janitor.config.context_window
        if total > limit:
            logger.warning(
                "the %s payload holds %d tokens, over the %g-token window", target, total, limit
            )
            if on_over := events.for_event("window:exceeded"):
                yield Emit(on_over, WindowExceeded(target, total, limit))
    payload = Payload(data, meta)
    if on_done := events.for_event("compile:done"):
        yield Emit(on_done, CompileDone(target, payload))
    return payload


def _overflow(
    janitor: Janitor,
    history: tuple[Message, ...],
    keep: int | None,
    build: PayloadBuilder,
    **options: Any,
) -> EffectFlow[OverflowReport]:
    """The overflow phase over `history[:keep]`: the turn from `keep` on waits for tool results
    the host has yet to add, so no strategy may compact it away (they would answer no call);
    it is measured with every candidate and follows whatever history lands."""
    if keep is None:
        return (yield from janitor.flow(history, measure=build.measure, **options))
    head, tail = history[:keep], history[keep:]

    def measure(candidate: tuple[Message, ...]) -> int:
        return build.measure(history if candidate is head else (*candidate, *tail))

    report = yield from janitor.flow(head, measure=measure, **options)
    whole = history if report.history is head else (*report.history, *tail)
    return dataclasses.replace(report, history=whole)


def _run_slot(slots: Slots, slot: str, *args: Any) -> EffectFlow[list[Any]]:
    """Call each handler of `slot` in order; their errors fail the compile (not isolated)."""
    results = []
    for handler in slots.for_slot(slot):
        results.append((yield Call.of(handler, *args, what=f"{slot} handler")))
    return results


def replace_messages(sandwich: Sandwich, messages: Any) -> Sandwich:
    """`sandwich` with the messages an `after_assemble` handler returned (validated, copied)."""
    if not isinstance(messages, list | tuple):
        raise ConfigError("an after_assemble handler must return a list of messages or None")
    checked = [intake_message(message, index) for index, message in enumerate(messages)]
    return dataclasses.replace(sandwich, messages=checked, tail_index=None)
