"""The spans and span events of the effects a watched flow yields (see `observer._watched`).

A store call gets a child span `contextchef.store.<operation>` (namespace and path as
attributes), a summarizer call a child span `contextchef.summarize` (input message count, output
length, and the content itself only with `capture_content`); other effects get none. A store
write that means something to the reader of a trace adds an event to the parent span: a memory
change, an offloaded tool output (with its size), an archived span. A failed effect or flow
marks its span with the error.
"""

from __future__ import annotations

import json
from typing import Any

from opentelemetry import trace

from contextchef._effects import Call, StoreOp
from contextchef.compiler.pipeline import CompileRuntime
from contextchef.memory.entry import MEMORY_NAMESPACE
from contextchef.telemetry.names import GEN_AI_INPUT_MESSAGES, STORE_WRITES, SUMMARIZER

__all__ = ["as_json", "child_span", "end_child", "failed", "store_event"]


def as_json(value: Any) -> str:
    """`value` as compact JSON text, for an attribute (what JSON cannot say, as `str`)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def child_span(tracer: Any, effect: object, parent: Any, capture_content: bool) -> Any:
    """The child span of `effect` under the context `parent`, or None for an effect without."""
    attributes: dict[str, Any]
    if isinstance(effect, StoreOp):
        attributes = {"contextchef.store.operation": effect.name}
        if effect.args and isinstance(effect.args[0], str):
            attributes["contextchef.store.namespace"] = effect.args[0]
        if len(effect.args) > 1 and isinstance(effect.args[1], str):
            attributes["contextchef.store.path"] = effect.args[1]
        return tracer.start_span(
            f"contextchef.store.{effect.name}", context=parent, attributes=attributes
        )
    if isinstance(effect, Call) and effect.what == SUMMARIZER:
        transcript = effect.args[0] if effect.args else None
        attributes = {}
        if isinstance(transcript, list):
            attributes["contextchef.summary.input_messages"] = len(transcript)
            if capture_content:
                attributes[GEN_AI_INPUT_MESSAGES] = as_json(transcript)
        return tracer.start_span("contextchef.summarize", context=parent, attributes=attributes)
    return None


def end_child(
    child: Any, effect: object, result: Any, error: BaseException | None, capture_content: bool
) -> None:
    """End the child span of `effect`, which gave `result` or raised `error`."""
    if isinstance(error, Exception):
        failed(child, error)
        return
    if error is not None:  # the flow was abandoned (closed) while the effect ran
        child.end()
        return
    if isinstance(effect, Call) and isinstance(result, str):
        child.set_attribute("contextchef.summary.output_chars", len(result))
        if capture_content:
            child.set_attribute("contextchef.summary.output", result)
    child.end()


def failed(span: Any, exc: BaseException) -> None:
    """Record `exc` on `span`, mark it failed and end it."""
    span.record_exception(exc)
    span.set_attribute("error.type", type(exc).__qualname__)
    span.set_status(trace.Status(trace.StatusCode.ERROR, type(exc).__name__))
    span.end()


def store_event(span: Any, op: StoreOp[Any], runtime: CompileRuntime | None) -> None:
    """A span event for a store write that means something to the reader of a trace."""
    name = op.name
    if name not in STORE_WRITES or len(op.args) < 2 or not isinstance(op.args[0], str):
        return
    ns, path = op.args[0], op.args[1]
    attributes: dict[str, Any] = {
        "contextchef.store.operation": name,
        "contextchef.store.path": str(path),
    }
    if ns == MEMORY_NAMESPACE:
        span.add_event("contextchef.memory.change", attributes)
        return
    if runtime is None:
        return
    if ns == runtime.offload.namespace and name != "delete":
        entry = op.args[2] if len(op.args) > 2 else None
        size = getattr(entry, "bytes", None)
        if isinstance(size, int):
            attributes["contextchef.offload.bytes"] = size
        span.add_event("contextchef.offload", attributes)
        return
    runner = runtime.overflow_runner
    if runner is not None and ns == runner.overflow.archive and name != "delete":
        span.add_event("contextchef.archive", attributes)
