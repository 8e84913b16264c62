"""What the optional orjson speed-up (extra `fast`) is worth: a cold compile (fresh chef +
`set_history` + `compile`) of the compile benchmark's transcript for the two targets that parse
tool-call arguments (anthropic, gemini), with orjson and with the standard-library decoder that
runs when orjson is not installed. Rounds interleave the two; each figure is a median.

Usage: python benchmarks/json_args.py [--sizes 1000,10000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

from compile import SYSTEM, transcript

from contextchef import ContextChef
from contextchef.adapters import anthropic, gemini, json_args

MODULES = {"anthropic": anthropic, "gemini": gemini}


def cold_ms(history: list[dict[str, Any]], target: str) -> float:
    start = time.perf_counter()
    ContextChef().set_system_prompt(SYSTEM).set_history(history).compile(target=target)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if not json_args.ORJSON:
        raise SystemExit("orjson is not installed: nothing to compare (pip install orjson)")
    variants = {"orjson": json_args.loads_sorted_fast, "json": json_args.loads_sorted_stdlib}
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'size':>7} {'target':<10} {'orjson ms':>10} {'json ms':>10} {'json/orjson':>12}")
    for size in (int(s) for s in args.sizes.split(",")):
        history = transcript(size)
        for target, module in MODULES.items():
            times: dict[str, list[float]] = {name: [] for name in variants}
            for _ in range(args.repeats):
                for name, function in variants.items():
                    module.loads_sorted_fast = function  # type: ignore[attr-defined]
                    times[name].append(cold_ms(history, target))
            module.loads_sorted_fast = variants["orjson"]  # type: ignore[attr-defined]
            fast, slow = (statistics.median(times[name]) for name in variants)
            print(f"{size:>7} {target:<10} {fast:>10.1f} {slow:>10.1f} {slow / fast:>12.2f}")


if __name__ == "__main__":
    main()
