"""Compile benchmark: what an agent turn costs, per target, next to its floors and the reference.

For transcripts of 1k, 10k and 50k messages (user turns, assistant turns with tool calls, tool
results of 50-2000 characters) and each target, in one run:

- cold: a fresh chef + `set_system_prompt` + `set_history` + `compile` (and its parts);
- turn, host appending: `set_history(h + [one message])` + `compile` on one chef, the host
  passing the same message objects turn after turn (median of several turns);
- turn, host reloading: every turn the host reloads its whole history as fresh dicts
  (`orjson.loads` of its stored JSON, outside the timed region), then the same two calls;
- compile alone: the `compile` part of a fresh chef's cold run, and of the appending turns (the
  setter is not timed);
- floors: `orjson.dumps` and `json.dumps` of the very payload, and every figure's ratio to them;
- the physical floor of a cold compile, timed in the same state as it (a collected heap holding
  the host's history): the least CPython can do to read the host history once
  (`orjson.dumps(history)`, one C pass over every message) plus the least to create the
  payload's objects (`orjson.loads` of the payload's JSON, one C pass that makes every container
  and string, the collector's passes included as they come), and the same with every string
  emptied (`floor_shared`: the containers alone, for a path that shares the host's strings);
  and the floor of this design, which validates the history and keeps a private copy of it
  (`floor_validated`: the intake's compiled validator alone, with no Python per message, then
  the payload's containers); against the reference's whole cold start, they say whether a
  cold target below them is reachable at all; the same with the payload's containers built
  by the least Python (`floor_python`, see python_floor.py: one display per container, for a
  pure-Python adapter what `orjson.loads` is for C code); and the turn's: the host's list `==` the
  chef's copies of it (`compare_floor`), the least a `set_history` that sees in-place edits can do;
- peak RSS (VmHWM) after a cold compile and a few turns, in a fresh process per (size, target);
- the TypeScript reference @context-chef/core 4.2.1 on the same history and turn messages, when
  Node and a scratch install exist (CONTEXTCHEF_TS_REF, default
  /tmp/ctxref/node_modules/@context-chef/core): one long-lived Node process per size, warmed up
  first, one chef reused across turns, a char tokenizer `sum(ceil(len/4) + 4)` (see
  ts_reference.mjs); its peak RSS in a fresh Node process per (size, target).

Rounds interleave the two sides (ours, theirs, ours, ...) per target, both warmed up; each figure
is the median of the per-round figures, and its minimum is kept beside it (`min_...`). Times are
milliseconds of wall time on both sides (a CPU clock would count one Python thread against all of
Node's, its GC and compiler threads included); the load average before and after each size is
written with the results, since other work on the machine slows both sides.
The issue's targets (issue 24) are checked at the end: each one is a line that says met or not.

Usage: python benchmarks/compile.py [--sizes 1000,10000,50000] [--repeats 3] [--turns 5]
       [--targets openai,anthropic] [--no-reference] [--no-rss] [--docs]
       [--overflow-sizes 10000]   (a compile that has to compress; off by default)
Writes benchmarks/results/compile.json and the table benchmarks/results/compile.md; `--docs`
also puts that table into docs/performance.md, between its markers (`--readme`: the old name).
The whole default run takes about 4 minutes on 2 idle cores (~17 min when they are busy).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from compile_floors import (
    clock,
    compare_floor,
    emptied,
    floors,
    median,
    physical_floor,
    since,
    validated_floors,
)
from compile_report import (
    add_ratios,
    check_targets,
    markdown_table,
    print_legend,
    print_table,
    print_verdicts,
    write_page,
)
from ts_bridge import Reference, node_command, reference_package, run_json

from contextchef import ContextChef, summarize
from contextchef.adapters import adapter_registry

HERE = Path(__file__).parent
RESULTS = HERE / "results"
PERFORMANCE_PAGE = HERE.parent / "docs" / "performance.md"
"""The page whose table `--docs` rewrites (between its markers)."""
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


TURN_WORDS = "Run the tests again and tell me which of them still fail, with the first error."


def turn_messages(history: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """`count` messages a host appends one per turn: user and assistant in turn after `history`."""
    role = history[-1]["role"] if history else "assistant"
    out: list[dict[str, Any]] = []
    for turn in range(count):
        role = "assistant" if role == "user" else "user"
        out.append({"role": role, "content": f"Turn {turn}. {TURN_WORDS}"})
    return out


# -- our side --------------------------------------------------------------------------------


def cold(history: list[dict[str, Any]], target: str) -> tuple[ContextChef, dict[str, float]]:
    """A fresh chef's first compile, timed as a whole and in parts."""
    start = clock()
    chef = ContextChef().set_system_prompt(SYSTEM)
    setup = since(start)
    chef.set_history(history)
    setters = since(start)
    chef.compile(target=target)
    total = since(start)
    parts = {"new_chef_system_ms": setup, "set_history_ms": setters - setup}
    return chef, {"cold_ms": total, **parts, "compile_ms": total - setters}


