"""What `gc.freeze()` buys an agent host: the HOST's choice, measured, never the library's.

Python's cyclic collector now and then makes a full pass over every container object alive; in
an agent process those are mostly long-lived (the host's history, its SDK clients, the chef's
copies and conversions), so a full pass costs in proportion to what the host holds, not to what
a compile allocates. contextchef never touches the collector (a library must not switch a
process-wide setting; see docs/performance.md). A host that loads its history once and keeps
it may call `gc.freeze()` after start-up, and the full passes skip everything alive then.

For each target, in interleaved rounds on a history the host holds the whole time:

- as is: the host never calls `gc`;
- frozen: the host calls `gc.freeze()` once its history is loaded and its chef has compiled
  (and `gc.unfreeze()` when the round ends, to leave the next round as it found it).

Each round times a cold start (fresh chef, setters, compile) and `--turns` turns of a host that
reloads its history as fresh dicts every turn (`orjson.loads` + `set_history` + `compile`: the
turn that allocates most, timed whole, since a full pass runs wherever an allocation triggers
it, in the host's code as well as ours), and counts the collector's full passes
(`gc.get_stats()`). Printed: medians over rounds of the cold start and of the mean turn (a full
pass lands on some turns only, so the mean shows what it costs per turn), and their ratios.

Usage: python benchmarks/freeze.py [--size 10000] [--rounds 5] [--turns 20]
       [--targets openai,anthropic] [--clock cpu|wall]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

import orjson

from contextchef import ContextChef

try:
    from compile import SYSTEM, transcript, turn_messages
except ImportError:  # run from the repository root
    from benchmarks.compile import SYSTEM, transcript, turn_messages

CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.thread_time, "wall": time.perf_counter}


def full_passes() -> int:
    return int(gc.get_stats()[2]["collections"])


def one_round(
    blob: bytes, target: str, turns: int, *, frozen: bool, clock: Callable[[], float]
) -> tuple[float, float, int]:
    """(cold ms, mean turn ms, full passes during the turns) for one fresh host."""
    history: list[dict[str, Any]] = orjson.loads(blob)
    if frozen:
        gc.freeze()  # the host's history is loaded: everything alive now is long-lived
    try:
        start = clock()
        chef = ContextChef().set_system_prompt(SYSTEM).set_history(history)
        chef.compile(target=target)
        cold = clock() - start
        if frozen:
            gc.freeze()  # and so is the chef it keeps for the whole session
        stored = orjson.dumps(history)
        spent, passes = 0.0, full_passes()
        for message in turn_messages(history, turns):
            start = clock()
            reloaded = orjson.loads(stored)
            reloaded.append(message)
            chef.set_history(reloaded).compile(target=target)
            spent += clock() - start
            stored = orjson.dumps(reloaded)
        return cold * 1e3, spent / turns * 1e3, full_passes() - passes
    finally:
        if frozen:
            gc.unfreeze()
        gc.collect()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--targets", default="openai,anthropic,openai-responses,gemini")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
    blob = orjson.dumps(transcript(args.size))
    print(
        f"{args.size} messages, {args.turns} reloading turns per round; medians of "
        f"{args.rounds} interleaved rounds (ms of {args.clock} time); 'passes' = the "
        "collector's full passes during the turns"
    )
    header = ("cold", "frozen", "ratio", "turn", "frozen", "ratio", "passes", "frozen")
    print(f"{'target':<17}", " ".join(f"{name:>8}" for name in header))
    for target in args.targets.split(","):
        rounds: dict[bool, list[tuple[float, float, int]]] = {False: [], True: []}
        for _ in range(args.rounds):
            for frozen in (False, True):
                rounds[frozen].append(
                    one_round(blob, target, args.turns, frozen=frozen, clock=clock)
                )
        cold, turn, passes = (
            [statistics.median(r[i] for r in rounds[frozen]) for frozen in (False, True)]
            for i in range(3)
        )
        print(
            f"{target:<17} {cold[0]:8.1f} {cold[1]:8.1f} {cold[1] / cold[0]:8.2f} "
            f"{turn[0]:8.2f} {turn[1]:8.2f} {turn[1] / turn[0]:8.2f} "
            f"{passes[0]:8.0f} {passes[1]:8.0f}"
        )


if __name__ == "__main__":
    main()
