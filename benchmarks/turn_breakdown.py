"""Where an agent turn's CPU goes, per target: `set_history(h + 1)`, then `compile` and its stages.

`eq` is the floor of the turn: the host's list `==` the chef's copies of it (the comparison the
intake makes to see edits made in place; `intake ==` is that comparison inside the intake).

The same transcript as benchmarks/compile.py; one chef per target, `--turns` appended turns, the
first two untimed. Each stage is timed with `time.thread_time` by a wrapper put around it for
this run only (a few microseconds per call, against stages of tenths of a millisecond), so the
figures are CPU milliseconds per turn, steady on a loaded machine, and comparable between
targets of one run. Targets alternate over `--rounds` rounds; each figure is the median.

Usage: python benchmarks/turn_breakdown.py [--size 10000] [--turns 20] [--rounds 3]
       [--targets openai,anthropic,gemini]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable
from typing import Any

from compile import SYSTEM, transcript, turn_messages

from contextchef import ContextChef, _memo
from contextchef._memo import ConversionCache, MessageIntake
from contextchef._repair import HistoryRepair
from contextchef.cache.ledger import CacheLedger
from contextchef.compiler._payload_builder import PayloadBuilder

Stages = dict[str, float]


def _timed(owner: Any, name: str, label: str, totals: Stages) -> Callable[[], None]:
    """Wrap `owner.name` so its CPU time adds up in `totals[label]`; returns the undo."""
    original = getattr(owner, name)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        began = time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            totals[label] = totals.get(label, 0.0) + time.thread_time() - began

    setattr(owner, name, wrapper)
    return lambda: setattr(owner, name, original)


STAGES = (
    (MessageIntake, "take", "intake"),
    (_memo, "_equal", "intake =="),  # an appended history's comparison
    (_memo, "_equal_ends", "intake ends"),  # any other history's
    (HistoryRepair, "resume", "repair"),
    (PayloadBuilder, "adapt", "adapt"),
    (ConversionCache, "convert_all", "convert_all"),
    (CacheLedger, "advance", "meta.cache ledger"),
)


def one_target(history: list[dict[str, Any]], extra: list[dict[str, Any]], target: str) -> Stages:
    totals: Stages = {}
    undo = [_timed(owner, name, label, totals) for owner, name, label in STAGES]
    try:
        chef = ContextChef()
        chef.set_system_prompt(SYSTEM).set_history(history)
        chef.compile(target=target)
        grown = list(history)
        per_turn: list[Stages] = []
        for index, message in enumerate(extra):
            grown = [*grown, message]
            totals.clear()
            began = time.thread_time()
            chef.set_history(grown)
            middle = time.thread_time()
            chef.compile(target=target)
            ended = time.thread_time()
            began_eq = time.thread_time()
            assert grown == chef._history._intake.held  # the floor: one C comparison
            eq = time.thread_time() - began_eq
            if index >= 2:
                timed = {"set_history": middle - began, "compile": ended - middle, "eq": eq}
                per_turn.append({**timed, **totals})
    finally:
        for step in undo:
            step()
    return {key: statistics.median(t.get(key, 0.0) for t in per_turn) * 1000 for key in per_turn[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--targets", default="openai,anthropic,gemini")
    args = parser.parse_args()
    history = transcript(args.size)
    extra = turn_messages(history, args.turns + 2)
    targets = [t for t in args.targets.split(",") if t]
    rounds: dict[str, list[Stages]] = {t: [] for t in targets}
    for _ in range(args.rounds):
        for target in targets:
            rounds[target].append(one_target(history, extra, target))
    keys = list(rounds[targets[0]][0])
    print(f"CPU ms per turn, {args.size} messages, median of {args.rounds} rounds")
    print(f"{'target':<12}" + "".join(f"{key:>19}" for key in keys))
    for target in targets:
        cells = [statistics.median(r.get(key, 0.0) for r in rounds[target]) for key in keys]
        print(f"{target:<12}" + "".join(f"{cell:>19.2f}" for cell in cells))


if __name__ == "__main__":
    main()
