"""Telemetry overhead: a 10k-message compile with `instrument(chef)` on, against the same compile
with no telemetry, measured in the same run (alternating, so machine load hits both alike).

Telemetry on means the OpenTelemetry SDK's TracerProvider (spans exported to memory) and a
MeterProvider (an in-memory reader). Scenarios, each with the floor (no telemetry) and the ratio:

- cold: a fresh chef's first compile of the 10k-message transcript;
- append-one: the next compile after one user message (the steady state of an agent loop);
- with and without a janitor: without one, a compile never counts tokens unless someone reads
  them, so telemetry records tokens per layer only when they were counted; the third row shows
  what `count_tokens=True` (telemetry counts them itself) costs there.

Ratios compare the fastest sample of each side (the machine's noise only ever adds time; the
medians are written too). The issue's bar: telemetry adds at most 5 % to a 10k-message compile.

Metric records are queued by the compile and replayed when a reader collects
(`contextchef.telemetry.replay`): the append-one loop collects after every instrumented compile,
untimed, as a periodic reader would between turns, and `own_cost` reports both what a compile
pays (`own_cost_ms`) and what the replay of its records costs at collection (`replay_ms`).

Usage: python benchmarks/telemetry.py [--repeats 15]
Writes benchmarks/results/telemetry.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from compile import SYSTEM, transcript
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from contextchef import ContextChef
from contextchef._version import __version__
from contextchef.telemetry import instrument, uninstrument
from contextchef.telemetry.replay import queue_for

RESULTS = Path(__file__).parent / "results"


class Providers(NamedTuple):
    tracer_provider: TracerProvider
    meter_provider: MeterProvider
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader


def providers() -> Providers:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    return Providers(tracer_provider, meter_provider, exporter, reader)


def make_chef(
    history: list[dict[str, Any]], janitor: bool, telemetry: bool, count_tokens: bool = False
) -> ContextChef:
    options: dict[str, Any] = {"janitor": {"context_window": 10**8}} if janitor else {}
    chef = ContextChef(**options).set_system_prompt(SYSTEM).set_history(history)
    if telemetry:
        tracer_provider, meter_provider, _, _ = providers()
        instrument(
            chef,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
            count_tokens=count_tokens,
        )
    return chef


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def scenario(
    history: list[dict[str, Any]], janitor: bool, repeats: int, count_tokens: bool = False
) -> dict[str, float]:
    """Cold compiles of fresh chefs (on and off in turn), then append-one compiles of one warm
    chef fed a growing history, instrumented for every other compile: the same chef, memory
    layout and caches on both sides, so the difference is telemetry's own cost."""
    samples: dict[str, list[float]] = {
        "cold_off": [],
        "cold_on": [],
        "append_off": [],
        "append_on": [],
    }
    for index in range(repeats):
        order = (False, True) if index % 2 == 0 else (True, False)  # alternate who goes first
        for telemetry in order:
            chef = make_chef(history, janitor, telemetry, count_tokens)
            samples["cold_on" if telemetry else "cold_off"].append(timed(chef.compile))
    chef = make_chef(history, janitor, False)
    chef.compile()
    tracer_provider, meter_provider, exporter, reader = providers()
    grown = list(history)
    for index in range(repeats * 6):
        grown += [
            {"role": "assistant", "content": f"Step {index} done."},
            {"role": "user", "content": f"Now step {index + 1}."},
        ]
        telemetry = index % 4 in (1, 2)  # off, on, on, off: no periodic effect favours a side
        if telemetry:
            instrument(
                chef,
                tracer_provider=tracer_provider,
                meter_provider=meter_provider,
                count_tokens=count_tokens,
            )
        chef.set_history(grown)
        samples["append_on" if telemetry else "append_off"].append(timed(chef.compile))
        uninstrument(chef)
        exporter.clear()
        reader.get_metrics_data()  # a reader collecting between turns replays queued records
    result = {f"{key}_ms": min(values) * 1000 for key, values in samples.items()}
    result.update(
        {f"{key}_median_ms": statistics.median(values) * 1000 for key, values in samples.items()}
    )
    result["cold_ratio"] = result["cold_on_ms"] / result["cold_off_ms"]
    result["append_ratio"] = result["append_on_ms"] / result["append_off_ms"]
    return result


def own_cost(history: list[dict[str, Any]], janitor: bool, repeats: int = 300) -> dict[str, float]:
    """Milliseconds telemetry itself spends per compile (its span with every attribute, and
    its metrics), timed on a real payload: the part of the end-to-end difference that is not
    the machine's noise. `own_cost_ms` is what the compile pays; `replay_ms` what replaying
    its queued metric records costs when a reader collects (every ten compiles here)."""
    chef = make_chef(history, janitor, False)
    payload = chef.compile()
    tracer_provider, meter_provider, exporter, reader = providers()
    observer = instrument(chef, tracer_provider=tracer_provider, meter_provider=meter_provider)
    tracer = observer.tracer()
    queue = queue_for(meter_provider.get_meter("contextchef", __version__))
    spent = replayed = 0.0
    for index in range(repeats):
        start = time.perf_counter()
        span = tracer.start_span("contextchef.compile", attributes={"contextchef.target": "x"})
        observer._record(payload, "openai", span, 0.01)
        spent += time.perf_counter() - start
        if index % 10 == 9 and queue is not None:
            start = time.perf_counter()
            queue.flush()
            replayed += time.perf_counter() - start
            reader.get_metrics_data()
    exporter.clear()
    return {"own_cost_ms": spent / repeats * 1000, "replay_ms": replayed / repeats * 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--size", type=int, default=10_000)
    args = parser.parse_args()
    history = transcript(args.size)
    report: dict[str, Any] = {
        "messages": len(history),
        "with_janitor": scenario(history, budget=True, repeats=args.repeats),
        "without_janitor": scenario(history, budget=False, repeats=args.repeats),
        "without_janitor_count_tokens": scenario(
            history, budget=False, repeats=max(3, args.repeats // 3), count_tokens=True
        ),
    }
    report["with_janitor"].update(own_cost(history, budget=True))
    report["without_janitor"].update(own_cost(history, budget=False))
    for name in ("with_janitor", "without_janitor"):
        row = report[name]
        row["own_cost_over_append"] = row["own_cost_ms"] / row["append_off_ms"]
        row["own_cost_over_cold"] = row["own_cost_ms"] / row["cold_off_ms"]
        print(
            f"{name:30} telemetry's own cost {row['own_cost_ms']:.3f} ms per compile = "
            f"{100 * row['own_cost_over_cold']:.2f} % of a cold compile, "
            f"{100 * row['own_cost_over_append']:.1f} % of an append-one compile "
            f"(+ {row['replay_ms']:.3f} ms per compile replayed at collection)"
        )
    for name in ("with_janitor", "without_janitor", "without_janitor_count_tokens"):
        row = report[name]
        assert isinstance(row, dict)
        print(
            f"{name:30} cold {row['cold_off_ms']:7.1f} ms -> {row['cold_on_ms']:7.1f} ms "
            f"(x{row['cold_ratio']:.3f})   append-one {row['append_off_ms']:6.2f} ms -> "
            f"{row['append_on_ms']:6.2f} ms (x{row['append_ratio']:.3f})"
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "telemetry.json").write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
