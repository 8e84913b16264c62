"""`Instrumentation`: the observer that wraps a chef's compile and tool flows in spans and
records metrics (see `contextchef.telemetry` for what it records)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from opentelemetry import context as otel_context
from opentelemetry import metrics, trace

from contextchef._effects import After, Effect, Flow, StoreOp, intercept
from contextchef._version import __version__
from contextchef.compiler.pipeline import CompileRuntime, CompileState
from contextchef.events import WindowExceeded
from contextchef.payload import Payload
from contextchef.selection.overflow import CompressEnd, CompressStart
from contextchef.telemetry.effect_spans import as_json, child_span, end_child, failed, store_event
from contextchef.telemetry.names import (
    GEN_AI_CONVERSATION_ID,
    GEN_AI_INPUT_MESSAGES,
    GEN_AI_OPERATION_NAME,
    GEN_AI_PROVIDER_NAME,
    GEN_AI_SYSTEM_INSTRUCTIONS,
    GEN_AI_TOOL_CALL_ARGUMENTS,
    GEN_AI_TOOL_CALL_RESULT,
    GEN_AI_TOOL_DEFINITIONS,
    GEN_AI_TOOL_NAME,
    GEN_AI_TOOL_TYPE,
    MESSAGE_KEYS,
    PROVIDERS,
    SYSTEM_KEYS,
)
from contextchef.telemetry.replay import queue_for

__all__ = ["Instrumentation"]

R = TypeVar("R")

LAYERS = ("system", "history", "tail", "tools")
"""The payload layers `contextchef.compile.tokens` records, as its `contextchef.layer`."""


def _count(payload: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    return next((payload[key] for key in keys if key in payload), None)


@dataclass(frozen=True, slots=True)
class _Instruments:
    duration: Any
    tokens: Any
    reuse: Any
    evicted: Any


class Instrumentation:
    """The observer `instrument` attaches to a chef (see the module docstring)."""

    def __init__(
        self,
        *,
        tracer_provider: Any = None,
        meter_provider: Any = None,
        capture_content: bool = False,
        conversation_id: str | None = None,
        count_tokens: bool = False,
    ) -> None:
        self.capture_content = bool(capture_content)
        self.count_tokens = bool(count_tokens)
        self.conversation_id = conversation_id
        self._tracer_provider = tracer_provider
        self._tracer = (
            tracer_provider.get_tracer("contextchef", __version__) if tracer_provider else None
        )
        self._global: tuple[Any, Any] | None = None
        self._meters_explicit = meter_provider is not None
        provider = meter_provider if meter_provider is not None else metrics.get_meter_provider()
        meter = provider.get_meter("contextchef", __version__)
        self._queue = queue_for(meter)
        self._attributes: dict[str, tuple[dict[str, str], dict[str, dict[str, str]]]] = {}
        self._instruments = _Instruments(
            duration=meter.create_histogram(
                "contextchef.compile.duration", unit="s", description="Time one compile took."
            ),
            tokens=meter.create_histogram(
                "contextchef.compile.tokens",
                unit="{token}",
                description="Tokens of a compiled payload, by layer.",
            ),
            reuse=meter.create_histogram(
                "contextchef.cache.reuse_ratio",
                unit="1",
                description="Share of the payload's prefix reused from the previous compile.",
            ),
            evicted=meter.create_counter(
                "contextchef.overflow.evicted",
                unit="{message}",
                description="Messages overflow moved out of the window.",
            ),
        )

    # -- on or off --------------------------------------------------------------------------

    def tracer(self) -> Any:
        """The tracer to use now, or None when no tracer provider is configured."""
        if self._tracer_provider is not None:
            return self._tracer
        provider = trace.get_tracer_provider()
        if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
            return None
        if self._global is None or self._global[0] is not provider:
            self._global = (provider, provider.get_tracer("contextchef", __version__))
        return self._global[1]

    # -- the observer ----------------------------------------------------------------------

    def compile(
        self, flow: Flow[Payload], target: str, state: CompileState, runtime: CompileRuntime
    ) -> Flow[Payload]:
        tracer = self.tracer()
        if tracer is None and not self._meters_explicit:
            return flow
        return self._compile(flow, tracer, target, state, runtime)

    def tool(self, flow: Flow[str], name: str, arguments: object) -> Flow[str]:
        tracer = self.tracer()
        if tracer is None:
            return flow
        return self._tool(flow, tracer, name, arguments)

    def _base(self) -> dict[str, Any]:
        return {GEN_AI_CONVERSATION_ID: self.conversation_id} if self.conversation_id else {}

    def _compile(
        self,
        flow: Flow[Payload],
        tracer: Any,
        target: str,
        state: CompileState,
        runtime: CompileRuntime,
    ) -> Flow[Payload]:
        started = time.perf_counter()
        attributes = {
            **self._base(),
            "contextchef.target": target,
            "contextchef.messages.held": len(state.history),
        }
        if target in PROVIDERS:
            attributes[GEN_AI_PROVIDER_NAME] = PROVIDERS[target]
        span = tracer.start_span("contextchef.compile", attributes=attributes) if tracer else None
        try:
            if span is None:
                payload = yield from flow
            else:
                payload = yield from self._watched(flow, tracer, span, runtime)
        except Exception as exc:
            if span is not None:
                failed(span, exc)
            raise
        except BaseException:  # the flow was abandoned (closed): the span still ends
            if span is not None:
                span.end()
            raise
        self._record(payload, target, span, time.perf_counter() - started)
        return payload

    def _record(self, payload: Payload, target: str, span: Any, seconds: float) -> None:
        meta = payload.meta
        layers: dict[str, int] = {}
        if meta.counted or self.count_tokens:
            tokens = meta.tokens
            layers = {layer: getattr(tokens, layer) for layer in LAYERS}
        metric_attributes, by_layer = self._metric_attributes(target)
        instruments = self._instruments
        record = self._record_metric
        record(instruments.duration.record, seconds, metric_attributes)
        for layer, count in layers.items():
            record(instruments.tokens.record, count, by_layer[layer])
        ratio = _reuse_ratio(meta)
        if ratio is not None:
            record(instruments.reuse.record, ratio, metric_attributes)
        report = meta.overflow
        if report is not None and report.changed and report.span:
            record(instruments.evicted.add, len(report.span), metric_attributes)
        if span is None:
            return
        if not span.is_recording():  # sampled out: nothing to describe
            span.end()
            return
        messages = _count(payload, MESSAGE_KEYS)
        attributes: dict[str, Any] = {
            **{f"contextchef.tokens.{layer}": count for layer, count in layers.items()},
            "contextchef.messages.sent": len(messages) if isinstance(messages, list) else 0,
            "contextchef.repairs": len(meta.repairs),
            "contextchef.memory.shown": len(meta.memory_keys),
            "contextchef.memory.expired": len(meta.expired_memory_keys),
        }
        if layers:
            attributes["contextchef.tokens.total"] = sum(layers.values())
        if ratio is not None:
            attributes["contextchef.cache.reuse_ratio"] = ratio
        if report is not None:
            attributes.update(
                {
                    "contextchef.overflow.strategy": report.strategy,
                    "contextchef.overflow.changed": report.changed,
                    "contextchef.overflow.evicted": len(report.span) if report.changed else 0,
                    "contextchef.overflow.reason": report.reason,
                    "contextchef.overflow.forced": report.forced,
                    "contextchef.overflow.failures": report.failures,
                    "contextchef.window.id": report.window_id,
                }
            )
        if self.capture_content:
            attributes[GEN_AI_INPUT_MESSAGES] = as_json(messages or [])
            system = _count(payload, SYSTEM_KEYS)
            if system is not None:
                attributes[GEN_AI_SYSTEM_INSTRUCTIONS] = as_json(system)
            if payload.get("tools"):
                attributes[GEN_AI_TOOL_DEFINITIONS] = as_json(payload["tools"])
        span.set_attributes(attributes)
        span.end()

    def _record_metric(self, record: Any, amount: float, attributes: Mapping[str, Any]) -> None:
        """Queue a metric record for the next collection (see `replay`), or make it now."""
        if self._queue is not None:
            self._queue.record(record, amount, attributes)
        else:
            record(amount, attributes)

    def _metric_attributes(self, target: str) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
        """The attribute sets of `target`'s records, built once (they are never mutated)."""
        known = self._attributes.get(target)
        if known is None:
            base = {"contextchef.target": target}
            by_layer = {layer: {**base, "contextchef.layer": layer} for layer in LAYERS}
            known = self._attributes[target] = (base, by_layer)
        return known

    def _tool(self, flow: Flow[str], tracer: Any, name: str, arguments: object) -> Flow[str]:
        attributes = {
            **self._base(),
            GEN_AI_OPERATION_NAME: "execute_tool",
            GEN_AI_TOOL_NAME: name,
            GEN_AI_TOOL_TYPE: "function",
        }
        if self.capture_content:
            attributes[GEN_AI_TOOL_CALL_ARGUMENTS] = (
                arguments if isinstance(arguments, str) else as_json(arguments)
            )
        span = tracer.start_span(f"execute_tool {name}", attributes=attributes)
        try:
            result = yield from self._watched(flow, tracer, span, None)
        except Exception as exc:
            failed(span, exc)
            raise
        except BaseException:
            span.end()
            raise
        span.set_attribute("contextchef.tool.refused", result.startswith("Error: "))
        if self.capture_content:
            span.set_attribute(GEN_AI_TOOL_CALL_RESULT, result)
        span.end()
        return result

    # -- the wrapper -------------------------------------------------------------------------

    def _watched(
        self, flow: Flow[R], tracer: Any, span: Any, runtime: CompileRuntime | None
    ) -> Flow[R]:
        """`flow`, with a child span around each store call and summarizer call, and `span`
        current while any other effect (a user hook, an event handler) runs."""
        parent = trace.set_span_in_context(span)

        def around(effect: Effect) -> After:
            child = child_span(tracer, effect, parent, self.capture_content)
            token = otel_context.attach(
                trace.set_span_in_context(child, parent) if child is not None else parent
            )

            def after(result: Any, error: BaseException | None) -> None:
                otel_context.detach(token)
                if child is not None:
                    end_child(child, effect, result, error, self.capture_content)
                if error is None and isinstance(effect, StoreOp):
                    store_event(span, effect, runtime)

            return after

        return intercept(flow, around)

    # -- chef events -------------------------------------------------------------------------

    def on_compress_start(self, event: CompressStart) -> None:
        trace.get_current_span().add_event(
            "contextchef.compress.start",
            {
                "contextchef.compress.history_length": event.history_length,
                "contextchef.compress.forced": event.forced,
            },
        )

    def on_compress_end(self, event: CompressEnd) -> None:
        report = event.report
        trace.get_current_span().add_event(
            "contextchef.compress.end",
            {
                "contextchef.overflow.changed": report.changed,
                "contextchef.overflow.strategy": report.strategy,
                "contextchef.overflow.evicted": len(report.span) if report.changed else 0,
            },
        )

    def on_window_exceeded(self, event: WindowExceeded) -> None:
        trace.get_current_span().add_event(
            "contextchef.window.exceeded",
            {"contextchef.tokens.total": event.tokens, "contextchef.window.limit": event.limit},
        )


def _reuse_ratio(meta: Any) -> float | None:
    """The payload's cache reuse ratio, when its meta reports one (`meta.cache.reuse_ratio`)."""
    cache = getattr(meta, "cache", None)
    ratio = getattr(cache, "reuse_ratio", None) if cache is not None else None
    if isinstance(ratio, int | float) and not isinstance(ratio, bool):
        return float(ratio)
    return None
