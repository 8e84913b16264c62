"""Integration benchmark: the pydantic-ai history processor against the chef's own compile.

A 2k-message pydantic-ai conversation (user prompts, responses with tool calls, tool returns of
50-2000 characters). Measured in the same run, with the same chef options (a budget far above
the history, so overflow never runs and only the processing itself is timed):

- floor: the chef's own incremental compile of the same conversation as plain IR messages, the
  next compile after one step is appended (a model response and the request answering it: the
  steady state of an agent loop);
- processor: `HistoryProcessor` on the pydantic-ai messages, one step appended per call
  (conversion to the IR, the compile, and the window converted back);
- cold: the first call of each, on a fresh chef.

The target is processor / floor <= 2. Usage: python benchmarks/integrations.py [--messages 2000]
[--repeats 15]. Writes benchmarks/results/integrations.json.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

from pydantic_ai import messages as pm

from contextchef import ContextChef, summarize
from contextchef.integrations.pydantic_ai import HistoryProcessor, to_ir

HERE = Path(__file__).parent
RESULTS = HERE / "results"
WORDS = ["the", "parser", "returns", "tokens", "for", "each", "line", "and", "a", "nested", "tree"]


def text(rng: random.Random, low: int = 50, high: int = 2000) -> str:
    size = rng.randint(low, high)
    out: list[str] = []
    while sum(len(w) + 1 for w in out) < size:
        out.append(rng.choice(WORDS))
    return " ".join(out)


def conversation(size: int, seed: int = 7) -> list[pm.ModelMessage]:
    """`size` messages: user prompt, tool call, tool return, answer, repeated."""
    rng = random.Random(seed)
    out: list[pm.ModelMessage] = [
        pm.ModelRequest(parts=[pm.SystemPromptPart("You are a coding agent.")])
    ]
    turn = 0
    while len(out) < size:
        call_id = f"call_{turn}"
        out.append(pm.ModelRequest(parts=[pm.UserPromptPart(text(rng, 50, 400))]))
        call = pm.ToolCallPart("read_file", {"path": f"src/m{turn}.py"}, call_id)
        out.append(pm.ModelResponse(parts=[pm.TextPart("Reading."), call]))
        out.append(pm.ModelRequest(parts=[pm.ToolReturnPart("read_file", text(rng), call_id)]))
        out.append(pm.ModelResponse(parts=[pm.TextPart(text(rng, 50, 600))]))
        turn += 1
    return out[:size]


def make_chef() -> ContextChef:
    return ContextChef(budget={"context_window": 10**9}, overflow={"strategy": summarize(None)})


def timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def measure(size: int, repeats: int) -> dict[str, float]:
    messages = conversation(size + 2 * repeats)
    base, extra = messages[:size], messages[size:]

    chef = make_chef()
    plain = [{k: v for k, v in m.items() if k != "pydantic_ai"} for m in to_ir(messages)]
    ir_base = len(to_ir(base))
    system, rest = plain[:1], plain[1:]
    chef.set_system_prompt(system)
    floor_cold = timed(lambda: chef.set_history(rest[: ir_base - 1]).compile(target="openai"))
    floor_steps = []
    for step in range(1, repeats + 1):
        window = rest[: len(to_ir(messages[: size + 2 * step])) - 1]
        floor_steps.append(timed(lambda w=window: chef.set_history(w).compile(target="openai")))

    processor = HistoryProcessor(make_chef())
    processor_cold = timed(lambda: processor(list(base)))
    processor_steps = []
    for step in range(1, repeats + 1):
        window = base + extra[: 2 * step]
        processor_steps.append(timed(lambda w=window: processor(list(w))))

    floor = statistics.median(floor_steps)
    steady = statistics.median(processor_steps)
    return {
        "messages": size,
        "floor_cold_ms": floor_cold,
        "processor_cold_ms": processor_cold,
        "floor_step_ms": floor,
        "processor_step_ms": steady,
        "ratio": steady / floor,
        "cold_ratio": processor_cold / floor_cold,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    row = measure(args.messages, args.repeats)
    print(
        f"{row['messages']} messages: chef compile per step {row['floor_step_ms']:.2f} ms, "
        f"processor per step {row['processor_step_ms']:.2f} ms, ratio {row['ratio']:.2f} "
        f"(target <= 2); cold {row['floor_cold_ms']:.1f} ms vs {row['processor_cold_ms']:.1f} ms "
        f"(ratio {row['cold_ratio']:.2f})"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "integrations.json").write_text(json.dumps(row, indent=2))


if __name__ == "__main__":
    main()
