"""OpenTelemetry spans and metrics for a chef (extra `otel`: `opentelemetry-api` only).

    from contextchef.telemetry import instrument
    instrument(chef)                          # the global providers; or pass your own

How it hooks in: `instrument` gives the chef an observer that wraps the flows the chef drives
(see `contextchef._effects`), so one piece of code serves `ContextChef` and `AsyncContextChef`
alike and the pipeline is never written twice. The wrapper sees every effect go by:

- a span `contextchef.compile` per compile: the target and its GenAI provider name, message
  counts (held, sent), tokens per layer (when counted: see `instrument`), what overflow did
  (strategy, evicted messages, reason, window id), repairs, memory shown and expired, and the
  cache reuse ratio when the payload's meta reports one; events for offloaded tool outputs,
  archived spans, memory changes, compression start and end, and a window exceeded;
- child spans for summarizer calls (`contextchef.summarize`) and store I/O
  (`contextchef.store.<operation>`), with the parent span current while user code runs, so a
  summarizer's own instrumented LLM call nests under it;
- a span `execute_tool <name>` per `handle_tool` call, with its store I/O;
- metrics: `contextchef.compile.duration` (s), `contextchef.compile.tokens` (by layer),
  `contextchef.cache.reuse_ratio`, `contextchef.overflow.evicted`. A compile queues its records
  and the next collection replays them before it reads (`contextchef.telemetry.replay`), so a
  reader sees the same data points while the compile skips the SDK's per-record work.

Attribute names follow the GenAI semantic conventions where one exists (`gen_ai.provider.name`,
`gen_ai.conversation.id`, `gen_ai.operation.name`, `gen_ai.tool.*`, `gen_ai.input.messages`…)
and start with `contextchef.` otherwise. Nothing the model reads or writes (messages, tool
arguments and results, summaries) is recorded unless `capture_content=True`.

Off costs one check: with no tracer provider configured (the global one unset, or a no-op) and
no meter provider passed, `compile` gets its flow back untouched.
"""

from __future__ import annotations

from typing import Any

from contextchef.errors import ConfigError, MissingDependencyError

try:
    import opentelemetry.metrics
    import opentelemetry.trace  # noqa: F401  (the guard: the modules below import them)
except ImportError as exc:  # pragma: no cover - exercised by simulating the import failing
    raise MissingDependencyError(exc.name or "opentelemetry-api", "otel") from exc

from contextchef.chef.facade import ChefFacade
from contextchef.telemetry.names import SEMCONV
from contextchef.telemetry.observer import Instrumentation

__all__ = ["SEMCONV", "Instrumentation", "instrument", "uninstrument"]


def instrument(
    chef: ChefFacade,
    *,
    tracer_provider: Any = None,
    meter_provider: Any = None,
    capture_content: bool = False,
    conversation_id: str | None = None,
    count_tokens: bool = False,
) -> Instrumentation:
    """Trace and measure `chef`'s compiles and tool calls (sync or async chef alike).

    Args:
        chef: a `ContextChef` or `AsyncContextChef`.
        tracer_provider: where spans go; default: the global tracer provider (while none is
            configured, the chef runs untouched but for one check per compile).
        meter_provider: where metrics go; default: the global meter provider.
        capture_content: also record messages, tool arguments and results and summaries
            (`gen_ai.input.messages`, `gen_ai.tool.call.*`…); off by default.
        conversation_id: set as `gen_ai.conversation.id` on every span (a session key).
        count_tokens: count the payload's tokens per layer for a chef without a budget too.
            A chef with a budget counts them anyway, and they are recorded for free; without
            one, a compile never counts them unless they are read, and counting a 10k-message
            payload costs several times the compile (benchmarks/telemetry.py), so by default
            they are recorded only when the chef (or a `compile:done` handler) counted them.

    Instrumenting a chef again replaces the earlier instrumentation; `uninstrument` removes it.
    """
    if not isinstance(chef, ChefFacade):
        raise ConfigError(f"instrument() takes a ContextChef or AsyncContextChef, got {chef!r}")
    if conversation_id is not None and not isinstance(conversation_id, str):
        raise ConfigError("conversation_id must be a string")
    uninstrument(chef)
    observer = Instrumentation(
        tracer_provider=tracer_provider,
        meter_provider=meter_provider,
        capture_content=capture_content,
        conversation_id=conversation_id,
        count_tokens=count_tokens,
    )
    chef.on("compress:start", observer.on_compress_start)
    chef.on("compress:end", observer.on_compress_end)
    chef.on("window:exceeded", observer.on_window_exceeded)
    chef._observer = observer
    return observer


def uninstrument(chef: ChefFacade) -> bool:
    """Remove `instrument`'s observer from `chef`; whether there was one."""
    observer = chef._observer
    if not isinstance(observer, Instrumentation):
        return False
    chef.off("compress:start", observer.on_compress_start)
    chef.off("compress:end", observer.on_compress_end)
    chef.off("window:exceeded", observer.on_window_exceeded)
    chef._observer = None
    return True
