"""Cold-path benchmark: message intake and the cold cache ledger's sizing, each against the
reference path it replaces, in the same run.

- intake: `intake_message` (the one-pass fast path) and `intake_messages` (a history: the native
  batch path of `_intake_core` first) vs `reference_intake` (`validate_message` + `strict_json`),
  all read from the message schema;
- sizing: `message_facts` (pydantic-core bytes, guarded) vs `part_facts` (`json.dumps`) over the
  message parts of each target's payload.

CPU time (`time.process_time`), best of interleaved repeats: the machine is shared.
Usage: python benchmarks/intake.py [--size 10000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence
from typing import Any

from compile import SYSTEM, transcript

from contextchef import ContextChef
from contextchef._intake import intake_message, intake_messages, reference_intake
from contextchef.cache._part_sizes import message_facts
from contextchef.cache.economics import part_facts

TARGETS = ("openai", "openai-responses", "anthropic", "gemini")


def best_ms(runs: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.process_time()
            run()
            best[name] = min(best[name], (time.process_time() - start) * 1000)
    return best


def message_parts(history: Sequence[Any], target: str) -> list[Any]:
    payload = ContextChef().set_system_prompt(SYSTEM).set_history(history).compile(target=target)
    parts: list[Any] = payload.get("messages") or payload.get("input") or payload["contents"]
    return parts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    history = transcript(args.size)
    intake = best_ms(
        {
            "reference": lambda: [reference_intake(m, i) for i, m in enumerate(history)],
            "intake_message": lambda: [intake_message(m, i) for i, m in enumerate(history)],
            "intake_messages": lambda: intake_messages(history),
        },
        args.repeats,
    )
    ratio = intake["reference"] / intake["intake_message"]
    batch = intake["reference"] / intake["intake_messages"]
    print(
        f"intake of {args.size} messages: {intake['reference']:.1f} ms reference, "
        f"{intake['intake_message']:.1f} ms fast ({ratio:.2f}x), "
        f"{intake['intake_messages']:.1f} ms as a history, native batches first ({batch:.2f}x)"
    )
    for target in TARGETS:
        parts = message_parts(history, target)
        sizing = best_ms(
            {
                "part_facts": lambda parts=parts: [part_facts(p) for p in parts],
                "message_facts": lambda parts=parts: [message_facts(p) for p in parts],
            },
            args.repeats,
        )
        ratio = sizing["part_facts"] / sizing["message_facts"]
        print(
            f"cold sizing, {target:16s} {len(parts):6d} parts: {sizing['part_facts']:.1f} ms "
            f"json, {sizing['message_facts']:.1f} ms guarded pydantic-core ({ratio:.2f}x)"
        )


if __name__ == "__main__":
    main()
