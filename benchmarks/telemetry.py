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
from typing import Any

from compile import SYSTEM, transcript
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from contextchef import ContextChef
from contextchef.telemetry import instrument, uninstrument

RESULTS = Path(__file__).parent / "results"


def providers() -> tuple[TracerProvider, MeterProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    return tracer_provider, meter_provider, exporter


def make_chef(
    history: list[dict[str, Any]], janitor: bool, telemetry: bool, count_tokens: bool = False
) -> ContextChef:
    options: dict[str, Any] = {"janitor": {"context_window": 10**8}} if janitor else {}
    chef = ContextChef(**options).set_system_prompt(SYSTEM).set_history(history)
    if telemetry:
        tracer_provider, meter_provider, _ = providers()
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
    tracer_provider, meter_provider, exporter = providers()
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
    result = {f"{key}_ms": min(values) * 1000 for key, values in samples.items()}
    result.update(
        {f"{key}_median_ms": statistics.median(values) * 1000 for key, values in samples.items()}
    )
    result["cold_ratio"] = result["cold_on_ms"] / result["cold_off_ms"]
    result["append_ratio"] = result["append_on_ms"] / result["append_off_ms"]
    return result


def own_cost(history: list[dict[str, Any]], janitor: bool, repeats: int = 300) -> float:
    """Milliseconds telemetry itself spends per compile (its span with every attribute, and
    its metrics), timed on a real payload: the part of the end-to-end difference that is not
    the machine's noise."""
    chef = make_chef(history, janitor, False)
    payload = chef.compile()
    tracer_provider, meter_provider, exporter = providers()
    observer = instrument(chef, tracer_provider=tracer_provider, meter_provider=meter_provider)
    tracer = observer.tracer()
    start = time.perf_counter()
    for _ in range(repeats):
        span = tracer.start_span("contextchef.compile", attributes={"contextchef.target": "x"})
        observer._record(payload, "openai", span, 0.01)
    elapsed = (time.perf_counter() - start) / repeats
    exporter.clear()
    return elapsed * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--size", type=int, default=10_000)
    args = parser.parse_args()
    history = transcript(args.size)
    report: dict[str, Any] = {
        "messages": len(history),
        "with_janitor": scenario(history, janitor=True, repeats=args.repeats),
        "without_janitor": scenario(history, janitor=False, repeats=args.repeats),
        "without_janitor_count_tokens": scenario(
            history, janitor=False, repeats=max(3, args.repeats // 3), count_tokens=True
        ),
    }
    report["with_janitor"]["own_cost_ms"] = own_cost(history, janitor=True)
    report["without_janitor"]["own_cost_ms"] = own_cost(history, janitor=False)
    for name in ("with_janitor", "without_janitor"):
        row = report[name]
        row["own_cost_over_append"] = row["own_cost_ms"] / row["append_off_ms"]
        row["own_cost_over_cold"] = row["own_cost_ms"] / row["cold_off_ms"]
        print(
            f"{name:30} telemetry's own cost {row['own_cost_ms']:.3f} ms per compile = "
            f"{100 * row['own_cost_over_cold']:.2f} % of a cold compile, "
            f"{100 * row['own_cost_over_append']:.1f} % of an append-one compile"
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
