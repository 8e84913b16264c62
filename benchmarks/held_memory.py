"""What a chef holds after a cold compile and a few turns, by the line that allocated it.

The host's history is loaded first (outside the trace), then traced: a fresh chef, its system
prompt, `set_history`, `compile`, and a few appending turns (as `compile.py`'s RSS child runs
them). The payloads are dropped before the snapshot, so what is listed is what the chef keeps:
its copies of the messages, its conversion memo and merge state, the repair pass's state, the
cache ledger. Read the sites with one caveat: CPython reuses freed dict-key tables, so a table
first allocated by a short-lived parse (say `_jsonload.py`, under the intake's validator) is
charged to that line though a copy now owns it.

Usage: python benchmarks/held_memory.py [--size 50000] [--targets openai,anthropic,gemini]
       [--top 12]
"""

from __future__ import annotations

import argparse
import gc
import json
import tracemalloc

from compile import SYSTEM, transcript, turn_messages

from contextchef import ContextChef


def held(history: list[dict[str, object]], target: str, top: int) -> None:
    extra = turn_messages(history, 3)
    gc.collect()
    tracemalloc.start(1)
    before = tracemalloc.take_snapshot()
    chef = ContextChef().set_system_prompt(SYSTEM)
    chef.set_history(history)
    payload = chef.compile(target=target)
    host = history
    for message in extra:
        host = [*host, message]
        chef.set_history(host)
        payload = chef.compile(target=target)
    del payload, host
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    print(f"{target}: held {current / 2**20:.1f} MiB, traced peak {peak / 2**20:.1f} MiB")
    for stat in after.compare_to(before, "lineno")[:top]:
        frame = stat.traceback[0]
        where = f"{frame.filename.rsplit('/src/', 1)[-1]}:{frame.lineno}"
        print(f"  {stat.size_diff / 2**10:9.0f} KiB {stat.count_diff:8d} objects  {where}")
    del chef


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=50000)
    parser.add_argument("--targets", default="openai,anthropic,gemini")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    history = json.loads(json.dumps(transcript(args.size)))
    for target in args.targets.split(","):
        held(history, target, args.top)


if __name__ == "__main__":
    main()