def turns(
    chef: ContextChef,
    history: list[dict[str, Any]],
    extra: list[dict[str, Any]],
    target: str,
    *,
    fresh: bool,
    appending: bool = False,
) -> tuple[dict[str, float], Any]:
    """Median turn (`set_history(h + 1)` + `compile`, or `append_history([one])` + `compile`
    with `appending`) and its compile part; the last payload."""
    turn: list[float] = []
    alone: list[float] = []
    host, payload = history, None
    stored = orjson.dumps(history) if fresh else b""
    for message in extra:
        if fresh:  # the host reloads its history as fresh dicts: not timed
            following = orjson.loads(stored)
            following.append(dict(message))
        else:
            following = [*host, message]
        start = clock()
        if appending:
            chef.append_history([message])
        else:
            chef.set_history(following)
        setter = since(start)
        payload = chef.compile(target=target)
        turn.append(since(start))
        alone.append(turn[-1] - setter)
        host = following
        if fresh:
            stored = orjson.dumps(following)
    return {"turn_ms": median(turn), "compile_ms": median(alone)}, payload


def measure_ours(
    history: list[dict[str, Any]], extra: list[dict[str, Any]], target: str
) -> dict[str, float]:
    """One round on one target: cold, appending host, reloading host, floors."""
    gc.collect()
    chef, row = cold(history, target)
    row = {f"cold_{key}" if key != "cold_ms" else key: value for key, value in row.items()}
    append, payload = turns(chef, history, extra, target, fresh=False)
    row.update(turn_append_ms=append["turn_ms"], compile_alone_ms=append["compile_ms"])
    row.update(floors(payload))
    row["compare_ms"] = compare_floor([*history, *extra], chef._history._intake.held)
    by_api, _ = turns(chef, [], extra, target, fresh=False, appending=True)
    row["turn_api_append_ms"] = by_api["turn_ms"]
    body, shell = orjson.dumps(payload), orjson.dumps(emptied(payload))
    del chef
    row.update(validated_floors(history, shell, payload, target))
    del payload
    row.update(physical_floor(history, body, shell))
    del body, shell
    gc.collect()
    reloaded = orjson.loads(orjson.dumps(history))
    chef, _ = cold(reloaded, target)
    fresh, _ = turns(chef, reloaded, extra, target, fresh=True)
    row["turn_fresh_ms"] = fresh["turn_ms"]
    return row


def fake_summarizer(messages: list[Any]) -> str:
    return "<summary>The work so far, in brief.</summary>"


