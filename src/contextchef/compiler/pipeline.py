"""`compile()` written once, as a flow of effects over one `StoreCore`.

The flow never performs I/O itself: wherever it needs the outside world (event handlers, slot
handlers, the summarizer, memory hooks, the store) it *yields* an effect and receives the
result (see `contextchef._effects`). `ContextChef.compile` drives it with `drive_sync`,
`AsyncContextChef.compile` with `drive_async`, so both share every line of behaviour.

Phases, in order: start (event, abort check) → tool results (transform, offload) → memory →
overflow (with a budget) → assemble the sandwich → adapt to the target → done (event). The
history was already validated and repaired when it was set; a last turn whose tool calls still
wait for their results (answered by placeholders meanwhile) is kept out of overflow's reach.

The budget counts what is sent: overflow measures a candidate history by building the payload
the target would receive with it (the adapters' conversion caches make that cheap) and counting
it with a `PayloadCounter`, so the library's tools, the memory block, the store instruction, the
tail and the guardrails all count. When the history did not change and no slot takes part, the
measured build *is* the payload, built once. Without a budget, `payload.meta.tokens` is counted
on first access, so a compile whose figures nobody reads does not pay for counting.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from contextchef._effects import Call, Emit
from contextchef._effects import Flow as EffectFlow
from contextchef._memo import intake_message
from contextchef._repair import waiting_turn
from contextchef.cache.planning import (
    measure_cache,
    memory_layers,
    report_violations,
)
from contextchef.compiler._payload_builder import PayloadBuilder
from contextchef.compiler.checks import check_assembly
from contextchef.compiler.state import CompileRuntime, CompileState, Signal
from contextchef.errors import CompileAbortedError, ConfigError
from contextchef.events import (
    AssembleContext,
    CompileStart,
    Compressed,
    Handlers,
    Slots,
    WindowExceeded,
)
from contextchef.memory.entry import MemoryArtifacts
from contextchef.messages import Message
from contextchef.payload import CompileDone, CompileMeta, LayerTokens, Payload
from contextchef.placement.assembler import Sandwich
from contextchef.selection.overflow import OverflowReport, OverflowRunner
from contextchef.selection.tool_results import prepare_tool_results

__all__ = [
    "CompileMeta",
    "CompileRuntime",
    "CompileState",
    "LayerTokens",
    "Payload",
    "Signal",
    "compile_flow",
]

logger = logging.getLogger("contextchef.compiler.pipeline")


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

    history, lineage = state.history, state.lineage
    if runtime.store is not None:
        history = yield from prepare_tool_results(
            history,
            runtime.tool_results,
            transform=runtime.transform,
            config=runtime.offload,
            store=runtime.store,
            vocabulary=runtime.vocabulary,
            on_offload=events.for_event("offload:created"),
            known=state.lineage,
        )
        lineage = runtime.tool_results.lineage

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
    build = PayloadBuilder(state, runtime, adapter, target, layers, history, remembered, lineage)

    report: OverflowReport | None = None
    verdicts = yield from _run_slot(slots, "before_overflow", lambda: (list(history),))
    if runtime.overflow_runner is not None and False in verdicts:
        if forced:
            logger.warning("a before_overflow handler skipped a forced overflow")
    elif runtime.overflow_runner is not None:
        keep = waiting_turn(state.history, state.repairs)
        report = yield from _overflow(
            runtime.overflow_runner,
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
        if report.changed and (on_compress := events.for_event("compress")):
            yield Emit(on_compress, _compressed(target, report))
        if report.server is not None:
            build.ask_server(report.server)
        _check(signal)
    yield from _run_slot(slots, "after_overflow", lambda: (list(history), report))

    context = AssembleContext(state.system_prompt, history, state.state)
    yield from _run_slot(slots, "before_assemble", lambda: (context,))
    notices = [report.notice] if report is not None and report.notice else []
    notices.extend(context.blocks)
    sandwich, data = build(history, tuple(notices))
    _check(signal)

    replaced = False
    assembled = yield from _run_slot(slots, "after_assemble", lambda: (list(sandwich.messages),))
    for messages in assembled:
        if messages is not None:
            sandwich, replaced = replace_messages(sandwich, messages), True
    yield from _run_slot(slots, "before_adapt", lambda: (tuple(sandwich.messages),))
    if replaced:
        data = build.adapt(sandwich)
    build.done()
    if runtime.cache.checks:
        yield from report_violations(
            check_assembly(target, build.original, history, sandwich.messages, sandwich.tail_index),
            logged=runtime.logged,
            handlers=events.for_event("pipeline:invariant"),
        )

    rewrites = yield from _run_slot(slots, "after_adapt", lambda: (data,))
    for rewritten in rewrites:
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
    if runtime.overflow_runner is not None:
        total = meta.tokens.total
        runtime.overflow_runner.compiled(target, total)
        limit = runtime.overflow_runner.config.context_window
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


def _compressed(target: str, report: OverflowReport) -> Compressed:
    """The `compress` event of an overflow that changed the history."""
    return Compressed(
        target=target,
        strategy=report.strategy,
        messages=len(report.span),
        archive_uri=report.archive_uri,
        summarized=report.summary is not None,
        forced=report.forced,
        window_id=report.window_id,
    )


def _overflow(
    runner: OverflowRunner,
    history: tuple[Message, ...],
    keep: int | None,
    build: PayloadBuilder,
    **options: Any,
) -> EffectFlow[OverflowReport]:
    """The overflow phase over `history[:keep]`: the turn from `keep` on waits for tool results
    the host has yet to add, so no strategy may compact it away (they would answer no call);
    it is measured with every candidate and follows whatever history lands."""
    if keep is None:
        return (yield from runner.flow(history, measure=build.measure, **options))
    head, tail = history[:keep], history[keep:]

    def measure(candidate: tuple[Message, ...]) -> int:
        return build.measure(history if candidate is head else (*candidate, *tail))

    report = yield from runner.flow(head, measure=measure, **options)
    whole = history if report.history is head else (*report.history, *tail)
    return dataclasses.replace(report, history=whole)


def _run_slot(
    slots: Slots, slot: str, arguments: Callable[[], tuple[Any, ...]]
) -> EffectFlow[list[Any]]:
    """Call each handler of `slot` in order with `arguments()` (made only when `slot` has a
    handler: a copy of a long history costs a compile that has none); their errors fail the
    compile (not isolated)."""
    handlers = slots.for_slot(slot)
    if not handlers:
        return []
    args = arguments()
    results = []
    for handler in handlers:
        results.append((yield Call.of(handler, *args, what=f"{slot} handler")))
    return results


def replace_messages(sandwich: Sandwich, messages: Any) -> Sandwich:
    """`sandwich` with the messages an `after_assemble` handler returned (validated, copied);
    the automatic breakpoints on the messages go (their positions may not hold any more), those
    on the system prompt stay."""
    if not isinstance(messages, list | tuple):
        raise ConfigError("an after_assemble handler must return a list of messages or None")
    checked = [intake_message(message, index) for index, message in enumerate(messages)]
    head = len(sandwich.system)
    marks = tuple(at for at in sandwich.auto_marks if at < head)
    return dataclasses.replace(sandwich, messages=checked, tail_index=None, auto_marks=marks)
