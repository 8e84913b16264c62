"""OpenTelemetry: what a compile and a tool call look like in traces and metrics, checked with
the SDK's in-memory exporter and reader (providers passed explicitly: the global one is set
once per process, so no test sets it)."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes
from opentelemetry.trace import StatusCode

from contextchef import AsyncContextChef, ContextChef, MissingDependencyError, summarize
from contextchef.telemetry import SEMCONV, instrument, uninstrument

SECRET = "zanzibar"
"""A word only the content carries: it must never reach a span unless content is captured."""


class Telemetry:
    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        found = self.exporter.get_finished_spans()
        return [span for span in found if name is None or span.name == name]

    def metrics(self) -> dict[str, list[Any]]:
        data = self.reader.get_metrics_data()
        out: dict[str, list[Any]] = {}
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    out[metric.name] = list(metric.data.data_points)
        return out


@pytest.fixture
def otel() -> Iterator[Telemetry]:
    telemetry = Telemetry()
    yield telemetry
    telemetry.tracer_provider.shutdown()
    telemetry.meter_provider.shutdown()


def history(turns: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(turns):
        out.append({"role": "user", "content": f"question {i} about {SECRET} " + "word " * 30})
        call = {"id": f"c{i}", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
        out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        out.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"{SECRET} {i}\n" * 600})
        out.append({"role": "assistant", "content": f"noted {SECRET} " * 20})
    return out


def summarizer(messages: list[Any]) -> str:
    return f"summary of {len(messages)} messages ({SECRET})"


def options() -> dict[str, Any]:
    return {
        "memory": {},
        "budget": {"context_window": 3000},
        "overflow": {"strategy": summarize(summarizer)},
        "offload": {"threshold": 2000},
    }


MEMORY = {"command": "create", "path": "memory/city", "file_text": SECRET}


def test_a_compile_is_one_span_with_its_figures_children_and_events(otel: Telemetry) -> None:
    chef = ContextChef(**options())
    instrument(chef, tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)
    chef.handle_tool("context", MEMORY)
    payload = chef.set_history(history(12)).compile(target="anthropic")

    (span,) = otel.spans("contextchef.compile")
    attributes = dict(span.attributes or {})
    tokens = payload.meta.tokens
    report = payload.meta.overflow
    assert report is not None and report.changed
    assert attributes["contextchef.target"] == "anthropic"
    assert attributes["gen_ai.provider.name"] == "anthropic"
    assert attributes["contextchef.messages.held"] == 48
    assert attributes["contextchef.messages.sent"] == len(payload["messages"])
    assert attributes["contextchef.tokens.history"] == tokens.history
    assert attributes["contextchef.tokens.system"] == tokens.system
    assert attributes["contextchef.tokens.tools"] == tokens.tools
    assert attributes["contextchef.tokens.total"] == tokens.total
    assert attributes["contextchef.overflow.strategy"] == "summarize"
    assert attributes["contextchef.overflow.evicted"] == len(report.span) > 0
    assert attributes["contextchef.window.id"] == payload.meta.window_id
    assert attributes["contextchef.memory.shown"] == 1
    assert span.status.status_code is StatusCode.UNSET

    events = [event.name for event in span.events]
    assert events.count("contextchef.offload") == 12  # one per long tool output
    assert "contextchef.archive" in events
    assert events.index("contextchef.compress.start") < events.index("contextchef.compress.end")
    children = [s for s in otel.spans() if s.parent and s.parent.span_id == span.context.span_id]
    names = {child.name for child in children}
    assert "contextchef.summarize" in names
    assert {"contextchef.store.write", "contextchef.store.read_all"} <= names
    (summary,) = otel.spans("contextchef.summarize")
    assert summary.attributes is not None
    assert summary.attributes["contextchef.summary.input_messages"] == len(report.span)


def test_tool_calls_are_execute_tool_spans_with_memory_changes(otel: Telemetry) -> None:
    chef = ContextChef(memory={})
    instrument(chef, tracer_provider=otel.tracer_provider, conversation_id="session-1")
    chef.handle_tool("context", MEMORY)
    chef.handle_tool("context", {"command": "bogus"})
    ok, refused = otel.spans("execute_tool context")
    assert ok.attributes is not None and refused.attributes is not None
    assert ok.attributes["gen_ai.operation.name"] == "execute_tool"
    assert ok.attributes["gen_ai.tool.name"] == "context"
    assert ok.attributes["gen_ai.conversation.id"] == "session-1"
    assert ok.attributes["contextchef.tool.refused"] is False
    assert refused.attributes["contextchef.tool.refused"] is True
    assert [event.name for event in ok.events] == ["contextchef.memory.change"]
    store = [s for s in otel.spans() if s.parent and s.parent.span_id == ok.context.span_id]
    assert {s.name for s in store} >= {"contextchef.store.create"}


def _shape(spans: list[ReadableSpan]) -> list[tuple[str, str, list[str]]]:
    varying = {"contextchef.window.id"}
    return sorted(
        (
            span.name,
            json.dumps(
                {k: v for k, v in (span.attributes or {}).items() if k not in varying},
                sort_keys=True,
            ),
            [event.name for event in span.events],
        )
        for span in spans
    )


async def test_sync_and_async_chefs_record_the_same_spans() -> None:
    shapes = []
    for make in (ContextChef, AsyncContextChef):
        otel = Telemetry()
        chef: Any = make(**options())
        instrument(chef, tracer_provider=otel.tracer_provider)
        result = chef.handle_tool("context", MEMORY)
        if make is AsyncContextChef:
            await result
            await chef.set_history(history(10)).compile()
        else:
            chef.set_history(history(10)).compile()
        shapes.append(_shape(otel.spans()))
    assert shapes[0] == shapes[1]
    assert any(name == "contextchef.summarize" for name, _, _ in shapes[0])


def _recorded(otel: Telemetry) -> str:
    parts = []
    for span in otel.spans():
        parts.append(json.dumps(dict(span.attributes or {}), default=str))
        parts.extend(json.dumps(dict(e.attributes or {}), default=str) for e in span.events)
    return "\n".join(parts)


def test_no_content_is_recorded_unless_asked(otel: Telemetry) -> None:
    chef = ContextChef(**options())
    instrument(chef, tracer_provider=otel.tracer_provider)
    chef.handle_tool("context", MEMORY)
    chef.set_history(history(12)).compile()
    assert SECRET not in _recorded(otel)

    captured = Telemetry()
    chef = ContextChef(**options())
    instrument(chef, tracer_provider=captured.tracer_provider, capture_content=True)
    chef.handle_tool("context", MEMORY)
    chef.set_history(history(12)).compile()
    (span,) = captured.spans("contextchef.compile")
    assert span.attributes is not None
    assert SECRET in str(span.attributes["gen_ai.input.messages"])
    assert "context" in str(span.attributes["gen_ai.tool.definitions"])
    (tool,) = captured.spans("execute_tool context")
    assert tool.attributes is not None
    assert SECRET in str(tool.attributes["gen_ai.tool.call.arguments"])
    assert tool.attributes["gen_ai.tool.call.result"] == "Created context://memory/city."
    (summary,) = captured.spans("contextchef.summarize")
    assert summary.attributes is not None
    assert SECRET in str(summary.attributes["contextchef.summary.output"])


def test_metrics_record_duration_tokens_per_layer_and_evictions(otel: Telemetry) -> None:
    chef = ContextChef(**options())
    instrument(chef, tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)
    first = chef.set_history(history(12)).compile()
    second = chef.set_history([*history(12), {"role": "user", "content": "more"}]).compile()
    metrics = otel.metrics()
    (duration,) = metrics["contextchef.compile.duration"]
    assert duration.count == 2 and duration.sum > 0
    by_layer = {p.attributes["contextchef.layer"]: p for p in metrics["contextchef.compile.tokens"]}
    assert sorted(by_layer) == ["history", "system", "tail", "tools"]
    for layer, point in by_layer.items():
        figures = (getattr(first.meta.tokens, layer), getattr(second.meta.tokens, layer))
        assert point.count == 2 and point.sum == sum(figures)
    (evicted,) = metrics["contextchef.overflow.evicted"]
    assert first.meta.overflow is not None
    assert evicted.value >= len(first.meta.overflow.span) > 0


def test_metrics_alone_need_no_tracer(otel: Telemetry) -> None:
    chef = ContextChef()
    instrument(chef, meter_provider=otel.meter_provider)
    chef.set_history([{"role": "user", "content": "hi"}]).compile()
    assert otel.metrics()["contextchef.compile.duration"][0].count == 1
    assert otel.spans() == []


def test_without_a_tracer_provider_the_flow_is_handed_back_untouched() -> None:
    chef = ContextChef()
    observer = instrument(chef)  # the global provider: never configured in this test process
    assert observer.tracer() is None
    _, flow = chef._flow(None, None)  # what compile() drives: the pipeline's own flow
    assert type(flow).__name__ == "generator" and flow.gi_code.co_name == "compile_flow"
    flow.close()
    assert chef.set_history([{"role": "user", "content": "hi"}]).compile()["messages"]


def test_failures_mark_their_spans(otel: Telemetry) -> None:
    def broken(messages: list[Any]) -> str:
        raise RuntimeError("model down")

    chef = ContextChef(budget={"context_window": 3000}, overflow={"strategy": summarize(broken)})
    instrument(chef, tracer_provider=otel.tracer_provider)
    chef.set_history(history(12)).compile()
    (summary,) = otel.spans("contextchef.summarize")
    assert summary.status.status_code is StatusCode.ERROR
    assert summary.attributes is not None and summary.attributes["error.type"] == "RuntimeError"
    (compile_span,) = otel.spans("contextchef.compile")
    assert compile_span.status.status_code is StatusCode.UNSET  # overflow never fails a compile

    def refuse(messages: list[Any]) -> list[Any]:
        raise ValueError("slot refused")

    chef.use("after_assemble", refuse)
    with pytest.raises(ValueError, match="slot refused"):
        chef.compile()
    failed = otel.spans("contextchef.compile")[-1]
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.attributes is not None and failed.attributes["error.type"] == "ValueError"


def test_uninstrument_removes_the_observer_and_its_handlers(otel: Telemetry) -> None:
    chef = ContextChef(
        budget={"context_window": 3000}, overflow={"strategy": summarize(summarizer)}
    )
    instrument(chef, tracer_provider=otel.tracer_provider)
    instrument(chef, tracer_provider=otel.tracer_provider)  # again: replaces, never doubles
    chef.set_history(history(12)).compile()
    (span,) = otel.spans("contextchef.compile")
    assert [e.name for e in span.events].count("contextchef.compress.start") == 1
    assert uninstrument(chef) and not uninstrument(chef)
    chef.set_history(history(14)).compile()
    assert len(otel.spans("contextchef.compile")) == 1
    assert chef._handlers.for_event("compress:start") == ()


def test_the_semantic_convention_names_match_the_package() -> None:
    for constant, name in SEMCONV.items():
        assert getattr(gen_ai_attributes, constant) == name


def test_without_the_extra_the_import_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    monkeypatch.delitem(sys.modules, "contextchef.telemetry", raising=False)
    with pytest.raises(MissingDependencyError, match=r"contextchef\[otel\]") as info:
        importlib.import_module("contextchef.telemetry")
    assert info.value.extra == "otel"


def test_tokens_are_recorded_when_counted_and_counted_on_request(otel: Telemetry) -> None:
    chef = ContextChef().set_history([{"role": "user", "content": "hi"}])
    instrument(chef, tracer_provider=otel.tracer_provider)
    payload = chef.compile()
    (span,) = otel.spans("contextchef.compile")
    assert not payload.meta.counted  # telemetry did not make the compile count its tokens
    assert span.attributes is not None and "contextchef.tokens.total" not in span.attributes
    instrument(chef, tracer_provider=otel.tracer_provider, count_tokens=True)
    payload = chef.compile()
    counted = otel.spans("contextchef.compile")[-1]
    assert counted.attributes is not None
    assert counted.attributes["contextchef.tokens.total"] == payload.meta.tokens.total > 0
