"""Compile benchmark: median compile time per target, against `orjson.dumps` of the same payload.

Builds realistic agent transcripts (user turns, assistant turns with tool calls, tool results of
50-2000 characters) of 100, 1k, 10k and 50k messages, and reports for each target:

- cold: a fresh chef's first compile (nothing memoised), and its ratio to the floor;
- floor: `orjson.dumps(payload)` of the very payload compiled, in the same run;
- append-one: the next compile after one user message is appended (the steady state of an
  agent loop), and its ratios to cold and to the floor;
- the TypeScript reference @context-chef/core 4.2.1 on the same history file, when Node and a
  scratch install are available (set CONTEXTCHEF_TS_REF to the package folder, default
  /tmp/ctxref/node_modules/@context-chef/core).

Usage: python benchmarks/compile.py [--sizes 100,1000,10000,50000] [--repeats 5]
Writes benchmarks/results/compile.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from contextchef import ContextChef, summarize
from contextchef.adapters import adapter_registry

HERE = Path(__file__).parent
RESULTS = HERE / "results"
WORDS = [
    "the",
    "parser",
    "returns",
    "tokens",
    "for",
    "each",
    "line",
    "of",
    "input",
    "and",
    "the",
    "test",
    "expects",
    "a",
    "tree",
    "with",
    "nested",
    "nodes",
    "so",
    "we",
    "check",
    "the",
    "grammar",
    "file",
    "again",
    "before",
    "editing",
    "anything",
    "else",
    "in",
    "the",
    "module",
]


def text(rng: random.Random, low: int = 50, high: int = 2000) -> str:
    size = rng.randint(low, high)
    out: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(WORDS)
        out.append(word)
        length += len(word) + 1
    return " ".join(out)[:size]


def transcript(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """A deterministic agent transcript of exactly `count` messages."""
    rng = random.Random(seed)
    history: list[dict[str, Any]] = []
    call = 0
    while len(history) < count:
        history.append({"role": "user", "content": text(rng)})
        for _ in range(rng.randint(1, 3)):
            calls = []
            for _ in range(rng.randint(1, 2)):
                call += 1
                arguments = json.dumps({"path": f"src/module_{call}.py", "limit": call % 50})
                calls.append(
                    {
                        "id": f"call_{call}",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": arguments},
                    }
                )
            reply = {"role": "assistant", "content": text(rng, 20, 300), "tool_calls": calls}
            history.append(reply)
            for c in calls:
                history.append({"role": "tool", "tool_call_id": c["id"], "content": text(rng)})
        history.append({"role": "assistant", "content": text(rng)})
    history = history[:count]
    while history and history[-1]["role"] != "user" and history[-1].get("tool_calls"):
        history.pop()
    # a cut through a tool-call turn would leave calls unanswered: end on a complete turn
    while history and history[-1]["role"] == "assistant" and history[-1].get("tool_calls"):
        history.pop()
    return history


SYSTEM = [{"role": "system", "content": "You are a coding agent. " * 20}]


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def measure(history: list[dict[str, Any]], target: str, repeats: int) -> dict[str, float]:
    cold: list[float] = []
    append_one: list[float] = []
    floor: list[float] = []
    longer = [*history, {"role": "user", "content": "One more thing."}]
    for _ in range(repeats):
        chef = ContextChef().set_system_prompt(SYSTEM).set_history(history)
        start = time.perf_counter()
        payload = chef.compile(target=target)
        cold.append(time.perf_counter() - start)
        start = time.perf_counter()
        orjson.dumps(payload)
        floor.append(time.perf_counter() - start)
        chef.set_history(longer)
        start = time.perf_counter()
        chef.compile(target=target)
        append_one.append(time.perf_counter() - start)
    result = {
        "cold_ms": median_ms(cold),
        "floor_ms": median_ms(floor),
        "append_one_ms": median_ms(append_one),
    }
    result["cold_over_floor"] = result["cold_ms"] / result["floor_ms"]
    result["append_over_cold"] = result["append_one_ms"] / result["cold_ms"]
    result["append_over_floor"] = result["append_one_ms"] / result["floor_ms"]
    return result


def fake_summarizer(messages: list[Any]) -> str:
    return "<summary>The work so far, in brief.</summary>"


def measure_overflow(history: list[dict[str, Any]], target: str, repeats: int) -> float:
    """Median ms of a compile that has to compress (a fresh chef each time, fake summarizer)."""
    samples: list[float] = []
    for _ in range(repeats):
        chef = ContextChef(
            janitor={"context_window": 8000},
            overflow={"strategy": summarize(fake_summarizer)},
        )
        chef.set_system_prompt(SYSTEM).set_history(history)
        start = time.perf_counter()
        payload = chef.compile(target=target)
        samples.append(time.perf_counter() - start)
        assert payload.meta.overflow is not None and payload.meta.overflow.changed
    return median_ms(samples)


def reference(history: list[dict[str, Any]], repeats: int) -> dict[str, Any] | None:
    default = "/tmp/ctxref/node_modules/@context-chef/core"
    package = Path(os.environ.get("CONTEXTCHEF_TS_REF", default))
    node = shutil.which("node")
    if node is None or not (package / "dist" / "index.mjs").exists():
        return None
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "history.json"
        path.write_text(json.dumps({"system": SYSTEM, "history": history}))
        done = subprocess.run(
            [node, str(HERE / "ts_reference.mjs"), str(package), str(path), str(repeats)],
            capture_output=True,
            text=True,
            cwd=scratch,
            timeout=900,
            check=False,
        )
    if done.returncode != 0:
        print("reference failed:", done.stderr[-500:])
        return None
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000,50000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--overflow-sizes", default="1000,10000,50000")
    args = parser.parse_args()
    report: dict[str, Any] = {}
    header = (
        f"{'messages':>8} {'target':<17} {'cold ms':>9} {'floor ms':>9} {'cold/floor':>10} "
        f"{'+1 ms':>8} {'+1/cold':>8} {'+1/floor':>8} {'TS cold':>9} {'TS +1':>8}"
    )
    print(header)
    print("-" * len(header))
    for size in (int(s) for s in args.sizes.split(",")):
        history = transcript(size)
        ts = None if args.no_reference else reference(history, max(3, args.repeats // 2))
        for target in adapter_registry.names():
            row = measure(history, target, args.repeats)
            if ts and target in ts:
                row["ts_cold_ms"] = ts[target]["cold_ms"]
                row["ts_append_one_ms"] = ts[target]["append_one_ms"]
            report[f"{size}:{target}"] = {"messages": len(history), "target": target, **row}
            ts_cold = f"{row['ts_cold_ms']:9.2f}" if "ts_cold_ms" in row else f"{'-':>9}"
            ts_one = f"{row['ts_append_one_ms']:8.2f}" if "ts_append_one_ms" in row else f"{'-':>8}"
            print(
                f"{len(history):>8} {target:<17} {row['cold_ms']:9.2f} {row['floor_ms']:9.2f} "
                f"{row['cold_over_floor']:10.2f} {row['append_one_ms']:8.2f} "
                f"{row['append_over_cold']:8.2f} {row['append_over_floor']:8.2f} {ts_cold} {ts_one}"
            )
    print()
    print(f"{'messages':>8} {'target':<17} {'overflow ms':>12} {'no-overflow ms':>15} {'ratio':>7}")
    for size in (int(s) for s in args.overflow_sizes.split(",") if s):
        history = transcript(size)
        for target in adapter_registry.names():
            over = measure_overflow(history, target, max(3, args.repeats // 2))
            plain = (
                report.get(f"{size}:{target}", {}).get("cold_ms")
                or measure(history, target, max(3, args.repeats // 2))["cold_ms"]
            )
            report[f"{size}:{target}:overflow"] = {"overflow_ms": over, "no_overflow_ms": plain}
            print(f"{len(history):>8} {target:<17} {over:12.2f} {plain:15.2f} {over / plain:7.2f}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "compile.json").write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
