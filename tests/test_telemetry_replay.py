"""Metric records leave the compile: it queues them, a reader's collection replays them first.

What a reader sees must be what recording at once gave: the same data points, in every
collection, with the trace context of the compile that made them; a queue nobody drains stays
bounded; the gauge that drives the replay never shows up as a metric."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry import trace

from contextchef import ContextChef
from contextchef._version import __version__
from contextchef.telemetry import instrument, replay
from tests.test_telemetry import Telemetry, history, options, otel  # noqa: F401  (fixture)


def compiled(telemetry: Telemetry, turns: int = 12) -> ContextChef:
    chef = ContextChef(**options())
    providers = {
        "tracer_provider": telemetry.tracer_provider,
        "meter_provider": telemetry.meter_provider,
    }
    instrument(chef, **providers)
    chef.set_history(history(turns)).compile()
    return chef


def figures(telemetry: Telemetry) -> dict[tuple[str, tuple[Any, ...]], tuple[Any, ...]]:
    """Every data point but the durations' sums and bounds (a duration differs run to run)."""
    out: dict[tuple[str, tuple[Any, ...]], tuple[Any, ...]] = {}
    for name, points in telemetry.metrics().items():
        for point in points:
            key = (name, tuple(sorted((point.attributes or {}).items())))
            if hasattr(point, "count"):
                exact = name != "contextchef.compile.duration"
                out[key] = (point.count, point.sum if exact else None)
            else:
                out[key] = (point.value,)
    return out


def test_a_collection_sees_every_compile_before_it(otel: Telemetry) -> None:  # noqa: F811
    chef = compiled(otel)
    assert otel.metrics()["contextchef.compile.duration"][0].count == 1
    chef.set_history([*history(12), {"role": "user", "content": "more"}]).compile()
    chef.compile()
    assert otel.metrics()["contextchef.compile.duration"][0].count == 3
    assert replay.REPLAY_GAUGE not in otel.metrics()


def test_replayed_records_equal_records_made_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    queued, direct = Telemetry(), Telemetry()
    compiled(queued)
    monkeypatch.setattr(replay, "MAX_PENDING", 0)  # every record goes straight in
    compiled(direct)
    assert figures(queued) == figures(direct)
    assert {name for name, _ in figures(queued)} == {
        "contextchef.compile.duration",
        "contextchef.compile.tokens",
        "contextchef.cache.reuse_ratio",
        "contextchef.overflow.evicted",
    }


def test_records_keep_the_trace_of_the_compile_for_exemplars(otel: Telemetry) -> None:  # noqa: F811
    tracer = otel.tracer_provider.get_tracer("host")
    with tracer.start_as_current_span("agent turn") as turn:
        compiled(otel)
        host = trace.get_current_span().get_span_context().trace_id
    assert host == turn.get_span_context().trace_id
    (duration,) = otel.metrics()["contextchef.compile.duration"]
    assert [exemplar.trace_id for exemplar in duration.exemplars] == [host]


def test_a_queue_nobody_drains_stays_bounded(
    otel: Telemetry,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(replay, "MAX_PENDING", 4)
    chef = compiled(otel)  # six records: four queued, two made at once
    for _ in range(3):
        chef.compile()
    queue = replay.queue_for(otel.meter_provider.get_meter("contextchef", __version__))
    assert queue is not None and len(queue._pending) == 4
    assert otel.metrics()["contextchef.compile.duration"][0].count == 4
    assert len(queue._pending) == 0


def test_chefs_on_one_provider_share_one_queue(otel: Telemetry) -> None:  # noqa: F811
    first = compiled(otel)
    compiled(otel)
    instrument(first, tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)
    first.compile()  # instrumented again: a new observer, the same meter and queue
    queue = replay.queue_for(otel.meter_provider.get_meter("contextchef", __version__))
    assert queue is not None and queue._pending
    assert otel.metrics()["contextchef.compile.duration"][0].count == 3
    assert not queue._pending
