"""What pausing the garbage collector over our own steps buys (see `contextchef._collector`).

For each target, times a cold compile (fresh chef, setters, compile, on a history reloaded as
fresh dicts) and a turn (set_history(h + 1) + compile), once as contextchef runs them (the
collector paused inside each step of our own code) and once with every pause switched off, in
interleaved rounds, and prints the medians and their ratio. The host's heap is realistic: the
history it holds is alive the whole time, as in an agent process.

Usage: python benchmarks/collector.py [--size 10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from collections.abc import Iterator
from typing import Any

import orjson

import contextchef._chef_base as chef_base
import contextchef._payload_builder as payload_builder
from contextchef import ContextChef
from contextchef.adapters import adapter_registry

try:
    from compile import SYSTEM, transcript
except ImportError:  # run from the repository root
    from benchmarks.compile import SYSTEM, transcript


@contextlib.contextmanager
def no_pause() -> Iterator[None]:
    """Every collector pause of contextchef switched off."""
    saved = (
        chef_base.collector_paused,
        payload_builder.collector_paused,
        chef_base._ChefBase._runs_only_our_code,
    )
    chef_base.collector_paused = contextlib.nullcontext  # type: ignore[assignment]
    payload_builder.collector_paused = contextlib.nullcontext  # type: ignore[assignment]
    chef_base._ChefBase._runs_only_our_code = lambda self, target: False  # type: ignore[method-assign]
    try:
        yield
    finally:
        (
            chef_base.collector_paused,
            payload_builder.collector_paused,
            chef_base._ChefBase._runs_only_our_code,
        ) = saved  # type: ignore[assignment,method-assign]


def one_round(blob: bytes, target: str, turns: int) -> tuple[float, float]:
    """(cold seconds, median turn seconds) for one fresh chef."""
    history: list[dict[str, Any]] = orjson.loads(blob)
    start = time.perf_counter()
    chef = ContextChef().set_system_prompt(SYSTEM).set_history(history)
    chef.compile(target=target)
    cold = time.perf_counter() - start
    samples = []
    for turn in range(turns):
        history.append({"role": "user", "content": f"And now step {turn}."})
        start = time.perf_counter()
        chef.set_history(history).compile(target=target)
        samples.append(time.perf_counter() - start)
    return cold, statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=5)
    args = parser.parse_args()
    blob = orjson.dumps(transcript(args.size))
    print(f"{args.size} messages; medians of {args.rounds} interleaved rounds (ms)")
    columns = ("cold", "no pause", "ratio", "turn", "no pause", "ratio")
    print(f"{'target':<17}", " ".join(f"{name:>9}" for name in columns))
    for target in adapter_registry.names():
        paused: list[tuple[float, float]] = []
        plain: list[tuple[float, float]] = []
        for _ in range(args.rounds):
            paused.append(one_round(blob, target, args.turns))
            with no_pause():
                plain.append(one_round(blob, target, args.turns))
        cold = statistics.median(p[0] for p in paused) * 1e3
        cold_plain = statistics.median(p[0] for p in plain) * 1e3
        turn = statistics.median(p[1] for p in paused) * 1e3
        turn_plain = statistics.median(p[1] for p in plain) * 1e3
        print(
            f"{target:<17} {cold:9.1f} {cold_plain:9.1f} {cold / cold_plain:9.2f} "
            f"{turn:9.2f} {turn_plain:9.2f} {turn / turn_plain:9.2f}"
        )


if __name__ == "__main__":
    main()