def measure_overflow(history: list[dict[str, Any]], target: str, repeats: int) -> float:
    """Median ms of a compile that has to compress (a fresh chef each time, fake summarizer)."""
    samples: list[float] = []
    for _ in range(repeats):
        chef = ContextChef(
            budget={"context_window": 8000},
            overflow={"strategy": summarize(fake_summarizer)},
        )
        chef.set_system_prompt(SYSTEM).set_history(history)
        start = clock()
        payload = chef.compile(target=target)
        samples.append(since(start))
        assert payload.meta.overflow is not None and payload.meta.overflow.changed
    return median(samples)


# -- peak RSS: a fresh process per (size, target) ---------------------------------------------

RSS_TURNS = 3


def rss_child(workload: Path, target: str, count: int) -> None:
    """Run in a fresh interpreter: load the workload, cold compile, `count` turns, print RSS.

    The workload is read as the reference reads it (`JSON.parse(readFileSync(path, "utf8"))`):
    its text, then the standard library's parse of it. `orjson.loads` would build its own
    parse document beside the bytes first (about 50 MiB at 50k messages), the process's peak by
    far, in neither side's library; the chef's own growth then went unseen under it."""
    data = json.loads(workload.read_text(encoding="utf-8"))
    chef, _ = cold(data["history"], target)
    turns(chef, data["history"], data["turns"][:count], target, fresh=False)
    print(json.dumps({"max_rss_kib": peak_rss_kib()}))


def peak_rss_kib() -> int:
    """This process's peak RSS in KiB: VmHWM on Linux, else `ru_maxrss`.

    Linux carries the parent's peak into a child's `ru_maxrss` across fork (or vfork) and exec,
    so a child of a big benchmark process would report its parent's peak; VmHWM belongs to the
    child's own address space.
    """
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1])


def peak_rss_mib(workload: Path, target: str, count: int, node: list[str] | None) -> float | None:
    """Peak RSS (MiB) of a fresh process: ours (Python), or the reference's when `node` is given."""
    if node is None:
        me = [sys.executable, str(Path(__file__).resolve()), "--rss-child", str(workload), target]
        command = [*me, str(count)]
    else:
        command = [*node, "rss", reference_package(), str(workload), target, str(count)]
    result = run_json(command, str(workload.parent))
    return None if result is None else result["max_rss_kib"] / 1024


# -- the run -------------------------------------------------------------------------------------


def merged(rounds: list[dict[str, Any]], prefix: str = "") -> dict[str, float]:
    """The median of each figure over the rounds, and its minimum as `min_<figure>`."""
    out = {prefix + key: median([r[key] for r in rounds]) for key in rounds[0]}
    out.update({f"min_{prefix}{key}": min(r[key] for r in rounds) for key in rounds[0]})
    return out


