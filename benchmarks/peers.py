"""Peers benchmark: contextchef's framework integrations against the classes they replace.

One function per workload; each times ours and the peer interleaved (ours, peer, ours, …) in
the same process on the same machine, and reports wall-clock min and median of each, the
ratio of the medians (ours / peer) and the median of each round's ratio (the two back to back,
so a change of load between rounds cancels out). The load average is printed, since a busy
machine widens the spread. Sections:

- `agents_sdk_add`: `ContextChefSession.add_items` vs the SDK's `SQLiteSession.add_items`,
  `--adds` calls of one item each on a fresh file database (seconds for all of them).
- `agents_sdk_get`: `get_items(limit=20)` on a session already holding `--items` items (one
  per `add_items` call), each on its own file database (seconds per call).

Usage: python benchmarks/peers.py [--adds 1000] [--items 10000] [--repeats 5]
The issue's target is a ratio of at most 1.5 for both, and a per-call cost that stays flat as
the session grows (compare `--items 1000` with `--items 10000`).

With `--langgraph`, the LangGraph store's sections instead (see `peers_langgraph`, whose
`--lg-items` items the workloads run over).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agents import SQLiteSession

from contextchef.integrations.openai_agents import ContextChefSession

Factory = Callable[[Path], Any]


def _ours(directory: Path) -> Any:
    return ContextChefSession("bench", directory / "ours.db")


def _theirs(directory: Path) -> Any:
    return SQLiteSession("bench", directory / "theirs.db")


async def _timed(run: Callable[[], Awaitable[None]]) -> float:
    start = time.perf_counter()
    await run()
    return time.perf_counter() - start


async def _interleaved(
    measure: Callable[[Factory], Awaitable[float]], repeats: int
) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"ours": [], "peer": []}
    for _ in range(repeats):
        times["ours"].append(await measure(_ours))
        times["peer"].append(await measure(_theirs))
    return times


def _item(n: int) -> dict[str, str]:
    return {"role": "user", "content": f"message {n}"}


async def agents_sdk_add(adds: int, repeats: int) -> dict[str, list[float]]:
    """`add_items` × `adds`, one item each, on a fresh database: total seconds."""

    async def measure(factory: Factory) -> float:
        with tempfile.TemporaryDirectory() as directory:
            session = factory(Path(directory))

            async def run() -> None:
                for n in range(adds):
                    await session.add_items([_item(n)])

            elapsed = await _timed(run)
            session.close()
            return elapsed

    return await _interleaved(measure, repeats)


async def agents_sdk_get(items: int, repeats: int, calls: int = 100) -> dict[str, list[float]]:
    """`get_items(limit=20)` on a session of `items` items: seconds per call."""
    directory = Path(tempfile.mkdtemp())
    sessions = {"ours": _ours(directory), "peer": _theirs(directory)}
    for session in sessions.values():
        for n in range(items):
            await session.add_items([_item(n)])

    async def measure(factory: Factory) -> float:
        session = sessions["ours" if factory is _ours else "peer"]

        async def run() -> None:
            for _ in range(calls):
                assert len(await session.get_items(limit=20)) == 20

        return await _timed(run) / calls

    try:
        return await _interleaved(measure, repeats)
    finally:
        for session in sessions.values():
            session.close()


def _report(name: str, times: dict[str, list[float]]) -> None:
    ours, peer = statistics.median(times["ours"]), statistics.median(times["peer"])
    paired = statistics.median(a / b for a, b in zip(times["ours"], times["peer"], strict=True))
    print(
        f"{name:16} ours min {min(times['ours']) * 1e3:9.2f} ms  median {ours * 1e3:9.2f} ms | "
        f"peer min {min(times['peer']) * 1e3:9.2f} ms  median {peer * 1e3:9.2f} ms | "
        f"ratio {ours / peer:5.2f} (of the medians), {paired:5.2f} (median of each round's)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--adds", type=int, default=1000)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--langgraph", action="store_true", help="the LangGraph store instead")
    parser.add_argument("--lg-items", type=int, default=2000)
    args = parser.parse_args()
    os.environ.setdefault("CONTEXTCHEF_HOME", tempfile.mkdtemp())
    print("load average:", " ".join(f"{v:.2f}" for v in os.getloadavg()))
    if args.langgraph:
        import peers_langgraph as lg

        lg.report("memory", lg.memory(args.lg_items, args.repeats))
        lg.report("sqlite", lg.sqlite(args.lg_items, args.repeats))
        print("load average:", " ".join(f"{v:.2f}" for v in os.getloadavg()))
        return
    _report("agents_sdk_add", asyncio.run(agents_sdk_add(args.adds, args.repeats)))
    _report("agents_sdk_get", asyncio.run(agents_sdk_get(args.items, args.repeats)))
    print("load average:", " ".join(f"{v:.2f}" for v in os.getloadavg()))


if __name__ == "__main__":
    main()
