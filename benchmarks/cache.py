"""Cache-figure benchmark: what `payload.meta.cache` adds to an incremental compile.

For each target, a chef compiles the 10k-message transcript of `compile.py`, then one more user
message at a time (the steady state of an agent loop). Every other compile runs with the cache
measure replaced by a stub that returns an empty report (the floor, same process, same
history), so the two medians differ only by the measure: the ledger entry (an identity pass
over the parts, the facts of the new ones), the first differing part and the report. On a
loaded machine that A/B difference is noisy, so the time spent inside the measure is also taken
in the very compiles it belongs to, and reported as a share of the rest of the compile.

Two hosts are measured: one that passes the same message objects every turn (the chef's caches
keep every converted part), and one that reloads its history as fresh dicts every turn (every
part is converted, and digested, again: the measure matches them by digest).

Usage: python benchmarks/cache.py [--messages 10000] [--repeats 15]
Writes benchmarks/results/cache.json. The issue's target is an overhead of at most 5 %.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import compile as workload

import contextchef.compiler.pipeline as pipeline
from contextchef import CacheReport, ContextChef
from contextchef._effects import Flow

HERE = Path(__file__).parent
RESULTS = HERE / "results"
TARGETS = ("openai", "openai-responses", "anthropic", "gemini")
CLOCK = time.thread_time
"""CPU time of this thread: on a machine shared with other work, wall time mostly measures the
others (the figures are ratios of CPU times taken in the same run)."""


def _stub(*args: Any, **kwargs: Any) -> Flow[CacheReport]:
    """The floor: no ledger, no measure (a flow that yields nothing)."""
    if False:  # pragma: no cover - makes this a generator
        yield None
    return CacheReport(0, 0)


def _steps(history: list[dict[str, Any]], fresh: bool) -> Iterator[list[dict[str, Any]]]:
    grown = list(history)
    step = 0
    while True:
        grown = [*grown, {"role": "assistant", "content": f"Done {step}."}]
        grown = [*grown, {"role": "user", "content": f"One more thing ({step})."}]
        step += 1
        yield json.loads(json.dumps(grown)) if fresh else grown


def measure(
    target: str, history: list[dict[str, Any]], repeats: int, fresh: bool
) -> dict[str, float]:
    """Medians of the +1 compile with the measure and with the stub (interleaved), and the
    median share of the compile spent inside the measure itself (timed in the same compiles,
    the figure least disturbed by other load on the machine)."""
    real = pipeline.measure_cache
    inside: list[float] = []

    def timed(*args: Any, **kwargs: Any) -> Flow[CacheReport]:
        start = CLOCK()
        report = yield from real(*args, **kwargs)
        inside.append(CLOCK() - start)
        return report

    chef = ContextChef().set_system_prompt(workload.SYSTEM)
    chef.set_history(history).compile(target=target)
    steps = _steps(history, fresh)
    timings: dict[bool, list[float]] = {True: [], False: []}
    shares: list[float] = []
    for round_ in range(2 * repeats):
        measured = round_ % 2 == 0
        pipeline.measure_cache = timed if measured else _stub  # type: ignore[assignment]
        try:
            chef.set_history(next(steps))
            start = CLOCK()
            chef.compile(target=target)
            elapsed = CLOCK() - start
        finally:
            pipeline.measure_cache = real
        timings[measured].append(elapsed)
        if measured:
            shares.append(inside[-1] / (elapsed - inside[-1]))
    with_cache = statistics.median(timings[True]) * 1000
    without = statistics.median(timings[False]) * 1000
    return {
        "with_ms": with_cache,
        "floor_ms": without,
        "overhead": with_cache / without - 1,
        "measure_ms": statistics.median(inside) * 1000,
        "share": statistics.median(shares),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    history = workload.transcript(args.messages)
    report: dict[str, Any] = {}
    print(
        f"{'host':<14} {'target':<17} {'+1 ms':>8} {'floor ms':>9} {'A/B':>8} "
        f"{'measure ms':>11} {'share':>7}"
    )
    for host, fresh in (("same objects", False), ("fresh dicts", True)):
        for target in TARGETS:
            row = measure(target, history, args.repeats, fresh)
            report[f"{host}:{target}"] = row
            print(
                f"{host:<14} {target:<17} {row['with_ms']:8.2f} {row['floor_ms']:9.2f} "
                f"{row['overhead']:8.1%} {row['measure_ms']:11.3f} {row['share']:7.1%}"
            )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "cache.json").write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