def run_size(size: int, targets: list[str], args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    history = transcript(size)
    extra = turn_messages(history, args.turns)
    node = None if args.no_reference else node_command()
    rows: dict[str, dict[str, Any]] = {t: {"messages": len(history), "target": t} for t in targets}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as scratch:
        workload = Path(scratch) / "workload.json"
        workload.write_bytes(orjson.dumps({"system": SYSTEM, "history": history, "turns": extra}))
        reference = Reference(node, workload, args.turns, args.warmups) if node else None
        ours: dict[str, list[dict[str, Any]]] = {t: [] for t in targets}
        theirs: dict[str, list[dict[str, Any]]] = {t: [] for t in targets}
        try:
            if reference is not None:
                reference.warm_up(targets)
            for _ in range(args.repeats):  # interleaved: ours, theirs, ours, theirs...
                for target in targets:
                    ours[target].append(measure_ours(history, extra, target))
                    if reference is not None:
                        theirs[target].append(reference.ask(target))
        finally:
            if reference is not None:
                reference.close()
        for target in targets:
            rows[target].update(merged(ours[target]))
            if theirs[target]:
                rows[target].update(merged(theirs[target], "ts_"))
            if not args.no_rss:
                rows[target]["rss_mib"] = peak_rss_mib(workload, target, RSS_TURNS, None)
                if node is not None:
                    rows[target]["ts_rss_mib"] = peak_rss_mib(workload, target, RSS_TURNS, node)
    load_after = os.getloadavg()[0]
    for row in rows.values():
        row["load_before"], row["load_after"] = load_before, load_after
        add_ratios(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds (median)")
    parser.add_argument("--turns", type=int, default=5, help="turns per round (median)")
    parser.add_argument("--warmups", type=int, default=1, help="reference warm-up runs per target")
    parser.add_argument("--targets", default=",".join(adapter_registry.names()))
    parser.add_argument(
        "--docs", "--readme", action="store_true", help="write the table into docs/performance.md"
    )
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--no-rss", action="store_true")
    parser.add_argument("--overflow-sizes", default="", help="e.g. 1000,10000 (off by default)")
    parser.add_argument("--out", type=Path, default=RESULTS / "compile.json")
    parser.add_argument("--rss-child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        workload, target, count = args.rss_child
        rss_child(Path(workload), target, int(count))
        return
    began = time.perf_counter()
    targets = [t for t in args.targets.split(",") if t]
    warm = transcript(300)  # first-time costs (imports, regexes) are paid before any timing
    for target in targets:
        measure_ours(warm, turn_messages(warm, 2), target)
    print_legend()
    report: dict[str, dict[str, Any]] = {}
    for size in (int(s) for s in args.sizes.split(",") if s):
        rows = run_size(size, targets, args)
        print_table(list(rows.values()))
        report.update({f"{size}:{t}": row for t, row in rows.items()})
    verdicts = check_targets(report)
    print_verdicts(verdicts)
    overflow = run_overflow(args, targets, report)
    elapsed = time.perf_counter() - began
    print(f"\nbenchmark took {elapsed:.0f} s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "meta": run_meta(args, elapsed),
        "rows": report,
        "targets": verdicts,
        "overflow": overflow,
    }
    args.out.write_text(json.dumps(document, indent=2) + "\n")
    table = markdown_table(document)
    args.out.with_suffix(".md").write_text(table)
    print(f"wrote {args.out} and {args.out.with_suffix('.md')}")
    if args.docs:
        write_page(PERFORMANCE_PAGE, table)
        print(f"wrote the table into {PERFORMANCE_PAGE.relative_to(HERE.parent)}")


def run_overflow(
    args: argparse.Namespace, targets: list[str], report: dict[str, dict[str, Any]]
) -> dict[str, dict[str, float]]:
    """A compile that has to compress, against a cold compile that does not."""
    out: dict[str, dict[str, float]] = {}
    sizes = [int(s) for s in args.overflow_sizes.split(",") if s]
    if sizes:
        print(f"\n{'msgs':>6} {'target':<16} {'overflow':>9} {'no-overflow':>12} {'ratio':>6}")
    for size in sizes:
        history = transcript(size)
        for target in targets:
            over = measure_overflow(history, target, args.repeats)
            plain = report.get(f"{size}:{target}", {}).get("cold_compile_ms")
            if plain is None:
                plain = median([cold(history, target)[1]["compile_ms"] for _ in range(3)])
            out[f"{size}:{target}"] = {"overflow_ms": over, "no_overflow_ms": plain}
            print(f"{len(history):>6} {target:<16} {over:9.1f} {plain:12.1f} {over / plain:6.2f}")
    return out


def run_meta(args: argparse.Namespace, elapsed: float) -> dict[str, Any]:
    node = shutil.which("node")
    version = None
    if node is not None and not args.no_reference:
        version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "node": version.strip() if version else None,
        "reference": None if args.no_reference or node_command() is None else reference_package(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        "load_average": os.getloadavg(),
        "clock": "wall",
        "repeats": args.repeats,
        "turns": args.turns,
        "seconds": round(elapsed, 1),
        "units": "ms (medians), MiB for RSS",
    }


if __name__ == "__main__":
    main()
